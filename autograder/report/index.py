"""``report/index.html``: the class at a glance, for the instructor.

Four sections: how the class scored (per track) and how each test went; the named mistakes,
most common first; the kernels measured (GFLOP/s, speedups, the roofline); grading itself (how
long the checks took, what was not measured and why, who could not be graded and why). Built
from a :class:`autograder.report.records.ClassReport` and its figures; every text is escaped by
:mod:`autograder.report.page`.
"""

from __future__ import annotations

from autograder.report.page import image, page, table, text
from autograder.report.records import ClassReport
from course.runtime.i18n import in_language

#: students named as the slowest to check
SLOWEST_SHOWN = 5


def _scores(r: ClassReport, figures: dict[str, bytes | None]) -> str:
    lang = r.language
    handed = sum(1 for t in r.scores.values() for _ in t)
    head = [in_language(lang, "notebook"), in_language(lang, "test"),
            in_language(lang, "handed in"), in_language(lang, "passed"),
            in_language(lang, "failed"), in_language(lang, "not measured"),
            in_language(lang, "not checked")]
    rows: list[list[object]] = [[t.notebook, t.grade_id, t.handed_in, t.passed, t.failed,
                                 t.not_measured, t.not_checked] for t in r.tests]
    return ("<section><h2>" + text(in_language(lang, "Scores")) + "</h2><p>"
            + text(in_language(lang, "{students} student(s) in the gradebook; {handed} "
                               "handed in at least one notebook. Totals are the grade "
                               "table's (the track each student did).").format(
                students=r.students, handed=handed))
            + "</p>" + image(figures.get("scores"), in_language(lang, "score distribution"))
            + table(head, rows, frozenset({2, 3, 4, 5, 6})) + "</section>")


def _mistakes(r: ClassReport, figures: dict[str, bytes | None]) -> str:
    lang = r.language
    title = "<section><h2>" + text(in_language(lang, "Named mistakes")) + "</h2>"
    if not r.mistakes:
        return title + "<p>" + text(in_language(lang, "No test failed.")) + "</p></section>"
    head = [in_language(lang, "students"), in_language(lang, "test"),
            in_language(lang, "mistake"), in_language(lang, "an example message")]
    rows: list[list[object]] = [[len(m.students), f"{m.notebook}:{m.grade_id}", m.template,
                                 m.example] for m in r.mistakes]
    return (title + "<p>" + text(in_language(
        lang, "Every failed test, grouped by what its message says (numbers, shapes and "
        "quoted names left out), most common first; an example message with the student "
        "taken out.")) + "</p>" + image(figures.get("mistakes"), in_language(lang, "mistakes"))
        + table(head, rows, frozenset({0})) + "</section>")


def _kernels(r: ClassReport, figures: dict[str, bytes | None]) -> str:
    lang = r.language
    title = "<section><h2>" + text(in_language(lang, "Kernels measured")) + "</h2>"
    if not r.kernels:
        return title + "<p>" + text(in_language(
            lang, "No speedup was measured: grading ran without a GPU (the speedup checks "
            "were not measured), or no tiled kernel was correct enough to time.")) \
            + "</p></section>"
    parts = [title, "<p>", text(in_language(
        lang, "Each student's naive and tiled kernel, timed by the grader at the graded size "
        "on the GPU named (the speedup check's own measurement). On the roofline, each "
        "kernel sits at the notebooks' model of its arithmetic intensity. A naive kernel may "
        "sit above the memory roof there: the caches serve reads that the model counts as "
        "DRAM traffic.")), " ", text(in_language(
        lang, "The speedup is the tiled kernel against the course's own naive kernel, timed "
        "in the same run (a slow naive kernel of the student's cannot inflate it); the "
        "student's own naive kernel is shown beside it.")), "</p>",
        image(figures.get("speeds"), in_language(lang, "GFLOP/s and speedups"))]
    parts += [image(png, in_language(lang, "roofline"))
              for name, png in figures.items() if name.startswith("roofline")]
    missing = sorted(d for d, png in figures.items() if d.startswith("noroof:"))
    for name in missing:
        parts.append("<p class=quiet>" + text(in_language(
            lang, "No datasheet roof for {gpu}: its kernels are in the table only.").format(
                gpu=name.split(":", 1)[1])) + "</p>")
    head = [in_language(lang, "student"), in_language(lang, "track"), "GPU",
            in_language(lang, "own naive GFLOP/s"), in_language(lang, "course's naive GFLOP/s"),
            in_language(lang, "tiled GFLOP/s"), in_language(lang, "speedup over the course's "
                                                            "naive"),
            in_language(lang, "verdict")]
    rows: list[list[object]] = [
        [k.student, k.track, k.gpu, f"{k.naive_gflops:.0f}" if k.naive_gflops else "—",
         f"{k.reference_gflops:.0f}" if k.reference_gflops else "—",
         f"{k.tiled_gflops:.0f}", f"{k.speedup:.2f}×",
         in_language(lang, "passed") if k.passed else in_language(lang, "failed")]
        for k in sorted(r.kernels, key=lambda k: -k.tiled_gflops)]
    parts.append(table(head, rows, frozenset({3, 4, 5, 6})))
    return "".join(parts) + "</section>"


def _grading(r: ClassReport) -> str:
    lang = r.language
    total = sum(r.check_seconds.values())
    slow = sorted(r.check_seconds.items(), key=lambda kv: -kv[1])[:SLOWEST_SHOWN]
    parts = ["<section><h2>" + text(in_language(lang, "Grading")) + "</h2><p>",
             text(in_language(lang, "The checks took {total} s in all, {median} s for the "
                              "median student. Slowest: {slowest}.").format(
                 total=f"{total:.0f}", median=f"{r.median_seconds:.0f}",
                 slowest=", ".join(f"{s} ({t:.0f} s)" for s, t in slow) or "—")), "</p>"]
    parts.append("<h3>" + text(in_language(lang, "Not measured")) + "</h3>")
    if r.not_measured:
        parts.append(table([in_language(lang, "test"), in_language(lang, "why"),
                            in_language(lang, "students")],
                           [[key, why, n] for (key, why), n in sorted(r.not_measured.items())],
                           frozenset({2})))
    else:
        parts.append("<p>" + text(in_language(lang, "Every check was measured.")) + "</p>")
    parts.append("<h3>" + text(in_language(lang, "Failed to run")) + "</h3>")
    if r.failed_to_run:
        parts.append(table([in_language(lang, "student"), in_language(lang, "notebook"),
                            in_language(lang, "why")],
                           [list(x) for x in r.failed_to_run]))
    else:
        parts.append("<p>" + text(in_language(lang, "Every notebook handed in ran to its end."))
                     + "</p>")
    return "".join(parts) + "</section>"


def render(r: ClassReport, figures: dict[str, bytes | None]) -> str:
    """The whole page."""
    body = _scores(r, figures) + _mistakes(r, figures) + _kernels(r, figures) + _grading(r)
    return page(r.language, in_language(r.language, "Week 4: the class at a glance"), body)
