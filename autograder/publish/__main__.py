"""``python -m autograder.publish [--out DIR] [--commit]`` (``make publish``): build the student
distribution, check it, and write it only if it holds no answer.

1. refuse while the release is older than its sources (``make release`` first);
2. build the distribution in a scratch folder (:mod:`autograder.publish.student_tree`) and its
   wheel;
3. run the leak check on both (:mod:`autograder.publish.leaks`): on any leak, say what and
   where, write nothing and exit 1;
4. replace ``DIR`` (default ``student-dist/``) with it — a ``.git`` folder there is kept, so
   ``DIR`` can be a clone of the student repository — and put the wheel in
   ``build/student-wheel/``;
5. with ``--commit`` (``COMMIT=1``; refused while the repository URL is the placeholder),
   commit everything in ``DIR`` and tag it ``COURSE_REF`` (``v`` +
   ``COURSE_VERSION``): then ``git -C DIR push --follow-tags`` publishes it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.publish import leaks, student_tree
from autograder.release import freshness, generated
from autograder.viewing.terminal import as_typed
from course.runtime import config

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = Path("student-dist")
WHEEL_DIR = Path("build") / "student-wheel"


def check(root: Path, tree: Path, wheel: Path | None) -> list[leaks.Leak]:
    """Every answer of ``root`` found in the distribution ``tree`` and its ``wheel``."""
    secrets = leaks.collect(root)
    found = leaks.scan_tree(tree, secrets)
    if wheel is not None:
        found += leaks.scan_wheel(wheel, secrets)
    return found


def _replace(out: Path, stage: Path) -> None:
    """``out`` becomes ``stage``'s files; a ``.git`` in ``out`` stays (a student repo clone)."""
    out.mkdir(parents=True, exist_ok=True)
    for child in out.iterdir():
        if child.name == ".git":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    for child in stage.iterdir():
        if child.is_dir():
            shutil.copytree(child, out / child.name)
        else:
            shutil.copy2(child, out / child.name)


def _git(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(out), *args], capture_output=True, text=True)


def commit_and_tag(out: Path) -> str:
    """Commit ``out`` (a git work tree) and tag it ``COURSE_REF``; what to run next."""
    if _git(out, "rev-parse", "--git-dir").returncode != 0:
        raise SystemExit(f"{as_typed('COMMIT=1', '--commit')}: {out} is not a git repository "
                         "(clone the student repository there first)")
    tag = config.COURSE_REF
    _git(out, "add", "-A")
    changed = _git(out, "diff", "--cached", "--name-only").stdout.split()
    tagged = _git(out, "rev-parse", "-q", "--verify", f"refs/tags/{tag}").returncode == 0
    if changed == [student_tree.MANIFEST] and tagged:
        # only the record of where it was built from moved (a commit here that changed nothing
        # students get): the published tag stands as it is
        _git(out, "reset", "-q", "--hard", "HEAD")
        return f"nothing new for students; {tag} stays as published"
    if changed:
        proc = _git(out, "commit", "-q", "-m", f"Publish week 4 {tag}")
        if proc.returncode != 0:
            raise SystemExit(f"git commit failed: {proc.stderr.strip()}")
    existing = _git(out, "rev-parse", "-q", "--verify", f"refs/tags/{tag}")
    head = _git(out, "rev-parse", "HEAD").stdout.strip()
    if existing.returncode == 0 and _git(out, "rev-list", "-n1", tag).stdout.strip() != head:
        raise SystemExit(f"the tag {tag} already names another commit of {out}: bump "
                         "COURSE_VERSION in course/runtime/config.py, `make release`, and "
                         "publish again")
    if existing.returncode != 0:
        _git(out, "tag", "-a", tag, "-m", f"week 4 {tag}")
    return f"git -C {out} push --follow-tags"


def publish(root: Path, out: Path, commit: bool = False, wheel_dir: Path | None = None) -> int:
    """Build, check and (only if no answer is found) write the student distribution into
    ``out`` and its wheel into ``wheel_dir`` (default ``root/build/student-wheel``); with
    ``commit``, commit and tag it there. The exit status: 0, or 1 if refused."""
    stale = generated.sync(root, write=False).changed or freshness.stale(root)
    if stale:
        print("refused: the release is older than its sources (" + ", ".join(stale)
              + "): run `make release` first", file=sys.stderr)
        return 1
    warning = generated.placeholder_warning()
    if warning:
        print(warning, file=sys.stderr)
        if commit:  # a tag students could be sent to, on a URL that installs nothing
            print(f"refused: nothing committed or tagged in {out} while COURSE_REPO_URL is the "
                  "placeholder; set it in course/runtime/config.py, `make release`, then "
                  "publish again", file=sys.stderr)
            return 1
    with tempfile.TemporaryDirectory() as tmp:
        stage = student_tree.build(root, Path(tmp) / "student")
        wheel = student_tree.build_wheel(stage, Path(tmp) / "wheel")
        found = check(root, stage, wheel)
        if found:
            print(f"refused: {len(found)} answer(s) found in the student distribution; "
                  "nothing was written", file=sys.stderr)
            for leak in found[:40]:
                print(f"  {leak}", file=sys.stderr)
            if len(found) > 40:
                print(f"  … and {len(found) - 40} more", file=sys.stderr)
            return 1
        _replace(out, stage)
        wheel_dir = wheel_dir or root / WHEEL_DIR
        shutil.rmtree(wheel_dir, ignore_errors=True)
        wheel_dir.mkdir(parents=True)
        shutil.copy(wheel, wheel_dir / wheel.name)
    print(f"student distribution {config.COURSE_REF} written to {out} (no answer in it, nor in "
          f"its wheel {wheel_dir / wheel.name}); students install "
          f"{config.pip_requirement()}")
    if commit:
        print(f"committed and tagged {config.COURSE_REF}; now: {commit_and_tag(out)}")
    else:
        again = as_typed(f"make publish PUBLISH_OUT={out} COMMIT=1", "--commit")
        where = ("the student repository, once COURSE_REPO_URL is set (now the placeholder)"
                 if warning else f"the student repository ({config.COURSE_REPO_URL})")
        print(f"to publish: commit {out} to {where}, tag it {config.COURSE_REF} and push (or, "
              f"in a clone of it, run again with {again})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.publish", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the instructor's repository")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the distribution goes (default: ROOT/student-dist; may be "
                        "a clone of the student repository)")
    parser.add_argument("--commit", action="store_true",
                        help="commit the distribution in OUT (a git clone) and tag it")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    return publish(root, (args.out or root / DEFAULT_OUT).resolve(), args.commit)


if __name__ == "__main__":
    raise SystemExit(main())
