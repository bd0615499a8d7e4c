"""Tables, figures, the console report and the report files of career chat (seed 003: Tables
1, 2, 3, 5, Figures 4 and 5), from the metrics `career_chat.compute_metrics` makes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from personasim.analysis.reports import save_figure, small_note
from personasim.analysis.undefined import in_words, shown_stat
from personasim.scenarios.career_chat.groupings import GROUPINGS
from personasim.scenarios.career_chat.jobs import (
    JOB_CATEGORIES,
    OTHER_CATEGORY,
    POSITION_LEVELS,
    UNCLASSIFIED,
    UNKNOWN,
)
from personasim.scenarios.career_chat.metrics import DIMENSION_LABELS, DIMENSIONS, FORMATS
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.tables import write_table

__all__ = [
    "SUMMARY_COUNTS",
    "chance_mark",
    "confidence_rows",
    "figure5",
    "figure5_null",
    "group_rows",
    "report_lines",
    "summary_rows",
    "table1_rows",
    "table2_rows",
    "table3_rows",
    "write_reports",
]


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


ALPHA = 0.05
"""The level at which a pair is marked (permutation p, and Holm-corrected p)."""


MARKS_NOTE = (
    f"* permutation p < {ALPHA}; ‡ also after Holm's correction over the run's pairs; "
    "the paper's baseline is 1"
)


TABLE2_NOTE = (
    "n_a, n_b: users in each group. ratio_null_low/high: the central 95% of the ratio when "
    "group labels are shuffled over users (chance; the paper's line is 1). ratio_p: "
    "permutation p; ratio_p_holm: Holm-corrected over every pair with a p in this table."
)


def table1_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 1's shape: dimension, LLM judge, human (when human ratings were given)."""
    human = {r["dimension"]: r for r in metrics["human_alignment"] or []}
    rated = metrics["judge"].get("n_dialogues", {})
    return [
        {
            "dimension": DIMENSION_LABELS[d],
            "llm_judge": metrics["judge"]["means"][d],
            "n": rated.get(d),
            "human": human.get(DIMENSION_LABELS[d], {}).get("human"),
            "n_human": human.get(DIMENSION_LABELS[d], {}).get("n"),
        }
        for d in DIMENSIONS
    ]


