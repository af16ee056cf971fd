"""Lazy public faces: a module whose names are imported only when a cell first uses one.

``course.checks`` (what test cells call) and ``course.tools`` (what exploration cells use) are
the two modules notebooks import from. Each lists its names in a type stub beside it
(``checks/__init__.pyi``, ``tools.pyi``), one ``from course.<layer>.<module> import name as
name`` line per name, and calls :func:`attach_stub` (PEP 562 ``__getattr__`` and ``__dir__``):
``from course.checks import check_ai_matmul`` then imports ``course.checks.intensity_answers``
alone, not CuPy, matplotlib or the GEMM machinery, and editors, mypy and Jupyter's completion
read the same stub.

This is scientific-python's ``lazy_loader.attach_stub`` with one difference, the reason it is
not that library: ``lazy_loader`` accepts only ``from .sub import name`` (a submodule of the
package itself), while a face gathers names from every layer of ``course``.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


class StubError(ValueError):
    """A face's stub holds something other than ``from course… import name as name`` lines."""


def read_stub(stub: Path, root: str = "course") -> dict[str, tuple[str, str]]:
    """``{public name: (module, attribute)}`` from a face's ``.pyi`` stub, in stub order; every
    line imports from a module of the package ``root``."""
    if not stub.is_file():
        raise StubError(f"{stub} is missing: a face lists its names there (an installed course "
                        f"needs it in its package data, pyproject.toml)")
    table: dict[str, tuple[str, str]] = {}
    for node in ast.parse(stub.read_text(), str(stub)).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if not isinstance(node, ast.ImportFrom) or node.level or \
                not (node.module or "").startswith(f"{root}."):
            raise StubError(f"{stub.name}, line {node.lineno}: only "
                            f"`from {root}.<module> import name as name` lines belong here")
        for alias in node.names:
            name = alias.asname or alias.name
            if alias.name == "*" or name in table:
                raise StubError(f"{stub.name}, line {node.lineno}: `{name}` "
                                f"{'is a star import' if name == '*' else 'is listed twice'}")
            table[name] = (str(node.module), alias.name)
    return table


def resolve(module: str, attribute: str) -> Any:
    """``module.attribute``, importing ``module`` (or the submodule ``module.attribute``)."""
    mod = importlib.import_module(module)
    try:
        return getattr(mod, attribute)
    except AttributeError:
        return importlib.import_module(f"{module}.{attribute}")


def attach_stub(package_name: str, filename: str
                ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for the face ``package_name``, whose file
    is ``filename`` (``__file__``) and whose names are in the ``.pyi`` stub beside it."""
    table = read_stub(Path(filename).with_suffix(".pyi"), package_name.split(".")[0])
    clash = sorted(name for name, (module, _) in table.items()
                   if module == f"{package_name}.{name}")
    if clash:  # importing that submodule would set the package's attribute to the module
        raise StubError(f"{package_name}: `{clash[0]}` names both a face name and the submodule "
                        "that defines it; rename the submodule")
    names = sorted(table)
    face = sys.modules[package_name]

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package_name!r} has no attribute {name!r}")
        value = resolve(*table[name])
        # Kept on the module, so the next use is an ordinary attribute lookup.
        face.__dict__[name] = value
        return value

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__, list(names)
