"""Metrics, tables and Figure 3 of the classroom scenario (seed 000, REVERSO), from the event
log alone: accuracy per strategy × race × order against the no-persona baseline (Tables 1, 2),
the Degree of Contrast, the order effect (Table 5), the tagged behaviours (Table 3), the race
effect (Figure 3), and the agreement of the DoC judge with human annotators (Appendix B).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats

from personasim.analysis.event_tables import min_group_n, payloads, rounded
from personasim.analysis.reports import model_label, save_figure, small_note, write_table
from personasim.analysis.stats import mean_of, sample_sd
from personasim.analysis.undefined import (
    CONSTANT,
    NO_VALUES,
    Statistic,
    Undefined,
    first_undefined,
    read_stat,
    shown_stat,
    stat_fields,
)

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
    "VALIDATION_PER_SETTING",
    "Cell",
    "accuracy_rows",
    "behaviour_distribution",
    "behaviour_rows",
    "behaviour_tags",
    "cells_of",
    "classroom_metrics",
    "doc_pairs",
    "judge_agreement",
    "mean_and_sd",
    "race_effect_figure",
    "read_judge_validation",
    "report_lines",
    "summary_rows",
    "validation_sample",
    "write_reports",
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


def _select(frame: pd.DataFrame, **labels: str) -> pd.DataFrame:
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


READINGS = ("explicit", "last_number", "ambiguous", "none")
"""How a careful grader read an answer (`environments.classroom.numeric_answers`); logs
written before the reading was recorded have `graded_by` instead."""


def _readings(rows: pd.DataFrame) -> pd.Series:
    """Each graded answer's reading; for an older log (no `reading`), from `graded_by` and
    `final_answer_found`."""
    if rows.empty:
        return pd.Series([], dtype=object)
    if "reading" in rows.columns:
        return rows["reading"].fillna("explicit")
    found = rows["final_answer_found"].astype(bool)
    by_last = rows.get("graded_by", pd.Series("final_answer", index=rows.index)) == "last_number"
    old = [
        "none" if not f else "last_number" if b else "explicit"
        for f, b in zip(found, by_last, strict=True)
    ]
    return pd.Series(old, index=rows.index)


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
    when fewer than `smallest` answers were graded. `accuracy` is over the answers a careful
    grader can read (denominator `n_graded`: ambiguous answers, which state two different
    final answers, and unparseable ones are excluded and counted apart; an answer with no
    number is wrong); `accuracy_all` counts ambiguous and unparseable answers as wrong
    (denominator `n_answers`). `format_compliance` (%) is the share of graded replies in the
    paper's asked format, side by side with accuracy."""
    labels = {"strategy": strategy, "race": race, "order": order, "level": level}
    rows = _select(graded, **labels)
    lost = _select(failed, **labels)
    readings = _readings(rows)
    clear = rows[readings != "ambiguous"] if len(rows) else rows
    by_rep = _per_repetition(clear, "correct", 100.0)
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
        "n_graded": len(clear),
        "n_answers": len(rows) + len(lost),
        "answer_failures": len(lost),
        "ambiguous_answers": int(counts.get("ambiguous", 0)),
        "readings": {r: int(counts.get(r, 0)) for r in READINGS},
        "missing_final_answers": int(counts.get("last_number", 0) + counts.get("none", 0)),
        "small": len(clear) < smallest,
    }


def _counted_wrong(graded: pd.DataFrame, lost: pd.DataFrame) -> dict[int, float]:
    """Accuracy (%) per repetition with each failed (unparseable) answer counted wrong."""
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
    scores = _select(made, task="classroom.judge", **labels)
    by_rep = _per_repetition(scores, "value")
    mean, sd = mean_and_sd(list(by_rep.values()), "no judged pairs")
    return {
        **stat_fields("mean", mean),
        **stat_fields("sd", sd),
        "n_judged": len(scores),
        "judge_failures": len(_select(failed, task="classroom.judge", **labels)),
        "small": len(scores) < smallest,
    }


