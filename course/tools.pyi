"""What an exploration cell imports: launching, timing, counting, plotting, sweeping.

The stub is the face's one table (course/runtime/exports.py reads it at import): one line per
name, ``from <where the code lives> import name as name``.
"""

# where kernels run, the machine, and the GPUs' datasheets
from course.runtime import backend as backend
from course.runtime import environment as environment
from course.runtime.devices import DATASHEET as DATASHEET
from course.runtime.devices import DEFAULT_SIMULATOR_DEVICE as DEFAULT_SIMULATOR_DEVICE
from course.runtime.devices import lookup as lookup

# launching a Numba GEMM kernel with the contract's shapes, and what it reads
from course.gemm.launch import TILES as TILES
from course.gemm.launch import GemmKernel as GemmKernel
from course.gemm.launch import Launch as Launch
from course.gemm.launch import naive as naive
from course.gemm.launch import tiled as tiled
from course.gemm.reads import naive_reads as naive_reads
from course.gemm.reads import tiled_reads as tiled_reads

# the CUDA C track: where its kernels run (cudac.show(), cudac.where()), compiling one
from course.gemm.cudac import launch as cudac
from course.gemm.cudac.source import CudaCompileError as CudaCompileError
from course.gemm.cudac.source import compile_kernel as compile_kernel
from course.perf.kernel_models import cuda_resources_line as cuda_resources_line

# timing, and the speedup the grader measures
from course.perf.timing import Timing as Timing
from course.perf.timing import time_gemm as time_gemm
from course.perf.timing import time_launches as time_launches
from course.checks.speedup import measure_speedup as measure_speedup
from course.checks.cuda_speedup import measure_speedup_cuda as measure_speedup_cuda

# the roofline: roofs, measured ceilings, your kernels on it
from course.perf.roofline import Roof as Roof
from course.perf.roofline import percent_of_roof as percent_of_roof
from course.perf.roofline import plot_roofline as plot_roofline
from course.perf.ceilings import Ceiling as Ceiling
from course.perf.ceilings import MissingDependencyError as MissingDependencyError
from course.perf.ceilings import VectorAddCheckError as VectorAddCheckError
from course.perf.ceilings import measure_bandwidth as measure_bandwidth
from course.perf.ceilings import measure_copy_bandwidth as measure_copy_bandwidth
from course.perf.ceilings import measure_fp32_peak as measure_fp32_peak
from course.perf.ceilings import vector_add_launch as vector_add_launch
from course.perf.roof import compare_with_datasheet as compare_with_datasheet
from course.notebooks.kernel_roofline import load_kernels_or_explain as load_kernels_or_explain
from course.notebooks.kernel_roofline import modelled_ai as modelled_ai
from course.notebooks.kernel_roofline import plot_register_tiling as plot_register_tiling
from course.notebooks.kernel_roofline import plot_tiled_roofline as plot_tiled_roofline
from course.notebooks.kernel_roofline import plot_week_roofline as plot_week_roofline
from course.notebooks.kernel_roofline import week_intensities as week_intensities

# measured traffic (issue 31): bytes per memory level from the GPU's counters, the
# hierarchical roofline, and the readings recorded on a real GPU for students without one
from course.perf.counters import measure_traffic as measure_traffic
from course.perf.hierarchy import plot_hierarchy as plot_hierarchy
from course.perf.recorded import load_recorded as load_recorded
from course.notebooks.measured_traffic import show_measured_traffic as show_measured_traffic
from course.notebooks.measured_traffic import show_recorded_hierarchy as show_recorded_hierarchy
from course.notebooks.measured_traffic import show_writeup_traffic as show_writeup_traffic
from course.perf.recorded_report import format_level_verdicts as format_level_verdicts
from course.perf.recorded_report import format_recorded as format_recorded

# notebook 04: the CUDA C write-up's experiment
from course.perf.experiment import writeup_inputs as writeup_inputs
from course.perf.experiment_report import format_table as format_table
from course.perf.experiment_report import plot_experiment as plot_experiment

# notebook 06: the tile sweep, its table, plot and panel, and the occupancy model behind it
from course.perf.sweep import run_sweep as run_sweep
from course.perf.sweep_table import plot_sweep as plot_sweep
from course.perf.sweep_table import resource_report as resource_report
from course.perf.sweep_table import rows_to_table as rows_to_table
from course.perf.widgets import sweep_panel as sweep_panel
from course.gemm.occupancy import theoretical_occupancy as theoretical_occupancy

# notebook 07: the bonus kernel's shape, launch and model
from course.checks.bonus import CONTRACT as CONTRACT
from course.checks.bonus import RegisterTiling as RegisterTiling
from course.checks.bonus import register_tiled as register_tiled
from course.checks.bonus import sweep_model as sweep_model

# your kernels from the week's other notebooks (whichever track you did), and where they are
from course.notebooks.tracks import load_gemm_kernels as load_gemm_kernels
from course.notebooks.tracks import load_week_kernels as load_week_kernels
from course.notebooks.reuse import upload_notebooks as upload_notebooks
from course.notebooks.reuse import use_drive_folder as use_drive_folder
from course.notebooks.reuse import use_folder as use_folder

# the notebooks' own lines and figures in the student's language (docs/i18n.md)
from course.runtime.setup_cell import report_installed as report_installed
from course.runtime.environment import report_first_kernel as report_first_kernel
from course.runtime.notes import note as note
from course.runtime.figures import figure_text as figure_text
from course.runtime.figures import subplots as subplots
from course.perf.roof import measure_ceilings as measure_ceilings
from course.notebooks.kernel_roofline import register_tiling_traffic as register_tiling_traffic
