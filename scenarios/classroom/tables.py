"""The classroom scenario's tables in the paper's wide shape and Figure 3 across models (seed
000, REVERSO), from a run's accuracy rows or a sweep's combined rows.

Table 1 (race none) and Table 2 (per race) have one row per model and, per strategy, the low
and high accuracy with the change against the no-persona baseline as a subscript ("46.3
(-28.7)"), the mean DoC, and beside them the format compliance (the share of replies in the
asked `Final Answer: {number}`, low / high). Table 3 has, per model and strategy (0-shot, 1-shot,
self-refinement; race none), the share of each tagged behaviour (1)–(4) of the low persona and
the number of tagged comments behind them. Table 5 has, per model and race, the zero-shot
accuracy and DoC with the instructions after the question and, as the subscript, the change
against before, with the graded answers and judged pairs behind each block. The paper reports
the main setting, so Tables 1–3 show the "before" order (or "after" for a model run only in
that order). A value that is undefined or was not run is an empty cell (— in Markdown), never
0; the long tables (`table1_level`, `table2_race`, `table3_behaviours`, `table5_order`) keep
the numbers and the reasons.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.analysis.reports import save_figure, write_table
from personasim.scenarios.classroom import metrics as metrics_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "STRATEGY_LABELS",
    "behaviour_wide_table",
    "order_wide_table",
    "race_effect_models_figure",
    "wide_table",
    "write_paper_tables",
    "write_sweep_reports",
    "write_wide_tables",
]

STRATEGY_LABELS = {
    "zero-shot": "0-shot",
    "one-shot": "1-shot",
    "self-refine": "Self-refinement",
    "two-stage": "Two-stage",
}
"""The paper's column groups, in its order."""
RACE_ORDER = ("AA", "WA", "HS")
NOTE = (
    "Accuracy (%) of the low and high persona as a careful grader reads the answers, in "
    "parentheses the change against the no-persona baseline (the paper's subscript); DoC 1-3; "
    "format: the share (%) of low / high replies in the asked 'Final Answer: {number}'; n: "
    "answers asked / graded / unreadable / ambiguous, low · high (unreadable and ambiguous "
    "answers are graded not right). — : undefined or not run (the long table says why)."
)
TABLE3_STRATEGIES = ("zero-shot", "one-shot", "self-refine")
"""Table 3's column groups."""
TABLE3_NOTE = (
    "Share (%) of each tagged behaviour (1)-(4) among the low persona's tagged comments (race "
    "none); n: the tagged comments behind the shares. — : no tagged comments or not run."
)
TABLE5_NOTE = (
    "Zero-shot, instructions after the question: accuracy (%) of the low and high persona and "
    "the DoC, in parentheses the change against instructions before it (the paper's "
    "subscript); n: graded answers low / high and judged pairs (after). — : undefined or not run."
)


def _with_change(value: float | None, change: float | None, digits: int = 1) -> str | None:
    if value is None:
        return None
    shown = f"{value:.{digits}f}"
    return shown if change is None else f"{shown} ({change:+.{digits}f})"


def _format_pair(low: float | None, high: float | None) -> str | None:
    if low is None and high is None:
        return None
    return " / ".join("—" if v is None else f"{v:.1f}" for v in (low, high))


def _counts(cell: dict[str, Any], level: str) -> str:
    """Answers asked / graded / unreadable / ambiguous of one level ("—" where not run)."""
    keys = ("n_asked", "n", "unreadable", "ambiguous")
    values = [cell.get(f"{key}_{level}") for key in keys]
    return "—" if values[1] is None else "/".join(str(v if v is not None else 0) for v in values)


def _main_order(rows: Sequence[dict[str, Any]]) -> str:
    orders = {r["order"] for r in rows}
    return "before" if "before" in orders or not orders else "after"


