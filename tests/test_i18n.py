"""The Korean edition's messages: the catalog is complete and compiled, and the language is
chosen by one setting (COURSE_LANG, else the running notebook's metadata, else English)."""

from __future__ import annotations

import ast
import asyncio
import fnmatch
import gettext
import json
import string
import sys
import tomllib
import types
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from course.runtime import i18n

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "course" / "locale" / "ko" / "LC_MESSAGES" / "course.po"
MO = PO.with_suffix(".mo")
#: the keywords `make catalog` extracts (Makefile): _(), N_() and in_language(lang, message).
KEYWORDS = {"_": None, "N_": None, "in_language": (2,), "ngettext": (1, 2)}


@pytest.fixture(autouse=True)
def fresh_language(monkeypatch):
    """Every test starts with no COURSE_LANG and nothing remembered."""
    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    i18n.reset()
    yield
    i18n.reset()


def _extracted() -> set[str]:
    """Every message `make catalog` would extract now, with the mapping in pyproject.toml."""
    babel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["babel"]
    method_map = [(m["pattern"], m["method"]) for m in babel["mappings"]]
    found = (message for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, keywords=KEYWORDS))
    # a plural message (ngettext) is a (singular, plural) pair; the catalog keys it by the first
    return {message[0] if isinstance(message, tuple) else message for message in found
            if message}


def _catalog():
    with PO.open("rb") as fh:
        return read_po(fh)


def _key(msgid: str | tuple[str, ...]) -> str:
    return msgid[0] if isinstance(msgid, tuple) else msgid


def _forms(message) -> list[tuple[str, str]]:
    """(English, Korean) pairs of a catalog entry: one, or one per Korean form of a plural."""
    if isinstance(message.id, tuple):
        return [(message.id[1], form) for form in message.string]
    return [(message.id, message.string)]


def _fields(text: str) -> list[str]:
    return sorted(f for _lit, f, _spec, _conv in string.Formatter().parse(text) if f is not None)


def test_every_extracted_message_has_a_korean_translation():
    catalog = _catalog()
    extracted = _extracted()
    assert len(extracted) > 200  # the checks, the panel, the plots, the grader's notes
    untranslated = sorted(m for m in extracted
                          if m not in catalog or not catalog[m].string or catalog[m].fuzzy)
    assert not untranslated, ("messages without a Korean translation (run `make catalog` and "
                              f"translate them in {PO.relative_to(ROOT)}): {untranslated[:5]}")
    stale = sorted(str(m.id) for m in catalog if m.id and _key(m.id) not in extracted)
    assert not stale, f"the catalog holds messages the code no longer has: {stale[:5]}"


#: messages whose Korean has no Hangul: the terms docs/glossary-ko.md keeps in English
#: (occupancy, register, warp, tiled, sweep), a unit, and joins of placeholders.
SAME_IN_KOREAN = {"{message}; {hint}", "tiled", "{kernel}: ≤ {limit} GFLOP/s", "regs",
                  "smem B", "occupancy", "warps/SM", "{kernel}: occupancy", "warps / SM",
                  "sweep", "warp {number}"}
#: forms docs/glossary-ko.md rules out (its `쓰지 않음` column), never in the catalog either:
#: read from the glossary's table where it is present, these at least.
RULED_OUT = ("레지스터", "워프", "쓰레드", "공유 메모리", "전역 메모리", "점유율", "배리어",
             "연산 강도", "루프라인", "타일링", "블럭")
GLOSSARY = ROOT / "docs" / "glossary-ko.md"


def _ruled_out() -> set[str]:
    forms = set(RULED_OUT)
    if GLOSSARY.exists():
        lines = GLOSSARY.read_text(encoding="utf-8").splitlines()
        start = next((i for i, ln in enumerate(lines) if ln.startswith("| English |")), None)
        for line in lines[start + 2:] if start is not None else []:
            if not line.startswith("|"):
                break
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) > 2:
                forms |= {f.strip() for f in cells[2].split(" / ") if f.strip()}
    return forms


def test_translations_keep_every_placeholder_and_are_korean():
    ruled_out = _ruled_out()
    for message in _catalog():
        if not message.id:
            continue
        for english, korean in _forms(message):
            assert _fields(korean) == _fields(english), message.id
            if english not in SAME_IN_KOREAN:
                assert any("\uac00" <= c <= "\ud7a3" for c in korean), message.id
            assert not [w for w in ruled_out if w in korean], (message.id, korean)


