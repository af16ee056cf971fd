"""Notebook 5's hierarchical-roofline exercise: ``measured_intensities`` and ``bounding_level``.

The grader's rules (``autograder.answers.levels``) and the student's side that knows only the
release's table (``course.checks.level_answers``) are proved both ways: correct answers in
many styles pass the visible checks at every released call and the hidden tests at every
hidden call (and the grader can rebuild them), every named mistake fails with its own message,
a wrong answer that is no named mistake still fails, and the visible checks say exactly what
the rules say.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from autograder.answers import levels as rules
from autograder.answers import table
from course.checks import expected
from course.checks import level_answers as visible
from course.checks.answers import AnswerError
from course.trust.code_policy import DisallowedCodeError
from course.trust.kernel_source import bundle_from_cells

SOURCE = Path(__file__).resolve().parents[1] / "source" / "week4"


def _released(check: str) -> list[tuple]:
    """The visible test cells' cases of ``check``, read from the notebooks."""
    return [tuple(c) for name, args in table._calls(table.visible_code(_cell(check)))
            if name == check for c in args[1]]


def _hidden(check: str) -> list[tuple]:
    return [tuple(c) for name, args in table.hidden_calls(SOURCE) if name == check
            for c in args[1]]


def _cell(check: str) -> str:
    return next(src for _, _, src in table.test_cells(SOURCE) if f"{check}(" in src)


def _fn(source: str, name: str):
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - the test's own sample answers
    return namespace[name]


# --- correct answers in the students' styles (source, as a notebook cell holds it) -----------

INTENSITY_STYLES = {
    "comprehension": """
def measured_intensities(flops, level_bytes):
    return {level: flops / moved for level, moved in level_bytes.items()}
""",
    "for loop": """
def measured_intensities(flops, level_bytes):
    out = {}
    for level in level_bytes:
        out[level] = flops / level_bytes[level]
    return out
""",
    "numpy values": """
import numpy as np


def measured_intensities(flops, level_bytes):
    names = list(level_bytes)
    values = flops / np.array([level_bytes[n] for n in names], dtype=float)
    return dict(zip(names, values))
""",
    "helper": """
def intensity(flops, moved):
    return flops / moved


def measured_intensities(flops, level_bytes):
    return {level: intensity(flops, level_bytes[level]) for level in level_bytes}
""",
    "other order (sorted)": """
def measured_intensities(flops, level_bytes):
    return {level: flops / level_bytes[level] for level in sorted(level_bytes, reverse=True)}
""",
    "isinstance": """
def measured_intensities(flops, level_bytes):
    if not isinstance(level_bytes, dict):
        raise TypeError("level_bytes must be a dict")
    if not isinstance(flops, (int, float)):
        flops = float(flops)
    return dict(map(lambda kv: (kv[0], flops / kv[1]), level_bytes.items()))
""",
}

BOUNDING_STYLES = {
    "max key=get": """
def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    times = {k: b / (bandwidths_gbs[k] * 1e9) for k, b in level_bytes.items()}
    times["compute"] = flops / (peak_gflops * 1e9)
    return max(times, key=times.get)
""",
    "for loop": """
def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    best, longest = "compute", flops / (peak_gflops * 1e9)
    for level in level_bytes:
        seconds = level_bytes[level] / (bandwidths_gbs[level] * 1e9)
        if seconds > longest:
            best, longest = level, seconds
    return best
""",
    "sorted": """
def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    times = [(flops / peak_gflops / 1e9, "compute")]
    times += [(level_bytes[k] / bandwidths_gbs[k] / 1e9, k) for k in level_bytes]
    return sorted(times)[-1][1]
""",
    "min over roofs": """
def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    roofs = {k: bandwidths_gbs[k] * flops / level_bytes[k] for k in level_bytes}
    roofs["compute"] = peak_gflops
    return min(roofs, key=lambda k: roofs[k])
""",
    "numpy argmax": """
import numpy as np


def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    names = [*level_bytes, "compute"]
    seconds = np.array([level_bytes[k] / bandwidths_gbs[k] for k in level_bytes]
                       + [flops / peak_gflops])  # GB / (GB/s) and GFLOP / (GFLOP/s) alike
    return names[int(np.argmax(seconds))]
""",
    "helper using measured_intensities": """
def measured_intensities(flops, level_bytes):
    return {level: flops / moved for level, moved in level_bytes.items()}


def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    ai = measured_intensities(flops, level_bytes)
    lowest, name = peak_gflops, "compute"
    for level in reversed(list(ai)):
        roof = bandwidths_gbs[level] * ai[level]
        if roof < lowest:
            lowest, name = roof, level
    return name
""",
    "isinstance": """
def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    assert isinstance(level_bytes, dict) and isinstance(bandwidths_gbs, dict)
    times = {"compute": float(flops) / (float(peak_gflops) * 1e9)}
    for level, moved in level_bytes.items():
        times[level] = float(moved) / (float(bandwidths_gbs[level]) * 1e9)
    return str(max(times.items(), key=lambda kv: kv[1])[0])
""",
}

