"""The DoC judge as an instrument: what it scores (for `personasim rescore`), and whether the
order of the two answers moves its score (`--swap-order`, position bias).

One item is one judged pair: strategy × race × order × question × repetition, scored 1–3 on
Table 4's rubric (ordinal). With `swap_order` the judge is also asked each comparison with the
low answer in the first slot (the pack's `judge_swapped`, same labels); the pairs both orders
scored give the exact-agreement rate and the mean absolute change of the score.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from personasim.analysis.event_tables import payloads
from personasim.analysis.rescoring import compare_scores
from personasim.analysis.stats import mean_of
from personasim.analysis.undefined import stat_fields
from personasim.simulation import ScoreItems, detail_scores, run_header

__all__ = ["JUDGE_SCORES", "JUDGE_TASK", "SWAPPED_TASK", "position_bias"]

JUDGE_TASK = "classroom.judge"
SWAPPED_TASK = "classroom.judge_swapped"
ITEM_FIELDS = ("strategy", "race", "order", "question_id", "repetition")

JUDGE_SCORES = ScoreItems(
    tasks=(JUDGE_TASK,),
    read=detail_scores(*ITEM_FIELDS),
    level="ordinal",
    scale=(1, 3),
)
"""A judged pair's Degree of Contrast."""

_SWAPPED_SCORES = ScoreItems(tasks=(SWAPPED_TASK,), read=detail_scores(*ITEM_FIELDS))


def position_bias(events: pd.DataFrame) -> dict[str, Any] | None:
    """Each pair's score in the paper's order against the swapped one (None: not asked)."""
    made = [(None, p) for p in payloads(events, "decision.made")]
    swapped = _SWAPPED_SCORES.items(made)
    if not swapped and not run_header(events)["params"].get("swap_order"):
        return None
    fixed = JUDGE_SCORES.items(made)
    both = sorted(set(fixed) & set(swapped))
    changes = [abs(swapped[item] - fixed[item]) for item in both]
    return {
        "what": "the DoC judge's score with the high answer first (the paper's order) against "
        "the low answer first (judge_swapped), per judged pair",
        **stat_fields("mean_abs_change", mean_of(changes, "no pair was scored in both orders")),
        **compare_scores(
            fixed, swapped, JUDGE_SCORES.describe(), raters=("high answer first", "low first")
        ),
    }
