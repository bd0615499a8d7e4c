"""The counterfactual figure (`reports/counterfactual.png`): one panel per compared decision,
titled with a short name rather than its JSON label, with its n and axis labels.

- numbers on a scale (a transfer, a score): each persona's value at each level joined by a grey
  line, the levels' means as black diamonds;
- 0/1 outcomes (right/wrong): a stacked bar per pair of levels (the first level against each
  other) of how the paired units moved — 1 at both, 1 → 0, 0 → 1, 0 at both — since lines
  between 0 and 1 only overlap into crosses;
- no numeric decision at all (text answers only, or nothing recorded): one panel that says so
  in words ("no data: …").
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from personasim.analysis.reports import save_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "MAX_PANELS",
    "TRANSITIONS",
    "counterfactual_figure",
    "draw_counterfactual",
    "short_decision",
]

MAX_PANELS = 6
"""Panels drawn; the table has every decision."""

TRANSITIONS = (
    ("1 at both", (1, 1), "0.35"),
    ("1 → 0", (1, 0), "tab:red"),
    ("0 → 1", (0, 1), "tab:blue"),
    ("0 at both", (0, 0), "0.8"),
)
"""(legend label, (value at the first level, value at the other), colour) of a 0/1 pair."""


def short_decision(decision: str, width: int = 30) -> str:
    """A decision's label for a panel title: `classroom.graded correct ({"order": "after",
    "strategy": "none"})` → `correct: order after, strategy none`, wrapped at `width`.

    An outcome's name (`kind field`) keeps its field; the details' JSON becomes `key value`
    pairs; a repeat's `#k` stays."""
    head, _, rest = decision.partition(" (")
    details, _, repeat = rest.rpartition(")") if rest else ("", "", "")
    base = head.split(" ")[-1] if " " in head else head
    try:
        fields = json.loads(details) if details else {}
    except json.JSONDecodeError:
        fields = {"": details}
    said = ", ".join(f"{k} {v}".strip() for k, v in fields.items())
    text = f"{base}: {said}" if said else base
    text += repeat.strip() and f" {repeat.strip()}"
    return "\n".join(textwrap.wrap(text, width)) or decision


def draw_counterfactual(block: dict[str, Any], directory: Path) -> Path:
    """`counterfactual.png` of a counterfactual block (`counterfactual_metrics`)."""
    return save_figure(counterfactual_figure(block), directory, "counterfactual")


def counterfactual_figure(block: dict[str, Any]) -> Figure:
    """The figure of a counterfactual block, one panel per numeric decision (module doc)."""
    from matplotlib.figure import Figure  # not pyplot: no display, no global state

    frame = pd.DataFrame(block["values"], columns=["decision", "persona", "level", "value"])
    decisions = sorted(frame["decision"].unique())
    shown, levels = decisions[:MAX_PANELS], block["levels"]
    panels = max(1, len(shown))
    figure = Figure(figsize=(3.4 * panels, 3.8), layout="constrained")
    axes = figure.subplots(1, panels, squeeze=False)[0]
    for ax, decision in zip(axes, shown, strict=False):
        values = frame[frame["decision"] == decision]
        table = values.pivot(index="persona", columns="level", values="value")
        table = table.reindex(columns=levels).astype(float)
        ax.set_title(short_decision(decision), fontsize=8)
        if set(pd.unique(table.stack())) <= {0.0, 1.0}:
            _transitions(ax, table, levels)
        else:
            _paired_lines(ax, table, levels)
    if not shown:
        _no_data(axes[0], _why_empty(block))
    legend: dict[str, Any] = {}
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        legend.update(zip(labels, handles, strict=True))
    if legend:
        shown_as = {"loc": "outside lower center", "ncols": len(legend), "fontsize": 7}
        figure.legend(list(legend.values()), list(legend), **shown_as)
    more = len(decisions) - len(shown)
    figure.suptitle(
        f"{block['attribute']}: the same personas at each level"
        + (f"; {more} more decisions in the table" if more > 0 else ""),
        fontsize=10,
    )
    return figure


def _why_empty(block: dict[str, Any]) -> str:
    if block["rows"]:
        return "the decisions are text, not numbers\n(the table's changed says how many moved)"
    return "the twins recorded no decision to compare"


def _no_data(ax: Axes, why: str) -> None:
    ax.text(0.5, 0.5, f"no data: {why}", ha="center", va="center", fontsize=8, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel("(nothing to draw)")
    ax.set_ylabel("(nothing to draw)")


def _paired_lines(ax: Axes, table: pd.DataFrame, levels: list[str]) -> None:
    """Each persona's values joined by a grey line, the means as black diamonds."""
    positions = range(len(levels))
    for _, persona in table.iterrows():
        ax.plot(positions, persona.to_numpy(), "o-", color="0.6", alpha=0.5, ms=3)
    ax.plot(positions, table.mean().to_numpy(), "D", color="black", ms=7, label="mean")
    ax.plot([], [], "o-", color="0.6", ms=3, label="one persona")
    ax.set_xticks(list(positions), levels, rotation=20)
    ax.set_xlabel(f"level (n = {len(table)} personas)")
    ax.set_ylabel("value of the decision")


def _transitions(ax: Axes, table: pd.DataFrame, levels: list[str]) -> None:
    """A stacked bar per (first level, other level): the shares of the paired units by how
    they moved, each bar's n above it."""
    first, others = levels[0], levels[1:]
    pairs = [table[[first, other]].dropna() for other in others]
    bottoms = [0.0] * len(others)
    for label, (was, now), colour in TRANSITIONS:
        shares = [
            float(((both[first] == was) & (both[other] == now)).mean()) if len(both) else 0.0
            for both, other in zip(pairs, others, strict=True)
        ]
        ax.bar(range(len(others)), shares, bottom=bottoms, color=colour, label=label, width=0.6)
        bottoms = [b + s for b, s in zip(bottoms, shares, strict=True)]
    for k, both in enumerate(pairs):
        ax.text(k, 1.02, f"n = {len(both)}", ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, 1.15)
    ax.set_xticks(range(len(others)), [f"{first} → {o}" for o in others], rotation=20)
    ax.set_xlabel("pair of levels (first → other)")
    ax.set_ylabel("share of paired units")
