"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.trust.kernel_source`,
:mod:`course.trust.code_policy`, :mod:`course.trust.policy_rules`.
"""

from course.trust.code_policy import (  # noqa: F401
    DisallowedCodeError,
    validate_module,
)
from course.trust.kernel_source import (  # noqa: F401
    SourceBundle,
    bundle_for_test_cell,
    bundle_from_cells,
    bundle_from_objects,
    referenced_names,
)
from course.trust.policy_rules import (  # noqa: F401
    ALLOWED_MODULES,
)
