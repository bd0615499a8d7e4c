"""The classroom scenario's tables in the paper's wide shape and Figure 3 across models (seed
000, REVERSO), from a run's accuracy rows or a sweep's combined rows.

Every cell carries its n (`cell_text`, simulation/runs/lifecycle/tables.py). Table 1 (race none) and
Table 2 (per race) have one row per model and, per strategy, the low and high accuracy with the
change against the no-persona baseline as the paper's subscript and the answers behind it ("46.3%
(-28.7) of 36 graded"; "11.1% (-80.6) of 9 graded, 12 asked" where answers failed and were left
out), the mean DoC with its judged pairs, and beside them the format compliance (the share of graded
replies in the asked `Final Answer: {number}`, low · high). Table 3 has, per model and strategy
(0-shot, 1-shot, self-refinement; race none), the share of each tagged behaviour (1)–(4) of the low
persona of its tagged comments. Table 5 has, per model and race, the zero-shot accuracy and DoC with
the instructions after the question and, as the subscript, the change against before. The paper
reports the main setting, so Tables 1–3 show the "before" order (or "after" for a model run only in
that order). A value that was not run is an empty cell (— in Markdown), never 0; an undefined one
says why; the long tables (`table1_level`, `table2_race`, `table3_behaviours`, `table5_order`) keep
the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.analysis.reports import save_figure
from personasim.analysis.undefined import in_words
from personasim.scenarios.classroom import metrics as metrics_of
from personasim.simulation.runs.lifecycle.tables import cell_text, write_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "STRATEGY_LABELS",
    "accuracy_cell",
    "baseline_cell",
    "behaviour_wide_table",
    "doc_cell",
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
    "parentheses the change against the no-persona baseline (the paper's subscript), then its "
    "n: the answers graded (unreadable and ambiguous ones graded not right) and, where some "
    "failed and were left out, the answers asked for; DoC 1-3 with the judged pairs; format: "
    "the share of low · high graded replies in the asked 'Final Answer: {number}'; n: answers "
    "asked / graded / unreadable / ambiguous, low · high. — : not run."
)
TABLE3_STRATEGIES = ("zero-shot", "one-shot", "self-refine")
"""Table 3's column groups."""
TABLE3_NOTE = (
    "Share (%) of each tagged behaviour (1)-(4) among the low persona's tagged comments (race "
    "none), of n tagged comments. — : not run."
)
TABLE5_NOTE = (
    "Zero-shot, instructions after the question: accuracy (%) of the low and high persona and "
    "the DoC, in parentheses the change against instructions before it (the paper's "
    "subscript), each with its graded answers or judged pairs (after); n: graded answers low / "
    "high and judged pairs (after). — : not run."
)


def accuracy_cell(row: Mapping[str, Any], level: str, change: bool = False) -> str:
    """An accuracy cell of Tables 1 and 2 with its n: "44.4% of 36 graded" (the answers
    graded; ", 48 asked" where failed answers were left out), the change against the
    no-persona baseline after the value when `change`."""
    delta = row.get(f"acc_{level}_change") if change else None
    return cell_text(
        row.get(f"acc_{level}"),
        row.get(f"n_{level}"),
        noun="graded",
        asked=row.get(f"n_asked_{level}"),
        as_percent=True,
        note="" if delta is None else f"({delta:+.1f})",
        reason=in_words(row.get(f"acc_{level}_undefined") or ""),
    )


def baseline_cell(row: Mapping[str, Any]) -> str | None:
    """The no-persona accuracy with its n (— where the baseline was not run)."""
    if "no_persona_graded" not in row:  # rows from before the counts were carried
        return None if row.get("no_persona") is None else f"{row['no_persona']:.1f}%"
    return cell_text(
        row["no_persona"],
        row["no_persona_graded"],
        noun="graded",
        asked=row.get("no_persona_asked"),
        as_percent=True,
    )


