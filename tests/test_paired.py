"""Paired statistics (analysis/paired.py) against scipy and a brute-force bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from personasim.analysis import FEWER_THAN_2, NO_VALUES, Undefined, holm, holm_over
from personasim.analysis.paired import ALL_ZERO, NOT_NUMBERS, paired_difference


def brute_force_interval(d: np.ndarray, seed: int, resamples: int) -> tuple[float, float]:
    """Resample the differences with replacement one draw at a time, as the textbook says."""
    rng = np.random.default_rng(seed)
    n = len(d)
    means = []
    for _ in range(resamples):
        picks = rng.integers(0, n, size=n)
        means.append(sum(d[i] for i in picks) / n)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mean_interval_and_p_match_scipy_and_brute_force(seed: int) -> None:
    data = np.random.default_rng(100 + seed)
    a = data.integers(0, 11, size=25).tolist()
    b = [x + int(s) for x, s in zip(a, data.integers(-2, 4, size=25), strict=True)]
    result = paired_difference(a, b, np.random.default_rng(seed), resamples=500)
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    assert result.n == 25
    assert result.mean == pytest.approx(d.mean())
    assert result.wilcoxon_p == pytest.approx(stats.wilcoxon(d, zero_method="wilcox").pvalue)
    assert (result.low, result.high) == pytest.approx(brute_force_interval(d, seed, 500))
    assert result.changed == pytest.approx(np.mean(d != 0))


def test_exact_small_sample_p_without_ties() -> None:
    a = [0.0] * 6
    b = [1.5, -0.5, 2.5, 3.5, 4.5, 5.5]  # distinct magnitudes: scipy's exact distribution
    result = paired_difference(a, b, np.random.default_rng(0), resamples=200)
    assert result.wilcoxon_p == pytest.approx(stats.wilcoxon(b, method="exact").pvalue)
    assert result.wilcoxon_p == pytest.approx(4 / 64)  # W- = 1: 2 of 64 sign patterns each side


def test_undefined_values_say_why() -> None:
    rng = np.random.default_rng(0)
    empty = paired_difference([], [], rng)
    assert (
        empty.n == 0
        and empty.mean == Undefined(NO_VALUES)
        and empty.changed == Undefined(NO_VALUES)
    )
    one = paired_difference([3], [5], rng)
    assert one.mean == 2.0 and one.changed == 1.0
    assert one.low == one.wilcoxon_p == Undefined(FEWER_THAN_2)
    same = paired_difference([1, 2, 3], [1, 2, 3], rng)
    assert same.mean == 0.0 and (same.low, same.high) == (0.0, 0.0)
    assert same.wilcoxon_p == Undefined(ALL_ZERO) and same.changed == 0.0
    labels = paired_difference(["yes", "no"], ["yes", "yes"], rng)
    assert labels.mean == labels.wilcoxon_p == Undefined(NOT_NUMBERS)
    assert labels.changed == 0.5
    with pytest.raises(ValueError, match="equal lengths"):
        paired_difference([1], [1, 2], rng)


def test_holm_over_skips_undefined_p_values() -> None:
    undefined = Undefined(ALL_ZERO)
    adjusted = holm_over([0.01, undefined, 0.04, 0.03])
    assert adjusted[1] is undefined
    assert [adjusted[i] for i in (0, 2, 3)] == pytest.approx(holm([0.01, 0.04, 0.03]))
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
