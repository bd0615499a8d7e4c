"""analysis.rankings and analysis.stats (and the trust paper's effect-size reader and MAE per
horizon) against independent references (scipy, brute force, hand sums)."""

from __future__ import annotations

import functools
import itertools
import string

import numpy as np
import pytest
from scipy import stats

from personasim.analysis import (
    Undefined,
    eta_squared,
    eta_squared_from_group_stats,
    median_of_defined,
    perturb_ranking,
    ranking_spearman,
)
from personasim.scenarios.trust.effect_sizes import QUALITATIVE_ETA_SQUARED, effect_size_value
from personasim.scenarios.trust.forecast_metrics import mae_by_horizon


def scipy_rho(a: list[str], b: list[str]) -> float:
    """Spearman ρ of two rankings of the same levels, via rank vectors over sorted levels."""
    levels = sorted(a)
    return float(stats.spearmanr([a.index(x) for x in levels], [b.index(x) for x in levels])[0])


def levels(k: int) -> list[str]:
    return [f"level-{c}" for c in string.ascii_lowercase[:k]]


# --- ranking_spearman -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_ranking_spearman_matches_scipy_on_random_permutations(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 10))
    belief = [str(x) for x in rng.permutation(levels(k))]
    behaviour = [str(x) for x in rng.permutation(levels(k))]
    assert ranking_spearman(belief, behaviour) == pytest.approx(
        scipy_rho(belief, behaviour), abs=1e-12
    )


def test_ranking_spearman_identical_and_reversed() -> None:
    ranking = levels(5)
    assert ranking_spearman(ranking, ranking) == pytest.approx(1.0)
    assert ranking_spearman(ranking, ranking[::-1]) == pytest.approx(-1.0)


def test_ranking_spearman_drops_levels_missing_from_either_side() -> None:
    # shared a, b, c, d: belief a>b>c>d, behaviour b>a>c>d → Σd² = 2, ρ = 1 − 12/60 = 0.8
    belief = ["a", "b", "x", "c", "d"]
    behaviour = ["b", "a", "y", "c", "d", "z"]
    assert ranking_spearman(belief, behaviour) == pytest.approx(0.8)
    # shared a, b, c in opposite orders
    assert ranking_spearman(["a", "b", "c", "x"], ["c", "b", "y", "a"]) == pytest.approx(-1.0)


def test_ranking_spearman_two_shared_levels_is_plus_or_minus_one() -> None:
    assert ranking_spearman(["a", "b", "x"], ["a", "y", "b"]) == pytest.approx(1.0)
    assert ranking_spearman(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("belief", "behaviour"),
    [(["a", "b"], ["a", "c"]), (["a"], ["a"]), ([], ["a", "b"]), (["a", "b"], ["c", "d"])],
)
def test_ranking_spearman_undefined_below_two_shared_levels(
    belief: list[str], behaviour: list[str]
) -> None:
    assert ranking_spearman(belief, behaviour) == Undefined("fewer than 2 shared levels")


def average_ranks(values: list[float]) -> list[float]:
    """Brute force: 1 + the number of smaller values + half the number of other equal ones."""
    return [1 + sum(w < v for w in values) + (sum(w == v for w in values) - 1) / 2 for v in values]