def wide_table(rows: Sequence[dict[str, Any]], race: str) -> list[dict[str, Any]]:
    """Table 1 (`race` "none") or one race's block of Table 2, one row per model."""
    models = list(dict.fromkeys(r["model"] for r in rows))
    table = []
    for model in models:
        mine = [r for r in rows if r["model"] == model]
        order = _main_order(mine)
        cells = {r["strategy"]: r for r in mine if r["race"] == race and r["order"] == order}
        if not cells:
            continue
        row: dict[str, Any] = {"model": model} if race == "none" else {"race": race, "model": model}
        if race == "none":
            first = next(iter(cells.values()))
            row["No Persona"] = first["no_persona"]
            row["No Persona n"] = first.get("no_persona_n")
        for strategy, label in STRATEGY_LABELS.items():
            if strategy == "two-stage" and race == "none":
                continue
            cell = cells.get(strategy, {})
            for level in ("low", "high"):
                row[f"{label} low" if level == "low" else f"{label} high"] = _with_change(
                    cell.get(f"acc_{level}"), cell.get(f"acc_{level}_change")
                )
            row[f"{label} DoC"] = cell.get("doc")
            row[f"{label} format"] = _format_pair(cell.get("format_low"), cell.get("format_high"))
            row[f"{label} n"] = (
                f"{_counts(cell, 'low')} · {_counts(cell, 'high')}" if cell else None
            )
        row["order"] = order
        table.append(row)
    return table


def write_wide_tables(rows: Sequence[dict[str, Any]], directory: Path) -> list[Path]:
    """`table1_wide` and `table2_wide` (when a race ran) from accuracy rows with a model."""
    files = write_table(wide_table(rows, "none"), directory, "table1_wide", notes=[NOTE])
    races = [r for r in RACE_ORDER if any(row["race"] == r for row in rows)]
    if races:
        table2 = [row for race in races for row in wide_table(rows, race)]
        files += write_table(table2, directory, "table2_wide", notes=[NOTE])
    return files


def behaviour_wide_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 3: one row per model; per strategy the shares (%) of (1)–(4) and their n."""
    table = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model and r["race"] == "none"]
        order = _main_order(mine)
        cells = {r["strategy"]: r for r in mine if r["order"] == order}
        if not any(s in cells for s in TABLE3_STRATEGIES):
            continue
        row: dict[str, Any] = {"model": model}
        for strategy in TABLE3_STRATEGIES:
            label = STRATEGY_LABELS[strategy]
            cell = cells.get(strategy, {})
            for category in metrics_of.BEHAVIOUR_CATEGORIES:
                row[f"{label} ({category})"] = cell.get(f"({category})")
            row[f"{label} n"] = cell.get("n_comments")
        row["order"] = order
        table.append(row)
    return table


def order_wide_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 5: one row per model; per race (level only first, when run) the zero-shot low and
    high accuracy and DoC after the question, each with its change against before, and n."""
    table = []
    for model in dict.fromkeys(r["model"] for r in rows):
        cells = {r["race"]: r for r in rows if r["model"] == model and r["strategy"] == "zero-shot"}
        if not cells:
            continue
        row: dict[str, Any] = {"model": model}
        for race in (r for r in ("none", *RACE_ORDER) if r in cells):
            cell, name = cells[race], "Level only" if race == "none" else race
            for level in ("low", "high"):
                row[f"{name} {level}"] = _with_change(
                    cell.get(f"acc_{level}"), cell.get(f"acc_{level}_change")
                )
            row[f"{name} DoC"] = _with_change(cell.get("doc"), cell.get("doc_change"), 2)
            row[f"{name} n"] = f"{cell['n_low']} / {cell['n_high']} / {cell['n_judged']}"
        table.append(row)
    return table


def _nan(value: Any) -> float:
    return math.nan if value is None or (isinstance(value, float) and math.isnan(value)) else value


