"""Your naive and tiled GEMM kernels from whichever track you did: Numba or CUDA C.

Notebooks 2 and 3 come in two versions: ``02_naive_gemm`` / ``03_tiled_gemm`` in Numba
(``gemm_naive``, ``make_gemm_tiled``) and ``02c_naive_gemm_cuda`` / ``03c_tiled_gemm_cuda``
in CUDA C (``GEMM_NAIVE_CUDA``, ``GEMM_TILED_CUDA``). A later notebook that reruns the week's
experiment needs the pair a student wrote, whichever it is. :func:`load_gemm_kernels` reads
them from disk (:func:`course.notebooks.reuse.definitions_from`, the grader's rules), runs each on a
1×1×1 product, and returns the first track whose two kernels work: Numba first, then CUDA C
(or only the track asked for). When neither works it says why for each, in a line or two.

The result, :class:`TrackKernels`, knows how to run the week's experiment with its own
track's machinery (:mod:`course.perf.experiment` for Numba, :mod:`course.perf.cuda_experiment` for
CUDA C), so a notebook needs no ``if`` per track. The tile sweep of notebook 6 takes the
kernels one by one instead (:func:`load_week_kernels`: each from the first track where it is
written, and the bonus kernel of notebook 7).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from course.checks.bonus import sweep_model
from course.gemm.cudac import gpu
from course.gemm.cudac.nvrtc import NvrtcUnavailableError
from course.gemm.cudac.source import NAIVE as CUDA_NAIVE
from course.gemm.cudac.source import TILED as CUDA_TILED
from course.gemm.cudac.source import CudaCompileError, CudaSourceError, compile_kernel
from course.gemm.launch import matmul
from course.gemm.launch import naive as numba_naive
from course.notebooks.reuse import MissingAnswerError, definitions_from, locate
from course.perf.cuda_experiment import (
    GPU_ONLY,
    check_writeup_correctness_cuda,
    run_writeup_experiment_cuda,
    smoke_test_cuda,
)
from course.perf.experiment import (
    ExperimentResult,
    check_writeup_correctness,
    run_writeup_experiment,
    smoke_test,
)
from course.runtime import backend
from course.runtime.errors import explain, not_written_yet
from course.runtime.i18n import _
from course.trust.code_policy import DisallowedCodeError

__all__ = ["CUDA_C", "NUMBA", "TRACKS", "WEEK_KERNELS", "Track", "TrackKernels",
           "load_gemm_kernels", "load_week_kernels"]

NUMBA = "Numba"
CUDA_C = "CUDA C"


@dataclass(frozen=True)
class Track:
    """Where a track's two kernels are written: (notebook, name) for naive, then tiled."""

    name: str
    naive: tuple[str, str]
    tiled: tuple[str, str]

    @property
    def notebooks(self) -> tuple[str, str]:
        return self.naive[0], self.tiled[0]


TRACKS: dict[str, Track] = {
    NUMBA: Track(NUMBA, ("02_naive_gemm.ipynb", "gemm_naive"),
                 ("03_tiled_gemm.ipynb", "make_gemm_tiled")),
    CUDA_C: Track(CUDA_C, ("02c_naive_gemm_cuda.ipynb", "GEMM_NAIVE_CUDA"),
                  ("03c_tiled_gemm_cuda.ipynb", "GEMM_TILED_CUDA")),
}


