"""Re-exports for notebooks and gradebooks; code: :mod:`course.notebooks.kernel_roofline`."""

from course.notebooks.kernel_roofline import (  # noqa: F401
    load_kernels_or_explain,
    modelled_ai,
    plot_register_tiling,
    plot_tiled_roofline,
    plot_week_roofline,
    week_intensities,
)
