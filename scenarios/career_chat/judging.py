"""Career chat's dialogue judge as an instrument, for `personasim rescore`: one item is one
user's dialogue on one of the four dimensions, its score the mean of the judge's samples
(numeric, so interval level; the paper reports ICC(3,k) for its judge, Appendix E)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from personasim.analysis.event_tables import payloads
from personasim.analysis.rescoring import compare_scores, paired_scores, rescore_agreement
from personasim.simulation import ScoreItems, detail_scores

__all__ = ["JUDGE_SCORES", "judge_checks"]

JUDGE_SCORES = ScoreItems(
    tasks=("career.judge",),
    read=detail_scores("user", "dimension"),
    level="interval",
    icc_form="ICC(3,k)",
)


def judge_checks(events: pd.DataFrame) -> dict[str, Any]:
    """`rescore`: agreement with the run this one rescored, and with `--human-ratings` the
    same between this run's judge and the raters' mean of each dialogue and dimension."""
    block = rescore_agreement(events, JUDGE_SCORES)
    if block is None:
        return {}
    human = payloads(events, "career.human_ratings")
    if human:
        block["humans"] = compare_scores(
            paired_scores(events, JUDGE_SCORES),
            _human_means(human[0]["rows"]),
            JUDGE_SCORES.describe(),
            raters=("new judge", "human raters' mean"),
        )
    return {"rescore": block}


def _human_means(rows: list[list[Any]]) -> dict[str, float]:
    """Each (user, dimension)'s mean rating over the raters (rows: user, dimension, rating)."""
    given: dict[str, list[float]] = defaultdict(list)
    for user, dimension, rating in rows:
        given[f"{user}/{dimension}"].append(float(rating))
    return {item: sum(r) / len(r) for item, r in given.items()}
