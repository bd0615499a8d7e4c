"""Agreement among human raters and with a model, at the paper's unit (seed 002, Appendix F).

PersonaGym's human study scores single answers: a row is (persona, task, question, rater,
score). Fleiss' κ measures how far the raters agree beyond chance on the 1–5 scale; the model's
ensemble score of each question is then correlated with the raters' mean (Spearman and Kendall τ,
bootstrap intervals as in Appendix F.1). Undefined values are `Undefined` with their reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from personasim.analysis.undefined import Statistic, Undefined, stat_fields

__all__ = ["HUMAN_COLUMNS", "fleiss_kappa", "question_alignment"]

HUMAN_COLUMNS = ["persona", "task", "question", "rater", "score"]
SCALE = (1, 2, 3, 4, 5)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> Statistic:
    """Fleiss' κ (1971) of an items × categories table of how many raters chose each category.

    Every item needs the same number of raters, at least 2; κ is undefined without items or
    when every rating falls in one category (chance agreement is then 1).
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return Undefined("no rated items")
    raters = table.sum(axis=1)
    if not np.all(raters == raters[0]):
        return Undefined("items have different numbers of raters")
    n = raters[0]
    if n < 2:
        return Undefined("fewer than 2 raters per item")
    shares = table.sum(axis=0) / table.sum()
    chance = float(np.sum(shares**2))
    if chance >= 1.0:
        return Undefined("every rating in one category")
    observed = float(np.mean((np.sum(table**2, axis=1) - n) / (n * (n - 1))))
    return (observed - chance) / (1.0 - chance)


def _category_counts(human: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Counts per item over the 1–5 scale, for the items every rater of the file scored."""
    raters = human["rater"].nunique()
    per_item = human.groupby(["persona", "task", "question"])
    complete = per_item.filter(lambda g: g["rater"].nunique() == raters)
    if complete.empty:
        return np.zeros((0, len(SCALE))), raters
    rounded = complete.assign(score=complete["score"].round().astype(int))
    table = pd.crosstab(
        [rounded["persona"], rounded["task"], rounded["question"]], rounded["score"]
    )
    return table.reindex(columns=list(SCALE), fill_value=0).to_numpy(), raters


def _of_task(frame: pd.DataFrame, task: str) -> pd.DataFrame:
    return frame if task == "all" else frame[frame["task"] == task]


def question_alignment(
    model: pd.DataFrame,
    human: pd.DataFrame,
    tasks: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per task and over all tasks ("all"): Fleiss' κ among the raters, and the Spearman and
    Kendall τ between the model's ensemble score of a question (`model`: persona, task,
    question, score) and the raters' mean score of it (`human`: `HUMAN_COLUMNS`)."""
    from personasim.scenarios.persona_gym.metrics import (
        bootstrap_correlation,  # the Appendix F.1 interval
    )

    means = human.groupby(["persona", "task", "question"], as_index=False)["score"].mean()
    joined = model.merge(means, on=["persona", "task", "question"], suffixes=("", "_human"))
    rows = []
    for task in (*tasks, "all"):
        counts, raters = _category_counts(_of_task(human, task))
        pairs = _of_task(joined, task)
        base = {
            "task": task,
            "n_items": len(counts),
            "n_raters": int(raters),
            **stat_fields("fleiss_kappa", fleiss_kappa(counts)),
        }
        for method in ("spearman", "kendall"):
            result = bootstrap_correlation(
                pairs["score"].tolist(),
                pairs["score_human"].tolist(),
                method,
                n_resamples=n_resamples,
                seed=seed,
            )
            rows.append({**base, **result.record()})
    return rows
