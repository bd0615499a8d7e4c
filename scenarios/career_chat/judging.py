"""Career chat's dialogue judge as an instrument, for `personasim rescore`: one item is one
user's dialogue on one of the four dimensions, its score the mean of the judge's samples
(numeric, so interval level; the paper reports ICC(3,k) for its judge, Appendix E). With
`--human-ratings`, a rescored run's agreement block also compares the new judge with the
raters' mean of each dialogue and dimension (the `rescore` metrics extension)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from personasim.analysis.event_tables import payloads
from personasim.simulation import ScoreItems, detail_scores

__all__ = ["JUDGE_SCORES"]

HUMAN_RATINGS = "career.human_ratings"


def _human_reference(events: pd.DataFrame) -> dict[str, float] | None:
    """The raters' mean of each dialogue and dimension, in a run given `--human-ratings`."""
    human = payloads(events, HUMAN_RATINGS)
    return _human_means(human[0]["rows"]) if human else None


def _human_means(rows: list[list[Any]]) -> dict[str, float]:
    """Each (user, dimension)'s mean rating over the raters (rows: user, dimension, rating)."""
    given: dict[str, list[float]] = defaultdict(list)
    for user, dimension, rating in rows:
        given[f"{user}/{dimension}"].append(float(rating))
    return {item: sum(r) / len(r) for item, r in given.items()}


JUDGE_SCORES = ScoreItems(
    tasks=("career.judge",),
    read=detail_scores("user", "dimension"),
    level="interval",
    icc_form="ICC(3,k)",
    reference=_human_reference,
    reference_kinds=(HUMAN_RATINGS,),
)