@dataclass(frozen=True)
class TrackKernels:
    """A student's two kernels and the track they belong to.

    ``naive`` and ``tiled`` are ``gemm_naive`` and ``make_gemm_tiled`` (Numba) or the strings
    ``GEMM_NAIVE_CUDA`` and ``GEMM_TILED_CUDA`` (CUDA C).
    """

    track: str
    naive: Any
    tiled: Any
    read_from: tuple[Path, Path]

    @property
    def is_cuda_c(self) -> bool:
        return self.track == CUDA_C

    def describe(self) -> str:
        """One line: which track, which names, from which notebooks."""
        spec = TRACKS[self.track]
        return _("Using your {track} kernels: {naive} from {naive_notebook} and {tiled} from "
                 "{tiled_notebook}.").format(
            track=self.track, naive=spec.naive[1], naive_notebook=self.read_from[0].name,
            tiled=spec.tiled[1], tiled_notebook=self.read_from[1].name)

    @property
    def can_time(self) -> bool:
        """True where this track's kernels can be timed (a GPU; for CUDA C, with CuPy)."""
        if self.is_cuda_c:
            return gpu.available()
        return backend.detect().can_time

    def why_not_timed(self) -> str:
        """What timing needs that this machine lacks (empty when it can time)."""
        if self.can_time:
            return ""
        if self.is_cuda_c:
            return _(GPU_ONLY)
        return _("The timed experiment needs a GPU: the simulator runs the GPU threads "
                 "one at a time in Python, and its times would say nothing about a GPU. "
                 "On Colab, pick a T4 runtime.")

    def check_writeup_correctness(self, size: int | None = None,
                               tile: int | None = None) -> ExperimentResult:
        """Both kernels once on the write-up's inputs, compared with the exact product.

        Defaults: 1024³ with TILE 32 on a GPU; without one, 40³ with tile 16 on Numba's
        simulator (a tile-32 block is 1,024 threads simulated one at a time there) or 100³
        with TILE 32 on the CUDA C CPU runner.
        """
        if self.is_cuda_c:
            return check_writeup_correctness_cuda(self.naive, self.tiled, size=size,
                                               tile=32 if tile is None else tile)
        full = backend.detect().can_time
        return check_writeup_correctness(
            self.naive, self.tiled, size=size if size is not None else (1024 if full else 40),
            tile=tile if tile is not None else (32 if full else 16))

    def run_writeup_experiment(self, size: int = 1024, iters: int = 50, tile: int = 32,
                            **options: Any) -> ExperimentResult:
        """The timed experiment (GPU only): naive, tiled, cuBLAS and NumPy at ``size``³."""
        if self.is_cuda_c:
            return run_writeup_experiment_cuda(self.naive, self.tiled, size, iters, tile,
                                            **options)
        return run_writeup_experiment(self.naive, self.tiled, size, iters, tile, **options)


def _smoke_test(track: str) -> Callable[[Any, Any], None]:
    return smoke_test_cuda if track == CUDA_C else smoke_test


def _locate(track: Track, folder: Path | None) -> list[Path | MissingAnswerError]:
    """Each of the track's two notebooks, or the error saying it was not found."""
    found: list[Path | MissingAnswerError] = []
    for notebook in track.notebooks:
        try:
            found.append(locate(folder / notebook if folder is not None else notebook))
        except MissingAnswerError as exc:
            found.append(exc)
    return found


def _load(track: Track, paths: list[Path]) -> TrackKernels:
    values = [definitions_from(path, name)[name]
              for path, (_track, name) in zip(paths, (track.naive, track.tiled), strict=True)]
    _smoke_test(track.name)(values[0], values[1])
    return TrackKernels(track.name, values[0], values[1], (paths[0], paths[1]))


def load_gemm_kernels(track: str | None = None, folder: str | Path | None = None
                      ) -> TrackKernels:
    """Your naive and tiled kernels from notebooks 2 and 3 (Numba) or 2c and 3c (CUDA C).

    ``track`` is ``"Numba"``, ``"CUDA C"`` or None: try Numba, and CUDA C when the Numba
    notebooks are missing, unwritten or failing (a student who did both tracks picks one
    with ``track``). ``folder`` is where the notebooks are (default: where
    :func:`course.notebooks.reuse.locate` looks). Raises :class:`MissingAnswerError` naming what is
    missing or wrong in each track tried.
    """
    if track is not None and track not in TRACKS:
        raise ValueError(f"track must be one of {', '.join(map(repr, TRACKS))} or None, "
                         f"got {track!r}")
    order = [TRACKS[track]] if track else list(TRACKS.values())
    where = Path(folder) if folder is not None else None
    absent: list[tuple[Track, MissingAnswerError]] = []  # neither notebook is here
    failed: list[tuple[Track, Exception]] = []
    for candidate in order:
        found = _locate(candidate, where)
        paths = [p for p in found if isinstance(p, Path)]
        missing = [p for p in found if isinstance(p, MissingAnswerError)]
        if not paths:
            absent.append((candidate, missing[0]))
            continue
        if missing:
            failed.append((candidate, missing[0]))
            continue
        try:
            return _load(candidate, paths)
        except (MissingAnswerError, DisallowedCodeError, SyntaxError, NameError) as exc:
            failed.append((candidate, exc))
    if not failed:
        first = absent[0][1]
        also = "".join("\n" + _("(For the {track} track: {notebooks}.)").format(
            track=t.name, notebooks=_(" and ").join(t.notebooks)) for t, _why in absent[1:])
        raise MissingAnswerError(f"{first}{also}")
    # A track none of whose notebooks is here is not the student's: name only the others.
    raise MissingAnswerError("\n".join(_("{track} track ({notebooks}): {why}").format(
        track=t.name, notebooks=", ".join(t.notebooks), why=why) for t, why in failed))