def race_effect_models_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Figure 3 across models: per model, the zero-shot accuracy change when a race is added,
    per race and level. An undefined change draws no bar (labelled "undefined"), never 0."""
    from matplotlib.figure import Figure

    effect = [
        r
        for r in rows
        if "race_effect_low" in r and r["strategy"] == "zero-shot" and r["race"] != "none"
    ]
    models = list(dict.fromkeys(r["model"] for r in effect))
    figure = Figure(figsize=(3.2 * max(len(models), 1) + 1, 4.0))
    axes_list = figure.subplots(1, max(len(models), 1), sharey=True, squeeze=False)[0]
    width = 0.38
    for axes, model in zip(axes_list, models, strict=False):
        mine = [r for r in effect if r["model"] == model]
        mine = [r for r in mine if r["order"] == _main_order(mine)]
        races = [race for race in RACE_ORDER if any(r["race"] == race for r in mine)]
        by_race = {r["race"]: r for r in mine}
        for offset, level, colour in (
            (-width / 2, "low", "#d9534f"),
            (width / 2, "high", "#337ab7"),
        ):
            values = [_nan(by_race[race][f"race_effect_{level}"]) for race in races]
            errors = [_nan(by_race[race][f"race_effect_{level}_sd"]) for race in races]
            xs = [i + offset for i in range(len(races))]
            drawn = [
                (x, v, e) for x, v, e in zip(xs, values, errors, strict=True) if not math.isnan(v)
            ]
            if drawn:
                bars = axes.bar(
                    [d[0] for d in drawn],
                    [d[1] for d in drawn],
                    width,
                    yerr=[0.0 if math.isnan(d[2]) else d[2] for d in drawn],
                    capsize=3,
                    color=colour,
                    label=f"{level}-performing",
                )
                axes.bar_label(bars, labels=[f"{d[1]:+.1f}" for d in drawn], padding=3, fontsize=7)
            for x, v in zip(xs, values, strict=True):
                if math.isnan(v):
                    axes.text(x, 0, "undefined", rotation=90, ha="center", va="bottom", fontsize=7)
        axes.axhline(0, color="black", linewidth=0.8)
        axes.set_xticks(range(len(races)), races)
        axes.set_title(str(model), fontsize=9)
        axes.grid(axis="y", alpha=0.3)
    axes_list[0].set_ylabel("zero-shot accuracy change vs no race (points)")
    axes_list[0].legend(fontsize=7)
    figure.suptitle("classroom: adding race, zero-shot, across models (seed 000, Fig. 3)")
    return figure


def write_paper_tables(
    behaviours: Sequence[dict[str, Any]], orders: Sequence[dict[str, Any]], directory: Path
) -> list[Path]:
    """`table3_wide` and `table5_wide` (when their cells ran), one row per model."""
    files: list[Path] = []
    if table3 := behaviour_wide_table(behaviours):
        files += write_table(table3, directory, "table3_wide", notes=[TABLE3_NOTE])
    if table5 := order_wide_table(orders):
        files += write_table(table5, directory, "table5_wide", notes=[TABLE5_NOTE])
    return files


def _order_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A sweep's "after" rows in `order_wide_table`'s shape (changes against "before")."""
    return [
        {
            **r,
            "acc_low_change": r["order_acc_low_change"],
            "acc_high_change": r["order_acc_high_change"],
            "doc_change": r["order_doc_change"],
        }
        for r in rows
        if r["order"] == "after" and "order_acc_low_change" in r
    ]


def write_sweep_reports(
    rows: Sequence[dict[str, Any]], varied: Sequence[str], directory: Path
) -> list[Path]:
    """A sweep's Tables 1, 2, 3 and 5 (wide, one row per model) and Figure 3 across models; a
    sweep that varies other parameters (`varied`) too gets them in its combined table only."""
    files = write_wide_tables(rows, directory)
    files += write_paper_tables(rows, _order_rows(rows), directory)
    if any(
        r.get("race_effect_low") is not None or r.get("race_effect_high") is not None for r in rows
    ):
        figure = race_effect_models_figure(rows)
        files.append(save_figure(figure, directory, "figure3_race_effect_models"))
    return files