def pearson_by_hand(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / (sxx * syy) ** 0.5


@pytest.mark.parametrize("seed", range(8))
def test_ranking_spearman_with_tied_scores_uses_average_ranks(seed: int) -> None:
    """Scores with ties (behavioural means on a coarse grid) against a strict ranking and
    against other tied scores: scipy's ρ on the raw values, and Pearson of brute-force
    average ranks."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 9))
    names = levels(k)
    belief = [str(x) for x in rng.permutation(names)]
    means = {name: float(rng.integers(0, 3)) for name in names}  # 3 values: ties are certain
    stated = {name: float(rng.integers(0, 4)) for name in names}
    for first in (belief, stated):
        if isinstance(first, list):
            x = [-float(first.index(n)) for n in names]
        else:
            x = [first[n] for n in names]
        y = [means[n] for n in names]
        result = ranking_spearman(first, means)
        if len(set(x)) == 1 or len(set(y)) == 1:
            assert isinstance(result, Undefined) and result.reason.endswith("constant input")
            continue
        assert result == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        assert result == pytest.approx(
            pearson_by_hand(average_ranks(x), average_ranks(y)), abs=1e-12
        )


def test_ranking_spearman_ties_are_not_broken_alphabetically() -> None:
    """Behaviour a = b = c: alphabetical order would give ρ = 1 with the belief a > b > c."""
    constant = {"a": 5.0, "b": 5.0, "c": 5.0}
    assert ranking_spearman(["a", "b", "c"], constant) == Undefined("behaviour: constant input")
    assert ranking_spearman(constant, ["a", "b", "c"]) == Undefined("belief: constant input")
    # a > b = c against a > b > c: ranks (3, 1.5, 1.5) and (3, 2, 1) → ρ = √3/2
    assert ranking_spearman(["a", "b", "c"], {"a": 9.0, "b": 2.0, "c": 2.0}) == pytest.approx(
        3**0.5 / 2
    )
    # two levels tied, one shared level only after dropping: undefined, not ±1
    assert ranking_spearman({"a": 1.0, "b": 1.0}, ["b", "a"]) == Undefined("belief: constant input")


def test_ranking_spearman_rejects_repeated_levels() -> None:
    with pytest.raises(ValueError, match="repeats"):
        ranking_spearman(["a", "b", "a"], ["a", "b"])


# --- eta_squared_from_group_stats -------------------------------------------------------


def raw_groups(
    group_stats: dict[str, tuple[float, float]], n: int, rng: np.random.Generator
) -> tuple[list[float], list[str]]:
    """Raw data whose groups have exactly the given means and sample (ddof=1) sds."""
    values: list[float] = []
    groups: list[str] = []
    for level, (mean, sd) in group_stats.items():
        z = rng.normal(size=n)
        z = (z - z.mean()) / z.std(ddof=1)
        values += (mean + sd * z).tolist()
        groups += [level] * n
    return values, groups


@pytest.mark.parametrize("seed", range(6))
def test_eta_from_group_stats_matches_eta_squared_on_raw_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    n = int(rng.integers(2, 150))
    group_stats = {
        level: (float(rng.uniform(0, 10)), float(rng.uniform(0.0, 3.0))) for level in levels(k)
    }
    values, groups = raw_groups(group_stats, n, rng)
    raw = eta_squared(values, groups)
    assert raw is not None
    assert eta_squared_from_group_stats(group_stats, n_per_group=n) == pytest.approx(raw, abs=1e-9)


def test_eta_from_group_stats_hand_computed() -> None:
    # a = [1, 2, 3], b = [5, 6, 7]: means 2 and 6 (grand 4), sds 1 and 1, n = 3
    # SS_between = 3·(2 − 4)² + 3·(6 − 4)² = 24; SS_within = 2·1 + 2·1 = 4; η² = 24/28
    assert eta_squared_from_group_stats({"a": (2, 1), "b": (6, 1)}, n_per_group=3) == (
        pytest.approx(6 / 7, rel=1e-12)
    )
    assert eta_squared([1, 2, 3, 5, 6, 7], list("aaabbb")) == pytest.approx(6 / 7, rel=1e-12)


def test_eta_from_group_stats_reproduces_paper_sample_c22() -> None:
    # Appendix C.2.2: means 3.5/6.5/4.5/5.5, sds 1.5/2.5/1.8/2.2, 100 per group → 0.2335
    # SS_between = 100·(1.5² + 1.5² + 0.5² + 0.5²) = 500; SS_within = 99·16.58 = 1641.42
    sample = {
        "Extremely conservative": (3.5, 1.5),
        "Extremely liberal": (6.5, 2.5),
        "Slightly conservative": (4.5, 1.8),
        "Slightly liberal": (5.5, 2.2),
    }
    eta = eta_squared_from_group_stats(sample)
    assert eta == pytest.approx(500 / 2141.42, rel=1e-12)
    assert round(eta, 4) == 0.2335
    assert eta == pytest.approx(0.23348992724453868, rel=1e-12)  # the sample's contrast value


def test_eta_from_group_stats_edge_cases() -> None:
    assert eta_squared_from_group_stats({"only": (5.0, 1.0)}) == Undefined("a single level")
    assert eta_squared_from_group_stats({}) == Undefined("no values")
    constant = {"a": (0.1, 0.0), "b": (0.1, 0.0), "c": (0.1, 0)}
    assert eta_squared_from_group_stats(constant) == Undefined("constant input")
    assert eta_squared_from_group_stats({"a": (0.1, 1.0), "b": (0.1, 2.0)}) == 0.0
    assert eta_squared_from_group_stats({"a": (1.0, 0.0), "b": (3.0, 0.0)}) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="non-negative"):
        eta_squared_from_group_stats({"a": (1.0, -1.0), "b": (3.0, 1.0)})
    with pytest.raises(ValueError, match="n_per_group"):
        eta_squared_from_group_stats({"a": (1.0, 1.0), "b": (3.0, 1.0)}, n_per_group=0)


# --- effect_size_value ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stated", "expected"),
    [
        ("negligible", 0.005),
        ("none", 0.005),
        ("Very  Small", 0.005),
        ("very-small", 0.005),
        ("small", 0.035),
        ("Medium ", 0.10),
        ("MODERATE", 0.10),
        ("large", 0.20),
        ("0.1", 0.1),
        (" 0.12 ", 0.12),
        ("12%", 0.12),
        ("12.5 %", 0.125),
        (".2335", 0.2335),
        (0.2335, 0.2335),
        (0, 0.0),
        (1, 1.0),
        (np.float64(0.3), 0.3),
    ],
)
def test_effect_size_value_mapping(stated: str | float, expected: float) -> None:
    assert effect_size_value(stated) == pytest.approx(expected, abs=1e-15)


def test_qualitative_words_sit_inside_cohen_bands() -> None:
    bands = {"small": (0.01, 0.06), "medium": (0.06, 0.14), "large": (0.14, 0.26)}
    for word, (low, high) in bands.items():
        assert QUALITATIVE_ETA_SQUARED[word] == pytest.approx((low + high) / 2)
    assert QUALITATIVE_ETA_SQUARED["negligible"] < 0.01
    # C.2.1 reads "medium" as 0.10 and "small" as between 1% and 6%
    assert QUALITATIVE_ETA_SQUARED["medium"] == 0.10
    assert 0.01 <= QUALITATIVE_ETA_SQUARED["small"] < 0.06


@pytest.mark.parametrize("stated", ["huge", "", "12%%", "abc%", "-0.1", "1.5"])
def test_effect_size_value_rejects_unknown_or_out_of_range(stated: str) -> None:
    with pytest.raises(ValueError):
        effect_size_value(stated)


@pytest.mark.parametrize(
    ("stated", "expected"),
    [
        ("0.10 (medium)", 0.10),  # a number glossed by its word: the number
        ("medium (0.10)", 0.10),
        ("0.03 (small)", 0.03),
        ("moderate to large", (0.10 + 0.20) / 2),  # adjacent words: the mean of their values
        ("medium-large", (0.10 + 0.20) / 2),
        ("small to medium", (0.035 + 0.10) / 2),
        ("0.05-0.15", 0.10),  # a range of numbers: its midpoint
        ("0.05 to 0.15", 0.10),
        ("a medium effect", 0.10),
        ("Large.", 0.20),
        ("η² ≈ 0.12", 0.12),
        ("about 12%", 0.12),
        ("1e-2", 0.01),
    ],
)
def test_effect_size_value_reads_what_a_careful_reader_would(stated: str, expected: float) -> None:
    assert effect_size_value(stated) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("stated", "problem"),
    [
        ("small or large", "unrecognised"),  # either/or: no single value
        ("small to large", "unrecognised"),  # a range spanning bands says little
        ("medium, large", "unrecognised"),
        ("0.5 (small)", "is not 'small'"),  # number and word disagree
        ("0.02 (large)", "is not 'large'"),
        ("0.1-0.3 (medium)", "is not 'medium'"),
        ("I think it is medium", "unrecognised"),
        ("0.1 0.2", "unrecognised"),
        ("to medium", "unrecognised"),
    ],
)
def test_effect_size_value_rejects_ambiguous_text(stated: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        effect_size_value(stated)


def test_effect_size_value_error_lists_accepted_words() -> None:
    with pytest.raises(ValueError, match="'medium'") as info:
        effect_size_value("enormous")
    for word in QUALITATIVE_ETA_SQUARED:
        assert repr(word) in str(info.value)


@pytest.mark.parametrize("stated", [True, None, float("nan"), 2.0, [0.1]])
def test_effect_size_value_rejects_non_proportions(stated: object) -> None:
    with pytest.raises(ValueError):
        effect_size_value(stated)  # type: ignore[arg-type]


# --- perturb_ranking --------------------------------------------------------------------


@functools.cache
def attainable_rhos(k: int) -> np.ndarray:
    """Every ρ a permutation of k levels can have: Pearson r of the rank vectors (= Spearman)."""
    perms = np.array(list(itertools.permutations(range(k))), dtype=float)
    base = np.broadcast_to(np.arange(k, dtype=float), perms.shape)
    return np.unique(np.round(stats.pearsonr(base, perms, axis=1).statistic, 12))


@pytest.mark.parametrize("k", range(2, 9))
@pytest.mark.parametrize("target", [0.8, 0.2])
def test_perturb_ranking_is_closest_attainable(k: int, target: float) -> None:
    ranking = levels(k)
    perturbed, rho = perturb_ranking(ranking, target, np.random.default_rng(k))
    assert sorted(perturbed) == sorted(ranking)
    assert len(perturbed) == k
    assert rho == pytest.approx(scipy_rho(ranking, perturbed), abs=1e-12)
    # brute force: the best attainable distance, computed independently with scipy
    best = float(np.abs(attainable_rhos(k) - target).min())
    assert abs(rho - target) == pytest.approx(best, abs=1e-9)
    if best <= 0.05 + 1e-12:
        assert abs(rho - target) <= 0.05 + 1e-12


@pytest.mark.parametrize("k", range(4, 9))
def test_perturb_ranking_hits_paper_targets_for_four_to_eight_levels(k: int) -> None:
    # k ≥ 4 admits ρ = 0.8 exactly (one adjacent swap at k=4 gives Σd² = 2, ρ = 0.8)
    rhos = attainable_rhos(k)
    for target in (0.8, 0.2):
        _, rho = perturb_ranking(levels(k), target, np.random.default_rng(7))
        if np.abs(rhos - target).min() <= 0.05:
            assert abs(rho - target) <= 0.05 + 1e-12
    assert perturb_ranking(levels(4), 0.8, np.random.default_rng(0))[1] == pytest.approx(0.8)


def test_perturb_ranking_small_k_returns_nearest_attainable() -> None:
    _, rho2 = perturb_ranking(["a", "b"], 0.2, np.random.default_rng(0))
    assert rho2 == pytest.approx(1.0)  # k=2: ±1 only, 1 is nearer to 0.2
    _, rho3 = perturb_ranking(["a", "b", "c"], 0.8, np.random.default_rng(0))
    assert rho3 == pytest.approx(1.0)  # k=3: 1, .5, −.5, −1
    _, rho3 = perturb_ranking(["a", "b", "c"], 0.2, np.random.default_rng(0))
    assert rho3 == pytest.approx(0.5)


def test_perturb_ranking_reproducible_and_draws_among_ties() -> None:
    ranking = levels(6)
    first = perturb_ranking(ranking, 0.2, np.random.default_rng(123))
    assert perturb_ranking(ranking, 0.2, np.random.default_rng(123)) == first
    draws = {tuple(perturb_ranking(ranking, 0.2, np.random.default_rng(s))[0]) for s in range(20)}
    assert len(draws) > 1
    # k=3, target 0.5: exactly two permutations attain it, and both are drawn
    rngs = [np.random.default_rng(s) for s in range(40)]
    ties = {tuple(perturb_ranking(list("abc"), 0.5, rng)[0]) for rng in rngs}
    assert ties == {("a", "c", "b"), ("b", "a", "c")}


@pytest.mark.parametrize("k", [10, 12])
@pytest.mark.parametrize("target", [0.8, 0.2, -0.5])
@pytest.mark.parametrize("seed", range(3))
def test_perturb_ranking_random_search_for_many_levels(k: int, target: float, seed: int) -> None:
    ranking = levels(k)
    perturbed, rho = perturb_ranking(ranking, target, np.random.default_rng(seed))
    assert sorted(perturbed) == sorted(ranking)
    assert rho == pytest.approx(scipy_rho(ranking, perturbed), abs=1e-12)
    assert abs(rho - target) <= 0.05
    again = perturb_ranking(ranking, target, np.random.default_rng(seed))
    assert again == (perturbed, rho)


@pytest.mark.parametrize(
    ("ranking", "target"),
    [(["a"], 0.5), ([], 0.5), (["a", "b", "a"], 0.5), (["a", "b", "c"], 1.5)],
)
def test_perturb_ranking_rejects_bad_input(ranking: list[str], target: float) -> None:
    with pytest.raises(ValueError):
        perturb_ranking(ranking, target, np.random.default_rng(0))


# --- median_of_defined, mae_by_horizon -----------------------------------------------------


def test_median_of_defined() -> None:
    gap = Undefined("constant input")
    assert median_of_defined([gap, 3.0, 1.0, gap, 2.0]) == 2.0
    assert median_of_defined([0.4, gap, 1.0]) == pytest.approx(0.7)
    assert median_of_defined([0.0, gap]) == 0.0
    assert median_of_defined([gap, gap]) == Undefined("no defined values")
    assert median_of_defined([]) == Undefined("no defined values")
    assert median_of_defined(iter([1, 4])) == 2.5


def test_mae_by_horizon_hand_example() -> None:
    rows = [
        (2, 5.0, 3.0),
        (1, 4.0, 4.0),
        (1, 6.0, 3.0),
        (2, 0.0, 4.0),
        (2, 7.0, 8.0),
        (3, 10.0, 0.0),
    ]
    result = mae_by_horizon(rows)
    assert list(result) == [1, 2, 3]
    assert result[1] == {"n": 2, "mae": 1.5, "mean_forecast": 5.0, "mean_actual": 3.5}
    # |5−3| + |0−4| + |7−8| = 7 over 3 rows
    assert result[2]["n"] == 3
    assert result[2]["mae"] == pytest.approx(7 / 3)
    assert result[2]["mean_forecast"] == pytest.approx(4.0)
    assert result[2]["mean_actual"] == pytest.approx(5.0)
    assert result[3] == {"n": 1, "mae": 10.0, "mean_forecast": 10.0, "mean_actual": 0.0}
    assert mae_by_horizon([]) == {}
