"""Statistics for the classroom scenario (seed 000, REVERSO): behaviour tags, spreads over
repetitions, and the agreement of the Degree-of-Contrast judge with human annotators.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .stats import mean_of, sample_sd
from .undefined import CONSTANT, NO_VALUES, Statistic, Undefined, stat_fields

__all__ = [
    "BEHAVIOUR_CATEGORIES",
    "BEHAVIOUR_TAG",
    "behaviour_distribution",
    "behaviour_tags",
    "judge_agreement",
    "mean_and_sd",
    "read_judge_validation",
]

BEHAVIOUR_CATEGORIES = (1, 2, 3, 4)
"""The four low-performance behaviours the instruction numbers (Figure 1, Table 3)."""

# A comment tagged "(n)" followed by words, optionally in braces or brackets as in Figures 6–7:
# "(3) Using fingers to count", "{(2) Second-guesses final answer}". A number in parentheses
# inside arithmetic ("2 × (3) = 6") is not followed by a word and is not counted.
BEHAVIOUR_TAG = re.compile(r"\(([1-4])\)\s*[*_]*[A-Za-z]")


def behaviour_tags(response: str) -> list[int]:
    """The behaviour categories tagged in a response, in order (Table 3's regex extraction)."""
    return [int(tag) for tag in BEHAVIOUR_TAG.findall(response)]


def behaviour_distribution(tags: Iterable[int]) -> dict[str, Any]:
    """Counts and shares (%) of each category over a set of extracted tags (Table 3's cells);
    with no tag at all the shares are null, `"<c>_undefined": "no tagged comments"`."""
    counts = Counter(tags)
    total = sum(counts.values())
    shares: dict[str, Any] = {}
    for c in BEHAVIOUR_CATEGORIES:
        share = 100 * counts.get(c, 0) / total if total else Undefined("no tagged comments")
        shares.update(stat_fields(str(c), share))
    return {
        "n_comments": total,
        "counts": {str(c): counts.get(c, 0) for c in BEHAVIOUR_CATEGORIES},
        "shares": shares,
    }


def mean_and_sd(
    values: Sequence[float], empty: str = NO_VALUES, too_few: str = "fewer than 2 repetitions"
) -> tuple[Statistic, Statistic]:
    """Mean and sample SD (ddof 1) of per-repetition values, each `Undefined` with its reason
    where it has none (`empty`: no values at all, `too_few`: only one)."""
    mean = mean_of(values, empty)
    return mean, mean if isinstance(mean, Undefined) else sample_sd(values, too_few)


def judge_agreement(judge: Sequence[float], human_mean: Sequence[float]) -> dict[str, Any]:
    """Pearson r (with its two-sided p) between judge scores and mean human scores (App. B).

    r and p are null with a reason for fewer than 3 pairs or a constant set of scores.
    """
    if len(judge) != len(human_mean):
        raise ValueError("judge and human scores must pair up one to one")
    r: Statistic
    p: Statistic
    if len(judge) < 3:
        r = p = Undefined("fewer than 3 pairs")
    elif np.ptp(judge) == 0 or np.ptp(human_mean) == 0:
        r = p = Undefined(CONSTANT).within("judge" if np.ptp(judge) == 0 else "human")
    else:
        result = stats.pearsonr(np.asarray(judge, float), np.asarray(human_mean, float))
        r, p = float(result.statistic), float(result.pvalue)
    return {**stat_fields("r", r, None), **stat_fields("p", p, None), "n_pairs": len(judge)}


def read_judge_validation(
    source: Path | str | pd.DataFrame,
    judge_column: str = "judge_score",
    human_prefix: str = "human",
) -> dict[str, Any]:
    """Judge–human agreement from a table with one row per response pair.

    Columns: `judge_column` (the judge's 1–3) and one column per annotator whose name starts
    with `human_prefix` (e.g. `human_1`, `human_2`, `human_3`); empty cells are skipped in the
    mean. Rows without a judge score or any human score are left out (counted).
    """
    frame = source if isinstance(source, pd.DataFrame) else pd.read_csv(source)
    humans = [c for c in frame.columns if str(c).startswith(human_prefix)]
    if judge_column not in frame.columns or not humans:
        raise ValueError(
            f"the table needs a {judge_column!r} column and at least one {human_prefix}* column;"
            f" it has {', '.join(map(str, frame.columns))}"
        )
    human_mean = frame[humans].apply(pd.to_numeric, errors="coerce").mean(axis=1)
    judge = pd.to_numeric(frame[judge_column], errors="coerce")
    usable = judge.notna() & human_mean.notna()
    return {
        **judge_agreement(judge[usable].tolist(), human_mean[usable].tolist()),
        "n_annotators": len(humans),
        "n_left_out": int((~usable).sum()),
    }
