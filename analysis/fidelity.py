"""How close simulated personas' answers are to real people's, at the population level: the
statistics a reviewer asks for when a persona study says its personas "behave like" a group of
people (docs/fidelity.md). Scenario-free: two samples of numbers on one answer scale.

Each statistic carries both sides' n and an interval where one exists, or `Undefined` with the
reason (a side with fewer than 2 answers, no spread):

- **W1 / range**: the Wasserstein-1 (earth mover's) distance between the two distributions,
  divided by the scale's range, so 0 is identical and 1 the farthest two samples can be; BCa
  bootstrap interval (each side resampled on its own);
- **distribution tests**: a permutation test with W1 as its statistic (exact under heavy ties:
  the labels are permuted, the values kept) and the Anderson–Darling k-sample test (midrank
  form, which handles ties; Forsythe et al. 1994 used it), its p by permutation too;
- **difference in means** (Welch's interval) and **in medians** (BCa bootstrap);
- **variance ratio** s²_sim / s²_human with its F interval and two-sided F-test p (simulated
  personas are known to be under-dispersed: a ratio well below 1);
- **shares at the modes** (nothing sent, half sent...): each side's share with its Wilson
  interval;
- **Spearman on rows** (`spearman_rows`, e.g. sent against returned): Fisher's z interval with
  Bonett & Wright's (2000) standard error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from personasim.analysis.intervals import (
    CONFIDENCE,
    NO_SPREAD,
    Interval,
    bca_interval,
    undefined_interval,
    welch_interval,
    wilson_interval,
)
from personasim.analysis.undefined import CONSTANT, FEWER_THAN_2, Statistic, Undefined

__all__ = ["FIDELITY_RESAMPLES", "fidelity", "spearman_rows", "w1_over_range"]

FIDELITY_RESAMPLES = 2000
"""Bootstrap resamples and permutations per statistic."""


def w1_over_range(
    simulated: Sequence[float], human: Sequence[float], scale: tuple[float, float]
) -> Statistic:
    """Wasserstein-1 distance between the samples over the scale's range (0: the same
    distribution; 1: all answers at opposite ends)."""
    from scipy.stats import wasserstein_distance

    low, high = scale
    if not high > low:
        raise ValueError(f"the scale {scale} has no range: its maximum must exceed its minimum")
    if len(simulated) == 0 or len(human) == 0:
        return Undefined("a side has no answers")
    return float(wasserstein_distance(simulated, human)) / (high - low)


def fidelity(
    simulated: Sequence[float],
    human: Sequence[float],
    scale: tuple[float, float],
    modes: Sequence[float] = (),
    resamples: int = FIDELITY_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Every statistic of the module for one answer (one outcome), as a JSON-ready record."""
    sim, hum = np.asarray(simulated, dtype=float), np.asarray(human, dtype=float)
    _check_on_scale(sim, "simulated", scale)
    _check_on_scale(hum, "human", scale)
    rng = np.random.default_rng(seed)
    record: dict[str, Any] = {"n_simulated": int(sim.size), "n_human": int(hum.size)}
    record["scale"] = [float(scale[0]), float(scale[1])]
    record["w1_over_range"] = _w1(sim, hum, scale, resamples, rng)
    record["permutation_w1"] = _permutation_w1(sim, hum, resamples, rng)
    record["anderson_darling"] = _anderson_darling(sim, hum, resamples, rng)
    record["mean_difference"] = _mean_difference(sim, hum)
    record["median_difference"] = _median_difference(sim, hum, resamples, rng)
    record["variance_ratio"] = _variance_ratio(sim, hum)
    record["modes"] = [_mode_shares(sim, hum, at) for at in modes]
    return record


