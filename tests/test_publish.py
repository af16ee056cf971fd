"""The student distribution (``make publish``): what it holds, and the leak check that guards it.

The distribution and its wheel are built once (about 5 s). The leak check passes on them, and
each kind of answer the issue names, planted in a copy — renamed, pasted, moved —, makes it fail
and say what it found; ``publish`` then writes nothing. What ``course`` ships reveals no hidden
test's arguments.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import sqlite3
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import nbformat
import pytest

from autograder.answers import table
from autograder.publish import __main__ as publish
from autograder.publish import leaks, student_tree
from course.checks import expected
from course.runtime import config

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "source" / "week4"


@pytest.fixture(scope="module")
def secrets() -> leaks.Secrets:
    return leaks.collect(ROOT)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The student distribution of this repository and its wheel."""
    tmp = tmp_path_factory.mktemp("publish")
    tree = student_tree.build(ROOT, tmp / "student")
    return tree, student_tree.build_wheel(tree, tmp / "wheel")


def test_the_distribution_holds_what_a_student_needs_and_nothing_else(built) -> None:
    tree, _ = built
    assert sorted(p.name for p in tree.iterdir()) == [
        "LICENSE", "PUBLISHED.json", "README.ko.md", "README.md", "assets", "course",
        "pyproject.toml", "release", "release-ko"]
    for folder in student_tree.RELEASES:
        names = sorted(p.name for p in (ROOT / folder).glob("*.ipynb"))
        assert sorted(p.name for p in (tree / folder).iterdir()) == names
        for name in names:  # copied as released, byte for byte
            assert (tree / folder / name).read_bytes() == (ROOT / folder / name).read_bytes()
    attached = {m for p in (ROOT / "release" / "week4").glob("*.ipynb")
                for m in re.findall(r"attachment:([\w.-]+\.png)", p.read_text())}
    assert attached and {p.name for p in (tree / "assets").glob("*.png")} == attached
    assert {p.name for p in (tree / "assets" / "ko").glob("*.png")} == attached
    assert not list(tree.rglob("__pycache__")) and not list(tree.rglob("*.pyc"))
    project = (tree / "pyproject.toml").read_text()
    assert 'name = "gpu-course-week4"' in project
    assert f'version = "{config.COURSE_VERSION}"' in project
    assert "autograder" not in project and "sample_class" not in project
    assert "nbgrader" not in project  # the grading extras are the instructor's
    manifest = json.loads((tree / student_tree.MANIFEST).read_text())
    assert manifest["tag"] == config.COURSE_REF and "release/week4/01_arithmetic_intensity.ipynb" \
        in manifest["files"]


def test_the_student_readmes_say_how_to_open_and_the_two_tracks(built) -> None:
    tree, _ = built
    en, ko = (tree / "README.md").read_text(), (tree / "README.ko.md").read_text()
    for text, folder in ((en, "release/week4"), (ko, "release-ko/week4")):
        for nb in sorted((ROOT / folder).glob("*.ipynb")):
            assert f"({config.colab_url(nb.name, folder=folder)})" in text
        assert config.pip_requirement() in text and f"jupyter lab {folder}" in text
        assert "RawKernel" in text and "@cuda.jit" in text and "02c_naive_gemm_cuda" in text
    assert "Colab" in en and "JupyterLab" in en and "Numba CUDA" in en and "CUDA C" in en
    assert "노트북 열기" in ko and "두 트랙" in ko
    assert "{" not in en.replace("{M}", "") and "MIT" in (tree / "LICENSE").read_text()


def test_the_wheel_installs_the_course_package_alone(built) -> None:
    _, wheel = built
    with zipfile.ZipFile(wheel) as zf:
        tops = {n.split("/", 1)[0] for n in zf.namelist()}
        names = zf.namelist()
    assert tops == {"course", f"gpu_course_week4-{config.COURSE_VERSION}.dist-info"}, tops
    assert "course/checks/expected_answers.json" in names
    assert "course/locale/ko/LC_MESSAGES/course.mo" in names and "course/tools.pyi" in names


def test_the_leak_check_passes_on_the_distribution_and_its_wheel(built) -> None:
    tree, wheel = built
    assert publish.check(ROOT, tree, wheel) == []


