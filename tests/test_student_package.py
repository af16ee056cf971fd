"""Students get the course, never the answers: exercise by exercise, what the student package
holds that could compute an answer.

For every exercise whose answer is a function of its arguments, the student package built by
``make publish`` is probed (tests/answer_probe.py): every function of every module of its
``course`` is called on the exercise's arguments, and none may return the right answer on all
of them. The probe is shown to work: on the course as it was before the rules moved to the
grader (``intensity_answers``' and ``roofline_answers``' models) it finds every exercise of
notebooks 1 and 5, and it finds the one tool the student package keeps on purpose:

* notebook 6's occupancy calculator (``course.gemm.occupancy.theoretical_occupancy``) stays,
  because the sweep, the target-GPU panel and the occupancy figures need it for any kernel and
  any GPU — the registers come from the compiler at run time. Why that is acceptable: the
  grader rebuilds every answer from the notebook's own cells under the code policy, which
  refuses any import from ``course``, so an answer that calls the calculator (or any course
  tool) scores nothing; and its rules are public anyway (NVIDIA's ``cuda_occupancy.h`` and the
  CUDA Occupancy Calculator, which the notebook cites). The exercise asks for the rules in the
  student's own code, with named mistakes (quarters, allocation units, the reserved 1 KiB);
  those mistakes are the same rules with one left out (``course.checks.occupancy``), which
  tells no more than the calculator does.
* likewise notebook 3's read counts (``tiled_reads``) and notebook 5's roofline figure (``Roof``)
  stay (the traffic check and the figures need them for any size); no single function of them
  is an exercise's answer, and an answer that calls them is refused the same way (tested below).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.answers import intensity as ia
from autograder.answers import levels as la
from autograder.answers import roofline as ra
from autograder.publish import student_tree
from course.gemm.occupancy import theoretical_occupancy
from course.trust.code_policy import DisallowedCodeError
from course.trust.kernel_source import bundle_from_cells

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "answer_probe.py"
#: the sweep's calculator: the student package keeps it (see above), and the probe finds it;
#: and notebook 6's check, whose named mistakes are the same rules with one left out at a time
#: (``_blocks_variant``: with none left out it is the calculator again, so it tells no more).
KEPT_TOOLS = {"predict_blocks_per_sm": ["course.checks.occupancy._blocks_variant",
                                        "course.gemm.occupancy.theoretical_occupancy"],
              "predict_occupancy": ["course.gemm.occupancy.theoretical_occupancy"]}


def _exercises() -> dict[str, dict]:
    rng = random.Random(29)
    sizes = [(rng.randint(1, 900), rng.randint(1, 900), rng.randint(1, 900)) for _ in range(5)]
    bpes = [2, 4, 8, 4, 2]
    machines = [(8141.0, 320.0), (66900.0, 4800.0), (1000.0, 250.0), (19500.0, 1555.0),
                (312.0, 96.0)]
    roofs = [(ai, p, b) for (p, b) in machines for ai in (0.5, p / b, 3 * p / b)]
    occupancy = [((7, 5), 256, 32, 2048), ((9, 0), 96, 40, 0), ((8, 0), 1024, 64, 8192),
                 ((7, 5), 64, 72, 4000), ((9, 0), 256, 32, 57 * 1024), ((8, 6), 48, 33, 100)]

    # notebook 5's readings per memory level: made-up ones, varied so that every level (and
    # "compute") is the answer somewhere, with other level names too
    readings = [(2.0e10, {"DRAM": 3.0e9, "L2": 3.0e9, "L1": 6.0e9}),      # DRAM-bound
                (2.0e10, {"DRAM": 3.0e7, "L2": 6.0e9, "L1": 9.0e9}),      # L2
                (2.0e10, {"L1": 3.0e10, "DRAM": 3.0e7, "L2": 1.0e9}),     # L1
                (2.0e11, {"DRAM": 3.0e7, "L2": 1.0e9, "L1": 3.0e9}),      # compute
                (4.0e11, {"HBM": 1.0e10, "L2": 9.0e10, "SMEM": 1.0e11})]  # L2, other names
    gpus = [{"DRAM": 3000.0, "L2": 9000.0, "L1": 30000.0}] * 4 + [
        {"HBM": 2500.0, "L2": 8000.0, "SMEM": 20000.0}]
    bounding = [(f, b, bw, 90000.0) for (f, b), bw in zip(readings, gpus, strict=True)]
    bounding.append((*readings[1], gpus[1], 20000.0))  # the L2 reading on a slower GPU: compute

    def spec(cases, answer, attribute=None):
        return {"cases": [list(c) for c in cases], "answers": [answer(*c) for c in cases],
                "attribute": attribute}

    with_bpe = list(zip(sizes, bpes, strict=True))
    tiled = list(zip(sizes, (4, 8, 16, 32, 12), bpes, strict=True))
    return {
        "ai_vector_add": spec([(s[0], b) for s, b in with_bpe], ia.vector_add_model),
        "ai_matmul": spec([(*s, b) for s, b in with_bpe], ia.matmul_model),
        "ai_gemm_naive": spec([(*s, b) for s, b in with_bpe], ia.naive_model),
        "ai_gemm_tiled": spec([(*s, t, b) for s, t, b in tiled], ia.tiled_model),
        # at bytes_per_element = 4, as a float32 tool would count (a course tool must not
        # compute even this special case)
        "ai_gemm_tiled at 4 bytes": spec([(*s, t) for s, t, _ in tiled], ia.tiled_model),
        "critical_ai": spec(machines, ra.ridge_model),
        "attainable_gflops": spec(roofs, ra.roof_model),
        "bound": spec(roofs, ra.bound_model),
        "measured_intensities": spec(readings, lambda f, b: la.intensities_expected((f, b)).value),
        "bounding_level": spec(bounding, la.bounding_model),
        "predict_blocks_per_sm": spec(
            occupancy, lambda *c: theoretical_occupancy(*c).blocks_per_sm, "blocks_per_sm"),
        "predict_occupancy": spec(
            occupancy, lambda *c: theoretical_occupancy(*c).occupancy, "occupancy"),
    }


def _probe(tree: Path) -> dict:
    proc = subprocess.run([sys.executable, str(PROBE), str(tree)], input=json.dumps(_exercises()),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def student_tree_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return student_tree.build(ROOT, tmp_path_factory.mktemp("publish") / "student")


@pytest.fixture(scope="module")
def probed(student_tree_dir: Path) -> dict:
    return _probe(student_tree_dir)


EXERCISES = ["ai_vector_add", "ai_matmul", "ai_gemm_naive", "ai_gemm_tiled",
             "ai_gemm_tiled at 4 bytes", "critical_ai", "attainable_gflops", "bound"]
#: notebook 5's hierarchical-roofline exercise (its rules never shipped in course: the probe is
#: shown to find them by planting them, below)
LEVEL_EXERCISES = ["measured_intensities", "bounding_level"]


@pytest.mark.parametrize("exercise", EXERCISES + LEVEL_EXERCISES)
def test_the_student_package_holds_no_function_computing_the_answer(probed, exercise) -> None:
    assert probed["found"][exercise] == [], (exercise, probed["found"][exercise])
    assert not [m for m in probed["unimportable"] if m.startswith("course.checks")]


@pytest.mark.parametrize("exercise", ["predict_blocks_per_sm", "predict_occupancy"])
def test_notebook_6s_exercises_have_only_the_sweeps_calculator(probed, exercise) -> None:
    """The probe finds the calculator the sweep needs (and it would find any other)."""
    assert probed["found"][exercise] == KEPT_TOOLS[exercise]


def test_the_probe_finds_the_rules_that_used_to_ship(student_tree_dir, tmp_path) -> None:
    """The student package as it was (the models in course.checks) fails every exercise of
    notebooks 1 and 5 above: the probe can fail."""
    old = tmp_path / "old"
    import shutil

    shutil.copytree(student_tree_dir, old)
    for name in ("intensity_answers", "roofline_answers"):
        shutil.copy(ROOT / "tests" / "before_29" / f"{name}.py",
                    old / "course" / "checks" / f"{name}.py")
    # and notebook 5's level rules, as a course module would hold them if they shipped
    (old / "course" / "perf" / "planted_levels.py").write_text(
        "def per_level(flops, level_bytes):\n"
        "    return {k: flops / v for k, v in level_bytes.items()}\n\n\n"
        "def slowest(flops, level_bytes, bandwidths_gbs, peak_gflops):\n"
        "    t = {k: v / bandwidths_gbs[k] for k, v in level_bytes.items()}\n"
        "    t['compute'] = flops / peak_gflops\n"
        "    return max(t, key=t.get)\n")
    found = _probe(old)["found"]
    for exercise in EXERCISES:
        assert found[exercise], exercise
    assert found["measured_intensities"] == ["course.perf.planted_levels.per_level"]
    assert found["bounding_level"] == ["course.perf.planted_levels.slowest"]


#: an answer that hands the work to a course tool, exercise by exercise
DELEGATING = {
    "ai_gemm_tiled": ("from course.tools import tiled_reads, modelled_ai",
                      "def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):\n"
                      "    return modelled_ai(tiled_reads(M, N, K, tile), M, N, K, "
                      "bytes_per_element)\n"),
    "ai_gemm_naive": ("from course.tools import naive_reads, modelled_ai",
                      "def ai_gemm_naive(M, N, K, bytes_per_element=4):\n"
                      "    return modelled_ai(naive_reads(M, N, K), M, N, K, bytes_per_element)\n"),
    "critical_ai": ("from course.tools import Roof",
                    "def critical_ai(peak_gflops, bandwidth_gbs):\n"
                    "    return Roof(peak_gflops, bandwidth_gbs).ridge_ai\n"),
    "attainable_gflops": ("import course.perf.roofline as rl",
                          "def attainable_gflops(ai, peak_gflops, bandwidth_gbs):\n"
                          "    return rl.Roof(peak_gflops, bandwidth_gbs).attainable(ai)\n"),
    "predict_blocks_per_sm": ("from course.tools import theoretical_occupancy",
                              "def predict_blocks_per_sm(cc, t, r, s):\n"
                              "    return theoretical_occupancy(cc, t, r, s).blocks_per_sm\n"),
    "predict_occupancy": ("from course.gemm import occupancy",
                          "def predict_occupancy(cc, t, r, s):\n"
                          "    return occupancy.theoretical_occupancy(cc, t, r, s).occupancy\n"),
}


@pytest.mark.parametrize("exercise", sorted(DELEGATING))
def test_an_answer_that_calls_a_course_tool_is_refused_by_the_grader(exercise) -> None:
    """What the grader rebuilds (and the notebook's gate shows at once) refuses it."""
    cells = list(DELEGATING[exercise])
    with pytest.raises(DisallowedCodeError, match="graded code may not use"):
        bundle_from_cells(cells, {exercise})