# ---------------------------------------------------------------------------------------------
# The week's kernels, one by one, for the sweep of notebook 6.


class UnusableKernelError(ValueError):
    """A loaded kernel that does not run (its message says why, in a line)."""


def _try_numba_naive(kernel: Any) -> None:
    """Run ``gemm_naive`` on a 1×1×1 product: an unwritten answer only shows when it runs."""
    one = np.ones((1, 1), np.float32)
    try:
        matmul(numba_naive(kernel), one, one)
    except Exception as exc:  # noqa: BLE001 - turned into one line for the student
        if not_written_yet(exc):
            raise NotImplementedError from None
        raise UnusableKernelError(explain(exc, "gemm_naive")) from None


def _usable(label: str, obj: Any) -> Any:
    """The loaded answer, ready for the sweep; raises if it is not written or cannot be used."""
    if isinstance(obj, str):  # CUDA C: must compile (NVRTC) and define the contract's kernel
        compile_kernel(obj, CUDA_TILED if label == "tiled" else CUDA_NAIVE,
                       4 if label == "tiled" else None)
    elif label == "tiled":
        obj(4)  # builds a kernel (no launch): raises if the answer is not written
    elif label == "naive":
        _try_numba_naive(obj)
    elif label == "bonus":
        obj()
        obj = sweep_model(obj)
    return obj


#: label → [(notebook, name, track)] for the sweep, the Numba track first.
WEEK_KERNELS: dict[str, list[tuple[str, str, str]]] = {
    "naive": [(*t.naive, t.name) for t in TRACKS.values()],
    "tiled": [(*t.tiled, t.name) for t in TRACKS.values()],
    "bonus": [("07_bonus_register_tiling.ipynb", "make_gemm_register_tiled", NUMBA)],
}


def load_week_kernels(folder: str | Path = ".", quiet: bool = False) -> dict[str, Any]:
    """``{"naive": …, "tiled": …, "bonus": …}`` from the week's notebooks in ``folder``.

    ``naive`` and ``tiled`` come from whichever track is written: notebooks 2 and 3 (Numba:
    ``gemm_naive``, ``make_gemm_tiled``) or, where those are missing, unwritten or failing,
    2c and 3c (CUDA C: the strings ``GEMM_NAIVE_CUDA``, ``GEMM_TILED_CUDA``); ``bonus`` from
    notebook 7. A kernel that is missing, not written yet or refused by the grader's rules is
    ``None``, with one line saying why (unless ``quiet``), so the sweep can go on with the
    others; one line says where each loaded kernel came from.
    """
    out: dict[str, Any] = {}
    loaded: list[str] = []
    for label, candidates in WEEK_KERNELS.items():
        reasons: list[str] = []
        absent: list[str] = []
        out[label] = None
        for notebook, name, track in candidates:
            try:
                path = locate(Path(folder) / notebook)
            except MissingAnswerError as exc:
                absent.append(str(exc))
                continue
            try:
                out[label] = _usable(label, definitions_from(path, name)[name])
                loaded.append(f"{label}: {name} ({track}, {notebook})")
                break
            except NotImplementedError:
                reasons.append(_("{name} in {notebook} is not written yet").format(
                    name=name, notebook=notebook))
            except (MissingAnswerError, DisallowedCodeError, SyntaxError, NameError,
                    CudaCompileError, CudaSourceError, NvrtcUnavailableError,
                    UnusableKernelError) as exc:
                reasons.append(_("could not use {name} from {notebook}: {why}").format(
                    name=name, notebook=notebook, why=exc))
        if out[label] is None and not quiet:
            print(_("{kernel}: {why}; left out of the sweep").format(
                kernel=label, why="; ".join(reasons or absent[:1])))
    if loaded and not quiet:
        print(_("Loaded {kernels}.").format(kernels="; ".join(loaded)))
    return out
