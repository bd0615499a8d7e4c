"""Validating the classroom's DoC judge against people (seed 000, Appendix B): the judged pairs
of a run to annotate, the stratified sample of them, and the agreement (Pearson r) between the
judge's scores and the annotators' mean."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from personasim.analysis.event_tables import payloads
from personasim.analysis.undefined import (
    CONSTANT,
    Statistic,
    Undefined,
    stat_fields,
)
from personasim.scenarios.classroom.metrics import LEVELS, select_rows

__all__ = [
    "VALIDATION_PER_SETTING",
    "doc_pairs",
    "judge_agreement",
    "read_judge_validation",
    "validation_sample",
]


def judge_agreement(judge: Sequence[float], human_mean: Sequence[float]) -> dict[str, Any]:
    """Pearson r (with its two-sided p) between judge scores and mean human scores (App. B).

    r and p are null with a reason for fewer than 3 pairs or a constant set of scores.
    """
    from scipy import stats

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


def doc_pairs(events: pd.DataFrame) -> pd.DataFrame:
    """Every judged pair of a run, for human annotation (Appendix B): the question, both final
    responses and the judge's score. Add `human_1`, `human_2`, ... columns and pass the table to
    `read_judge_validation`."""
    made = pd.DataFrame(payloads(events, "decision.made"))
    keys = ["strategy", "race", "order", "repetition", "question_id"]
    finals = select_rows(made, final=True)
    finals = finals[finals["level"].isin(LEVELS)].assign(
        response=lambda f: [v["revised_response"] if isinstance(v, dict) else v for v in f.value]
    )
    wide = finals.pivot_table(index=keys, columns="level", values="response", aggfunc="first")
    judged = select_rows(made, task="classroom.judge")[[*keys, "value"]].rename(
        columns={"value": "judge_score"}
    )
    pairs = judged.merge(wide.reset_index(), on=keys, how="left")
    return pairs.rename(columns={"high": "high_response", "low": "low_response"})


VALIDATION_PER_SETTING = 30
"""Appendix B: 30 judged pairs from "Level Only" and 30 from "Level and Race" (60 in all)."""


def validation_sample(
    pairs: pd.DataFrame, per_setting: int = VALIDATION_PER_SETTING, seed: int = 0
) -> pd.DataFrame:
    """The judge-validation sample stratified as Appendix B: `per_setting` pairs drawn without
    replacement from the level-only cells (race "none") and as many from the cells with a race,
    marked in a `setting` column ("level only", "level and race"). A setting with fewer pairs
    than asked is an error naming both counts: a smaller sample would not be the paper's."""
    with_race = pairs["race"] != "none"
    drawn = []
    for setting, rows in (("level only", pairs[~with_race]), ("level and race", pairs[with_race])):
        if len(rows) < per_setting:
            raise ValueError(
                f"the judge-validation sample needs {per_setting} judged pairs in the "
                f"{setting!r} setting; the run has {len(rows)}"
            )
        drawn.append(rows.sample(per_setting, random_state=seed).assign(setting=setting))
    return pd.concat(drawn, ignore_index=True)
