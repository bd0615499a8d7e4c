"""Metrics, tables and Figure 3 of the classroom scenario (seed 000, REVERSO), from the event
log alone: accuracy per strategy × race × order against the no-persona baseline (Tables 1, 2),
the Degree of Contrast, the order effect (Table 5), the tagged behaviours (Table 3), the race
effect (Figure 3), and the agreement of the DoC judge with human annotators (Appendix B).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired

import pandas as pd
from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from personasim.analysis.event_tables import min_group_n, payloads, rounded
from personasim.analysis.reports import model_label
from personasim.analysis.stats import mean_of, sample_sd
from personasim.analysis.undefined import (
    NO_VALUES,
    Statistic,
    Undefined,
    first_undefined,
    read_stat,
    stat_fields,
)
from personasim.scenarios.classroom.judging import JUDGE_TASK, SWAPPED_TASK, position_bias
from personasim.simulation import run_header
from personasim.simulation.runs.tools.reader_role import ROLE_OUTCOMES, role_outcome

__all__ = [
    "BEHAVIOUR_CATEGORIES",
    "BEHAVIOUR_TAG",
    "ENVIRONMENT_KIND",
    "LEVELS",
    "ORDERS",
    "RACES",
    "RACE_NAMES",
    "READINGS",
    "STRATEGIES",
    "TABLE_LEVELS",
    "Cell",
    "ClassroomMetrics",
    "behaviour_distribution",
    "behaviour_tags",
    "cells_of",
    "classroom_metrics",
    "mean_and_sd",
    "select_rows",
]

STRATEGIES = ("none", "zero-shot", "one-shot", "self-refine", "two-stage")
"""§3; "none" is the no-persona baseline; two-stage needs a race (it is for intersectional
simulation)."""
RACES = ("none", "AA", "WA", "HS")
"""Appendix A.1; "none" simulates the performance level only."""
RACE_NAMES = {"AA": "African American", "WA": "White American", "HS": "Hispanic"}
"""Figure 4's group names, as labels (persona attributes, Figure 3's axis); the names the model
reads are the prompt pack's `race_name_*` entries."""
ORDERS = ("before", "after")
"""Appendix C.1: persona instructions before the question (main setting) or after it."""
LEVELS = ("high", "low")
"""The high student answers first, then the low one; the judge compares them."""
TABLE_LEVELS = ("low", "high")
"""Column order of the tables (as in Tables 1, 2 and 5)."""
ENVIRONMENT_KIND = "classroom"
"""`environments.Classroom.kind`, whose `env.created` settings list the questions (analysis
cannot import environments; a test checks the two agree)."""

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


