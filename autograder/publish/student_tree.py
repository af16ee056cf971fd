"""Write the student distribution's folder from the instructor's repository.

Nothing in it is written by hand: the ``course`` package and the two releases are copied (no
caches), the figures are the ones the release notebooks embed, and the README (English and
Korean), the license and ``pyproject.toml`` come from ``templates/`` filled in from
``course/runtime/config.py`` (repository, version, tag) and the instructor's ``pyproject.toml``
(the course package's dependencies). ``PUBLISHED.json`` records what it was built from.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from course.runtime import config

TEMPLATES = Path(__file__).with_name("templates")
#: the folders copied as they are (the releases are generated, never edited by hand).
RELEASES = ("release/week4", "release-ko/week4")
#: what a copied folder leaves behind.
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".ipynb_checkpoints")
#: the record of a publication, at the top of the distribution.
MANIFEST = "PUBLISHED.json"
#: the package a student installs.
PACKAGE = "course"
ATTACHMENT = re.compile(r"attachment:([\w.-]+\.png)")


def _toml_list(items: list[str]) -> str:
    return "[\n" + "".join(f"    {json.dumps(i, ensure_ascii=False)},\n" for i in items) + "]"


def student_pyproject(root: Path) -> str:
    """The distribution's ``pyproject.toml``: the instructor's dependencies of ``course``, its
    student extras (``gpu``, ``cudac``), and only the ``course`` packages and package data."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    setuptools = project["tool"]["setuptools"]
    packages = [p for p in setuptools["packages"] if p.split(".")[0] == PACKAGE]
    data = {k: v for k, v in setuptools["package-data"].items() if k.split(".")[0] == PACKAGE}
    return (TEMPLATES / "pyproject.toml.in").read_text(encoding="utf-8").format(
        version=config.COURSE_VERSION, url=config.COURSE_REPO_URL,
        dependencies=_toml_list(project["project"]["dependencies"]),
        extras="\n".join(f"{name} = {json.dumps(extras[name])}" for name in ("gpu", "cudac")),
        packages=_toml_list(packages),
        package_data="\n".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in data.items()))


def _readme(name: str, release: Path, folder: str) -> str:
    notebooks = sorted(p.name for p in release.glob("*.ipynb"))
    links = "\n".join(f"- [{Path(n).stem}]({config.colab_url(n, folder=folder)})"
                      for n in notebooks)
    return (TEMPLATES / name).read_text(encoding="utf-8").format(
        version=config.COURSE_VERSION, url=config.COURSE_REPO_URL,
        requirement=config.pip_requirement(), links=links)


def figures(root: Path) -> list[Path]:
    """The figures (relative to ``root``) the release notebooks embed: each ``assets/`` PNG,
    and its Korean twin in ``assets/ko/``, whose name a notebook attaches."""
    names: set[str] = set()
    for folder in RELEASES:
        for path in (root / folder).glob("*.ipynb"):
            names.update(ATTACHMENT.findall(path.read_text(encoding="utf-8")))
    out = []
    for name in sorted(names):
        for where in (Path("assets") / name, Path("assets") / "ko" / name):
            if (root / where).is_file():
                out.append(where)
    return out


def _commit(root: Path) -> str:
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    head = proc.stdout.strip() if proc.returncode == 0 else "unknown"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain"],
                           capture_output=True, text=True).stdout.strip()
    return head + ("+changes" if dirty else "")


def build(root: Path, out: Path) -> Path:
    """Write the student distribution of ``root`` into the empty or absent folder ``out``."""
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(root / PACKAGE, out / PACKAGE, ignore=IGNORED)
    for folder in RELEASES:
        if not any((root / folder).glob("*.ipynb")):
            raise FileNotFoundError(f"{root / folder} has no notebooks: run `make release`")
        shutil.copytree(root / folder, out / folder, ignore=IGNORED)
    for figure in figures(root):
        (out / figure).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / figure, out / figure)
    (out / "README.md").write_text(_readme("README.md", root / RELEASES[0], RELEASES[0]),
                                   encoding="utf-8")
    (out / "README.ko.md").write_text(_readme("README.ko.md", root / RELEASES[1], RELEASES[1]),
                                      encoding="utf-8")
    shutil.copy(TEMPLATES / "LICENSE", out / "LICENSE")
    (out / "pyproject.toml").write_text(student_pyproject(root), encoding="utf-8")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    manifest = {"version": config.COURSE_VERSION, "tag": config.COURSE_REF,
                "repository": config.COURSE_REPO_URL, "built_from": _commit(root),
                "files": {f: hashlib.sha256((out / f).read_bytes()).hexdigest()
                          for f in files}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return out


def build_wheel(tree: Path, out_dir: Path) -> Path:
    """The distribution's wheel, built from a copy of ``tree`` (the build leaves its
    ``build/`` and ``*.egg-info`` there, not in the distribution); its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    work = out_dir / "src"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(tree, work, ignore=shutil.ignore_patterns(".git"))
    proc = subprocess.run([sys.executable, "-m", "uv", "build", "--wheel", "--quiet",
                           "--out-dir", str(out_dir), str(work)], capture_output=True, text=True)
    shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building the student wheel failed:\n{proc.stderr[-3000:]}")
    (wheel,) = out_dir.glob("*.whl")
    return wheel
