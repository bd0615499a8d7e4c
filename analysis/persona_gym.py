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
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import pearsonr, rankdata, spearmanr

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


def task_scores(questions: pd.DataFrame, tasks: Sequence[str]) -> dict[str, float | None]:
    """Per task the mean ensemble score over all its questions, and PersonaScore = the mean
    of the task scores (None when a task has no scored question)."""
    means = questions.groupby("task")["score"].mean()
    result: dict[str, float | None] = {t: _number(means.get(t)) for t in tasks}
    values = list(result.values())
    result["PersonaScore"] = (
        None if not values or None in values else float(np.mean(values))  # type: ignore[arg-type]
    )
    return result


def persona_scores(
    questions: pd.DataFrame, tasks: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """`task_scores` for each persona on its own."""
    return {
        str(persona): task_scores(group, tasks)
        for persona, group in questions.groupby("persona", sort=True)
    }


def evaluator_agreement(scores: pd.DataFrame) -> list[dict[str, Any]]:
    """Per pair of evaluators, over the questions both scored: Spearman and Pearson of their
    scores, mean absolute difference and the share of identical scores."""
    wide = scores.pivot_table(
        index=["persona", "task", "question"], columns="evaluator", values="score"
    )
    rows = []
    for first, second in itertools.combinations(sorted(wide.columns), 2):
        pair = wide[[first, second]].dropna()
        a, b = pair[first].to_numpy(), pair[second].to_numpy()
        varied = len(pair) >= 2 and a.std() > 0 and b.std() > 0
        rows.append(
            {
                "evaluators": f"{first} vs {second}",
                "n": len(pair),
                "spearman": float(spearmanr(a, b).statistic) if varied else None,
                "pearson": float(pearsonr(a, b).statistic) if varied else None,
                "mean_abs_diff": float(np.abs(a - b).mean()) if len(pair) else None,
                "exact_agreement": float((a == b).mean()) if len(pair) else None,
            }
        )
    return rows


@dataclass(frozen=True)
class CorrelationInterval:
    """A correlation with its bootstrap interval; significant when the interval excludes 0."""

    method: str
    r: float | None
    low: float | None
    high: float | None
    n: int
    significant: bool

    def record(self) -> dict[str, Any]:
        return asdict(self)


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
    is clipped to ±(1 − 1e-12) so that z stays finite.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(xs)
    r = _correlations(xs[None, :], ys[None, :], method)[0] if n >= 2 else np.nan
    if n < 3 or np.isnan(r):
        return CorrelationInterval(method, _number(r), None, None, n, False)
    rows = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    chunk = max(1, 20_000_000 // (n * n))
    resampled = np.concatenate(
        [
            _correlations(xs[rows[i : i + chunk]], ys[rows[i : i + chunk]], method)
            for i in range(0, n_resamples, chunk)
        ]
    )
    z = np.arctanh(np.clip(resampled[~np.isnan(resampled)], -1 + 1e-12, 1 - 1e-12))
    tail = (1 - level) / 2 * 100
    low, high = np.tanh(np.percentile(z, [tail, 100 - tail]))
    return CorrelationInterval(
        method, float(r), float(low), float(high), n, bool(low > 0 or high < 0)
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
    model: Mapping[str, Mapping[str, float | None]],
    human: Iterable[tuple[str, str, float]],
    tasks: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Table 3 / Appendix F for one model: per task, and for PersonaScore, the Spearman and
    Kendall τ between the model's and the humans' scores over personas, with bootstrap 95%
    intervals.

    `model` is persona → task → score (`persona_scores`); `human` holds (persona, task, score)
    rows, several annotators' rows for one item are averaged. The human PersonaScore of a
    persona is the mean of its human task scores.
    """
    frame = pd.DataFrame(list(human), columns=["persona", "task", "score"])
    items = frame.groupby(["persona", "task"])["score"].mean()
    rows = []
    for task in (*tasks, "PersonaScore"):
        pairs = [
            (scores[task], _human_score(items, persona, task, tasks))
            for persona, scores in sorted(model.items())
            if scores.get(task) is not None
        ]
        pairs = [(m, h) for m, h in pairs if h is not None]
        ms, hs = [m for m, _ in pairs], [h for _, h in pairs]
        for method in ("spearman", "kendall"):
            result = bootstrap_correlation(ms, hs, method, n_resamples=n_resamples, seed=seed)
            rows.append({"task": task, **result.record()})
    return rows


def _human_score(items: pd.Series, persona: str, task: str, tasks: Sequence[str]) -> float | None:
    if task != "PersonaScore":
        return _number(items.get((persona, task)))
    present = [items[(persona, t)] for t in tasks if (persona, t) in items.index]
    return float(np.mean(present)) if len(present) == len(tasks) else None


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)
