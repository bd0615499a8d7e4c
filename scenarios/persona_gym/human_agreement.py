"""Agreement among human raters and with a model, at the paper's unit (seed 002, Appendix F).

PersonaGym's human study scores single answers: a row is (persona, task, question, rater,
score). Fleiss' κ measures how far the raters agree beyond chance on the 1–5 scale; the model's
ensemble score of each question is then correlated with the raters' mean (Spearman and Kendall τ,
bootstrap intervals as in Appendix F.1); `analysis.agreement` computes both. Undefined values
are `Undefined` with their reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from personasim.analysis.agreement import bootstrap_correlation
from personasim.analysis.reliability import fleiss_kappa
from personasim.analysis.undefined import stat_fields

__all__ = ["HUMAN_COLUMNS", "question_alignment"]

HUMAN_COLUMNS = ["persona", "task", "question", "rater", "score"]
SCALE = (1, 2, 3, 4, 5)


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
