"""Issue 37: a diagnosis is right, or it says what it saw without guessing.

Every mutant of ``tests/mistake_catalogue.py`` (a common mistake, in one of both tracks' kernels)
goes through the check a student meets it in, with that check's own default shapes (or the
notebook's try-it cell): its message must name its cause, and over all of them no message may
name a cause the kernel does not have. A message that cannot tell two causes apart names both
(the mutant lists the other in ``alike``) or none. Right kernels built the same way pass.
"""

from __future__ import annotations

import functools

import mistake_catalogue as cat
import pytest

from course.gemm.cudac import cpu, nvrtc

#: a mutant without a barrier multiplies stale shared memory: overflow is its own business
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
BY_NAME = {mu.name: mu for mu in cat.MUTANTS}
NO_CUDA_C = not (nvrtc.available() and cpu.available())


def _skip_without_cuda_c(mutant: cat.Mutant) -> None:
    if mutant.check.startswith("cuda") and NO_CUDA_C:
        pytest.skip("needs NVRTC and g++ for the CUDA C CPU runner")


@functools.cache
def message(name: str) -> str | None:
    return cat.message_of(BY_NAME[name])


def test_the_catalogue_covers_both_tracks_and_every_check() -> None:
    assert len(cat.MUTANTS) >= 25
    assert len(BY_NAME) == len(cat.MUTANTS), "mutant names are unique"
    assert {mu.check for mu in cat.MUTANTS} == set(cat.BASES)
    assert {mu.track for mu in cat.MUTANTS} == {"Numba", "CUDA C"}
    for mu in cat.MUTANTS:
        assert mu.causes and mu.causes <= set(cat.CAUSES), mu.name
        assert mu.source() != (cat.BASES[mu.check][0] or cat.bonus_source()), mu.name


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_message_names_the_mistake(name: str) -> None:
    mutant = BY_NAME[name]
    _skip_without_cuda_c(mutant)
    text = message(name)
    assert text is not None, f"{name}: the check passed a wrong kernel"
    named = cat.named_causes(text)
    if mutant.seen_only:
        assert not named, f"{name} names {sorted(named)}, which it cannot know: {text}"
    else:
        assert named & mutant.causes, f"{name} does not name {sorted(mutant.causes)}: {text}"


def test_no_message_names_a_cause_the_kernel_does_not_have() -> None:
    """The property over the whole catalogue: a wrong cause is a bug, like a wrong grade."""
    wrong = []
    for mu in cat.MUTANTS:
        if mu.check.startswith("cuda") and NO_CUDA_C:
            continue
        verdict = cat.verdict(mu, message(mu.name))
        if verdict in ("wrong", "missed"):
            wrong.append(f"{mu.name} ({verdict}): {message(mu.name)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("check", ["naive", "try_naive", "try_tiled", "cuda_naive"])
def test_the_right_kernels_pass(check: str) -> None:
    """The mutants differ from a right kernel by their mistake alone. (The tiled, bonus and
    vector-add bases are the right kernels tests/test_checks.py, test_cudac.py, test_bonus.py
    and test_ceilings.py pass: not run twice.)"""
    right = cat.Mutant(f"right_{check}", check, (), frozenset({"none"}))
    _skip_without_cuda_c(right)
    assert cat.message_of(right) is None


def test_the_verdicts_read_causes_as_documented() -> None:
    mu = cat.Mutant("never_stores", "naive", (), frozenset({"store"}), frozenset({"bounds_test"}))
    assert cat.verdict(mu, None) == "missed"
    assert cat.verdict(mu, "C[0:1, 0:1] was never written") == "unsure"
    assert cat.verdict(mu, "does the kernel store C[row, col] = acc?") == "right"
    assert cat.verdict(mu, "does the kernel store C[row, col]? the bounds test …") == "unsure"
    assert cat.verdict(mu, "the bounds test is wrong") == "wrong"  # only the alike cause
    assert cat.verdict(mu, "only the first block's part of C: row and col must include the "
                           "block") == "wrong"
    assert cat.verdict(mu, "the grid must cover all of C") == "wrong"
