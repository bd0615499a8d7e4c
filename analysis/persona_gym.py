"""PersonaScore and its checks (seed 002): ensembles, refusals, evaluator agreement, and
alignment with human scores by bootstrap with Fisher's z (Appendix F).

Scores come as one row per (persona, task, question, evaluator) with the evaluator's score, or
NaN where its answer could not be parsed. A failed evaluation is left out of every mean, never
counted as a low score.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import pearsonr, rankdata, spearmanr

from .stats import mean_of
from .undefined import CONSTANT, Statistic, Undefined, stat_fields

__all__ = [
    "REFUSAL_PATTERN",
    "SCORE_COLUMNS",
    "CorrelationInterval",
    "bootstrap_correlation",
    "ensemble_scores",
    "evaluator_agreement",
    "human_alignment",
    "is_refusal",
    "persona_scores",
    "task_counts",
    "task_scores",
]

SCORE_COLUMNS = ("persona", "task", "question", "evaluator", "score")
"""The columns of an evaluator-score table."""

REFUSAL_PATTERN = re.compile(
    r"\bas an? (?:ai|artificial intelligence|language model|llm|assistant)\b"
    r"|\bi(?:'m| am) (?:just |only )?an? (?:ai|artificial intelligence|language model|"
    r"chatbot|virtual assistant|ai assistant)\b"
    r"|\bi (?:do not|don't) have (?:personal )?(?:experiences|opinions|feelings|a body)\b"
    r"|\bi (?:cannot|can't|won't|am not able to) (?:role-?play|pretend|adopt (?:a|this) persona)",
    re.IGNORECASE,
)
"""Refusal or "as an AI" answers (§4.2, Figure 4): the persona agent steps out of its role."""

Method = Literal["spearman", "kendall", "pearson"]


def is_refusal(text: str) -> bool:
    """Whether an answer refuses the role or speaks as an AI (`REFUSAL_PATTERN`)."""
    return REFUSAL_PATTERN.search(text) is not None


def ensemble_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per question: the mean of its evaluators' valid scores and how many there were.

    Questions no evaluator could score are dropped (they have no score, not a zero).
    """
    valid = scores.dropna(subset=["score"])
    grouped = valid.groupby(["persona", "task", "question"], sort=True)["score"]
    return grouped.agg(score="mean", n_scores="count").reset_index()


def task_scores(questions: pd.DataFrame, tasks: Sequence[str]) -> dict[str, Statistic]:
    """Per task the mean ensemble score over all its questions, and PersonaScore = the mean
    of the task scores. A task without a scored question is undefined, and so is the
    PersonaScore then (a mean over fewer tasks would not be the same measure)."""
    result: dict[str, Statistic] = {
        t: mean_of(questions.loc[questions["task"] == t, "score"], "no scored questions")
        for t in tasks
    }
    missing = [t for t in tasks if isinstance(result[t], Undefined)]
    if not tasks:
        result["PersonaScore"] = Undefined("no tasks")
    elif missing:
        result["PersonaScore"] = Undefined(f"no scored questions in {', '.join(missing)}")
    else:
        result["PersonaScore"] = float(np.mean([result[t] for t in tasks]))
    return result


def persona_scores(
    questions: pd.DataFrame, tasks: Sequence[str]
) -> dict[str, dict[str, Statistic]]:
    """`task_scores` for each persona on its own."""
    return {
        str(persona): task_scores(group, tasks)
        for persona, group in questions.groupby("persona", sort=True)
    }


def task_counts(questions: pd.DataFrame, tasks: Sequence[str]) -> dict[str, int]:
    """How many scored questions each task's score averages (the group size to flag)."""
    return {t: int((questions["task"] == t).sum()) for t in tasks}


def evaluator_agreement(scores: pd.DataFrame) -> list[dict[str, Any]]:
    """Per pair of evaluators, over the questions both scored: Spearman and Pearson of their
    scores, mean absolute difference and the share of identical scores (null with a reason
    where undefined: no shared question, fewer than 2, or one evaluator constant)."""
    wide = scores.pivot_table(
        index=["persona", "task", "question"], columns="evaluator", values="score"
    )
    rows = []
    for first, second in itertools.combinations(sorted(wide.columns), 2):
        pair = wide[[first, second]].dropna()
        a, b = pair[first].to_numpy(), pair[second].to_numpy()
        correlation = _correlation_undefined(a, b)
        spearman = correlation or float(spearmanr(a, b).statistic)
        pearson = correlation or float(pearsonr(a, b).statistic)
        none = Undefined("no question scored by both")
        rows.append(
            {
                "evaluators": f"{first} vs {second}",
                "n": len(pair),
                **stat_fields("spearman", spearman),
                **stat_fields("pearson", pearson),
                **stat_fields("mean_abs_diff", float(np.abs(a - b).mean()) if len(pair) else none),
                **stat_fields("exact_agreement", float((a == b).mean()) if len(pair) else none),
            }
        )
    return rows


def _correlation_undefined(a: np.ndarray, b: np.ndarray) -> Undefined | None:
    """Why a correlation of a with b is undefined (n < 2, either constant), or None."""
    if len(a) < 2:
        return Undefined("fewer than 2 pairs")
    for label, side in (("x", a), ("y", b)):
        if np.all(side == side[0]):
            return Undefined(CONSTANT).within(label)
    return None