def test_the_compiled_catalog_matches_the_po_file():
    with MO.open("rb") as fh:
        compiled = gettext.GNUTranslations(fh)._catalog  # type: ignore[attr-defined]
    written: dict = {}
    for m in _catalog():
        if isinstance(m.id, tuple):  # gettext keys a plural's forms by (singular, index)
            written.update({(m.id[0], i): form for i, form in enumerate(m.string)})
        elif m.id:
            written[m.id] = m.string
    shipped = {k: v for k, v in compiled.items() if k}
    assert shipped == written, "course.mo is stale: run `make catalog` and commit it"


def test_the_catalogs_are_package_data():
    """`pip install` from the repository (Colab) must carry the .mo beside the code."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = data["package-data"]["course"]
    assert "course" in data["packages"]
    for path in (MO, PO):
        relative = path.relative_to(ROOT / "course").as_posix()
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative


def test_no_module_that_translates_rebinds_the_underscore():
    """`_, x = f()` inside a function that calls _() would break it: none may rebind `_`."""
    for path in [*ROOT.glob("course/**/*.py"), *ROOT.glob("autograder/*.py")]:
        tree = ast.parse(path.read_text())
        if not any(isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Load)
                   for n in ast.walk(tree)):
            continue
        stores = [n.lineno for n in ast.walk(tree)
                  if isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store)]
        assert not stores, f"{path.relative_to(ROOT)} rebinds _ at lines {stores}"


# ---------------------------------------------------------------------------- the one setting


def test_english_without_any_setting_and_the_messages_as_written():
    assert i18n.language() == "en"
    assert i18n._("tile") == "tile"


def test_the_environment_variable_chooses_and_bad_values_are_named(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "ko")
    assert i18n.language() == "ko"
    assert i18n._("tile") == "타일"
    monkeypatch.setenv(i18n.ENV, "fr")
    with pytest.raises(ValueError, match="COURSE_LANG must be one of en, ko, got 'fr'"):
        i18n.language()


def _notebook(tmp_path: Path, language: str | None) -> Path:
    meta = {} if language is None else {"course": {"language": language}}
    path = tmp_path / "05_roofline.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": meta, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def test_jupyterlab_the_kernel_reads_its_notebooks_metadata(tmp_path, monkeypatch):
    """JupyterLab tells the kernel its notebook (``__session__`` / JPY_SESSION_NAME)."""
    path = _notebook(tmp_path, "ko")
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    assert i18n.language() == "ko"
    i18n.reset()
    # the session path is relative to the server's root; the kernel runs in the notebook's folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", "week4/05_roofline.ipynb")
    assert i18n.language() == "ko"
    i18n.reset()
    monkeypatch.setenv(i18n.ENV, "en")  # the variable overrides the notebook
    assert i18n.language() == "en"


def test_jupyterlab_session_in_the_user_namespace(tmp_path, monkeypatch):
    path = _notebook(tmp_path, "ko")
    shell = types.SimpleNamespace(user_ns={"__session__": str(path)})
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert i18n.language() == "ko"
    i18n.reset()
    shell.user_ns["__session__"] = str(_notebook(tmp_path, None))
    assert i18n.language() == "en"  # an unmarked notebook is English


def test_colab_the_front_end_hands_over_the_notebook(monkeypatch):
    calls = []

    def blocking_request(kind, request="", timeout_sec=5):
        calls.append(kind)
        return {"ipynb": {"cells": [], "metadata": {"course": {"language": "ko"}}}}

    colab = types.ModuleType("google.colab")
    message = types.ModuleType("google.colab._message")
    message.blocking_request = blocking_request  # type: ignore[attr-defined]
    colab._message = message  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab._message", message)
    assert i18n.language() == "ko"
    assert i18n.language() == "ko" and calls == ["get_ipynb"]  # asked once per process
    i18n.reset()
    message.blocking_request = lambda *a, **k: (_ for _ in ()).throw(TimeoutError())  # type: ignore[attr-defined]
    assert i18n.language() == "en"  # no answer from the front end: English, not a crash


def test_a_notebook_with_a_wrong_language_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", str(_notebook(tmp_path, "kr")))
    with pytest.raises(ValueError, match=r"metadata\[\"course\"\]\[\"language\"\].*'kr'"):
        i18n.language()


# -------------------------------------------------------------------------------- grading


def test_the_grader_reads_the_language_and_hands_it_to_the_kernel(monkeypatch):
    from autograder.grading import execute, languages
    from autograder.sandbox import bwrap as sandbox

    notebook = {"metadata": {"course": {"language": "ko"}}}
    assert languages.grading_language(notebook) == "ko"
    assert languages.grading_language({"metadata": {}}) == "en"
    # a submission's metadata is the student's: nonsense there grades in English, never fails
    for bad in ({"course": {"language": "fr"}}, {"course": ["ko"]}, {"course": {"language": 1}}):
        assert languages.grading_language({"metadata": bad}) == "en"
        # ... and the same nonsense beside Korean prose is the Korean release it came from
        korean = {"metadata": bad, "cells": [{"cell_type": "markdown", "source": "타일 크기"}]}
        assert languages.grading_language(korean) == "ko"
    # the instructor's COURSE_LANG speaks to every student
    monkeypatch.setenv(i18n.ENV, "en")
    assert languages.grading_language(notebook) == "en"
    monkeypatch.delenv(i18n.ENV)
    seen = {}

    async def start(self, **kwargs):
        seen.update(kwargs)

    def start_sync(self, **kwargs):  # what nbconvert's setup_kernel calls
        seen.update(kwargs)

    monkeypatch.setattr(execute.Execute, "async_start_new_kernel", start)
    monkeypatch.setattr(execute.Execute, "start_new_kernel", start_sync)
    client = execute.SurvivingExecute()
    client._language = "ko"
    client.start_new_kernel(cwd="/tmp")
    assert seen["env"][i18n.ENV] == "ko" and seen["cwd"] == "/tmp"
    seen.clear()
    asyncio.run(client.async_start_new_kernel(env={"PATH": "/bin", i18n.ENV: "en"}))
    assert seen["env"] == {"PATH": "/bin", i18n.ENV: "ko"}  # the notebook's language wins
    # the sandbox keeps it for the kernel and the trusted re-check
    assert sandbox.scrubbed_env({i18n.ENV: "ko", "SECRET_TOKEN": "x"})[i18n.ENV] == "ko"
    assert client._("the check was stopped: {reason}") == "검사가 중지되었다: {reason}"


def test_the_verdict_does_not_depend_on_the_language(monkeypatch):
    """The audit compares pass/fail, never the words: a Korean ✗ is the grader's ✗."""
    from nbformat.notebooknode import NotebookNode

    from autograder.grading.trusted import notebook_verdict
    from course.checks.answers import AnswerError, expect_close

    verdicts = []
    for language in ("en", "ko"):
        monkeypatch.setenv(i18n.ENV, language)
        with pytest.raises(AnswerError) as info:
            expect_close(2.0, 1.0, "ai_matmul(1, 1, 1)")
        cell = NotebookNode(execution_count=1, outputs=[NotebookNode(
            output_type="error", ename="AnswerError", evalue=str(info.value), traceback=[])])
        verdicts.append((notebook_verdict(cell)["status"], str(info.value)))
    (en_status, en_text), (ko_status, ko_text) = verdicts
    assert en_status == ko_status == "fail"
    assert en_text == ("ai_matmul(1, 1, 1) returned 2, which is not right. Re-derive FLOPs and "
                       "bytes from the definitions above.")
    assert "반환값이 2인데" in ko_text


