"""Reuse the kernels a student wrote in an earlier notebook of the week.

Later notebooks (the experiment, the roofline, the sweep) need ``gemm_naive`` and
``make_gemm_tiled`` (in the CUDA C track ``GEMM_NAIVE_CUDA`` and ``GEMM_TILED_CUDA``;
:mod:`course.notebooks.tracks` picks the track). Rather than copying code between notebooks, they
read the earlier notebook from disk and rebuild just the named definitions, with the same
rules the grader applies (:func:`course.trust.kernel_source.bundle_from_cells`).

Where the earlier notebook is looked for, in this order:

1. the folder the notebook runs in (JupyterLab and a fetched release folder: the week's
   notebooks sit side by side; on Colab this is ``/content``, where
   :func:`upload_notebooks` puts files);
2. a folder named once with :func:`use_folder`, or on Colab a Google Drive folder named once
   with :func:`use_drive_folder` (default ``Colab Notebooks``, where Colab's *Save a copy in
   Drive* puts notebooks). The Drive folder is remembered *on the Drive*, so every later
   notebook, each in its own fresh Colab runtime, finds it again once Drive is mounted.

A notebook saved by Colab as ``Copy of 02_naive_gemm.ipynb`` or downloaded twice as
``02_naive_gemm (1).ipynb`` counts too; with several, the newest is used and named.

When the notebook is nowhere, :class:`MissingAnswerError` says so in one line, and on Colab
adds the exact steps. Nothing here ever switches silently to something else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course.runtime import backend
from course.runtime.errors import MissingAnswerError
from course.runtime.i18n import _
from course.trust.kernel_source import bundle_from_cells

#: where Colab mounts Google Drive, and the student's "My Drive" inside it.
DRIVE_MOUNT = Path("/content/drive")
#: the folder Colab's *File → Save a copy in Drive* writes to.
DEFAULT_DRIVE_FOLDER = "Colab Notebooks"
#: a small file in My Drive that remembers the week's folder across Colab runtimes.
MEMORY_NAME = ".gpu-course-week4.json"

_chosen_folder: Path | None = None  # named with use_folder / use_drive_folder in this process


# --------------------------------------------------------------------------------- where


def _my_drive() -> Path:
    return DRIVE_MOUNT / "MyDrive"


def _remembered_drive_folder() -> Path | None:
    """The Drive folder a student named in an earlier runtime (needs Drive mounted)."""
    memory = _my_drive() / MEMORY_NAME
    try:
        folder = Path(json.loads(memory.read_text(encoding="utf-8"))["folder"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return folder if folder.is_dir() else None


def search_folders() -> list[Path]:
    """The folders an earlier notebook is looked for in, first match wins."""
    folders = [Path.cwd()]
    for extra in (_chosen_folder, _remembered_drive_folder()):
        if extra is not None and extra.resolve() not in [f.resolve() for f in folders]:
            folders.append(extra)
    return folders


def _candidates(folder: Path, name: str) -> list[Path]:
    """``name`` in ``folder``, also as Colab's ``Copy of …`` or a browser's ``… (1)``."""
    stem = Path(name).stem
    pattern = re.compile(rf"(Copy of )?{re.escape(stem)}( \(\d+\))?\.ipynb")
    try:
        return [p for p in folder.iterdir() if pattern.fullmatch(p.name) and p.is_file()]
    except OSError:
        return []


def _where_words(folders: list[Path]) -> str:
    return ", ".join(str(f) for f in folders)


def colab_steps(name: str) -> str:
    """What a student on Colab does to make ``name`` findable (several lines)."""
    return _(
        "On Colab each notebook runs on its own machine, so it cannot see the others unless "
        "you tell it where they are. Either:\n"
        "  1. keep the week's notebooks in one Google Drive folder (File → Save a copy in "
        "Drive puts them in 'Colab Notebooks'; save notebooks 2 and 3 after your last edit) "
        "and run, in a new cell:\n"
        "         from course.tools import use_drive_folder; use_drive_folder()\n"
        "     It mounts your Drive (Colab asks for permission) and uses 'Colab Notebooks'; for "
        "another folder, give its path in My Drive: use_drive_folder(\"GPU/week4\"). "
        "The folder is remembered on your Drive: in the week's later notebooks, running "
        "use_drive_folder() again is enough; or\n"
        "  2. download {name} (File → Download → Download .ipynb, in that notebook's tab) and "
        "run, in a new cell:\n"
        "         from course.tools import upload_notebooks; upload_notebooks()\n"
        "     and pick the file.\n"
        "Then run this cell again."
    ).format(name=name)


def locate(notebook: str | Path) -> Path:
    """The file of an earlier notebook: ``notebook`` itself if it is a path that exists,
    otherwise the newest match for its name in :func:`search_folders`."""
    path = Path(notebook)
    if path.is_file():
        return path
    folders = search_folders() if len(path.parts) == 1 else [path.parent]
    for folder in folders:
        found = _candidates(folder, path.name)
        if found:
            return max(found, key=lambda p: (p.stat().st_mtime, p.name))
    line = _("{name} was not found in {where}: keep the week's notebooks together in one "
             "folder").format(name=path.name, where=_where_words(folders))
    if backend.on_colab():
        line = _("{name} was not found in {where}.").format(
            name=path.name, where=_where_words(folders)) + "\n" + colab_steps(path.name)
    raise MissingAnswerError(line)


# ----------------------------------------------------------------------- naming a folder


def use_folder(folder: str | Path) -> Path:
    """Look for earlier notebooks in ``folder`` too, for the rest of this session."""
    global _chosen_folder
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise MissingAnswerError(_("{path} is not a folder").format(path=path))
    _chosen_folder = path
    found = sorted({p.name for name in _WEEK for p in _candidates(path, name)})
    print(_("Earlier notebooks will be read from {path} too (found there: {found}).").format(
        path=path, found=", ".join(found) or _("none of the week yet")))
    return path


def _mount_drive() -> None:  # pragma: no cover - needs Colab
    from google.colab import drive  # optional: imported when used

    drive.mount(str(DRIVE_MOUNT))


def use_drive_folder(folder: str | None = None,
                     mount: Callable[[], None] | None = None) -> Path:
    """Colab: mount Google Drive and read earlier notebooks from ``folder`` in My Drive.

    ``folder`` is a path inside My Drive (``"Colab Notebooks"``, ``"GPU/week4"``). Without it,
    the folder remembered from an earlier notebook is used, else ``Colab Notebooks``. The
    choice is written to ``My Drive/.gpu-course-week4.json`` so that the week's other
    notebooks, each in its own Colab runtime, find it again. ``mount`` is for tests.
    """
    if not (my_drive := _my_drive()).is_dir():
        if mount is None and not backend.on_colab():
            raise MissingAnswerError(_("use_drive_folder works on Colab (it mounts Google "
                                       "Drive); elsewhere, keep the week's notebooks in one "
                                       "folder, or name it with use_folder(path)"))
        (mount or _mount_drive)()
        if not my_drive.is_dir():
            raise MissingAnswerError(_("Google Drive did not appear at {path}: run the cell "
                                       "again and allow access when Colab asks").format(
                                           path=my_drive))
    if folder is None:
        path = _remembered_drive_folder() or my_drive / DEFAULT_DRIVE_FOLDER
    else:
        path = Path(folder)
        path = path if path.is_absolute() else my_drive / path
    if not path.is_dir():
        raise MissingAnswerError(_("{path} is not a folder in your Drive: give the folder that "
                                   "holds your saved notebooks, e.g. {example}").format(
            path=path, example=f"use_drive_folder({DEFAULT_DRIVE_FOLDER!r})"))
    (my_drive / MEMORY_NAME).write_text(json.dumps({"folder": str(path)}), encoding="utf-8")
    return use_folder(path)


def upload_notebooks(upload: Callable[[], dict[str, bytes]] | None = None) -> list[Path]:
    """Colab: upload earlier notebooks from your computer into this runtime's folder.

    Uses ``google.colab.files.upload`` (a file picker under the cell); ``upload`` is for tests.
    Returns the notebooks written into the current folder.
    """
    if upload is None:
        if not backend.on_colab():
            raise MissingAnswerError(_("upload_notebooks works on Colab; elsewhere, copy the "
                                       "notebooks into this notebook's folder"))
        from google.colab import files  # pragma: no cover - needs Colab

        upload = files.upload  # pragma: no cover
    written = []
    for name, data in upload().items():
        if not name.endswith(".ipynb"):
            print(_("{name} is not a notebook (.ipynb): skipped").format(name=name))
            continue
        target = Path.cwd() / Path(name).name
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
        written.append(target)
    print(_("Uploaded: {names}.").format(
        names=", ".join(p.name for p in written) or _("no notebook")))
    return written


# ------------------------------------------------------------------------------ loading

#: the notebooks later ones read, by file name.
_WEEK = ("02_naive_gemm.ipynb", "03_tiled_gemm.ipynb", "02c_naive_gemm_cuda.ipynb",
         "03c_tiled_gemm_cuda.ipynb", "07_bonus_register_tiling.ipynb")


def definitions_from(notebook: str | Path, *names: str) -> dict[str, Any]:
    """Load ``names`` from the code cells of ``notebook`` (found by :func:`locate`)."""
    path = locate(notebook)
    cells = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if c.get("cell_type") == "code"
    ]
    try:
        namespace = bundle_from_cells(cells, set(names)).load()
    except NameError as exc:
        raise MissingAnswerError(f"{path.name}: {exc}") from None
    missing = [n for n in names if n not in namespace]
    if missing:
        raise MissingAnswerError(_("{notebook} does not define {names}").format(
            notebook=path.name, names=", ".join(missing)))
    if path.parent.resolve() != Path.cwd().resolve() or path.name != Path(notebook).name:
        print(_("(read {names} from {path})").format(names=", ".join(names), path=path))
    return {n: namespace[n] for n in names}
