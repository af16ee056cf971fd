"""Which functions of a course package compute an exercise's answer? (run by
tests/test_student_package.py in a fresh process)

    python tests/answer_probe.py <folder holding course/>  < exercises.json

``exercises.json``: ``{exercise: {"cases": [[arg, …], …], "answers": [answer, …],
"attribute": name or null}}``. Every module of that ``course`` is imported (one that cannot be,
e.g. for want of CuPy, is listed) and every function defined in it is called on each case,
positionally, with a time limit, output discarded; a function *computes the exercise* when it
returns the right answer (or a result whose ``attribute`` is) on every case. Prints
``{"course": path, "unimportable": [...], "found": {exercise: [module.function, …]}}``.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import math
import os
import pkgutil
import signal
import sys
import tempfile


class _Late(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Late


def _same(got, want) -> bool:
    if isinstance(want, dict):  # one value per key (notebook 5's intensities per level)
        try:
            return set(got) == set(want) and all(_same(got[k], v) for k, v in want.items())
        except Exception:  # noqa: BLE001 - anything that is not a mapping is no answer
            return False
    if isinstance(want, str):
        return got == want
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        try:
            got = float(got)
        except Exception:  # noqa: BLE001 - anything that is not a number is no answer
            return False
    return math.isfinite(got) and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


def _tuples(value):
    """JSON's lists back as the tuples the cases were (``(7, 5)``, a compute capability)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _accepts(fn, count: int) -> bool:
    try:
        inspect.signature(fn).bind(*range(count))
    except (TypeError, ValueError):
        return False
    return True


def _call(fn, args, attribute):
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            out = fn(*args)
        return getattr(out, attribute, out) if attribute else out
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> None:
    folder = os.path.abspath(sys.argv[1])
    exercises = json.load(sys.stdin)
    sys.path.insert(0, folder)
    os.environ.setdefault("MPLBACKEND", "Agg")
    signal.signal(signal.SIGALRM, _alarm)
    import course

    assert os.path.dirname(os.path.dirname(course.__file__)) == folder, course.__file__
    functions, unimportable = [], []
    for info in pkgutil.walk_packages(course.__path__, "course."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001 - e.g. CuPy missing: listed, not probed
            unimportable.append(f"{info.name}: {type(exc).__name__}")
            continue
        functions += [(f"{info.name}.{name}", obj) for name, obj in vars(module).items()
                      if inspect.isfunction(obj) and obj.__module__ == info.name]
    found: dict[str, list[str]] = {}
    os.chdir(tempfile.mkdtemp())
    for exercise, spec in exercises.items():
        hits = []
        for qualname, fn in functions:
            if not _accepts(fn, len(spec["cases"][0])):
                continue
            try:
                if all(_same(_call(fn, _tuples(case), spec.get("attribute")), want)
                       for case, want in zip(spec["cases"], spec["answers"], strict=True)):
                    hits.append(qualname)
            except BaseException:  # noqa: BLE001 - a refusal, a crash or a time-out: no answer
                continue
        found[exercise] = hits
    print(json.dumps({"course": course.__file__, "unimportable": unimportable, "found": found}))


if __name__ == "__main__":
    main()
