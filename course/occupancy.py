"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.gemm.occupancy`."""

from course.gemm.occupancy import (  # noqa: F401
    ARCH_LIMITS,
    KIB,
    RESOURCES,
    UNLIMITED,
    ArchLimits,
    KernelResources,
    Occupancy,
    ResourcesUnavailableError,
    describe,
    driver_occupancy,
    kernel_resources,
    theoretical_occupancy,
)