@dataclass(frozen=True)
class CorrelationInterval:
    """A correlation with its bootstrap interval; significant when the interval excludes 0.

    `resamples` counts the resamples that had a correlation (a constant resample has none).
    """

    method: str
    r: Statistic
    low: Statistic
    high: Statistic
    n: int
    significant: bool | Undefined
    resamples: int = 0

    def record(self) -> dict[str, Any]:
        return {
            "method": self.method,
            **stat_fields("r", self.r),
            **stat_fields("low", self.low),
            **stat_fields("high", self.high),
            "n": self.n,
            **stat_fields("significant", self.significant),
            "resamples": self.resamples,
        }


def bootstrap_correlation(
    x: Sequence[float],
    y: Sequence[float],
    method: Method = "spearman",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> CorrelationInterval:
    """Appendix F.1: resample the (x, y) pairs with replacement `n_resamples` times, take each
    resample's correlation to Fisher's z = artanh(r), and map the 2.5th and 97.5th percentiles
    of z back with tanh.

    The resamples are `numpy.random.default_rng(seed).integers(0, n, (n_resamples, n))`, one
    row each. A resample whose x or y is constant has no correlation and is left out; r = ±1
    is clipped to ±(1 − 1e-12) so that z stays finite. r is undefined with fewer than 2 pairs
    or a constant side; the interval also with fewer than 3 pairs or no usable resample.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(xs)
    r: Statistic = _correlation_undefined(xs, ys) or float(
        _correlations(xs[None, :], ys[None, :], method)[0]
    )
    if isinstance(r, Undefined) or n < 3:
        why = r if isinstance(r, Undefined) else Undefined("fewer than 3 pairs")
        return CorrelationInterval(method, r, why, why, n, why)
    rows = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    chunk = max(1, 20_000_000 // (n * n))
    resampled = np.concatenate(
        [
            _correlations(xs[rows[i : i + chunk]], ys[rows[i : i + chunk]], method)
            for i in range(0, n_resamples, chunk)
        ]
    )
    usable = resampled[~np.isnan(resampled)]
    if usable.size == 0:
        why = Undefined("every resample constant")
        return CorrelationInterval(method, r, why, why, n, why)
    z = np.arctanh(np.clip(usable, -1 + 1e-12, 1 - 1e-12))
    tail = (1 - level) / 2 * 100
    low, high = np.tanh(np.percentile(z, [tail, 100 - tail]))
    return CorrelationInterval(
        method, r, float(low), float(high), n, bool(low > 0 or high < 0), int(usable.size)
    )


def _correlations(x: np.ndarray, y: np.ndarray, method: Method) -> np.ndarray:
    """Row-wise correlation of two (samples × n) arrays; NaN where a row is constant."""
    if method == "kendall":
        return _kendall_tau_b(x, y)
    if method == "spearman":
        x, y = rankdata(x, axis=1), rankdata(y, axis=1)
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (dx * dy).sum(axis=1) / denominator, np.nan)


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b row-wise (as `scipy.stats.kendalltau`): concordance over pairs i < j."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    concordance = (sx * sy).sum(axis=(1, 2))
    untied = np.abs(sx).sum(axis=(1, 2)) * np.abs(sy).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, concordance / np.sqrt(untied), np.nan)


def human_alignment(
    model: Mapping[str, Mapping[str, Statistic]],
    human: Iterable[tuple[str, str, float]],
    tasks: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Table 3 / Appendix F for one model: per task, and for PersonaScore, the Spearman and
    Kendall τ between the model's and the humans' scores over personas, with bootstrap 95%
    intervals.

    `model` is persona → task → score (`persona_scores`, or the `scores` of a metrics file,
    where an undefined score is null); `human` holds (persona, task, score) rows, several
    annotators' rows for one item are averaged. The human PersonaScore of a
    persona is the mean of its human task scores.
    """
    frame = pd.DataFrame(list(human), columns=["persona", "task", "score"])
    items = frame.groupby(["persona", "task"])["score"].mean()
    rows = []
    for task in (*tasks, "PersonaScore"):
        pairs = [
            (scores[task], _human_score(items, persona, task, tasks))
            for persona, scores in sorted(model.items())
            if _defined(scores.get(task))
        ]
        pairs = [(m, h) for m, h in pairs if h is not None]
        ms, hs = [m for m, _ in pairs], [h for _, h in pairs]
        for method in ("spearman", "kendall"):
            result = bootstrap_correlation(ms, hs, method, n_resamples=n_resamples, seed=seed)
            rows.append({"task": task, **result.record()})
    return rows


def _defined(value: Any) -> bool:
    """A score to correlate: not absent, not `Undefined`, not a metrics file's null."""
    return value is not None and not isinstance(value, Undefined)


def _human_score(items: pd.Series, persona: str, task: str, tasks: Sequence[str]) -> float | None:
    if task != "PersonaScore":
        return _number(items.get((persona, task)))
    present = [items[(persona, t)] for t in tasks if (persona, t) in items.index]
    return float(np.mean(present)) if len(present) == len(tasks) else None


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)
