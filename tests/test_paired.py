"""Paired statistics (analysis/paired.py) against scipy: the test chosen by the data (exact
McNemar for 0/1 outcomes, Wilcoxon otherwise), the interval, and the undefined cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from personasim.analysis import FEWER_THAN_2, NO_VALUES, Undefined, holm, holm_over
from personasim.analysis.intervals import NO_SPREAD
from personasim.analysis.paired import (
    ALL_ZERO,
    MCNEMAR,
    NOT_NUMBERS,
    WILCOXON,
    mcnemar_exact,
    paired_difference,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numbers_get_wilcoxon_and_the_t_interval_of_scipy(seed: int) -> None:
    data = np.random.default_rng(100 + seed)
    a = data.integers(0, 11, size=25).tolist()
    b = [x + int(s) for x, s in zip(a, data.integers(-2, 4, size=25), strict=True)]
    result = paired_difference(a, b)
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    assert result.n == 25 and result.test == WILCOXON and result.interval == "t"
    assert result.mean == pytest.approx(d.mean())
    assert result.p == pytest.approx(stats.wilcoxon(d, zero_method="wilcox").pvalue, rel=1e-12)
    interval = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert (result.low, result.high) == pytest.approx((interval.low, interval.high), rel=1e-12)
    assert result.changed == pytest.approx(np.mean(d != 0))


def test_exact_small_sample_p_without_ties() -> None:
    a = [0.0] * 6
    b = [1.5, -0.5, 2.5, 3.5, 4.5, 5.5]  # distinct magnitudes: scipy's exact distribution
    result = paired_difference(a, b)
    assert result.p == pytest.approx(stats.wilcoxon(b, method="exact").pvalue)
    assert result.p == pytest.approx(4 / 64)  # W- = 1: 2 of 64 sign patterns each side


def test_mcnemar_on_paired_0_1_is_the_binomial_test_of_the_discordant_pairs() -> None:
    """12 pairs: 7 went wrong → right, 1 right → wrong, 4 the same. Exact McNemar: of the 8
    discordant pairs, 7 one way, against Binomial(8, ½): p = 2·(1 + 8)/256 by hand."""
    a = [0] * 7 + [1] + [1, 1, 0, 0]
    b = [1] * 7 + [0] + [1, 1, 0, 0]
    result = paired_difference(a, b)
    assert result.test == MCNEMAR and result.interval == "paired proportions"
    assert result.p == pytest.approx(stats.binomtest(7, 8, 0.5).pvalue, rel=1e-12)
    assert result.p == pytest.approx(2 * (1 + 8) / 256, rel=1e-12)
    assert result.mean == pytest.approx(6 / 12) and result.changed == pytest.approx(8 / 12)
    assert result.low <= result.mean <= result.high  # type: ignore[operator]
    # booleans are 0/1 outcomes too (a grade's `correct`)
    as_bools = paired_difference([bool(v) for v in a], [bool(v) for v in b])
    assert as_bools.p == result.p and as_bools.test == MCNEMAR
    assert mcnemar_exact([1, 0], [1, 0]) == Undefined(ALL_ZERO)


def test_on_0_1_pairs_wilcoxon_and_mcnemar_differ() -> None:
    """20 pairs, 6 discordant all one way: exact McNemar p = 2/2^6 = 0.03125; Wilcoxon's normal
    approximation on six tied ranks says 0.0143, twice as liberal — the test that fits 0/1
    data is McNemar's, and that is the one recorded."""
    a = [0] * 6 + [1] * 7 + [0] * 7
    b = [1] * 6 + [1] * 7 + [0] * 7
    result = paired_difference(a, b)
    wilcoxon = stats.wilcoxon(np.subtract(b, a), zero_method="wilcox").pvalue
    assert result.p == pytest.approx(2 / 2**6, rel=1e-12) and result.test == MCNEMAR
    assert wilcoxon == pytest.approx(0.014306, abs=1e-6)
    assert result.p - wilcoxon > 0.015


def test_paired_proportion_interval_is_agresti_min_and_never_of_zero_width() -> None:
    """All 10 pairs the same: a difference of 0 with an interval around it (the percentile
    bootstrap gave [0, 0]); all 10 went 0 → 1: 1 at the top of the interval."""
    from personasim.analysis.intervals import paired_proportion_bounds

    same = paired_difference([1, 0] * 5, [1, 0] * 5)
    assert same.mean == 0.0 and same.low < 0 < same.high  # type: ignore[operator]
    z = stats.norm.ppf(0.975)
    half = z * np.sqrt((1 / 12) / 12)  # p̃ = ½/12 each: √((1/24 + 1/24 − 0) / 12)
    assert (same.low, same.high) == pytest.approx((-half, half), rel=1e-12)
    moved = paired_difference([0] * 10, [1] * 10)
    assert moved.mean == 1.0 and moved.high == 1.0 and moved.low < 0.9  # type: ignore[operator]
    # the estimate lies inside for every table of n = 1..30
    for n in range(1, 31):
        up, down = np.meshgrid(np.arange(n + 1), np.arange(n + 1))
        keep = up + down <= n
        low, high = paired_proportion_bounds(up[keep], down[keep], n)
        estimate = (up[keep] - down[keep]) / n
        assert np.all((low <= estimate + 1e-12) & (estimate <= high + 1e-12)), n


def test_undefined_values_say_why() -> None:
    empty = paired_difference([], [])
    assert (
        empty.n == 0
        and empty.mean == Undefined(NO_VALUES)
        and empty.changed == Undefined(NO_VALUES)
    )
    one = paired_difference([3], [5])
    assert one.mean == 2.0 and one.changed == 1.0
    assert one.low == one.p == Undefined(FEWER_THAN_2)
    same = paired_difference([1, 2, 3], [1, 2, 3])
    assert same.mean == 0.0 and same.low == same.high == Undefined(NO_SPREAD)
    assert same.p == Undefined(ALL_ZERO) and same.changed == 0.0
    shifted = paired_difference([1, 2, 3], [3, 4, 5])  # every difference 2: no spread either
    assert shifted.mean == 2.0 and shifted.low == Undefined(NO_SPREAD)
    labels = paired_difference(["yes", "no"], ["yes", "yes"])
    assert labels.mean == labels.p == Undefined(NOT_NUMBERS)
    assert labels.changed == 0.5 and labels.test == ""
    with pytest.raises(ValueError, match="equal lengths"):
        paired_difference([1], [1, 2])


def test_holm_over_skips_undefined_p_values() -> None:
    undefined = Undefined(ALL_ZERO)
    adjusted = holm_over([0.01, undefined, 0.04, 0.03])
    assert adjusted[1] is undefined
    assert [adjusted[i] for i in (0, 2, 3)] == pytest.approx(holm([0.01, 0.04, 0.03]))
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
