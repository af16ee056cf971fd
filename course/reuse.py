"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.notebooks.reuse`,
:mod:`course.runtime.errors`.
"""

from course.notebooks.reuse import (  # noqa: F401
    DEFAULT_DRIVE_FOLDER,
    DRIVE_MOUNT,
    MEMORY_NAME,
    colab_steps,
    definitions_from,
    locate,
    search_folders,
    upload_notebooks,
    use_drive_folder,
    use_folder,
)
from course.runtime.errors import (  # noqa: F401
    MissingAnswerError,
)
