"""The intervals chosen for small samples, against independent computations: the ICCs' F-based
intervals against R psych's `ICC()` on Shrout & Fleiss's (1979) data, the jackknife z, the
Agresti–Min and the log-scale t intervals against their formulas written out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from personasim.analysis.icc_intervals import NO_RESIDUAL, icc_f_interval
from personasim.analysis.intervals import (
    AT_ONE,
    SAME_LEAVE_ONE_OUT,
    jackknife_z_interval,
    log_normal_interval,
    paired_proportion_bounds,
)

SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float
)
PSYCH_ICC_SF = {  # psych::ICC(sf): lower and upper bound, as printed (2-3 decimals)
    "ICC(1,1)": (-0.13, 0.72),
    "ICC(2,1)": (0.019, 0.76),
    "ICC(3,1)": (0.342, 0.95),
    "ICC(1,k)": (-0.88, 0.91),
    "ICC(2,k)": (0.071, 0.93),
    "ICC(3,k)": (0.676, 0.99),
}


@pytest.mark.parametrize("form", sorted(PSYCH_ICC_SF))
def test_icc_intervals_equal_r_psych_on_shrout_fleiss(form: str) -> None:
    low, high = icc_f_interval(SHROUT_FLEISS, form)
    expected_low, expected_high = PSYCH_ICC_SF[form]
    assert low == pytest.approx(expected_low, abs=0.006)
    assert high == pytest.approx(expected_high, abs=0.006)


def test_an_icc_without_residual_variance_has_no_interval() -> None:
    shifted = np.column_stack([np.arange(8.0), np.arange(8.0) + 1])  # differ by a constant
    assert icc_f_interval(shifted, "ICC(3,1)")[0].reason == NO_RESIDUAL  # type: ignore[union-attr]


def test_jackknife_z_interval_by_hand() -> None:
    jack = np.array([0.55, 0.62, 0.48, 0.60, 0.58, 0.51, 0.66, 0.57])
    estimate, n = 0.57, 8
    z = np.arctanh(jack)
    se = np.sqrt((n - 1) / n * np.sum((z - z.mean()) ** 2))
    q = stats.t.ppf(0.975, n - 1)
    corrected = n * np.arctanh(estimate) - (n - 1) * z.mean()
    expected = (
        np.tanh(min(np.arctanh(estimate), corrected) - q * se),
        np.tanh(max(np.arctanh(estimate), corrected) + q * se),
    )
    low, high = jackknife_z_interval(estimate, jack)
    assert (low, high) == pytest.approx(expected, rel=1e-12)
    assert low < estimate < high  # type: ignore[operator]


def test_jackknife_z_interval_says_why_it_is_undefined() -> None:
    assert jackknife_z_interval(1.0, np.ones(5))[0].reason == SAME_LEAVE_ONE_OUT  # type: ignore[union-attr]
    assert jackknife_z_interval(0.95, np.array([0.9, 1.0, 0.94]))[0].reason == AT_ONE  # type: ignore[union-attr]
    missing = jackknife_z_interval(0.5, np.array([0.4, np.nan, 0.6]))[0]
    assert "undefined in 1 of 3 leave-one-out samples" in missing.reason  # type: ignore[union-attr]


def test_agresti_min_by_hand_and_it_contains_the_estimate() -> None:
    up, down, n = 3, 1, 10
    pu, pd = 3.5 / 12, 1.5 / 12
    half = stats.norm.ppf(0.975) * np.sqrt((pu + pd - (pu - pd) ** 2) / 12)
    low, high = paired_proportion_bounds(up, down, n)
    assert (float(low), float(high)) == pytest.approx((pu - pd - half, pu - pd + half), rel=1e-12)
    for size in range(1, 61):
        u, d = np.meshgrid(np.arange(size + 1), np.arange(size + 1))
        keep = u + d <= size
        low, high = paired_proportion_bounds(u[keep], d[keep], size)
        estimate = (u[keep] - d[keep]) / size
        assert np.all((low <= estimate) & (estimate <= high) & (high > low)), size


def test_log_scale_t_interval_by_hand() -> None:
    draws = np.array([1.8, 2.4, 2.1, 1.6, 2.9, 2.2, 1.9, 2.5])
    spread = np.log(draws).std(ddof=1) * np.sqrt(10 / 9)
    step = np.exp(stats.t.ppf(0.975, 9) * spread)
    assert log_normal_interval(2.0, draws, 10) == pytest.approx((2.0 / step, 2.0 * step))
    assert "fewer than 2" in log_normal_interval(2.0, draws, 1)[0].reason  # type: ignore[union-attr]
