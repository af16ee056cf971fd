"""What a test cell imports: every check, its errors, and what test cells use beside them.

The stub is the face's one table (course/runtime/exports.py reads it at import): one line per
name, ``from <where the code lives> import name as name``.
"""

# notebook 01: numeric answers, and the four intensity formulas against named mistakes
from course.checks.answers import AnswerError as AnswerError
from course.checks.answers import expect_close as expect_close
from course.checks.answers import expect_equal as expect_equal
from course.checks.answers import expect_value_error as expect_value_error
from course.checks.intensity_answers import check_ai_gemm_naive as check_ai_gemm_naive
from course.checks.intensity_answers import check_ai_gemm_tiled as check_ai_gemm_tiled
from course.checks.intensity_answers import check_ai_matmul as check_ai_matmul
from course.checks.intensity_answers import check_ai_vector_add as check_ai_vector_add

# notebooks 02, 03 and 07: the GEMM kernels (Numba), their traffic and speedup
from course.checks.gemm import check_naive_gemm as check_naive_gemm
from course.checks.gemm import check_tiled_gemm as check_tiled_gemm
from course.checks.gemm import try_gemm as try_gemm
from course.gemm.operands import GemmCheckError as GemmCheckError
from course.checks.traffic import TrafficCheckError as TrafficCheckError
from course.checks.traffic import check_traffic as check_traffic
from course.checks.speedup import SPEEDUP_THRESHOLD as SPEEDUP_THRESHOLD
from course.checks.speedup import NotMeasuredError as NotMeasuredError
from course.checks.speedup import SpeedupCheckError as SpeedupCheckError
from course.checks.speedup import check_speedup as check_speedup
from course.checks.bonus import check_register_tiled as check_register_tiled

# notebooks 02c and 03c: the CUDA C kernels
from course.checks.cuda_gemm import CheckNotRunError as CheckNotRunError
from course.checks.cuda_gemm import check_naive_gemm_cuda as check_naive_gemm_cuda
from course.checks.cuda_gemm import check_tiled_gemm_cuda as check_tiled_gemm_cuda
from course.checks.cuda_gemm import check_traffic_cuda as check_traffic_cuda
from course.checks.cuda_gemm import try_gemm_cuda as try_gemm_cuda
from course.checks.cuda_speedup import SPEEDUP_THRESHOLD_CUDA as SPEEDUP_THRESHOLD_CUDA
from course.checks.cuda_speedup import check_speedup_cuda as check_speedup_cuda

# notebook 05: the roofline formulas, the vector add, and the hierarchical roofline's
# intensities per memory level and bounding level
from course.checks.roofline_answers import check_attainable as check_attainable
from course.checks.roofline_answers import check_attainable_array as check_attainable_array
from course.checks.roofline_answers import check_bound as check_bound
from course.checks.roofline_answers import check_critical_ai as check_critical_ai
from course.checks.vector_add import check_vector_add as check_vector_add
from course.checks.level_answers import check_bounding_level as check_bounding_level
from course.checks.level_answers import check_measured_intensities as check_measured_intensities
from course.perf.ceilings import VectorAddCheckError as VectorAddCheckError

# notebook 06: the occupancy predictions
from course.checks.occupancy import OccupancyPredictionError as OccupancyPredictionError
from course.checks.occupancy import check_blocks_per_sm_prediction as check_blocks_per_sm_prediction
from course.checks.occupancy import check_occupancy_prediction as check_occupancy_prediction

# beside the checks: a mistake as one plain line (the try-it cells), and where kernels run
# (test cells pick their shapes by it)
from course.runtime.errors import plain_errors as plain_errors
from course.runtime import backend as backend

# what a test cell prints, in the student's language
from course.checks.success_lines import passed as passed
from course.runtime.notes import note as note