def spearman_rows(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman's ρ of paired rows (sent against returned), with Fisher's z interval using
    Bonett & Wright's (2000) standard error √((1 + ρ²/2)/(n − 3))."""
    from scipy.special import ndtri

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = int(a.size)
    if n != b.size:
        raise ValueError(f"spearman_rows needs paired rows: {n} and {b.size} values")
    if n < 4:
        why = Undefined(f"it needs at least 4 rows for an interval (n = {n})")
        return {"n": n, **_fields(why, undefined_interval(why.reason), "fisher z")}
    rho = _rho(a, b)
    if isinstance(rho, Undefined):
        return {"n": n, **_fields(rho, undefined_interval(rho.reason), "fisher z")}
    if abs(rho) == 1:
        reason = "ρ is ±1, where Fisher's z is infinite: no interval"
        return {"n": n, **_fields(rho, undefined_interval(reason), "fisher z")}
    z, se = np.arctanh(rho), np.sqrt((1 + rho**2 / 2) / (n - 3))
    half = float(ndtri(1 - (1 - CONFIDENCE) / 2)) * se
    interval = (float(np.tanh(z - half)), float(np.tanh(z + half)))
    return {"n": n, **_fields(rho, interval, "fisher z")}


def _rho(a: np.ndarray, b: np.ndarray) -> Statistic:
    from scipy.stats import spearmanr

    if np.all(a == a[0]) or np.all(b == b[0]):
        return Undefined(CONSTANT)
    return float(spearmanr(a, b).statistic)


def _check_on_scale(values: np.ndarray, side: str, scale: tuple[float, float]) -> None:
    outside = values[(values < scale[0]) | (values > scale[1]) | ~np.isfinite(values)]
    if outside.size:
        raise ValueError(
            f"{side} answers outside the scale {scale[0]:g}–{scale[1]:g}: {outside[:3].tolist()}"
        )


def _fields(value: Statistic, interval: Interval, method: str | None = None) -> dict[str, Any]:
    record = {"value": _json(value), "low": _json(interval[0]), "high": _json(interval[1])}
    reasons = {v.reason for v in (value, *interval) if isinstance(v, Undefined)}
    if reasons:
        record["undefined"] = "; ".join(sorted(reasons))
    return {**record, "interval": method} if method else record


def _json(value: Statistic) -> float | None:
    return None if isinstance(value, Undefined) else round(float(value), 6)


def _too_few(sim: np.ndarray, hum: np.ndarray) -> Undefined | None:
    if min(sim.size, hum.size) < 2:
        return Undefined(f"{FEWER_THAN_2} (n = {sim.size} simulated, {hum.size} human)")
    return None


def _two_sample_bca(
    statistic: Any, sim: np.ndarray, hum: np.ndarray, resamples: int, rng: np.random.Generator
) -> Interval:
    """BCa interval of statistic(sim, hum): each side resampled on its own; the jackknife
    leaves out one answer of either side at a time."""
    estimate = statistic(sim, hum)
    draws = np.array(
        [statistic(rng.choice(sim, sim.size), rng.choice(hum, hum.size)) for _ in range(resamples)]
    )
    jackknife = np.array(
        [statistic(np.delete(sim, i), hum) for i in range(sim.size)]
        + [statistic(sim, np.delete(hum, j)) for j in range(hum.size)]
    )
    return bca_interval(estimate, draws, jackknife)


def _w1(sim: np.ndarray, hum: np.ndarray, scale: tuple[float, float], resamples: int,
        rng: np.random.Generator) -> dict[str, Any]:  # fmt: skip
    value = w1_over_range(sim, hum, scale)
    if (why := _too_few(sim, hum)) is not None:
        return _fields(value, undefined_interval(why.reason), "bca")
    interval = _two_sample_bca(lambda a, b: w1_over_range(a, b, scale), sim, hum, resamples, rng)
    return _fields(value, interval, "bca")


def _permutation_w1(sim: np.ndarray, hum: np.ndarray, resamples: int,
                    rng: np.random.Generator) -> dict[str, Any]:  # fmt: skip
    from scipy.stats import permutation_test, wasserstein_distance

    if (why := _too_few(sim, hum)) is not None:
        return {"p_value": None, "undefined": why.reason}
    result = permutation_test(
        (sim, hum), lambda a, b: wasserstein_distance(a, b), n_resamples=resamples,
        alternative="greater", random_state=rng,
    )  # fmt: skip
    return {
        "statistic": round(float(result.statistic), 6),
        "p_value": round(float(result.pvalue), 6),
    }


def _anderson_darling(sim: np.ndarray, hum: np.ndarray, resamples: int,
                      rng: np.random.Generator) -> dict[str, Any]:  # fmt: skip
    from scipy.stats import PermutationMethod, anderson_ksamp

    if (why := _too_few(sim, hum)) is not None:
        return {"p_value": None, "undefined": why.reason}
    if np.all(np.concatenate([sim, hum]) == sim[0]):
        return {"p_value": None, "undefined": CONSTANT}
    method = PermutationMethod(n_resamples=resamples, random_state=rng)
    try:
        result = anderson_ksamp([sim, hum], variant="midrank", method=method)
    except TypeError:  # scipy before 1.17 names the midrank form `midrank=True`
        result = anderson_ksamp([sim, hum], midrank=True, method=method)
    return {
        "statistic": round(float(result.statistic), 6),
        "p_value": round(float(result.pvalue), 6),
    }


def _mean_difference(sim: np.ndarray, hum: np.ndarray) -> dict[str, Any]:
    if (why := _too_few(sim, hum)) is not None:
        return _fields(why, undefined_interval(why.reason), "welch")
    return _fields(float(sim.mean() - hum.mean()), welch_interval(sim, hum), "welch")


def _median_difference(sim: np.ndarray, hum: np.ndarray, resamples: int,
                       rng: np.random.Generator) -> dict[str, Any]:  # fmt: skip
    if (why := _too_few(sim, hum)) is not None:
        return _fields(why, undefined_interval(why.reason), "bca")

    def difference(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.median(a) - np.median(b))

    interval = _two_sample_bca(difference, sim, hum, resamples, rng)
    return _fields(difference(sim, hum), interval, "bca")


def _variance_ratio(sim: np.ndarray, hum: np.ndarray) -> dict[str, Any]:
    """s²_sim / s²_human, its F interval and two-sided F-test p (normal-theory: a guide
    under heavy ties, as the authors' own evaluation uses it)."""
    from scipy.stats import f

    if (why := _too_few(sim, hum)) is not None:
        return {**_fields(why, undefined_interval(why.reason), "F"), "p_value": None}
    v_sim, v_hum = float(sim.var(ddof=1)), float(hum.var(ddof=1))
    if v_hum == 0 or v_sim == 0:
        why = Undefined(f"{NO_SPREAD} ({'human' if v_hum == 0 else 'simulated'} answers)")
        return {**_fields(why, undefined_interval(why.reason), "F"), "p_value": None}
    ratio, d1, d2 = v_sim / v_hum, sim.size - 1, hum.size - 1
    tail = (1 - CONFIDENCE) / 2
    interval = (ratio / float(f.ppf(1 - tail, d1, d2)), ratio / float(f.ppf(tail, d1, d2)))
    p = 2 * min(float(f.cdf(ratio, d1, d2)), float(f.sf(ratio, d1, d2)))
    return {**_fields(ratio, interval, "F"), "p_value": round(min(p, 1.0), 6)}


def _mode_shares(sim: np.ndarray, hum: np.ndarray, at: float) -> dict[str, Any]:
    """Each side's share of answers equal to `at`, with its Wilson interval."""
    record: dict[str, Any] = {"at": float(at)}
    for side, values in (("simulated", sim), ("human", hum)):
        hits = int(np.sum(np.isclose(values, at)))
        share: Statistic = hits / values.size if values.size else Undefined("no answers")
        record[side] = {
            "n": int(values.size),
            **_fields(share, wilson_interval(hits, int(values.size)), "wilson"),
        }
    return record