# ---------------------------------------------------------------------------------------------
# Cells: the persona conditions a run asked for
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One persona condition: strategy × race × order (the baseline is strategy "none")."""

    strategy: str
    race: str
    order: str

    @property
    def name(self) -> str:
        return f"{self.strategy}/{self.race}/{self.order}"


def cells_of(strategies: Iterable[str], races: Iterable[str], orders: Iterable[str]) -> list[Cell]:
    """Every persona cell of these strategies, races and orders (two-stage only with a race)."""
    races, orders = list(races), list(orders)
    return [
        Cell(strategy, race, order)
        for strategy in strategies
        if strategy != "none"
        for race in races
        if not (strategy == "two-stage" and race == "none")
        for order in orders
    ]


# ---------------------------------------------------------------------------------------------
# Metrics (from the event table alone)
# ---------------------------------------------------------------------------------------------


def _cells_in(params: dict[str, Any]) -> list[Cell]:
    return cells_of(params["strategies"], params["races"], params["orders"])


def _n_questions(events: pd.DataFrame) -> int:
    created = [p for p in payloads(events, "env.created") if p["kind"] == ENVIRONMENT_KIND]
    return len(created[0]["settings"]["questions"]) if created else 0


def select_rows(frame: pd.DataFrame, **labels: str) -> pd.DataFrame:
    """The rows whose columns hold the given labels (none when a column is missing)."""
    if frame.empty:
        return frame
    mask = pd.Series(True, index=frame.index)
    for column, value in labels.items():
        if column not in frame.columns:
            return frame.iloc[0:0]
        mask &= frame[column] == value
    return frame[mask]


def _per_repetition(frame: pd.DataFrame, column: str, scale: float = 1.0) -> dict[int, float]:
    if frame.empty:
        return {}
    values = frame[column].astype(float) * scale
    means = values.groupby(frame["repetition"]).mean()
    return {int(k): float(v) for k, v in means.items()}


READINGS = ("read", "unreadable", "ambiguous")
"""How a careful grader read an answer (`environments.classroom.numeric_answers`, a
`Reading`'s status); older logs recorded `reading` or `graded_by` instead."""
_OLD_READINGS = {"explicit": "read", "last_number": "read", "none": "unreadable"}
"""An older log's `reading` as a status (its last-number grades stay as they were graded)."""


def _readings(rows: pd.DataFrame) -> pd.Series:
    """Each graded answer's reading status; for an older log (no `status`), from its
    `reading`, or from `final_answer_found`."""
    if rows.empty:
        return pd.Series([], dtype=object)
    if "status" in rows.columns:
        return rows["status"].fillna("read")
    if "reading" in rows.columns:
        return rows["reading"].map(lambda r: _OLD_READINGS.get(r, r)).fillna("read")
    found = rows["final_answer_found"].astype(bool)
    return found.map({True: "read", False: "unreadable"})


def _format_compliance(rows: pd.DataFrame, level: str) -> Statistic:
    """The share (%) of graded replies in the paper's asked format ('Final Answer: {number}'),
    undefined for the baseline (its prompt asks for no format) or an older log."""
    if level == "none":
        return Undefined("the no-persona prompt asks for no format")
    if rows.empty:
        return Undefined("no graded answers")
    if "format_compliant" not in rows.columns or rows["format_compliant"].isna().all():
        return Undefined("not recorded (a log written before the format check)")
    known = rows["format_compliant"].dropna().astype(bool)
    return 100.0 * float(known.mean())


def _accuracy(
    graded: pd.DataFrame,
    failed: pd.DataFrame,
    smallest: int,
    strategy: str,
    race: str,
    order: str,
    level: str,
) -> dict:
    """Accuracy (%) per repetition, their mean and SD, and the counts behind them; `small`
    when fewer than `smallest` answers were graded. `accuracy` is over every graded answer
    (denominator `n_graded`); an unreadable or ambiguous one is not right, and is counted
    apart (`unreadable_answers`, `ambiguous_answers`). `accuracy_all` also counts the
    answers that failed (no usable reply after re-asks) as not right (denominator
    `n_answers`, the answers asked for). `format_compliance` (%) is the share of graded
    replies in the paper's asked format, side by side with accuracy."""
    labels = {"strategy": strategy, "race": race, "order": order, "level": level}
    rows = select_rows(graded, **labels)
    lost = select_rows(failed, **labels)
    readings = _readings(rows)
    by_rep = _per_repetition(rows, "correct", 100.0)
    mean, sd = mean_and_sd(list(by_rep.values()), "no graded answers")
    all_rep = _counted_wrong(rows, lost)
    mean_all, sd_all = mean_and_sd(list(all_rep.values()), "no answers")
    counts = readings.value_counts()
    return {
        **stat_fields("accuracy", mean),
        **stat_fields("accuracy_sd", sd),
        **stat_fields("accuracy_all", mean_all),
        **stat_fields("accuracy_all_sd", sd_all),
        **stat_fields("format_compliance", _format_compliance(rows, level)),
        "by_repetition": {str(k): rounded(v) for k, v in by_rep.items()},
        "n_answers": len(rows) + len(lost),
        "n_graded": len(rows),
        "unreadable_answers": int(counts.get("unreadable", 0)),
        "ambiguous_answers": int(counts.get("ambiguous", 0)),
        "answer_failures": len(lost),
        "readings": {r: int(counts.get(r, 0)) for r in READINGS},
        "small": len(rows) < smallest,
    }


def _counted_wrong(graded: pd.DataFrame, lost: pd.DataFrame) -> dict[int, float]:
    """Accuracy (%) per repetition with each failed answer (no usable reply) counted wrong."""
    correct: Counter[int] = Counter()
    total: Counter[int] = Counter()
    for rep, ok in zip(graded.get("repetition", []), graded.get("correct", []), strict=True):
        correct[int(rep)] += bool(ok)
        total[int(rep)] += 1
    for rep in lost.get("repetition", []):
        total[int(rep)] += 1
    return {rep: 100.0 * correct[rep] / total[rep] for rep in sorted(total)}


def _doc(made: pd.DataFrame, failed: pd.DataFrame, cell: Cell, smallest: int) -> dict[str, Any]:
    labels = {"strategy": cell.strategy, "race": cell.race, "order": cell.order}
    scores = select_rows(made, task="classroom.judge", **labels)
    by_rep = _per_repetition(scores, "value")
    mean, sd = mean_and_sd(list(by_rep.values()), "no judged pairs")
    return {
        **stat_fields("mean", mean),
        **stat_fields("sd", sd),
        "n_judged": len(scores),
        "judge_failures": len(select_rows(failed, task="classroom.judge", **labels)),
        "small": len(scores) < smallest,
    }


def _final_responses(made: pd.DataFrame, cell: Cell, level: str) -> list[str]:
    rows = select_rows(
        made, strategy=cell.strategy, race=cell.race, order=cell.order, level=level, final=True
    )
    return [v["revised_response"] if isinstance(v, dict) else v for v in rows["value"]]


def _cell_metrics(
    graded: pd.DataFrame,
    made: pd.DataFrame,
    failed: pd.DataFrame,
    cell: Cell,
    baseline: dict[str, Any],
    smallest: int,
) -> dict[str, Any]:
    result: dict[str, Any] = {"strategy": cell.strategy, "race": cell.race, "order": cell.order}
    for level in LEVELS:
        accuracy = _accuracy(graded, failed, smallest, cell.strategy, cell.race, cell.order, level)
        accuracy.update(_difference("change", accuracy, baseline, "accuracy", "baseline"))
        accuracy.update(_difference("change_all", accuracy, baseline, "accuracy_all", "baseline"))
        result[level] = accuracy
    result["doc"] = _doc(made, failed, cell, smallest)
    tags = [t for text in _final_responses(made, cell, "low") for t in behaviour_tags(text)]
    result["behaviours"] = behaviour_distribution(tags)
    return result


def _difference(
    name: str, record: dict[str, Any], reference: dict[str, Any], key: str, label: str
) -> dict[str, Any]:
    """`record[key] − reference[key]` as `name`'s fields, undefined when either side is."""
    value, base = read_stat(record, key), read_stat(reference, key)
    return stat_fields(name, first_undefined(cell=value, **{label: base}) or value - base)


def _order_effect(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 5's shape: "after" values and their change against "before", per strategy × race."""
    before = {(r["strategy"], r["race"]): r for r in table if r["order"] == "before"}
    rows = []
    for after in (r for r in table if r["order"] == "after"):
        reference = before.get((after["strategy"], after["race"]))
        if reference is None:
            continue
        row: dict[str, Any] = {"strategy": after["strategy"], "race": after["race"]}
        for level in TABLE_LEVELS:
            row.update(stat_fields(f"acc_{level}", read_stat(after[level], "accuracy")))
            row.update(
                _difference(
                    f"acc_{level}_change", after[level], reference[level], "accuracy", "before"
                )
            )
        row.update(stat_fields("doc", read_stat(after["doc"], "mean")))
        row.update(_difference("doc_change", after["doc"], reference["doc"], "mean", "before"))
        for level in TABLE_LEVELS:
            row[f"n_{level}"] = after[level]["n_graded"]
            row[f"n_{level}_before"] = reference[level]["n_graded"]
        row["n_judged"] = after["doc"]["n_judged"]
        row["n_judged_before"] = reference["doc"]["n_judged"]
        rows.append(row)
    return rows


def _race_effect(graded: pd.DataFrame, smallest: int) -> list[dict[str, Any]]:
    """Figure 3: zero-shot accuracy with a race minus without, per level (mean and SD over
    repetitions of the per-repetition difference), in the main order when it was run; `small`
    when either side has fewer than `smallest` graded answers."""
    if graded.empty:
        return []
    zero = select_rows(graded, strategy="zero-shot")
    orders = [o for o in ORDERS if o in set(zero.get("order", []))]
    if not orders or "none" not in set(zero["race"]):
        return []
    order = orders[0]
    rows = []
    for race in (r for r in RACES[1:] if r in set(zero["race"])):
        for level in LEVELS:
            sides = [select_rows(zero, race=r, order=order, level=level) for r in (race, "none")]
            with_race, without = (_per_repetition(f, "correct", 100.0) for f in sides)
            diffs = [with_race[k] - without[k] for k in with_race if k in without]
            mean, sd = mean_and_sd(diffs, "no repetition graded with and without the race")
            rows.append(
                {
                    "race": race,
                    "level": level,
                    "order": order,
                    **stat_fields("change", mean),
                    **stat_fields("sd", sd),
                    "n_repetitions": len(diffs),
                    "small": min(len(f) for f in sides) < smallest,
                }
            )
    return rows


def _count(failed: pd.DataFrame, which: Callable[[str], bool]) -> int:
    return 0 if failed.empty else int(failed["task"].map(which).sum())


# ---------------------------------------------------------------------------------------------
# The scenario's metrics (its report, tables and sweep rows: `reports`)
# ---------------------------------------------------------------------------------------------


@with_config(ConfigDict(extra="forbid"))
class ClassroomMetrics(TypedDict):
    """classroom's metrics block (`classroom_metrics`): accuracy per cell against the baseline,
    the order and race effects, the answers' readings and failures; `position_bias` only where
    the judge was asked both orders (`--swap-order`)."""

    model: str
    note: str | None
    judge_model: str
    n_questions: int
    repetitions: int
    min_group_n: int
    baseline: dict[str, Any]
    cells: list[dict[str, Any]]
    order_effect: list[dict[str, Any]]
    race_effect: list[dict[str, Any]]
    unreadable_answers: int
    ambiguous_answers: int
    readings: dict[str, int]
    answer_failures: int
    judge_failures: int
    reasks: int
    reader_role: NotRequired[dict[str, int]]
    position_bias: NotRequired[dict[str, Any]]


def classroom_metrics(events: pd.DataFrame) -> ClassroomMetrics:
    """Every metric of a classroom run (see docs/classroom.md), from its event table."""
    header = run_header(events)
    graded = pd.DataFrame(payloads(events, "classroom.graded"))
    made = pd.DataFrame(payloads(events, "decision.made"))
    failed = pd.DataFrame(payloads(events, "decision.failed"))
    smallest = min_group_n(events)
    readings = _readings(graded)
    baseline = _accuracy(graded, failed, smallest, "none", "none", "none", "none")
    table = [
        _cell_metrics(graded, made, failed, cell, baseline, smallest)
        for cell in _cells_in(header["params"])
    ]
    return {
        "model": model_label(header["model"]),
        "note": header["model"].get("note"),
        "judge_model": ",".join(header["roles"]["judge"]),
        "n_questions": _n_questions(events),
        "repetitions": header["params"]["repetitions"],
        "min_group_n": smallest,
        "baseline": baseline,
        "cells": table,
        "order_effect": _order_effect(table),
        "race_effect": _race_effect(graded, smallest),
        "unreadable_answers": int((readings == "unreadable").sum()),
        "ambiguous_answers": int((readings == "ambiguous").sum()),
        "readings": {r: int((readings == r).sum()) for r in READINGS},
        "answer_failures": _count(failed, lambda t: t not in (JUDGE_TASK, SWAPPED_TASK)),
        "judge_failures": _count(failed, lambda t: t == JUDGE_TASK),
        "reasks": len(payloads(events, "decision.reask")),
        **({"reader_role": role} if (role := _reader_role(graded)) else {}),
        **({"position_bias": bias} if (bias := position_bias(events)) else {}),
    }


def _reader_role(graded: pd.DataFrame) -> dict[str, int]:
    """How many graded answers the bound reader role read, confirmed, settled, made ambiguous
    or could not confirm (empty where it marked none: unbound, or an older log)."""
    if graded.empty or "by" not in graded.columns:
        return {}
    rows = graded.reindex(columns=["status", "by", "reason"]).astype(object)
    rows = rows.where(rows.notna(), None)  # an older row's missing reason: None, not NaN
    done = Counter(role_outcome(*row) for row in rows.itertuples(index=False, name=None))
    done.pop(None, None)
    return {outcome: done[outcome] for outcome in ROLE_OUTCOMES} if done else {}