#: correct, but refused by the grader's code policy (``collections`` is not an allowed import):
#: the check itself accepts any mapping; the notebook's gate tells the student at once.
ORDERED = """
from collections import OrderedDict


def measured_intensities(flops, level_bytes):
    return OrderedDict((level, flops / level_bytes[level]) for level in reversed(level_bytes))
"""


def _both(check: str):
    """(visible check, the released cases), (the grader's check, the hidden cases)."""
    pairs = {"check_measured_intensities": (visible.check_measured_intensities,
                                            rules.check_measured_intensities),
             "check_bounding_level": (visible.check_bounding_level, rules.check_bounding_level)}
    shown, graded = pairs[check]
    return (shown, _released(check)), (graded, _hidden(check))


@pytest.mark.parametrize("style", sorted(INTENSITY_STYLES))
def test_correct_intensities_in_any_style_pass_visible_hidden_and_rebuild(style) -> None:
    source = INTENSITY_STYLES[style]
    fn = _fn(source, "measured_intensities")
    for check, cases in _both("check_measured_intensities"):
        assert cases
        check(fn, cases)
    bundle_from_cells([source], {"measured_intensities"})  # the grader can rebuild it


@pytest.mark.parametrize("style", sorted(BOUNDING_STYLES))
def test_correct_bounding_level_in_any_style_passes_visible_hidden_and_rebuilds(style) -> None:
    source = BOUNDING_STYLES[style]
    fn = _fn(source, "bounding_level")
    for check, cases in _both("check_bounding_level"):
        assert cases
        check(fn, cases)
    bundle_from_cells([source], {"bounding_level"})


def test_an_ordered_dict_passes_the_checks_and_the_policy_says_why_it_is_refused() -> None:
    fn = _fn(ORDERED, "measured_intensities")
    for check, cases in _both("check_measured_intensities"):
        check(fn, cases)
    with pytest.raises(DisallowedCodeError, match="may import only"):
        bundle_from_cells([ORDERED], {"measured_intensities"})


def test_the_solutions_in_the_notebook_pass() -> None:
    cells = [src for nb, gid, src in _solutions() if gid in ("measured_intensities",
                                                              "bounding_level")]
    assert len(cells) == 2
    namespace: dict = {}
    for src in cells:
        exec(src, namespace)  # noqa: S102 - the course's own solutions
    for check, cases in _both("check_measured_intensities"):
        check(namespace["measured_intensities"], cases)
    for check, cases in _both("check_bounding_level"):
        check(namespace["bounding_level"], cases)


