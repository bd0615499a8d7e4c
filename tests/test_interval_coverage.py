"""Coverage of every kind of interval the project reports: on 1,000 synthetic data sets with a
known value, how often does the 95% interval contain it? At n = 10, 30 and 200.

Each kind is computed by the function the metrics call (`analysis.intervals`, `judge_agreement`,
the journey's `bootstrap_spearman`, PersonaGym's
`bootstrap_correlation`). An undefined interval ("every resample gives the same value") counts
as a miss. Every kind must cover 93–97% at every n. The cheap kinds run in the fast suite at
full size, the agreement kinds at 10 items; the others at full size are `slow` (minutes), with
a smaller fast version whose band is widened only by its own Monte-Carlo error.

    python -m pytest -m slow tests/test_interval_coverage.py -s   # all coverages, 5-10 min
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from personasim.analysis import bootstrap_correlation, judge_agreement
from personasim.analysis.intervals import (
    log_normal_bounds,
    paired_proportion_bounds,
    t_bounds,
    welch_bounds,
    wilson_bounds,
)
from personasim.analysis.resampling import stratified_bootstrap_weights
from personasim.scenarios.persona_journey.metrics import bootstrap_spearman

SIZES = (10, 30, 200)
DATASETS = 1000
BAND = (0.93, 0.97)
TRUE_ICC = 2 / 3  # ratings = target + N(0, 0.5) noise: 1 / (1 + 0.5), for ICC, κ and α alike
TRUE_RHO_S = 6 / math.pi * math.asin(0.5 / 2)  # Spearman's ρ of a normal pair with r = 0.5

Simulation = Callable[[int, int, np.random.Generator], np.ndarray]
"""(n, data sets, rng) → one row per data set, a column per reported statistic: covered?"""


# --- the cheap kinds: vectorised over the data sets -------------------------------------------


def wilson_between(lowest: float, highest: float) -> Simulation:
    """A rate drawn for each data set between `lowest` and `highest` (known), then n trials.
    At one fixed rate a discrete interval's coverage oscillates with n and the rate (Brown,
    Cai & DasGupta 2001: Wilson's between about 89% and 99% at n = 10); what a reader of many
    rates gets is the average over rates, which is what this measures."""

    def simulate(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
        p = rng.uniform(lowest, highest, size=datasets)
        low, high = wilson_bounds(rng.binomial(n, p), n)
        return ((low <= p) & (p <= high))[:, None]

    return simulate


SCORE_STEPS = np.array([-2, -1, 0, 1, 2, 3, 4])
SCORE_SHARES = np.array([0.05, 0.1, 0.3, 0.2, 0.15, 0.1, 0.1])


def t_of_score_differences(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
    """Paired differences of integer scores, skewed and with many zeros (a counterfactual's)."""
    truth = float(SCORE_STEPS @ SCORE_SHARES)
    d = rng.choice(SCORE_STEPS, p=SCORE_SHARES, size=(datasets, n)).astype(float)
    low, high = t_bounds(d)
    flat = np.all(d == d[:, :1], axis=1)  # every difference equal: undefined, a miss
    return ((low <= truth) & (truth <= high) & ~flat)[:, None]


def welch_of_skewed_groups(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
    """Two groups of n, exponential with means 1.5 and 1 (the journey's order and memory
    effects are such differences of means)."""
    low, high = welch_bounds(
        rng.exponential(1.5, (datasets, n)), rng.exponential(1.0, (datasets, n))
    )
    return ((low <= 0.5) & (high >= 0.5))[:, None]


def paired_proportions(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
    """The four cells' shares — (1,1), (1,0), (0,1), (0,0) — drawn for each data set uniformly
    over all 2 × 2 tables (Dirichlet(1, 1, 1, 1)), then n pairs. As for Wilson: at one fixed
    table a discrete interval's coverage oscillates (at (0.5, 0.1, 0.2, 0.2) and n = 10 every
    adjusted Wald interval covers about 98%); a reader of many tables gets the average."""
    cells = rng.dirichlet(np.ones(4), size=datasets)
    counts = np.array([rng.multinomial(n, shares) for shares in cells])
    truth = cells[:, 2] - cells[:, 1]
    low, high = paired_proportion_bounds(counts[:, 2], counts[:, 1], n)
    return ((low <= truth) & (truth <= high))[:, None]


def log_normal_ratio(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
    """mean(x) / mean(y), x and y exponential with means 2 and 1 (n each), each group resampled
    on its own (as career chat's users within groups); one set of bootstrap weights serves
    every data set."""
    x = rng.exponential(2.0, size=(datasets, n))
    y = rng.exponential(1.0, size=(datasets, n))
    wx, wy = (stratified_bootstrap_weights(np.zeros(n), 1000, rng) for _ in range(2))
    draws = (wx @ x.T) / (wy @ y.T)  # (resamples, data sets); the n's cancel
    low, high = log_normal_bounds(x.mean(axis=1) / y.mean(axis=1), draws.T, n)
    return ((low <= 2.0) & (high >= 2.0))[:, None]


# --- the agreement and bootstrap kinds: one call per data set ---------------------------------

AGREEMENT = ("ICC(2,1)", "quadratic_kappa", "krippendorff_alpha")
AGREEMENT_NAMES = (
    "F-based, judge_agreement ICC(2,1)",
    "jackknife z, judge_agreement kappa",
    "jackknife z, judge_agreement alpha",
)


def agreement(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
    """Two raters of n targets, each the target plus N(0, 0.5) noise (interval scale)."""
    rows = []
    for _ in range(datasets):
        target = rng.normal(size=n)
        a, b = (target + rng.normal(scale=math.sqrt(0.5), size=n) for _ in range(2))
        stats = judge_agreement(a, b, level="interval")
        rows.append([_covers(stats["statistics"][key], TRUE_ICC) for key in AGREEMENT])
    return np.array(rows)


def _covers(record: dict, truth: float, low: str = "low", high: str = "high") -> bool:
    return record[low] is not None and record[low] <= truth <= record[high]


def _normal_pairs(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=n)
    return x, 0.5 * x + math.sqrt(0.75) * rng.normal(size=n)


def journey_spearman(n_boot: int) -> Simulation:
    def simulate(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
        rows = []
        for _ in range(datasets):
            x, y = _normal_pairs(n, rng)
            record = bootstrap_spearman(x.tolist(), y.tolist(), n_boot, int(rng.integers(1 << 30)))
            rows.append([_covers(record, TRUE_RHO_S, "ci_low", "ci_high")])
        return np.array(rows)

    return simulate


def gym_fisher_z(n_boot: int) -> Simulation:
    def simulate(n: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
        rows = []
        for _ in range(datasets):
            x, y = _normal_pairs(n, rng)
            result = bootstrap_correlation(
                x, y, "spearman", n_resamples=n_boot, seed=int(rng.integers(1 << 30))
            )
            rows.append([_covers(result.record(), TRUE_RHO_S)])
        return np.array(rows)

    return simulate


@dataclass(frozen=True)
class Kind:
    """An interval kind the project reports and how to simulate it."""

    names: tuple[str, ...]
    simulate: Simulation


CHEAP = (
    Kind(("Wilson, rates between 0.05 and 0.95",), wilson_between(0.05, 0.95)),
    Kind(("Wilson, rates between 0.8 and 0.99",), wilson_between(0.8, 0.99)),
    Kind(("t, mean of paired score differences",), t_of_score_differences),
    Kind(("Welch t, difference of skewed means",), welch_of_skewed_groups),
    Kind(("Agresti-Min, paired 0/1 proportions",), paired_proportions),
    Kind(("log-scale t, bootstrap ratio of means",), log_normal_ratio),
)
BOOTSTRAP = (
    Kind(AGREEMENT_NAMES, agreement),
    Kind(("BCa, journey Spearman rho",), journey_spearman(1000)),
    Kind(("Fisher-z percentile, PersonaGym Spearman",), gym_fisher_z(1000)),
)


def measure(kind: Kind, n: int, datasets: int = DATASETS, seed: int = 0) -> list[float]:
    """The kind's coverage (one per statistic) on `datasets` data sets of size n, printed."""
    rng = np.random.default_rng([seed, n, *map(ord, kind.names[0])])
    covered = kind.simulate(n, datasets, rng).mean(axis=0)
    for name, share in zip(kind.names, covered, strict=True):
        print(f"coverage  {name:<44} n={n:<4} {share:6.1%}  ({datasets} data sets)")
    return covered.tolist()


def check(kind: Kind, n: int, covered: list[float], widen: float = 0.0) -> None:
    """Within 93–97%; `widen`: the Monte-Carlo error of a smaller run, on both sides."""
    low, high = BAND[0] - widen, BAND[1] + widen
    for name, share in zip(kind.names, covered, strict=True):
        assert low <= share <= high, f"{name} at n={n}: {share:.1%} outside [{low:.3f}, {high:.3f}]"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", CHEAP, ids=lambda k: k.names[0])
def test_cheap_kinds_cover_95_percent(kind: Kind, n: int) -> None:
    check(kind, n, measure(kind, n))


@pytest.mark.slow
@pytest.mark.timeout(900)  # n = 200: a thousand BCa intervals of 200 items, ~2 min on 2 cores
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", BOOTSTRAP, ids=lambda k: k.names[0])
def test_bootstrap_kinds_cover_95_percent(kind: Kind, n: int) -> None:
    check(kind, n, measure(kind, n))


FAST_DATASETS = 150


def test_agreement_intervals_cover_95_percent_at_10_items() -> None:
    """The fast version of the agreement kinds at their hardest size, in full: 1,000 data sets
    of 10 items (~4 s; no resamples, so the band is not widened)."""
    check(BOOTSTRAP[0], 10, measure(BOOTSTRAP[0], 10))


@pytest.mark.parametrize("kind", BOOTSTRAP[1:], ids=lambda k: k.names[0])
def test_bootstrap_kinds_cover_95_percent_on_fewer_data_sets(kind: Kind) -> None:
    """The fast version: n = 30, 150 data sets, the band widened by three Monte-Carlo
    standard errors of 150 data sets (±5.3 points) and nothing else."""
    error = 3 * math.sqrt(0.95 * 0.05 / FAST_DATASETS)
    check(kind, 30, measure(kind, 30, FAST_DATASETS), error)


def test_the_other_reporters_compute_the_measured_intervals() -> None:
    """`personasim compare`'s t interval and the reading audit's Wilson interval (simulation
    layer) are the same intervals as the ones measured here."""
    from personasim.simulation.runs.lifecycle.reading_audit import wilson_interval
    from personasim.simulation.runs.viewer.viewer_compare import mean_interval

    rng = np.random.default_rng(9)
    for n in SIZES:
        d = rng.choice(SCORE_STEPS, p=SCORE_SHARES, size=n).astype(float)
        low, high = t_bounds(d)
        shown = mean_interval(d.tolist())
        assert (shown["low"], shown["high"]) == pytest.approx((low, high), rel=1e-12)
        k = int(rng.integers(0, n + 1))
        assert wilson_interval(k, n) == pytest.approx(wilson_bounds(k, n), abs=1e-12)