def test_the_secrets_cover_every_solution_and_hidden_test(secrets) -> None:
    """Every solution cell and every hidden-test block gives fingerprints (no exercise is left
    unguarded because its lines were too short or all shared; a solution given twice, as 03's
    copy of 02's kernel, is named after its first cell)."""
    for path in sorted(SOURCE.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            for text in leaks._split_source_cell(cell)[0]:
                lines = [line for line in text.splitlines() if leaks.meaningful(line)]
                found = [line for line in lines if leaks.normalise(line) in secrets.lines]
                assert found, f"{path.stem}/{meta.get('grade_id')}: no fingerprint"
    whats = set(secrets.lines.values())
    assert any(w.startswith("the sample class") for w in whats)
    assert any(w.startswith("the grader") for w in whats)
    assert any(w.startswith("hidden test of 05_roofline") for w in whats)


def _solution_lines(stem: str, grade_id: str) -> str:
    nb = nbformat.read(SOURCE / f"{stem}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell.source


def _plant_sample_student(tree: Path) -> str:
    shutil.copy(ROOT / "sample_class" / "students" / "ana_isinstance.py",
                tree / "course" / "notebooks" / "examples.py")
    return "the sample class"


def _plant_solution_in_markdown(tree: Path) -> str:
    path = tree / "release" / "week4" / "01_arithmetic_intensity.ipynb"
    nb = nbformat.read(path, as_version=4)
    body = _solution_lines("01_arithmetic_intensity", "ai_gemm_tiled")
    inner = body.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
    nb.cells.append(nbformat.v4.new_markdown_cell("A hint:\n```\n" + inner + "\n```"))
    nbformat.write(nb, tree / "release" / "week4" / "01b_hints.ipynb")  # renamed, too
    return "solution of 01_arithmetic_intensity/ai_gemm_tiled"


def _plant_one_solution_line(tree: Path) -> str:
    with open(tree / "course" / "runtime" / "seeds.py", "a") as f:
        f.write("\n# elements = blocks * steps * 2 * tile * tile + M * N\n")
    return "solution of 01_arithmetic_intensity/ai_gemm_tiled"


def _plant_hidden_test(tree: Path) -> str:
    body = _solution_lines("06_tile_sweep", "blocks_per_sm_hopper")
    hidden = body.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    (tree / "course" / "checks" / "more_cases.txt").write_text(hidden)
    return "hidden test of 06_tile_sweep/blocks_per_sm_hopper"


def _plant_solution_output(tree: Path) -> str:
    path = tree / "release" / "week4" / "05_roofline.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="25.44\n")]
    nbformat.write(nb, path)
    return "a stored output of a solution cell"


def _plant_gradebook(tree: Path) -> str:
    db = sqlite3.connect(tree / "assets" / "figure-data.bin")
    db.execute("CREATE TABLE grade (id TEXT, score REAL)")
    db.commit()
    db.close()
    return "an SQLite database"


def _plant_grade_export(tree: Path) -> str:
    (tree / "assets" / "scores.txt").write_text(
        "assignment,duedate,timestamp,student_id,last_name,first_name,email,raw_score,"
        "late_submission_penalty,score,max_score\nweek4,,,ada,,,,60,0,60,60\n")
    return "a grade export"


def _plant_grader(tree: Path) -> str:
    shutil.copy(ROOT / "autograder" / "grading" / "trusted.py", tree / "course" / "verify.py")
    return "the grader"


def _plant_grader_rules(tree: Path) -> str:
    shutil.copy(ROOT / "autograder" / "answers" / "intensity.py",
                tree / "course" / "checks" / "models.py")
    return "the grader"


def _plant_compiled(tree: Path) -> str:
    (tree / "course" / "checks" / "cache.pyc").write_bytes(b"\x00\x01compiled")
    return "a compiled file"


PLANTS = [_plant_sample_student, _plant_solution_in_markdown, _plant_one_solution_line,
          _plant_hidden_test, _plant_solution_output, _plant_gradebook, _plant_grade_export,
          _plant_grader, _plant_grader_rules, _plant_compiled]


@pytest.mark.parametrize("plant", PLANTS, ids=lambda p: p.__name__.removeprefix("_plant_"))
def test_a_planted_leak_fails_the_check(plant, built, secrets, tmp_path) -> None:
    tree = tmp_path / "student"
    shutil.copytree(built[0], tree)
    what = plant(tree)
    found = leaks.scan_tree(tree, secrets)
    assert found, f"{plant.__name__}: the leak check found nothing"
    assert any(leak.what.startswith(what) for leak in found), [str(x) for x in found]


def test_rules_copied_into_the_course_package_itself_are_caught(tmp_path) -> None:
    """The course package is what students get, so its lines are not exempt from the answer
    rules: an instructor who copies the rules into ``course/`` before publishing is stopped
    (the other plants go into a staged copy; this one into the repository itself)."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("source", "autograder", "sample_class", "tests"):
        (root / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "course", root / "course",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "autograder" / "answers" / "intensity.py",
                root / "course" / "checks" / "models.py")
    found = leaks.scan_tree(root / "course", leaks.collect(root))
    assert any("models.py" in leak.where and "autograder/answers" in leak.what
               for leak in found), found[:3]
    # the package's own files as publishing takes them: the .pyc files `make install` writes
    # beside them are never copied into a tree (and refused in one)
    as_published = shutil.copytree(ROOT / "course", tmp_path / "clean" / "course",
                                   ignore=student_tree.IGNORED)
    clean = leaks.scan_tree(as_published, leaks.collect(ROOT))
    assert clean == [], clean[:3]


def test_a_leak_in_the_wheel_alone_fails_the_check(built, secrets, tmp_path) -> None:
    """The wheel is checked on its own: a file the build would add (or a package besides
    ``course``) is caught there even when the folder is clean."""
    _, wheel = built
    bad = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr("sample_class/students/ada_correct.py",
                     (ROOT / "sample_class" / "students" / "ada_correct.py").read_text())
    found = leaks.scan_wheel(bad, secrets)
    assert any(leak.what == "a file outside the course package" for leak in found)
    assert any(leak.what.startswith("the sample class") for leak in found)
    assert leaks.scan_wheel(wheel, secrets) == []


def test_publish_refuses_on_a_leak_and_writes_nothing(monkeypatch, tmp_path, capsys) -> None:
    real_build = student_tree.build

    def leaky(root: Path, out: Path) -> Path:
        tree = real_build(root, out)
        _plant_sample_student(tree)
        return tree

    monkeypatch.setattr(student_tree, "build", leaky)
    out = tmp_path / "student-repo"
    assert publish.publish(ROOT, out, wheel_dir=tmp_path / "wheel") == 1
    assert not out.exists() and not (tmp_path / "wheel").exists()
    err = capsys.readouterr().err
    assert "refused" in err and "course/notebooks/examples.py" in err


def test_publish_writes_the_distribution_into_a_clone_and_tags_it(tmp_path, monkeypatch) -> None:
    # a real course's URL (the warning alone: the README's links stay as generated here)
    monkeypatch.setattr(publish.generated, "placeholder_warning", lambda: None)
    out = tmp_path / "week4-student"
    subprocess.run(["git", "init", "-q", str(out)], check=True)
    for key, value in (("user.name", "Instructor"), ("user.email", "i@example.org")):
        subprocess.run(["git", "-C", str(out), "config", key, value], check=True)
    (out / "stale.txt").write_text("from an older publication")
    assert publish.publish(ROOT, out, commit=True, wheel_dir=tmp_path / "wheel") == 0
    assert not (out / "stale.txt").exists() and (out / ".git").is_dir()
    assert (out / "course" / "checks" / "expected_answers.json").is_file()
    tags = subprocess.run(["git", "-C", str(out), "tag"], capture_output=True, text=True).stdout
    assert tags.split() == [config.COURSE_REF]
    status = subprocess.run(["git", "-C", str(out), "status", "--porcelain"],
                            capture_output=True, text=True).stdout
    assert status == ""
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    assert wheel.name == f"gpu_course_week4-{config.COURSE_VERSION}-py3-none-any.whl"
    # publishing the same release again changes nothing and keeps the tag
    assert publish.publish(ROOT, out, commit=True, wheel_dir=tmp_path / "wheel") == 0
    log = subprocess.run(["git", "-C", str(out), "log", "--oneline"], capture_output=True,
                         text=True).stdout
    assert len(log.splitlines()) == 1
    # nor does a build from a later commit here that changes nothing students get (only
    # PUBLISHED.json's origin): the tag stands
    manifest = json.loads((out / student_tree.MANIFEST).read_text())
    manifest["built_from"] = "0" * 40
    (out / student_tree.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    assert "nothing new" in publish.commit_and_tag(out)
    log = subprocess.run(["git", "-C", str(out), "log", "--oneline"], capture_output=True,
                         text=True).stdout
    assert len(log.splitlines()) == 1
    assert "0" * 40 not in (out / student_tree.MANIFEST).read_text()
    # a real change under the same version is refused: the tag would move under students
    (out / "README.md").write_text("changed\n")
    with pytest.raises(SystemExit, match="bump"):
        publish.commit_and_tag(out)


def test_publish_refuses_to_commit_while_the_url_is_the_placeholder(tmp_path, capsys) -> None:
    assert config.is_placeholder()
    out = tmp_path / "week4-student"
    subprocess.run(["git", "init", "-q", str(out)], check=True)
    assert publish.publish(ROOT, out, commit=True, wheel_dir=tmp_path / "wheel") == 1
    err = capsys.readouterr().err
    assert "refused: nothing committed or tagged" in err and "COURSE_REPO_URL" in err
    assert not (out / "course").exists()
    tags = subprocess.run(["git", "-C", str(out), "tag"], capture_output=True, text=True).stdout
    assert tags == ""


# --- what course ships reveals no hidden test's parameters ------------------------------------

def _key(check: str, case: Any) -> tuple[str, str]:
    """A call as a set can hold it (a case may hold dicts: notebook 5's bytes per level)."""
    return check, json.dumps(list(case), sort_keys=True)


def _visible_calls() -> set[tuple[str, str]]:
    """The calls the release's visible test cells make (read from the notebooks, not from the
    table under test), as :func:`_key` writes them."""
    out: set[tuple[str, str]] = set()
    for check, entries in table.build(SOURCE).items():
        for entry in entries:
            if check == "check_attainable_array":
                intensities, peak, bandwidth = entry["case"]
                out.update(_key("check_attainable", (ai, peak, bandwidth)) for ai in intensities)
            else:
                out.add(_key(check, entry["case"]))
    return out


def _hidden_cases() -> list[tuple[str, tuple]]:
    return [(check, tuple(case)) for check, args in table.hidden_calls(SOURCE)
            for case in args[1]]


def test_course_ships_no_hidden_tests_arguments() -> None:
    hidden = _hidden_cases()
    assert len(hidden) >= 20, hidden  # every hidden answer-check call was read
    assert {"check_measured_intensities", "check_bounding_level"} <= {c for c, _ in hidden}
    visible = _visible_calls()
    for check, case in hidden:
        if _key(check, case) in visible:
            continue  # the visible tests show it too
        for entry in json.loads(expected.TABLE.read_text()).get(check, []):
            assert tuple(entry["case"]) != case, (check, case)
    # nor, written out, anywhere in the package's text (numbers joined as the cell wrote them)
    texts = [re.sub(r"\s", "", p.read_text(errors="replace"))
             for p in (ROOT / "course").rglob("*")
             if p.is_file() and p.suffix not in (".mo", ".pyc")]
    for block in (b for _, _, src in table.test_cells(SOURCE) for b in table.hidden_code(src)):
        for case in _hidden_case_literals(block):
            assert not any(case in t for t in texts), case


def _hidden_case_literals(block: str) -> list[str]:
    """The cases a hidden block's checks are called on (each tuple in a list argument of a
    ``check_…`` call), as written, whitespace removed; a tuple of digits, as ``(1, 1, 1)``, is
    too plain to tell anything and is left out."""
    out = []
    for call in ast.walk(ast.parse(block)):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id.startswith("check_")):
            continue
        for arg in call.args[1:]:
            for node in (arg.elts if isinstance(arg, ast.List) else []):
                numbers = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
                           and isinstance(n.value, (int, float))]
                if isinstance(node, ast.Tuple) and max(numbers, default=0) > 9:
                    out.append(re.sub(r"\s", "", ast.get_source_segment(block, node) or ""))
    return out


def test_the_hidden_arguments_check_can_fail(tmp_path, monkeypatch) -> None:
    """Planting a hidden call's case in the table makes the check above fail."""
    check, case = next((c, k) for c, k in _hidden_cases() if _key(c, k) not in _visible_calls())
    data = json.loads(expected.TABLE.read_text())
    data[check].append({"case": list(case), "value": 0.0, "mistakes": []})
    planted = tmp_path / "expected_answers.json"
    planted.write_text(json.dumps(data))
    monkeypatch.setattr(expected, "TABLE", planted)
    with pytest.raises(AssertionError):
        test_course_ships_no_hidden_tests_arguments()
