"""The trusted re-check's results, replayed in the student's kernel during grading.

During ``nbgrader autograde`` every test cell runs twice: in a fresh, sandboxed process on
definitions rebuilt from the notebook's source (the verdict that counts,
``autograder/trusted.py``), and in the student's own kernel, so that the grade table can say
when the notebook showed the student a different verdict (the verdict audit). On the simulator
the expensive checks — kernels run thread by thread in Python — then cost twice, and on a GPU
machine the kernel (which has no GPU) simulates every check the re-check ran on the GPU.

So the grader runs the re-check first, and every expensive check records what it did: a key
made of the check's name and its arguments, kernels and functions given as the source bundle
a fresh process would rebuild from them (:func:`course.trust.kernel_source.bundle_from_objects`,
formatting and comments normalised), and the outcome — what it printed, and what it returned
or raised. In the student's kernel the same check, called with arguments whose key was
recorded, prints, returns or raises exactly that instead of computing it again. What stays
as it was:

* the key holds the *source* of the kernel the check was given in the kernel: a definition
  changed after its cell, or bound some other way, makes a different key and is checked afresh;
* a kernel whose checks were patched (``course.checks.gemm.check_tiled_gemm = …``) or whose
  NumPy was patched never reaches the replay: it shows its own verdict, and the grade table
  flags the difference as before;
* the check's gate (:func:`course.trust.gate.begin_check`) still runs first;
* outside grading (a student's own run, the course's tests) nothing is recorded or replayed.

The record travels from the re-check (a trusted process) to the student's kernel, never the
other way: the grader never reads what the kernel could have written.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import io
import json
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from course.runtime import backend
from course.trust import gate
from course.trust.kernel_source import bundle_from_objects

#: the kernel's side: the file of recorded outcomes to replay (set by the grader).
REPLAY_ENV = "COURSE_CHECK_REPLAY"
#: recorded values larger than this are not kept: the kernel computes them again.
MAX_VALUE_BYTES = 1 << 20

F = TypeVar("F", bound=Callable[..., Any])
_RECORD: list[Path] = []
_LOADED: dict[str, dict[str, dict[str, Any]]] = {}


def record_to(path: str | Path | None) -> None:
    """In the trusted re-check's process: append every replayable check's outcome to ``path``
    (None: stop recording)."""
    _RECORD[:] = [Path(path)] if path else []


class _Unkeyable(Exception):
    """An argument that cannot be part of a key: the check simply runs."""


def _plain(value: Any, name: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, backend.ByKind):  # both choices: the same key on a GPU and off it
        return {"gpu": _plain(value.gpu, f"{name}.gpu"),
                "simulator": _plain(value.simulator, f"{name}.simulator")}
    if callable(value):
        try:
            bundle = bundle_from_objects({name: value})
        except Exception as exc:  # noqa: BLE001 - any failure: no key, the check runs
            raise _Unkeyable(name) from exc
        return {"bundle": bundle.source, "names": list(bundle.names)}  # normalised already
    raise _Unkeyable(name)


def key(check: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The key of one call of ``check``; None when an argument cannot be keyed."""
    try:
        plain = [check, [_plain(a, f"arg{i}") for i, a in enumerate(args)],
                 {k: _plain(v, k) for k, v in sorted(kwargs.items())}]
    except _Unkeyable:
        return None
    return hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()


def _mode() -> str | None:
    if _RECORD:
        return "record"
    if (os.environ.get(REPLAY_ENV) and backend.autograding()
            and not os.environ.get(backend.TRUSTED_ENV)):
        return "replay"
    return None


def _recorded(path: str) -> dict[str, dict[str, Any]]:
    if path not in _LOADED:
        entries: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(OSError):
            for line in Path(path).read_text().splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    entry = json.loads(line)
                    entries[entry["key"]] = entry
        _LOADED[path] = entries
    return _LOADED[path]


class _Tee(io.TextIOBase):
    """Writes through to ``out`` and keeps a copy."""

    def __init__(self, out: Any) -> None:
        self.out, self.copy = out, io.StringIO()

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.copy.write(s)
        return self.out.write(s)

    def flush(self) -> None:
        self.out.flush()


def _pickled(value: Any) -> str | None:
    """The value as the kernel will load it, or None when it would not come back the same
    kind of thing (an exception whose ``__init__`` wants other arguments, say)."""
    try:
        data = pickle.dumps(value)
        back = pickle.loads(data)  # noqa: S301 - our own bytes, just made
    except Exception:  # noqa: BLE001 - not picklable: not recorded, computed again
        return None
    if type(back) is not type(value) or (isinstance(value, BaseException)
                                         and str(back) != str(value)):
        return None
    return base64.b64encode(data).decode() if len(data) <= MAX_VALUE_BYTES else None


def _record(path: Path, k: str, printed: str, outcome: str, value: Any) -> None:
    data = _pickled(value)
    if data is None:
        return
    with open(path, "a") as sink:
        sink.write(json.dumps({"key": k, "printed": printed, "outcome": outcome,
                               "value": data}) + "\n")


_MISSING = object()


def _load(entry: dict[str, Any]) -> Any:
    """The recorded value; ``_MISSING`` if it cannot be loaded here (the check then runs)."""
    try:
        return pickle.loads(base64.b64decode(entry["value"]))  # noqa: S301 - the re-check's
    except Exception:  # noqa: BLE001 - a damaged or foreign record: compute instead
        return _MISSING


def _replay(entry: dict[str, Any], value: Any) -> Any:
    if entry.get("printed"):
        print(entry["printed"], end="")
    if entry.get("outcome") == "raise" and isinstance(value, BaseException):
        raise value
    return value


def replayable(check: F) -> F:
    """Decorate an expensive check: recorded in the trusted re-check, replayed in the student's
    kernel during grading (see the module docstring). Its gate
    (:func:`course.trust.gate.begin_check`, under the check's own name) runs before a replay
    as the check itself would run it."""

    @functools.wraps(check)
    def run(*args: Any, **kwargs: Any) -> Any:
        mode = _mode()
        k = key(check.__qualname__, args, kwargs) if mode else None
        if k is None:
            return check(*args, **kwargs)
        if mode == "replay":
            entry = _recorded(os.environ[REPLAY_ENV]).get(k)
            value = _MISSING if entry is None else _load(entry)
            if entry is None or value is _MISSING:
                return check(*args, **kwargs)
            gate.begin_check(check.__name__)
            return _replay(entry, value)
        tee = _Tee(sys.stdout)
        try:
            with contextlib.redirect_stdout(tee):
                value = check(*args, **kwargs)
        except Exception as exc:
            _record(_RECORD[0], k, tee.copy.getvalue(), "raise", exc)
            raise
        _record(_RECORD[0], k, tee.copy.getvalue(), "return", value)
        return value

    return run  # type: ignore[return-value]
