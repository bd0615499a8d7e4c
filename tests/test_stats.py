"""analysis.stats against independent references (scipy's one-way ANOVA, hand-computed sums)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from personasim.analysis import LevelSummary, eta_squared, rank_levels, summarize_levels


def eta_from_anova(values: list[float], groups: list[str]) -> float:
    """η² = F·df_b / (F·df_b + df_w), with F from scipy.stats.f_oneway."""
    levels = sorted(set(groups))
    samples = [[v for v, g in zip(values, groups, strict=True) if g == level] for level in levels]
    f_value = stats.f_oneway(*samples).statistic
    df_between = len(levels) - 1
    df_within = len(values) - len(levels)
    return f_value * df_between / (f_value * df_between + df_within)


@pytest.mark.parametrize("seed", range(6))
def test_eta_squared_matches_scipy_anova(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_levels = int(rng.integers(2, 6))
    sizes = rng.integers(2, 15, size=n_levels)  # unequal group sizes
    shifts = rng.normal(0.0, 1.5, size=n_levels)
    values: list[float] = []
    groups: list[str] = []
    for level, (size, shift) in enumerate(zip(sizes, shifts, strict=True)):
        values += (rng.normal(shift, 1.0, size=size)).tolist()
        groups += [f"level-{level}"] * int(size)
    order = rng.permutation(len(values))  # interleave the groups
    values = [values[i] for i in order]
    groups = [groups[i] for i in order]

    eta = eta_squared(values, groups)
    assert eta is not None
    assert eta == pytest.approx(eta_from_anova(values, groups), rel=1e-10, abs=1e-12)
    assert 0.0 <= eta <= 1.0


def test_eta_squared_integer_amounts_match_scipy() -> None:
    rng = np.random.default_rng(2024)
    values = rng.integers(0, 11, size=60).astype(float).tolist()
    groups = rng.choice(["High", "Low", "Medium"], size=60, p=[0.5, 0.3, 0.2]).tolist()
    eta = eta_squared(values, groups)
    assert eta == pytest.approx(eta_from_anova(values, groups), rel=1e-10)


def test_eta_squared_hand_computed() -> None:
    # a = [1, 2, 3] (mean 2), b = [5, 7] (mean 6), grand mean 18/5 = 3.6
    # SS_between = 3·(2 − 3.6)² + 2·(6 − 3.6)² = 7.68 + 11.52 = 19.2
    # SS_within  = (1 + 0 + 1) + (1 + 1) = 4;  SS_total = 23.2
    # η² = 19.2 / 23.2 = 24/29
    values = [1, 5, 2, 7, 3]
    groups = ["a", "b", "a", "b", "a"]
    assert eta_squared(values, groups) == pytest.approx(24 / 29, rel=1e-12)


def test_eta_squared_extremes() -> None:
    # all variance between groups, then none of it
    assert eta_squared([1, 1, 5, 5], ["a", "a", "b", "b"]) == pytest.approx(1.0)
    assert eta_squared([1, 5, 1, 5], ["a", "a", "b", "b"]) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize(
    ("values", "groups"),
    [
        ([1.0, 2.0, 3.0], ["only", "only", "only"]),  # one level
        ([4, 4, 4, 4], ["a", "a", "b", "b"]),  # no variance
        ([], []),  # nothing at all
    ],
)
def test_eta_squared_is_none_when_undefined(values: list[float], groups: list[str]) -> None:
    assert eta_squared(values, groups) is None


def test_eta_squared_is_none_for_constant_non_binary_values() -> None:
    """Regression: rounding in the mean made this 4.0 instead of None (total SS ~1e-33)."""
    assert eta_squared([0.1] * 6, ["a", "a", "a", "b", "b", "b"]) is None


def test_summarize_levels_counts_and_means_in_sorted_order() -> None:
    values = [10, 0, 4, 6, 3]
    groups = ["z", "a", "z", "a", "m"]
    assert summarize_levels(values, groups) == [
        LevelSummary("a", 2, 3.0),
        LevelSummary("m", 1, 3.0),
        LevelSummary("z", 2, 7.0),
    ]


def test_rank_levels_by_mean_descending() -> None:
    values = [1, 2, 9, 8, 5, 5]
    groups = ["low", "low", "high", "high", "mid", "mid"]
    assert rank_levels(values, groups) == ["high", "mid", "low"]


def test_rank_levels_breaks_ties_alphabetically() -> None:
    # "zeta" and "alpha" tie at 5; "zeta" is seen first but "alpha" ranks first
    values = [5, 5, 9, 1, 5, 5, 5]
    groups = ["zeta", "zeta", "top", "bottom", "alpha", "mid", "alpha"]
    assert rank_levels(values, groups) == ["top", "alpha", "mid", "zeta", "bottom"]
    reversed_input = rank_levels(values[::-1], groups[::-1])
    assert reversed_input == ["top", "alpha", "mid", "zeta", "bottom"]