def doc_cell(row: Mapping[str, Any], change: float | None = None) -> str:
    """The mean DoC (1-3) with the judged pairs behind it."""
    note = "" if change is None else f"({change:+.2f})"
    return cell_text(row.get("doc"), row.get("n_judged"), noun="judged", digits=2, note=note)


def _format_pair(cell: dict[str, Any]) -> str | None:
    """The format compliance of the low · high replies, each of its graded answers."""
    low, high = cell.get("format_low"), cell.get("format_high")
    if low is None and high is None:
        return None
    return " · ".join(
        cell_text(cell.get(f"format_{level}"), cell.get(f"n_{level}"), as_percent=True)
        for level in ("low", "high")
    )


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
            row["No Persona"] = baseline_cell(first)
            row["No Persona n"] = first.get("no_persona_n")
        for strategy, label in STRATEGY_LABELS.items():
            if strategy == "two-stage" and race == "none":
                continue
            cell = cells.get(strategy)
            for level in ("low", "high"):
                row[f"{label} {level}"] = accuracy_cell(cell, level, change=True) if cell else None
            row[f"{label} DoC"] = doc_cell(cell) if cell else None
            cell = cell or {}
            row[f"{label} format"] = _format_pair(cell)
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
                share = cell.get(f"({category})")
                row[f"{label} ({category})"] = (
                    None if not cell else cell_text(share, cell.get("n_comments"), as_percent=True)
                )
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
                row[f"{name} {level}"] = accuracy_cell(cell, level, change=True)
            row[f"{name} DoC"] = doc_cell(cell, cell.get("doc_change"))
            row[f"{name} n"] = f"{cell['n_low']} / {cell['n_high']} / {cell['n_judged']}"
        table.append(row)
    return table


def _nan(value: Any) -> float:
    return math.nan if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _graded_without(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], dict]:
    """The zero-shot race-none row per (model, order, strategy): the n without a race."""
    return {
        (r["model"], r["order"], r["strategy"]): r
        for r in rows
        if r["race"] == "none" and r["strategy"] == "zero-shot"
    }


def race_effect_models_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Figure 3 across models: per model, the zero-shot accuracy change when a race is added,
    per race and level, each bar labelled with its n (answers graded with the race / without).
    An undefined change draws no bar (labelled "undefined"), never 0."""
    from matplotlib.figure import Figure

    effect = [
        r
        for r in rows
        if "race_effect_low" in r and r["strategy"] == "zero-shot" and r["race"] != "none"
    ]
    without = _graded_without(rows)
    models = list(dict.fromkeys(r["model"] for r in effect))
    figure = Figure(figsize=(3.6 * max(len(models), 1) + 1, 4.4))
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
            counts = []
            for race in races:
                row = by_race[race]
                base = without.get((model, row["order"], "zero-shot"), {})
                counts.append(f"n={row.get(f'n_{level}', '?')}/{base.get(f'n_{level}', '?')}")
            xs = [i + offset for i in range(len(races))]
            drawn = [
                (x, v, e, n)
                for x, v, e, n in zip(xs, values, errors, counts, strict=True)
                if not math.isnan(v)
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
                labels = [f"{d[1]:+.1f}\n{d[3]}" for d in drawn]
                axes.bar_label(bars, labels=labels, padding=3, fontsize=6)
            for x, v, n in zip(xs, values, counts, strict=True):
                if math.isnan(v):
                    axes.text(
                        x, 0, f"undefined {n}", rotation=90, ha="center", va="bottom", fontsize=6
                    )
        axes.axhline(0, color="black", linewidth=0.8)
        axes.set_xticks(range(len(races)), races)
        axes.set_xlabel("race added (n: graded with / without)", fontsize=8)
        axes.set_title(str(model), fontsize=9)
        axes.margins(y=0.25)
        axes.grid(axis="y", alpha=0.3)
        axes.set_ylabel("zero-shot accuracy change vs no race (points)", fontsize=8)
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
