"""environment.yml (conda) agrees with pyproject.toml and constraints.txt (what `make` installs).

Same packages (pip names mapped to conda-forge names where they differ), every exact version of
constraints.txt admitted by environment.yml, and environment.yml's versions inside
pyproject.toml's ranges (its lower bound allowed there, its upper bound no looser).
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
#: pip name → conda-forge name, where they differ.
PIP_TO_CONDA = {"cupy-cuda12x": "cupy", "nvidia-cuda-nvrtc": "cuda-nvrtc"}
#: conda-only entries: the interpreter, pip itself, CUDA compiler pieces Numba loads.
CONDA_ONLY = {"python", "pip", "cuda-nvcc"}


def _conda_spec(entry: str) -> tuple[str, SpecifierSet]:
    name, _, spec = entry.strip().partition(" ")
    return canonicalize_name(name), SpecifierSet(spec.replace(" ", ""))


def environment_specs(env: dict) -> dict[str, SpecifierSet]:
    """Every package of environment.yml (conda and pip sections) with its version range."""
    specs: dict[str, SpecifierSet] = {}
    for entry in env["dependencies"]:
        if isinstance(entry, dict):
            for line in entry.get("pip", []):
                if line.startswith("-e") or line.startswith("."):
                    continue
                req = Requirement(line)
                specs[canonicalize_name(req.name)] = req.specifier
        else:
            name, spec = _conda_spec(entry)
            specs[name] = spec
    return specs


def project_specs(pyproject: dict) -> dict[str, SpecifierSet]:
    """pyproject.toml's requirements (all extras, not the package itself), by conda name."""
    project = pyproject["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines += extra
    specs = {}
    for line in lines:
        req = Requirement(line)
        if canonicalize_name(req.name) == canonicalize_name(project["name"]):
            continue
        name = canonicalize_name(req.name)
        specs[PIP_TO_CONDA.get(name, name)] = req.specifier
    return specs


def pins(constraints: str) -> dict[str, Version]:
    out = {}
    for line in constraints.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            name = canonicalize_name(name)
            out[PIP_TO_CONDA.get(name, name)] = Version(version)
    return out


def _bound(spec: SpecifierSet, ops: tuple[str, ...]) -> Version | None:
    found = [Version(s.version) for s in spec if s.operator in ops]
    return min(found) if ops[0].startswith("<") and found else (max(found) if found else None)


def disagreements(env: dict, pyproject: dict, constraints: str) -> list[str]:
    """Every way environment.yml departs from pyproject.toml and constraints.txt."""
    conda, wanted, pinned = environment_specs(env), project_specs(pyproject), pins(constraints)
    problems = []
    for name in sorted(set(wanted) | set(pinned)):
        if name not in conda:
            problems.append(f"{name} is in pyproject.toml/constraints.txt but not in "
                            "environment.yml")
    for name in sorted(set(conda) - set(wanted) - set(pinned) - CONDA_ONLY):
        problems.append(f"{name} is in environment.yml but in neither pyproject.toml nor "
                        "constraints.txt")
    for name, version in sorted(pinned.items()):
        if name in conda and version not in conda[name]:
            problems.append(f"constraints.txt pins {name}=={version}, which environment.yml's "
                            f"{name} {conda[name]} excludes")
    for name, spec in sorted(wanted.items()):
        if name not in conda:
            continue
        low = _bound(conda[name], (">=", "==", "~="))
        if low is None or low not in spec:
            problems.append(f"environment.yml's {name} {conda[name]} reaches below "
                            f"pyproject.toml's {spec}")
        high, project_high = _bound(conda[name], ("<", "<=")), _bound(spec, ("<", "<="))
        if project_high is not None and (high is None or high > project_high):
            problems.append(f"environment.yml's {name} {conda[name]} reaches above "
                            f"pyproject.toml's {spec}")
    python = _bound(conda.get("python", SpecifierSet()), (">=",))
    if python is None or python not in SpecifierSet(pyproject["project"]["requires-python"]):
        problems.append("environment.yml's python does not meet requires-python")
    return problems


def _files() -> tuple[dict, dict, str]:
    return (yaml.safe_load((ROOT / "environment.yml").read_text()),
            tomllib.loads((ROOT / "pyproject.toml").read_text()),
            (ROOT / "constraints.txt").read_text())


def test_environment_yml_agrees_with_pyproject_and_constraints() -> None:
    env, pyproject, constraints = _files()
    assert env["channels"] == ["conda-forge"]
    assert disagreements(env, pyproject, constraints) == []
    pip = next(e["pip"] for e in env["dependencies"] if isinstance(e, dict))
    assert "-e ." in pip  # the course package itself


def test_the_check_finds_each_kind_of_disagreement() -> None:
    env, pyproject, constraints = _files()
    bad = copy.deepcopy(env)
    deps = bad["dependencies"]
    deps[:] = [d for d in deps if not (isinstance(d, str) and d.startswith("nbgrader"))]
    deps[deps.index(next(d for d in deps if isinstance(d, str) and d.startswith("numpy ")))] = \
        "numpy >=2.4.6,<2.6"
    deps[deps.index(next(d for d in deps if isinstance(d, str) and d.startswith("tqdm ")))] = \
        "tqdm >=4.71"
    deps.append("requests")
    problems = disagreements(bad, pyproject, constraints)
    assert any(p.startswith("nbgrader is in pyproject") for p in problems), problems
    assert any("numpy" in p and "reaches above" in p for p in problems), problems
    assert any("pins tqdm==4.70.1" in p for p in problems), problems
    assert any(p.startswith("requests is in environment.yml") for p in problems), problems
    assert len(problems) == 4, problems
