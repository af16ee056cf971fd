"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.runtime.devices`."""

from course.runtime.devices import (  # noqa: F401
    DATASHEET,
    DEFAULT_SIMULATOR_DEVICE,
    DeviceSpec,
    lookup,
)
