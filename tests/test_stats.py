"""analysis.stats against independent references (scipy's one-way ANOVA, hand-computed sums)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from personasim.analysis import (
    LevelSummary,
    Undefined,
    eta_squared,
    first_undefined,
    mean_of,
    min_group_n,
    rank_levels,
    ratio_of,
    read_stat,
    sample_sd,
    shown_stat,
    small_groups,
    stat_fields,
    summarize_levels,
)


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
    ("values", "groups", "reason"),
    [
        ([1.0, 2.0, 3.0], ["only", "only", "only"], "a single level"),
        ([7.0], ["a"], "a single level"),  # n = 1
        ([4, 4, 4, 4], ["a", "a", "b", "b"], "constant input"),
        ([3, 3], ["a", "b"], "constant input"),  # n = 2, two groups of one, no variance
        ([], [], "no values"),
    ],
)
def test_eta_squared_is_undefined_with_a_reason(
    values: list[float], groups: list[str], reason: str
) -> None:
    assert eta_squared(values, groups) == Undefined(reason)


def test_eta_squared_is_undefined_for_constant_non_binary_values() -> None:
    """Regression: rounding in the mean made this 4.0 instead of None (total SS ~1e-33)."""
    assert eta_squared([0.1] * 6, ["a", "a", "a", "b", "b", "b"]) == Undefined("constant input")


def test_eta_squared_groups_of_one() -> None:
    """Every level a single member: no within-group variance, so η² = 1 by the definition
    (scipy's F is infinite there); one group of one among larger ones is an ordinary case."""
    assert eta_squared([1.0, 4.0], ["a", "b"]) == pytest.approx(1.0)
    values, groups = [1, 2, 3, 9], ["a", "a", "a", "b"]
    assert eta_squared(values, groups) == pytest.approx(eta_from_anova(values, groups))


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


# --- the undefined-statistic convention and its helpers ----------------------------------------


def test_mean_and_sd_edge_cases_match_numpy() -> None:
    assert mean_of([]) == Undefined("no values")
    assert mean_of([], "no graded answers") == Undefined("no graded answers")
    assert mean_of([2.5]) == 2.5
    assert sample_sd([]) == Undefined("fewer than 2 values")
    assert sample_sd([2.5]) == Undefined("fewer than 2 values")
    assert sample_sd([1.0, 1.0]) == 0.0  # defined: two equal values have no spread
    rng = np.random.default_rng(5)
    data = rng.normal(size=7).tolist()
    assert mean_of(data) == pytest.approx(float(np.mean(data)))
    assert sample_sd(data) == pytest.approx(float(stats.tstd(data)))


def test_ratio_of() -> None:
    assert ratio_of(1.0, 4.0) == 0.25
    assert ratio_of(1.0, 0.0) == Undefined("zero baseline")
    assert ratio_of(1.0, 0.0, "denominator") == Undefined("zero denominator")
    assert ratio_of(Undefined("no values"), 2.0) == Undefined("no values")
    assert ratio_of(1.0, Undefined("fewer than 2 users")) == Undefined(
        "baseline: fewer than 2 users"
    )


def test_small_groups() -> None:
    assert small_groups({"b": 4, "a": 1, "c": 5}, 5) == ["a", "b"]
    assert small_groups({}, 5) == []


def test_stat_fields_and_read_stat_round_trip() -> None:
    assert stat_fields("rho", 0.123456789) == {"rho": 0.123457}
    assert stat_fields("p", 1.234567e-9, None) == {"p": 1.234567e-9}
    assert stat_fields("significant", True) == {"significant": True}
    fields = stat_fields("rho", Undefined("constant input"))
    assert fields == {"rho": None, "rho_undefined": "constant input"}
    assert read_stat(fields, "rho") == Undefined("constant input")
    assert read_stat({"rho": 0.5}, "rho") == 0.5
    assert read_stat({"rho": None}, "rho") == Undefined("not recorded")
    said = "undefined (every value is the same, so there is no variation to measure)"
    assert shown_stat(fields, "rho") == said  # the reason in words (in_words)
    assert shown_stat({"rho": 0.5}, "rho", 3) == "0.500"
    for lost in (None, float("nan"), np.float64("nan")):
        with pytest.raises(ValueError, match="Undefined"):
            stat_fields("rho", lost)
    with pytest.raises(ValueError, match="reason"):
        Undefined("")


def test_first_undefined_labels_the_input() -> None:
    gap = Undefined("constant input")
    assert first_undefined(belief=0.2, behaviour=gap) == Undefined("behaviour: constant input")
    assert first_undefined(belief=0.2, behaviour=0.3) is None
    # the idiom for a statistic of statistics: 0.0 is a value, not a missing one
    assert (first_undefined(a=0.5, b=0.5) or abs(0.5 - 0.5)) == 0.0


def test_min_group_n_reads_the_run_header_with_a_default() -> None:
    def header(payload: dict) -> pd.DataFrame:
        return pd.DataFrame([{"kind": "run.started", "payload": payload}])

    assert min_group_n(header({"validity": {"max_failure_rate": 0.2, "min_group_n": 8}})) == 8
    assert min_group_n(header({"params": {}})) == 5  # a log from before validity existed
    assert min_group_n(header({"validity": None})) == 5
    assert min_group_n(pd.DataFrame(columns=["kind", "payload"])) == 5


# --- Holm's step-down correction (issue 25, item 3) ------------------------------------------


def _holm_by_procedure(p: list[float]) -> list[float]:
    """Brute force: run Holm's procedure literally at every level α where a decision can
    change (each (m − k + 1)·p_(k), and 1); a hypothesis' adjusted p is the smallest α at
    which the procedure rejects it (1 if none)."""
    m = len(p)
    ranked = sorted(range(m), key=lambda i: p[i])
    levels = sorted({min(1.0, (m - k) * p[i]) for k, i in enumerate(ranked)} | {1.0})
    adjusted = [1.0] * m
    for alpha in reversed(levels):
        rejected = set()
        for k, i in enumerate(ranked):
            if p[i] * (m - k) > alpha * (1 + 1e-12):  # α is a product: compare as one
                break
            rejected.add(i)
        for i in rejected:
            adjusted[i] = alpha
    return adjusted


@pytest.mark.parametrize("seed", range(6))
def test_holm_equals_the_procedure_run_by_hand(seed: int) -> None:
    from personasim.analysis import holm

    rng = np.random.default_rng(seed)
    p = rng.choice([0.001, 0.004, 0.01, 0.02, 0.03, 0.2, 0.5, 1.0], size=9).tolist()
    p += rng.uniform(0, 0.1, size=6).tolist()  # ties and spread values
    assert holm(p) == pytest.approx(_holm_by_procedure(p), abs=1e-12)
    assert all(a >= b for a, b in zip(holm(p), p, strict=True))
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])  # textbook case
    assert holm([]) == []
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.2, 1.5])