def table2_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 2's quantities per scenario, grouping and pair, each group's n beside it: distance,
    baseline, their ratio with its bootstrap interval, the permutation null's central 95%
    (`ratio_null_low/high`: where chance puts the ratio; the paper's line is 1), the
    permutation p and its Holm-corrected p, and `chance` in words."""
    return [
        {
            "scenario": "BA_user" if fmt == "profile" else "BA_dialogue",
            "grouping": grouping,
            **{k: v for k, v in pair.items() if not k.endswith(("_ci", "_null"))},
            **_bounds(pair, "distance_ci"),
            **_bounds(pair, "ratio_ci"),
            **_bounds(pair, "ratio_null"),
            "chance": chance_mark(pair),
            "baseline": result["baseline"],
            **_bounds(result, "baseline_ci"),
        }
        for fmt in FORMATS
        for grouping, result in metrics["adaptation"][fmt].items()
        for pair in result["pairs"]
    ]


def chance_mark(pair: Mapping[str, Any]) -> str:
    """How a pair's ratio stands against the permutation null, in words."""
    p, corrected = pair.get("ratio_p"), pair.get("ratio_p_holm")
    if p is None:
        return f"no p ({pair.get('ratio_p_undefined', 'undefined')})"
    if corrected is not None and corrected < ALPHA:
        return f"Holm p < {ALPHA}"
    if p < ALPHA:
        return f"p < {ALPHA}, not after Holm"
    return "within chance"


def group_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Every group of every grouping and format with its n (Table 2's groups; "Unknown"
    included), so a group with no pair (the only one of its grouping) still shows."""
    smallest = metrics["min_group_n"]
    return [
        {
            "scenario": "BA_user" if fmt == "profile" else "BA_dialogue",
            "grouping": grouping,
            "group": group,
            "n": n,
            "small": n < smallest,
        }
        for fmt in FORMATS
        for grouping, result in metrics["adaptation"][fmt].items()
        for group, n in sorted(result["groups"].items(), key=lambda item: _group_order(item[0]))
    ]


def _bounds(record: Mapping[str, Any], name: str) -> dict[str, Any]:
    """An interval as two columns `<name>_low`, `<name>_high` (empty when undefined; the
    reason stays in `<name>_undefined`)."""
    interval = record.get(name) or [None, None]
    return {f"{name}_low": interval[0], f"{name}_high": interval[1]}


def table3_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3's shape: model, measured distance, baseline, distance / baseline."""
    c = metrics["consistency"]
    return [
        {
            "model": metrics["model"],
            "distance": c["distance"],
            "baseline": c["baseline"],
            "ratio": c["ratio"],
            "n_users": c["n_users"],
            "small": c["small"],
        }
    ]


def confidence_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Figure 4: mean probability of the selected option (the paper's text) and of the most
    likely option (`confidence_top`) per format."""
    return [
        {
            "model": metrics["model"],
            "format": "BA_user" if fmt == "profile" else "BA_dialogue",
            "confidence": metrics["probes"][fmt]["confidence"],
            "confidence_top": metrics["probes"][fmt]["confidence_top"],
            "n": metrics["probes"][fmt]["n"],
            "one_hot_fallback": metrics["probes"][fmt]["one_hot_fallback"],
        }
        for fmt in FORMATS
    ]


def _ratio_matrix(result: dict[str, Any]) -> tuple[list[str], np.ndarray, dict[tuple, str]]:
    groups = sorted(result["groups"], key=_group_order)
    matrix = np.full((len(groups), len(groups)), np.nan)
    marks: dict[tuple[int, int], str] = {}
    for pair in result["pairs"]:
        if pair["ratio"] is not None:
            i, j = groups.index(pair["group_a"]), groups.index(pair["group_b"])
            matrix[i, j] = matrix[j, i] = pair["ratio"]
            marks[(i, j)] = marks[(j, i)] = _star(pair)
    np.fill_diagonal(matrix, 0.0)
    return groups, matrix, marks


def _star(pair: Mapping[str, Any]) -> str:
    """‡ Holm-corrected p < 0.05; * permutation p < 0.05 only; blank otherwise."""
    corrected, p = pair.get("ratio_p_holm"), pair.get("ratio_p")
    if corrected is not None and corrected < ALPHA:
        return "‡"
    return "*" if p is not None and p < ALPHA else ""


def _with_n(groups: Sequence[str], sizes: Mapping[str, int]) -> list[str]:
    return [f"{g} (n={sizes[g]})" for g in groups]


def _group_order(group: str) -> tuple[int, str]:
    order = ("<30", "30-40", "40-50", "50-60", ">60", "High School", "Bachelor's", "Master's")
    order += ("PhD", "Developed", "Developing", "Third World")
    order += (*POSITION_LEVELS, *JOB_CATEGORIES, OTHER_CATEGORY, UNKNOWN, UNCLASSIFIED)
    return (order.index(group) if group in order else len(order), group)


def figure5(metrics: dict[str, Any], grouping: str) -> Any:
    """Figure 5: pairwise group distance / baseline, BA_user and BA_dialogue side by side,
    each group's n on its label and each pair marked by its permutation and Holm p."""
    from matplotlib.figure import Figure  # not pyplot: no display, no global state

    panels = [(fmt, metrics["adaptation"][fmt][grouping]) for fmt in FORMATS]
    if not any(result["pairs"] for _, result in panels):
        return None
    figure = Figure(figsize=(12, 5))
    axes = figure.subplots(1, 2)
    for axis, (fmt, result) in zip(axes, panels, strict=True):
        groups, matrix, marks = _ratio_matrix(result)
        labels = _with_n(groups, result["groups"])
        image = axis.imshow(matrix, cmap="viridis")
        axis.set_xticks(range(len(groups)), labels, rotation=45, ha="right")
        axis.set_yticks(range(len(groups)), labels)
        for (i, j), value in np.ndenumerate(matrix):
            if not np.isnan(value) and i != j:
                text = f"{value:.2f}{marks.get((i, j), '')}"
                axis.text(j, i, text, ha="center", va="center", color="w", fontsize=8)
        label = "BA_user" if fmt == "profile" else "BA_dialogue"
        axis.set_title(f"{label} by {grouping} (distance / baseline)")
        axis.set_xlabel(f"{grouping} group (n users)")
        axis.set_ylabel(f"{grouping} group (n users)")
        figure.colorbar(image, ax=axis, shrink=0.8, label="distance / baseline")
    figure.suptitle(f"{metrics['model']}: pairwise group distances (baseline = 1)")
    figure.text(0.5, 0.005, MARKS_NOTE, ha="center", fontsize=8)
    figure.tight_layout(rect=(0, 0.05, 1, 1))
    return figure


def figure5_null(metrics: dict[str, Any], grouping: str) -> Any:
    """Figure 5 against chance: per pair (labelled with both groups' n) the observed ratio and
    its bootstrap interval, over the permutation null's central 95% band (grey), with the
    paper's line at 1; marked by permutation p and Holm p."""
    from matplotlib.figure import Figure  # not pyplot: no display, no global state

    panels = [(fmt, metrics["adaptation"][fmt][grouping]) for fmt in FORMATS]
    if not any(result["pairs"] for _, result in panels):
        return None
    height = max(len(r["pairs"]) for _, r in panels)
    figure = Figure(figsize=(13, 1.2 + 0.38 * height))
    axes = figure.subplots(1, 2, sharex=False)
    for axis, (fmt, result) in zip(axes, panels, strict=True):
        pairs = result["pairs"]
        for y, pair in enumerate(pairs):
            null = pair.get("ratio_null")
            if null:
                axis.fill_betweenx([y - 0.35, y + 0.35], *null, color="0.85", lw=0)
            ci = pair.get("ratio_ci")
            if ci:
                axis.plot(ci, [y, y], color="k", lw=1)
            if pair["ratio"] is not None:
                star = _star(pair)
                axis.plot(pair["ratio"], y, "o", color="C3" if star else "k", ms=4)
                axis.text(pair["ratio"], y + 0.2, star, ha="center", fontsize=8)
        axis.axvline(1.0, ls="--", color="C0", lw=1)
        names = [f"{p['group_a']} (n={p['n_a']}) – {p['group_b']} (n={p['n_b']})" for p in pairs]
        axis.set_yticks(range(len(pairs)), names, fontsize=7)
        axis.invert_yaxis()
        label = "BA_user" if fmt == "profile" else "BA_dialogue"
        axis.set_title(f"{label} by {grouping}: ratio, grey = permutation null 95%")
        axis.set_xlabel("distance / baseline (dashed: the paper's line at 1)")
        axis.set_ylabel(f"pair of {grouping} groups (n users)")
    figure.text(0.5, 0.005, MARKS_NOTE + "; bars: bootstrap 95% interval", ha="center", fontsize=8)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    return figure


def _design_line(metrics: Mapping[str, Any]) -> str | None:
    differs = metrics.get("design")
    if not differs:
        return None
    return "  not the paper's design: " + "; ".join(differs) + " (--paper --profile-file FILE)"


def _shown_ci(record: Mapping[str, Any], name: str) -> str:
    interval = record.get(name)
    return f"[{interval[0]:.3g}, {interval[1]:.3g}]" if interval else "[undefined]"


def _chance_summary(metrics: dict[str, Any]) -> str:
    pairs = [p for per in metrics["adaptation"].values() for r in per.values() for p in r["pairs"]]
    tested = [p for p in pairs if p["ratio_p"] is not None]
    raw = sum(p["ratio_p"] < ALPHA for p in tested)
    corrected = sum(p["ratio_p_holm"] < ALPHA for p in tested)
    return (
        f"group pairs: {raw} of {len(tested)} with permutation p < {ALPHA}, {corrected} after "
        f"Holm ({len(pairs) - len(tested)} without a p); see table2_adaptation"
    )


def report_lines(metrics: dict[str, Any]) -> list[str]:
    """The console summary: dialogues, consistency, per format the widest group gap, judge."""
    d, c = metrics["dialogues"], metrics["consistency"]
    lines = [
        f"{metrics['model']}: {d['n']} dialogues ({_counts_text(d['ended'])}), "
        f"{d['questions']} questions, {d['out_of_context']} rewritten by the detector",
        f"  consistency EMD {shown_stat(c, 'distance', 3)} vs random pairings "
        f"{shown_stat(c, 'baseline', 3)} (ratio {shown_stat(c, 'ratio', 3)}, "
        f"{c['n_users']} users)",
    ]
    for fmt in FORMATS:
        probe = metrics["probes"][fmt]
        lines.append(
            f"  BA_{'user' if fmt == 'profile' else 'dialogue'}: {probe['n']} answers, "
            f"confidence {shown_stat(probe, 'confidence', 3)}, one-hot fallbacks "
            f"{probe['one_hot_fallback']}"
        )
        for grouping, result in metrics["adaptation"][fmt].items():
            widest = max(result["pairs"], key=lambda r: r["distance"], default=None)
            if widest:
                small = result["small_groups"]
                note = f" (n < {metrics['min_group_n']}: {', '.join(small)})" if small else ""
                lines.append(
                    f"    {grouping}: baseline {shown_stat(result, 'baseline', 3)}, widest "
                    f"{widest['group_a']} (n={widest['n_a']}) vs {widest['group_b']} "
                    f"(n={widest['n_b']}) ratio {shown_stat(widest, 'ratio', 3)} "
                    f"{_shown_ci(widest, 'ratio_ci')}, chance "
                    f"{_shown_ci(widest, 'ratio_null')}, permutation p "
                    f"{shown_stat(widest, 'ratio_p', 3)}, Holm p "
                    f"{shown_stat(widest, 'ratio_p_holm', 3)}{note}"
                )
    lines.append(f"  {_chance_summary(metrics)}")
    design = _design_line(metrics)
    if design:
        lines.insert(1, design)
    means = metrics["judge"]["means"]
    judge = ", ".join(f"{d} {shown_stat(means, d, 3)}" for d in DIMENSIONS)
    reasons = {means.get(f"{d}_undefined") for d in DIMENSIONS if means.get(d) is None}
    if len(reasons) == 1 and all(means.get(d) is None for d in DIMENSIONS):
        judge = f"{', '.join(DIMENSIONS)} undefined ({in_words(str(reasons.pop()))})"
    lines.append(f"  judge: {judge}; failures: {_counts_text(metrics['failures'])}")
    if classified := _classifier_line(metrics.get("job_labels") or {}):
        lines.append(classified)
    return lines


def _classifier_line(labels: Mapping[str, Any]) -> str | None:
    """What a bound job-title classifier did (None: the groups are the word rule's or a
    file's alone)."""
    if not labels.get("classifier"):
        return None
    failed = labels["unclassified_titles"]
    return (
        f"  job groups: {', '.join(labels['classifier'])} labelled {labels['titles_asked']} "
        f"distinct titles; {len(failed)} without a usable answer, their "
        f"{labels['unclassified_users']} users in the group {UNCLASSIFIED!r}"
    )


def write_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Tables 1, 2, 3 (and 5 with human ratings) as CSV and Markdown, Figure 4's numbers and
    Figure 5 per grouping."""
    smallest = metrics["min_group_n"]
    files = write_table(
        table1_rows(metrics), directory, "table1_dialogue_quality", notes=[TABLE1_NOTE]
    )
    files += write_table(
        table2_rows(metrics),
        directory,
        "table2_adaptation",
        flag="small",
        notes=[small_note(smallest, "users in a group of the pair"), TABLE2_NOTE],
    )
    files += write_table(
        group_rows(metrics),
        directory,
        "table2_groups",
        flag="small",
        notes=[small_note(smallest, "users in the group")],
    )
    users = small_note(smallest, "users or dialogues in the row")
    files += write_table(
        table3_rows(metrics),
        directory,
        "table3_consistency",
        flag="small",
        notes=[users],
    )
    files += write_table(
        confidence_rows(metrics),
        directory,
        "figure4_confidence",
        notes=["n: the probe answers each mean is over."],
    )
    if titles := (metrics.get("job_labels") or {}).get("titles"):
        files += write_table(titles, directory, "job_titles", notes=[JOB_TITLES_NOTE])
    if metrics["human_alignment"]:
        files += write_table(
            metrics["human_alignment"],
            directory,
            "table5_judge_alignment",
            flag="small",
            notes=[users],
        )
    for grouping in GROUPINGS:
        for suffix, draw in (("", figure5), ("_null", figure5_null)):
            figure = draw(metrics, grouping)
            if figure is not None:
                files.append(save_figure(figure, directory, f"figure5_{grouping}{suffix}"))
    return files


TABLE1_NOTE = (
    "n: the dialogues the LLM judge rated on the dimension (ratings averaged over samples, then "
    "over dialogues); n_human: the dialogues with human ratings. — : not rated."
)
JOB_TITLES_NOTE = (
    "Each distinct job title with its users' n and the job category and position level the "
    "metrics use: from a --job-groups file, a bound classifier (--role classifier; "
    "'unclassified': no usable answer after the re-asks, the group 'Unclassified'), or the "
    "word rule (scenarios/career_chat/jobs.py; category_rule and level_rule: the pattern that "
    "decided each label). 'Unknown': the rule would not label the title without doubt (no "
    "rule matched, two fields or ranks, a rank it does not place, no current job); its users "
    "are a group of their own in every table and figure. Usable as --job-groups."
)


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3's row with Figure 4's two measures per format (`confidence`, the paper's
    caption; `confidence_top`, what its released numbers match); a sweep labels it with its
    model."""
    row = {k: v for k, v in table3_rows(metrics)[0].items() if k != "model"}
    confidence = {
        f"{measure}_{r['format']}": r[measure]
        for r in confidence_rows(metrics)
        for measure in ("confidence", "confidence_top")
    }
    answers = {f"n_{r['format']}": r["n"] for r in confidence_rows(metrics)}
    return [{**row, **confidence, **answers}]


SUMMARY_COUNTS = {
    **{stat: SummaryCount("n_users", "users") for stat in ("distance", "baseline", "ratio")},
    **{
        f"{measure}_{fmt}": SummaryCount(f"n_{fmt}", "answers")
        for measure in ("confidence", "confidence_top")
        for fmt in ("BA_user", "BA_dialogue")
    },
}
"""What each statistic of `summary_rows` is over (the sweep's combined.md): Table 3's distance,
its random-pairing baseline and their ratio over the users who answered in both formats;
each format's confidence over its probe answers (`n_<format>`)."""