@pytest.mark.skipif(__import__("autograder.sandbox.bwrap").sandbox.bwrap.bwrap_path() is None,
                    reason="bubblewrap is not installed (make system-deps)")
def test_the_trusted_recheck_speaks_the_notebooks_language(tmp_path):
    """End to end through the sandbox: COURSE_LANG reaches the check process (its allow-list),
    the check's error and the grader's own timeout message and note are Korean."""
    from autograder.grading import trusted_process
    from autograder.sandbox import limits

    def job(grade_id: str, code: str) -> dict:
        return {"grade_id": grade_id, "code": code, "bundle": {"source": "\n", "names": []},
                "setup_error": None}

    notes: list[str] = []
    results = trusted_process.run_jobs(
        [job("wrong", "from course.checks.answers import expect_close\n"
                      "expect_close(2.0, 1.0, 'ai_matmul(1, 1, 1)')"),
         job("hangs", "while True:\n    pass")],
        course_root=tmp_path / "course", timeout_s=3, extra_env={i18n.ENV: "ko"},
        notes=notes, limits=limits.Limits(after_timeout=1), language="ko")
    wrong, hangs = results
    assert wrong["status"] == "fail" and wrong["ename"] == "AnswerError"
    assert wrong["evalue"].startswith("ai_matmul(1, 1, 1)의 반환값이 2인데"), wrong
    assert hangs["ename"] == "Timeout" and "안에 끝나지 않았다" in hangs["evalue"], hangs
    assert notes == ["검사 hangs가 3 s 안에 끝나지 않았다; 노트북의 다른 검사에는 1 s가 주어졌다"]