def _solutions():
    import nbformat

    nb = nbformat.read(SOURCE / "05_roofline.ipynb", as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            yield "05_roofline", meta["grade_id"], cell.source


def test_an_answer_that_changes_its_argument_does_not_change_the_next_case() -> None:
    def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
        level_bytes["compute"] = flops / peak_gflops  # GFLOP / (GFLOP/s), beside GB / (GB/s)
        bandwidths_gbs["compute"] = 1.0
        times = {k: level_bytes[k] / bandwidths_gbs[k] for k in level_bytes}
        level_bytes.clear()
        return max(times, key=times.get)

    for check, cases in _both("check_bounding_level"):
        check(bounding_level, cases)


# --- every named mistake, by its message --------------------------------------------------------

INTENSITY_WRONG = {
    "bytes per FLOP": lambda f, b: {k: v / f for k, v in b.items()},
    "counted in GB": lambda f, b: {k: f / (v / 1e9) for k, v in b.items()},
    "counted in GFLOP": lambda f, b: {k: f / 1e9 / v for k, v in b.items()},
    "all levels together": lambda f, b: {k: f / sum(b.values()) for k in b},
}


def _longest(f, b, bw, p, *, shortest=False, no_peak=False, times_of=None):
    times = {k: b[k] / (bw[k] * 1e9) for k in b} if times_of is None else times_of
    if not no_peak:
        times = {**times, "compute": f / (p * 1e9)}
    return (min if shortest else max)(times, key=times.get)


BOUNDING_WRONG = {
    "the most bytes": lambda f, b, bw, p: max(b, key=b.get),
    "lowest intensity": lambda f, b, bw, p: min(b, key=lambda k: f / b[k]),
    "shortest time": lambda f, b, bw, p: _longest(f, b, bw, p, shortest=True),
    "highest roof": lambda f, b, bw, p: max([*b, "compute"], key=lambda k: p if k == "compute"
                                            else bw[k] * f / b[k]),
    "compute peak is missing": lambda f, b, bw, p: _longest(f, b, bw, p, no_peak=True),
    "not multiplied": lambda f, b, bw, p: _longest(f, b, bw, p,
                                                   times_of={k: b[k] * bw[k] for k in b}),
    "unit slip": lambda f, b, bw, p: _longest(f, b, bw, p,
                                              times_of={k: b[k] / bw[k] for k in b}),
}

WRONG_KIND = {
    "spell it exactly": lambda f, b, bw, p: _longest(f, b, bw, p).lower(),
    "not a number": lambda f, b, bw, p: max(b[k] / (bw[k] * 1e9) for k in b),
    "not a dict": lambda f, b, bw, p: {k: b[k] / (bw[k] * 1e9) for k in b},
    "one string": lambda f, b, bw, p: None,
    "one of the keys": lambda f, b, bw, p: "memory",
}

INTENSITY_WRONG_KIND = {
    "return a dict with one intensity per level": lambda f, b: [f / v for v in b.values()],
    "with the keys of level_bytes": lambda f, b: {k.lower(): f / v for k, v in b.items()},
}


@pytest.mark.parametrize("hint", sorted(INTENSITY_WRONG) + sorted(INTENSITY_WRONG_KIND))
def test_each_intensity_mistake_is_named_at_the_visible_and_the_hidden_calls(hint) -> None:
    fn = {**INTENSITY_WRONG, **INTENSITY_WRONG_KIND}[hint]
    for check, cases in _both("check_measured_intensities"):
        with pytest.raises(AnswerError, match=hint):
            check(fn, cases)


@pytest.mark.parametrize("hint", sorted(BOUNDING_WRONG) + sorted(WRONG_KIND))
def test_each_bounding_mistake_is_named_at_the_visible_and_the_hidden_calls(hint) -> None:
    fn = {**BOUNDING_WRONG, **WRONG_KIND}[hint]
    for check, cases in _both("check_bounding_level"):
        with pytest.raises(AnswerError, match=hint):
            check(fn, cases)


def test_every_named_mistake_shows_at_some_visible_call() -> None:
    """The visible cases are chosen so that each mistake differs from the right answer
    somewhere (or the student would meet its message only in the grade table)."""
    for mistake in rules.INTENSITY_MISTAKES:
        assert any(mistake.hint in hints for case in _released("check_measured_intensities")
                   for entry in rules.intensities_expected(case).extra["levels"].values()
                   for _, hints in entry["mistakes"]), mistake.hint
    for mistake in rules.BOUNDING_MISTAKES:
        assert any(mistake.hint in hints for case in _released("check_bounding_level")
                   for _, hints in rules.bounding_expected(case).extra["wrong"]), mistake.hint


def test_a_wrong_answer_that_is_no_named_mistake_still_fails() -> None:
    for check, cases in _both("check_measured_intensities"):
        with pytest.raises(AnswerError, match="not right"):
            check(lambda f, b: {k: 2 * f / v for k, v in b.items()}, cases)

    def second_longest(f, b, bw, p):
        times = {**{k: b[k] / (bw[k] * 1e9) for k in b}, "compute": f / (p * 1e9)}
        return sorted(times, key=times.get)[-2]

    unnamed = [case for case in _released("check_bounding_level") + _hidden(
        "check_bounding_level") if second_longest(*case) not in
        [a for a, _ in rules.bounding_expected(case).extra["wrong"]]]
    assert unnamed  # some call where the second longest is no named mistake's answer
    for check, cases in ((visible.check_bounding_level, _released("check_bounding_level")),
                         (rules.check_bounding_level, _hidden("check_bounding_level"))):
        for case in cases:
            with pytest.raises(AnswerError, match="returned") as err:
                check(second_longest, [case])
            if case in unnamed:
                assert "return the name of the longest" in str(err.value)


# --- ties, and the notebook's cases far from them ---------------------------------------------

def test_a_tie_accepts_either_answer() -> None:
    # DRAM: 1e9 B / 2000 GB/s = 5e-4 s; L2: 3.5e9 / 7000 = 5e-4 s; compute 1e10 / 3e4 < both
    case = (1.0e10, {"DRAM": 1.0e9, "L2": 3.5e9}, {"DRAM": 2000.0, "L2": 7000.0}, 30000.0)
    assert rules.accepted(*case) == ["DRAM", "L2"]
    for answer in ("DRAM", "L2"):
        rules.check_bounding_level(lambda f, b, bw, p, a=answer: a, [case])
    with pytest.raises(AnswerError):
        rules.check_bounding_level(lambda f, b, bw, p: "compute", [case])


def test_the_notebooks_cases_stay_far_from_ties() -> None:
    cases = _released("check_bounding_level") + _hidden("check_bounding_level")
    assert len(cases) >= 8
    answers = set()
    for case in cases:
        times, compute = rules.level_times(*case)
        ordered = sorted([*times.values(), compute])
        assert ordered[-1] > 1.1 * ordered[-2], case
        answers.add(rules.bounding_model(*case))
    assert answers >= {"DRAM", "L2", "L1", "compute"}  # every kind of answer is asked for


# --- the student's side: the release's values, the same messages -------------------------------

def _message(check, fn, cases) -> str:
    try:
        check(fn, cases)
    except AnswerError as exc:
        return str(exc)
    return "passed"


@pytest.mark.parametrize("name, right, wrong", [
    ("check_measured_intensities", INTENSITY_STYLES["comprehension"],
     {**INTENSITY_WRONG, **INTENSITY_WRONG_KIND}),
    ("check_bounding_level", BOUNDING_STYLES["max key=get"], {**BOUNDING_WRONG, **WRONG_KIND}),
])
def test_visible_checks_say_what_the_rules_say_at_every_released_call(name, right, wrong):
    shown = getattr(visible, name)
    graded = getattr(rules, name)
    fn = _fn(right, "measured_intensities" if "intensities" in name else "bounding_level")
    cases = [tuple(e["case"]) for e in json.loads(expected.TABLE.read_text())[name]]
    assert cases == [tuple(json.loads(json.dumps(c))) for c in _released(name)]
    for case in cases:
        assert _message(shown, fn, [case]) == _message(graded, fn, [case]) == "passed"
        for bad in wrong.values():
            assert _message(shown, bad, [case]) == _message(graded, bad, [case]), case


def test_visible_checks_refuse_a_call_the_release_does_not_make() -> None:
    fn = _fn(INTENSITY_STYLES["comprehension"], "measured_intensities")
    hidden = _hidden("check_measured_intensities")
    with pytest.raises(ValueError, match="notebook's own test calls only"):
        visible.check_measured_intensities(fn, hidden[:1])
    with pytest.raises(ValueError, match="notebook's own test calls only"):
        visible.check_bounding_level(_fn(BOUNDING_STYLES["sorted"], "bounding_level"),
                                     _hidden("check_bounding_level")[:1])
    rules.check_measured_intensities(fn, hidden)


def test_the_messages_speak_korean(monkeypatch) -> None:
    from course.runtime import i18n

    monkeypatch.setenv("COURSE_LANG", "ko")
    i18n.reset()
    try:
        for fn in (*BOUNDING_WRONG.values(), *WRONG_KIND.values()):
            text = _message(visible.check_bounding_level, fn, _released("check_bounding_level"))
            assert text != "passed" and any("\uac00" <= c <= "\ud7a3" for c in text), text
        for fn in (*INTENSITY_WRONG.values(), *INTENSITY_WRONG_KIND.values()):
            text = _message(visible.check_measured_intensities, fn,
                            _released("check_measured_intensities"))
            assert text != "passed" and any("\uac00" <= c <= "\ud7a3" for c in text), text
    finally:
        monkeypatch.delenv("COURSE_LANG")
        i18n.reset()


# --- what the notebook prints -------------------------------------------------------------------

def test_the_recorded_table_prints_every_run_and_computes_no_answer() -> None:
    from course.perf.recorded import load_recorded
    from course.perf.recorded_report import format_level_verdicts, format_recorded

    recorded = load_recorded()
    text = format_recorded(recorded)
    assert recorded.source() in text
    assert len(text.splitlines()) == 4 + len(recorded.runs)
    runs = recorded.runs
    shown = format_level_verdicts(runs[:3], [{"DRAM": 1.5, "L2": "x", "L1": 3.0}, 7.0, {}],
                                  ["L2", None, {"DRAM": 1.0e9, "L2": 2.0e9, "L1": 3.0e9}])
    lines = shown.splitlines()
    assert len(lines) == 3 + 3
    assert "1.5" in lines[3] and "?" in lines[3] and lines[3].rstrip().endswith("L2")
    assert lines[4].count("?") == 3 and lines[4].rstrip().endswith("None")
    assert lines[5].rstrip().endswith("…") and len(lines[5]) == len(lines[3])  # cut short
    assert math.isfinite(runs[0].gflops)


# --- the sample class's answers in other styles -------------------------------------------------

STYLE_STUDENTS = ["di_numpy_functions", "ed_where_and_while", "fi_clip_and_numba_spelling",
                  "ne_hints_and_asserts"]


@pytest.mark.parametrize("student", STYLE_STUDENTS)
def test_the_sample_students_level_answers_pass_and_rebuild(student) -> None:
    """What tests/test_sample_class.py grades end to end (full marks, as ada), checked here
    without the class: both answers pass the visible checks and the hidden tests, and the
    grader rebuilds them from the cells."""
    import importlib

    spec = importlib.import_module(f"sample_class.students.{student}")
    answers = spec.ANSWERS["05_roofline"]
    assert spec.EXPECTED["05_roofline"] == importlib.import_module(
        "sample_class.students.ada_correct").EXPECTED["05_roofline"]
    cells = ["import numpy as np\n", answers["measured_intensities"],
             answers["bounding_level"]]
    namespace: dict = {}
    for cell in cells:
        exec(cell, namespace)  # noqa: S102 - the sample class's own answers
    for check, cases in _both("check_measured_intensities"):
        check(namespace["measured_intensities"], cases)
    for check, cases in _both("check_bounding_level"):
        check(namespace["bounding_level"], cases)
    bundle_from_cells(cells, {"measured_intensities", "bounding_level"})
