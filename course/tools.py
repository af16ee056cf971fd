"""The face exploration cells import (``from course.tools import …``): launching, timing,
counting, plotting and sweeping — everything a notebook uses that is not a check
(``course.checks``) or the setup cell's ``import course``.

The names are listed in ``tools.pyi``, one line each naming the layer module where the code
lives, and imported on first use (:func:`course.runtime.exports.attach_stub`), so a cell pays
only for what it uses. The top of the layers: nothing in ``course`` imports it.
"""

from course.runtime.exports import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