@pytest.mark.skipif(__import__("autograder.sandbox.bwrap").sandbox.bwrap.bwrap_path() is None,
                    reason="bubblewrap is not installed (make system-deps)")
def test_the_sandboxed_kernel_speaks_the_notebooks_language(tmp_path, monkeypatch):
    """End to end: a notebook marked Korean runs in the grading sandbox's kernel, which gets
    COURSE_LANG=ko (and would say "en tile" if it did not)."""
    import nbformat

    from autograder.grading import config
    from autograder.grading.execute import SurvivingExecute
    from autograder.sandbox import bwrap as sandbox

    course = tmp_path / "course"
    work = course / "autograded" / "s" / "week4"
    work.mkdir(parents=True)
    monkeypatch.setenv("JUPYTER_PATH", str(config.install_sandboxed_kernelspec(course)))
    monkeypatch.setenv(sandbox.ROOT_ENV, str(course))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from course.runtime import i18n\nprint(i18n.language(), i18n._('tile'))")])
    nb.metadata["course"] = {"language": "ko"}
    ex = SurvivingExecute(kernel_name=config.KERNEL_NAME, timeout=120)
    nb, _res = ex.preprocess(nb, {"metadata": {"path": str(work)}})
    assert [o.get("text") for o in nb.cells[0].outputs] == ["ko 타일\n"]


def test_a_fresh_check_process_speaks_the_notebooks_language(tmp_path, monkeypatch):
    """trust.runner's child (simulator inspections, timings) cannot find the notebook: it gets
    the language of the process that starts it."""
    import subprocess

    from course.trust import runner

    seen = {}

    class Stop(Exception):
        pass

    def popen(argv, env, **kwargs):
        seen.update(json.loads(Path(argv[-2]).read_text())["env"])  # the job's environment
        raise Stop

    monkeypatch.setenv("JPY_SESSION_NAME", str(_notebook(tmp_path, "ko")))
    monkeypatch.setattr(subprocess, "Popen", popen)
    with pytest.raises(Stop):
        runner.run_job({"task": "none"}, simulator=False)
    assert seen[i18n.ENV] == "ko"


def test_every_datasheet_note_is_shown_in_korean():
    """The roofline cell prints the datasheet's note for the GPU it runs on (notebook 05, GPU
    only): each note is a catalog entry, and its Korean reads Korean."""
    from course.runtime.devices import DATASHEET

    for spec in DATASHEET.values():
        korean = i18n.in_language("ko", spec.notes)
        assert korean != spec.notes and any("가" <= c <= "힣" for c in korean), spec.name


def test_aligned_lines_line_up_hangul_and_align_each_side():
    """The one plain-text table renderer: width by display columns (a Hangul letter takes
    two), the first ``left`` columns left-aligned, the rest right-aligned, an optional rule."""
    from course.runtime.i18n import aligned_lines, text_width

    lines = aligned_lines([("커널", "시간"), ("naive", "3.1 ms"), ("tiled 32", "1.9 ms")],
                          rule=True)
    assert lines[1] == "--------  ------"
    assert len({text_width(line) for line in lines}) == 1
    assert lines[0].startswith("커널    ") and lines[2].startswith("naive   ")
    assert lines[2].endswith("3.1 ms") and lines[0].endswith("  시간")
    two = aligned_lines([("a", "b", "c"), ("long", "x", "y")], left=2)
    assert two == ["a     b  c", "long  x  y"]