def _final_responses(made: pd.DataFrame, cell: Cell, level: str) -> list[str]:
    rows = _select(
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
    zero = _select(graded, strategy="zero-shot")
    orders = [o for o in ORDERS if o in set(zero.get("order", []))]
    if not orders or "none" not in set(zero["race"]):
        return []
    order = orders[0]
    rows = []
    for race in (r for r in RACES[1:] if r in set(zero["race"])):
        for level in LEVELS:
            sides = [_select(zero, race=r, order=order, level=level) for r in (race, "none")]
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


def _pm(record: dict[str, Any], key: str, sd_key: str, digits: int = 1) -> str:
    """ "mean ± sd", or the mean alone when the SD is undefined, or "undefined (reason)"."""
    text = shown_stat(record, key, digits)
    sd = record[sd_key]
    return text if record[key] is None or sd is None else f"{text} ± {sd:.{digits}f}"


def _signed(record: dict[str, Any], key: str) -> str:
    value = record[key]
    return shown_stat(record, key) if value is None else f"{value:+.1f}"


# ---------------------------------------------------------------------------------------------
# Tables, figure and the judge-validation export
# ---------------------------------------------------------------------------------------------


def accuracy_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Tables 1 and 2: per strategy × race × order, low and high accuracy (%) as a careful
    grader reads, their change against the no-persona baseline, and the mean DoC, each with
    its SD over repetitions; beside them the format compliance (%), the graded and the
    ambiguous answers; `small_group` when one of them rests on fewer answers than the run's
    `min_group_n`."""
    rows = []
    for cell in metrics["cells"]:
        row = {
            "model": metrics["model"],
            "strategy": cell["strategy"],
            "race": cell["race"],
            "order": cell["order"],
            "no_persona": metrics["baseline"]["accuracy"],
        }
        for level in TABLE_LEVELS:
            row[f"acc_{level}"] = cell[level]["accuracy"]
            row[f"acc_{level}_sd"] = cell[level]["accuracy_sd"]
            row[f"acc_{level}_change"] = cell[level]["change"]
        for level in TABLE_LEVELS:
            row[f"format_{level}"] = cell[level].get("format_compliance")
            row[f"n_{level}"] = cell[level]["n_graded"]
            row[f"ambiguous_{level}"] = cell[level].get("ambiguous_answers", 0)
        row["doc"] = cell["doc"]["mean"]
        row["doc_sd"] = cell["doc"]["sd"]
        row["n_judged"] = cell["doc"]["n_judged"]
        row["small_group"] = any(cell[g]["small"] for g in (*TABLE_LEVELS, "doc"))
        rows.append(row)
    return rows


def behaviour_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3: the share (%) of each tagged low-performance behaviour per cell."""
    return [
        {
            "model": metrics["model"],
            "strategy": cell["strategy"],
            "race": cell["race"],
            "order": cell["order"],
            **{f"({c})": share for c, share in cell["behaviours"]["shares"].items()},
            "n_comments": cell["behaviours"]["n_comments"],
        }
        for cell in metrics["cells"]
    ]


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def race_effect_figure(
    rows: list[dict[str, Any]], model: str, note: str | None = None, min_group_n: int = 5
) -> Figure:
    """Figure 3: change in zero-shot accuracy when a race is added, per race and level; a bar
    resting on fewer than `min_group_n` graded answers on either side is labelled †."""
    figure = Figure(figsize=(6.4, 4.0))
    axes = figure.subplots()
    races = list(dict.fromkeys(r["race"] for r in rows))
    width = 0.38
    for offset, level in ((-width / 2, "low"), (width / 2, "high")):
        points = {r["race"]: r for r in rows if r["level"] == level}
        # an undefined change draws no bar (not a bar at 0); an undefined SD no error bar
        values = [_or_nan(points[race]["change"]) for race in races]
        errors = [_or_nan(points[race]["sd"]) for race in races]
        bars = axes.bar(
            [i + offset for i in range(len(races))],
            [0.0 if math.isnan(v) else v for v in values],
            width,
            yerr=errors,
            capsize=4,
            label=f"{level}-performing",
            color="#d9534f" if level == "low" else "#337ab7",
        )
        labels = [
            "undefined" if math.isnan(v) else f"{v:+.1f}" + ("†" if points[r]["small"] else "")
            for v, r in zip(values, races, strict=True)
        ]
        axes.bar_label(bars, labels=labels, padding=3, fontsize=8)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(range(len(races)), [f"{RACE_NAMES[r]} ({r})" for r in races])
    axes.set_ylabel("accuracy change vs no race (points; bars ± SD)")
    axes.set_title(f"classroom: adding race, zero-shot — {model} (seed 000, Fig. 3)")
    axes.margins(y=0.2)
    axes.grid(axis="y", alpha=0.3)
    axes.legend()
    notes = [note] if note else []
    if any(r["small"] for r in rows):
        notes.append(small_note(min_group_n, "graded answers on one side of the bar"))
    if notes:
        figure.text(0.5, -0.01, "\n".join(notes), ha="center", va="top", fontsize=8, style="italic")
    return figure


def doc_pairs(events: pd.DataFrame) -> pd.DataFrame:
    """Every judged pair of a run, for human annotation (Appendix B): the question, both final
    responses and the judge's score. Add `human_1`, `human_2`, ... columns and pass the table to
    `personasim.scenarios.classroom.metrics.read_judge_validation`."""
    made = pd.DataFrame(payloads(events, "decision.made"))
    keys = ["strategy", "race", "order", "repetition", "question_id"]
    finals = _select(made, final=True)
    finals = finals[finals["level"].isin(LEVELS)].assign(
        response=lambda f: [v["revised_response"] if isinstance(v, dict) else v for v in f.value]
    )
    wide = finals.pivot_table(index=keys, columns="level", values="response", aggfunc="first")
    judged = _select(made, task="classroom.judge")[[*keys, "value"]].rename(
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


# ---------------------------------------------------------------------------------------------
# The scenario's metrics, report lines, report files and sweep rows
# ---------------------------------------------------------------------------------------------


def classroom_metrics(events: pd.DataFrame) -> dict[str, Any]:
    """Every metric of a classroom run (see docs/classroom.md), from its event table."""
    header = payloads(events, "run.started")[0]
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
        "missing_final_answers": int(readings.isin(["last_number", "none"]).sum()),
        "ambiguous_answers": int((readings == "ambiguous").sum()),
        "readings": {r: int((readings == r).sum()) for r in READINGS},
        "answer_failures": _count(failed, lambda t: t != "classroom.judge"),
        "judge_failures": _count(failed, lambda t: t == "classroom.judge"),
        "reasks": len(payloads(events, "decision.reask")),
    }


def _both(record: dict[str, Any]) -> str:
    """Accuracy over the graded answers, and with ambiguous and unparseable answers counted
    wrong, each with its denominator."""
    return (
        f"{_pm(record, 'accuracy', 'accuracy_sd')} % of {record['n_graded']} "
        f"[{shown_stat(record, 'accuracy_all', 1)} % of {record['n_answers']}]"
    )


def _format(record: dict[str, Any]) -> str:
    """The format compliance beside the accuracy (nothing where no format was asked)."""
    share = record.get("format_compliance")
    return "" if share is None else f", format {share:.1f} %"


def report_lines(metrics: dict[str, Any]) -> list[str]:
    """The console report: the run's counts, then one line per cell."""
    base = metrics["baseline"]
    lines = [
        f"{metrics['model']}: {metrics['n_questions']} questions × {metrics['repetitions']} "
        f"repetitions; no persona {_both(base)}; "
        f"{metrics['missing_final_answers']} answers without an explicit final answer, "
        f"{metrics.get('ambiguous_answers', 0)} ambiguous, "
        f"{metrics['answer_failures']} failed answers, {metrics['judge_failures']} failed "
        f"judgements, {metrics['reasks']} re-asks"
    ]
    for row in metrics["cells"]:
        low, high, doc = row["low"], row["high"], row["doc"]
        lines.append(
            f"  {row['strategy']:<11} {row['race']:<4} {row['order']:<6}  "
            f"low {_both(low)} ({_signed(low, 'change')}){_format(low)}  "
            f"high {_both(high)} ({_signed(high, 'change')}){_format(high)}"
            f"  DoC {_pm(doc, 'mean', 'sd', 2)}"
        )
    return lines


def write_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Tables 1, 2, 3 and 5 and Figure 3 (Table 5 and Figure 3 when the run has them)."""
    rows = accuracy_rows(metrics)
    flagged = {
        "flag": "small_group",
        "notes": [
            small_note(metrics["min_group_n"], "graded or judged answers in a group of the row")
        ],
    }
    files = [
        *write_table(
            [r for r in rows if r["race"] == "none"], directory, "table1_level", **flagged
        ),
        *write_table([r for r in rows if r["race"] != "none"], directory, "table2_race", **flagged),
        *write_table(behaviour_rows(metrics), directory, "table3_behaviours"),
    ]
    if metrics["order_effect"]:
        files += write_table(metrics["order_effect"], directory, "table5_order")
    if metrics["race_effect"]:
        figure = race_effect_figure(
            metrics["race_effect"], metrics["model"], metrics["note"], metrics["min_group_n"]
        )
        files.append(save_figure(figure, directory, "figure3_race_effect"))
    return files


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Tables 1 and 2 in one, a sweep labels each row with its model; the zero-shot rows with
    a race carry Figure 3's change (`race_effect_low`, `race_effect_high` and their SDs);
    every row carries Table 3's shares and `n_comments`, and an "after" row Table 5's changes
    against "before" (`order_acc_low_change`, `order_acc_high_change`, `order_doc_change`)."""
    effects = {(r["race"], r["order"], r["level"]): r for r in metrics["race_effect"]}
    behaviours = {(r["strategy"], r["race"], r["order"]): r for r in behaviour_rows(metrics)}
    orders = {(r["strategy"], r["race"]): r for r in metrics["order_effect"]}
    rows = []
    for row in accuracy_rows(metrics):
        row = {k: v for k, v in row.items() if k != "model"}
        for level in TABLE_LEVELS:
            effect = effects.get((row["race"], row["order"], level))
            if row["strategy"] == "zero-shot" and effect is not None:
                row[f"race_effect_{level}"] = effect["change"]
                row[f"race_effect_{level}_sd"] = effect["sd"]
        shares = behaviours[(row["strategy"], row["race"], row["order"])]
        row.update({k: v for k, v in shares.items() if k.startswith("(") or k == "n_comments"})
        order = orders.get((row["strategy"], row["race"]))
        if row["order"] == "after" and order is not None:
            for key in ("acc_low_change", "acc_high_change", "doc_change"):
                row[f"order_{key}"] = order[key]
        rows.append(row)
    return rows
