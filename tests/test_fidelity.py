"""Fidelity statistics (analysis/fidelity.py) against scipy and brute-force references, and
at their edges: fewer than 2 answers, no spread, ties, answers off the scale."""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np
import pytest
from scipy import stats

from personasim.analysis.fidelity import fidelity, spearman_rows, w1_over_range

SIMULATED = [5, 5, 5, 4, 5, 6, 5, 5, 4, 5, 5, 6]  # personas: bunched at half (under-dispersed)
HUMAN = [0, 10, 5, 3, 8, 5, 0, 6, 2, 10, 5, 4, 7, 1]  # people: spread over the whole scale
SCALE = (0.0, 10.0)


def brute_w1(a: list[float], b: list[float]) -> float:
    """∫|F_a − F_b| over the pooled support, from the two empirical CDFs."""
    points = sorted(set(a) | set(b))
    cdf = lambda xs, t: sum(x <= t for x in xs) / len(xs)  # noqa: E731
    return sum(
        abs(cdf(a, left) - cdf(b, left)) * (right - left) for left, right in pairwise(points)
    )


def test_w1_over_range_matches_scipy_and_the_cdf_integral() -> None:
    value = w1_over_range(SIMULATED, HUMAN, SCALE)
    assert value == pytest.approx(brute_w1(SIMULATED, HUMAN) / 10)
    assert value == pytest.approx(stats.wasserstein_distance(SIMULATED, HUMAN) / 10)
    assert w1_over_range([0, 0], [10, 10], SCALE) == 1.0  # the farthest apart two samples can be
    assert w1_over_range(HUMAN, HUMAN, SCALE) == 0.0


def test_the_permutation_p_is_the_exact_one_on_small_samples() -> None:
    sim, hum = [5, 5, 6, 5], [0, 10, 5, 2]
    record = fidelity(sim, hum, SCALE, resamples=5000)
    pooled, observed = sim + hum, stats.wasserstein_distance(sim, hum)
    splits = list(combinations(range(8), 4))  # 70: scipy enumerates them all (exact test)
    at_least = sum(
        stats.wasserstein_distance(
            [pooled[i] for i in chosen], [pooled[i] for i in range(8) if i not in chosen]
        )
        >= observed - 1e-12
        for chosen in splits
    )
    assert record["permutation_w1"]["p_value"] == pytest.approx(at_least / len(splits), abs=1e-6)


def test_the_variance_ratio_its_f_interval_and_p_against_scipy() -> None:
    record = fidelity(SIMULATED, HUMAN, SCALE)["variance_ratio"]
    ratio = np.var(SIMULATED, ddof=1) / np.var(HUMAN, ddof=1)
    d1, d2 = len(SIMULATED) - 1, len(HUMAN) - 1
    assert record["value"] == pytest.approx(ratio, abs=1e-6)
    assert record["low"] == pytest.approx(ratio / stats.f.ppf(0.975, d1, d2), abs=1e-6)
    assert record["high"] == pytest.approx(ratio / stats.f.ppf(0.025, d1, d2), abs=1e-6)
    assert record["p_value"] == pytest.approx(2 * stats.f.cdf(ratio, d1, d2), abs=1e-6)
    assert record["high"] < 1 and record["p_value"] < 0.05  # the personas are under-dispersed


def test_means_medians_modes_and_anderson_darling() -> None:
    record = fidelity(SIMULATED, HUMAN, SCALE, modes=(0, 5))
    assert (record["n_simulated"], record["n_human"]) == (12, 14)
    welch = stats.ttest_ind(SIMULATED, HUMAN, equal_var=False).confidence_interval(0.95)
    mean = record["mean_difference"]
    assert mean["value"] == pytest.approx(np.mean(SIMULATED) - np.mean(HUMAN), abs=1e-6)
    assert (mean["low"], mean["high"]) == pytest.approx((welch.low, welch.high), abs=1e-6)
    median = record["median_difference"]
    assert median["value"] == np.median(SIMULATED) - np.median(HUMAN) == 0.0
    assert median["low"] <= 0 <= median["high"] or "undefined" in median
    nothing, half = record["modes"]
    assert nothing["simulated"]["value"] == 0 and nothing["human"]["value"] == pytest.approx(2 / 14)
    assert half["simulated"]["value"] == pytest.approx(8 / 12) and half["simulated"]["low"] > 0.3
    expected = stats.anderson_ksamp([SIMULATED, HUMAN], variant="midrank").statistic
    assert record["anderson_darling"]["statistic"] == pytest.approx(expected, abs=1e-6)
    assert record["anderson_darling"]["p_value"] < 0.2
    assert 0 < record["w1_over_range"]["low"] <= record["w1_over_range"]["value"]


def test_edges_are_undefined_with_a_reason() -> None:
    one = fidelity([5], HUMAN, SCALE)
    assert one["w1_over_range"]["value"] is not None  # a distance exists even for one answer
    for name in ("mean_difference", "median_difference", "variance_ratio"):
        assert one[name]["value"] is None and "fewer than 2" in one[name]["undefined"]
    assert one["permutation_w1"]["p_value"] is None
    flat = fidelity([5, 5, 5], [5, 5, 5, 5], SCALE)
    assert flat["w1_over_range"]["value"] == 0.0 and flat["w1_over_range"]["low"] is None
    assert "no spread" in flat["variance_ratio"]["undefined"]
    assert flat["anderson_darling"]["p_value"] is None
    assert flat["permutation_w1"]["p_value"] == 1.0  # every relabelling is as far: no evidence
    with pytest.raises(ValueError, match="human answers outside the scale 0–10"):
        fidelity([5], [11], SCALE)


def test_spearman_on_rows_against_scipy_with_ties_and_edges() -> None:
    sent = [5, 5, 10, 0, 3, 7, 5, 2, 8, 10]
    returned = [6, 0, 20, 0, 4, 9, 7, 1, 12, 15]
    record = spearman_rows(sent, returned)
    assert record["value"] == pytest.approx(stats.spearmanr(sent, returned).statistic, abs=1e-6)
    assert record["low"] < record["value"] < record["high"] and record["n"] == 10
    assert spearman_rows([1, 2, 3], [1, 2, 3])["value"] is None  # fewer than 4 rows
    assert "constant input" in spearman_rows([1, 1, 1, 1], [1, 2, 3, 4])["undefined"]
    assert spearman_rows([1, 2, 3, 4], [2, 4, 6, 8])["low"] is None  # ρ = 1: no z interval
