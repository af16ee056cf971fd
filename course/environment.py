"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.runtime.environment`."""

from course.runtime.environment import (  # noqa: F401
    KERNEL_PROBE_TIMEOUT_S,
    EnvironmentReport,
    MissingPackage,
    colab_install,
    colab_missing_packages,
    describe,
    on_colab,
    pip_command,
    report,
    show,
)
