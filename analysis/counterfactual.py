"""A counterfactual run's paired statistics, from its log alone (docs/counterfactual.md).

The design is the run's parameters (`counterfactual_attribute`, `_levels`, `_by` in
`run.started`); each twin's persona says which sampled persona it copies and at which level
(`agent.created`). Decisions are paired by persona, by task and details, and by their order
among the agent's decisions of that kind. One row per pair of levels × decision × subgroup
(`all`, then each level of the `--by` attribute), with its n, the mean difference (second
level minus first) and its interval, a test chosen by the data (exact McNemar for 0/1
outcomes, Wilcoxon's signed-rank otherwise: `analysis.paired`) with its p at full precision and
Holm's over the pairs of the same decision and subgroup, and the share of personas whose
decision changed; a statistic without a value is null with the reason in words.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from personasim.analysis.counterfactual_figure import draw_counterfactual, short_decision
from personasim.analysis.counterfactual_table import counterfactual_cells
from personasim.analysis.event_tables import agent_payloads, min_group_n, payloads
from personasim.analysis.intervals import INTERVAL_METHODS
from personasim.analysis.paired import holm_over, paired_difference
from personasim.analysis.undefined import in_words, stat_fields
from personasim.simulation.core.counterfactual import Outcome, Twins, twins_of
from personasim.simulation.core.metric_extensions import MetricsExtension, metrics_extension
from personasim.simulation.runs.lifecycle.tables import write_table

if TYPE_CHECKING:
    from personasim.simulation.core.scenario import Scenario

__all__ = [
    "COUNTERFACTUAL",
    "counterfactual_metrics",
    "counterfactual_report",
    "write_counterfactual_reports",
]

_STATS = ("mean_difference", "ci_low", "ci_high", "p", "p_holm", "changed")
_FULL_PRECISION = frozenset({"p", "p_holm"})
"""Kept as computed: Holm's decisions and a reader's threshold see the p the test gave."""


def counterfactual_metrics(
    events: pd.DataFrame, outcomes: Sequence[Outcome] = (), decisions: bool = True
) -> dict[str, Any] | None:
    """The `counterfactual` block of a run's metrics; None for a run without the design (or
    with a single level). The
    design is the run's parameters or, for a scenario with a design of its own (the
    classroom's races), the twins' records (levels in the order the agents were created).
    `decisions` False: compare only the `outcomes` (the decisions themselves still count)."""
    started = payloads(events, "run.started")
    params = started[0].get("params", {}) if started else {}
    twins = _twins(events)
    attribute, by = params.get("counterfactual_attribute"), params.get("counterfactual_by")
    levels = list(params.get("counterfactual_levels") or [])
    if attribute is None and twins:
        attribute = _attribute_of(events)
        levels = list(dict.fromkeys(level for _, level in twins.values()))
    if attribute is None or len(levels) < 2:  # one race only: nothing to pair
        return None
    values, failed = _decisions(events, twins, attribute)
    made = sum(len(at) for d in values.values() for at in d.values())
    if not decisions:
        values.clear()
    for outcome in outcomes:
        values.update(_outcome_values(events, twins, outcome))
    groups = _subgroups(events, twins, by)
    rows = [
        row
        for decision in sorted(values)
        for subgroup, members in groups.items()
        for row in _family(decision, subgroup, members, values[decision], levels)
    ]
    return {
        "attribute": attribute,
        "levels": levels,
        **({"by": by} if by else {}),  # no --by: absent, not null
        "personas": len({of for of, _ in twins.values()}),
        "agents": len(twins),
        "decisions_made": made,
        "decisions_failed": failed,
        "confidence": 0.95,
        "rows": rows,
        "values": [  # the numbers behind the plot (text answers stay in the log)
            {"decision": d, "persona": of, "level": lvl, "value": v}
            for d in sorted(values)
            for of, at in sorted(values[d].items())
            for lvl, v in at.items()
            if _is_number(v)
        ],
    }


def _twins(events: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """agent id → (the persona it is a twin of, its level)."""
    twins = {}
    for record in agent_payloads(events, "agent.created"):
        twin = (record["payload"].get("persona") or {}).get("counterfactual")
        if twin:
            twins[record["agent_id"]] = (twin["of"], twin["level"])
    return twins


def _attribute_of(events: pd.DataFrame) -> str:
    for record in agent_payloads(events, "agent.created"):
        twin = (record["payload"].get("persona") or {}).get("counterfactual")
        if twin:
            return str(twin["attribute"])
    raise ValueError("no twin in the log")


def _outcome_values(
    events: pd.DataFrame, twins: dict[str, tuple[str, str]], outcome: Outcome
) -> dict[str, dict[str, dict[str, Any]]]:
    """label → unit (persona and unit fields) → level → the outcome's value."""
    values: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for record in agent_payloads(events, outcome.kind):
        if record["agent_id"] not in twins or outcome.field not in record["payload"]:
            continue
        payload = record["payload"]
        of, level = twins[record["agent_id"]]
        label = {k: payload.get(k) for k in outcome.label}
        name = f"{outcome.kind} {outcome.field}"
        name += f" ({json.dumps(label, sort_keys=True, ensure_ascii=False)})" if label else ""
        unit = "|".join([of, *(str(payload.get(k)) for k in outcome.unit)])
        values[name][unit][level] = payload[outcome.field]
    return values


def _owner(agent: str, payload: dict[str, Any], twins: dict[str, Any]) -> str | None:
    """The twin a decision is about: the deciding agent, or the twin a detail names (a judge's
    or an evaluator's score of the twin's answer)."""
    if agent in twins:
        return agent
    named = [
        v
        for k, v in payload.items()
        if k not in _DECISION_KEYS and isinstance(v, str) and v in twins
    ]
    return named[0] if len(named) == 1 else None


def _decision_label(payload: dict[str, Any], owner: str, attribute: str) -> str:
    """The task and its details, less those naming the twin or its level (the same for its
    siblings)."""
    details = {
        k: v
        for k, v in payload.items()
        if k not in _DECISION_KEYS and v != owner and k != attribute
    }
    if not details:
        return payload["task"]
    return f"{payload['task']} ({json.dumps(details, sort_keys=True, ensure_ascii=False)})"


_DECISION_KEYS = frozenset(
    {"task", "value", "attempts", "error", "last_reply", "reason", "error_class", "request_key"}
)


def _decisions(
    events: pd.DataFrame, twins: dict[str, tuple[str, str]], attribute: str
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, int]]:
    """decision → persona → level → value (made decisions only), and failed decisions per
    level; a twin's k-th decision of one label is paired with its siblings' k-th."""
    decided = events[events["kind"].isin(["decision.made", "decision.failed"])]
    values: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    failed: dict[str, int] = defaultdict(int)
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for kind, agent, payload in decided[["kind", "agent_id", "payload"]].itertuples(index=False):
        owner = _owner(agent, payload, twins)
        if owner is None:
            continue
        of, level = twins[owner]
        label = _decision_label(payload, owner, attribute)
        seen[(owner, label)] += 1
        if seen[(owner, label)] > 1:
            label = f"{label} #{seen[(owner, label)]}"
        if kind == "decision.failed":
            failed[level] += 1
        else:
            values[label][of][level] = _compared(payload["value"])
    return values, dict(failed)


def _compared(value: Any) -> Any:
    """What is compared: a rubric judgement (`{score, justification}`) by its score, any other
    value as it is (numbers are differenced; text and labels only counted as changed or not)."""
    if isinstance(value, dict) and _is_number(value.get("score")):
        return value["score"]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float)


def _subgroups(
    events: pd.DataFrame, twins: dict[str, tuple[str, str]], by: str | None
) -> dict[str, set[str]]:
    """`all` → every persona; with `by`, each of its levels → the personas at it."""
    personas = {of for of, _ in twins.values()}
    groups: dict[str, set[str]] = {"all": personas}
    if by is None:
        return groups
    for record in agent_payloads(events, "agent.created"):
        persona = record["payload"].get("persona") or {}
        if record["agent_id"] in twins:
            value = persona.get("traits", {}).get(by, persona.get("attributes", {}).get(by))
            level = "(not recorded)" if value is None else str(value)
            groups.setdefault(f"{by}={level}", set()).add(twins[record["agent_id"]][0])
    return groups


def _family(
    decision: str,
    subgroup: str,
    members: set[str],
    by_persona: dict[str, dict[str, Any]],
    levels: list[str],
) -> list[dict[str, Any]]:
    """The rows of one decision × subgroup: one per pair of levels, Holm's over the pairs."""
    units = {u: at for u, at in sorted(by_persona.items()) if u.split("|")[0] in members}
    unseen = len(members - {u.split("|")[0] for u in units})  # no value at any level
    rows, results = [], []
    for a, b in combinations(levels, 2):
        both = [at for at in units.values() if {a, b} <= set(at)]
        result = paired_difference([at[a] for at in both], [at[b] for at in both])
        results.append(result)
        row = {"decision": decision, "subgroup": subgroup, "level_a": a, "level_b": b}
        rows.append({**row, "n": result.n, "n_missing": len(units) - result.n + unseen})
    adjusted = holm_over([r.p for r in results])
    for row, r, p_holm in zip(rows, results, adjusted, strict=True):
        shown = (r.mean, r.low, r.high, r.p, p_holm, r.changed)
        for name, value in zip(_STATS, shown, strict=True):
            row.update(stat_fields(name, value, None if name in _FULL_PRECISION else 6))
        row["test"], row["interval"] = r.test, r.interval
        row["note"] = _note(row)
    return rows


def _note(row: dict[str, Any]) -> str:
    """Why values of the row are missing, in words ("" when none is)."""
    said: dict[str, list[str]] = defaultdict(list)
    for name in _STATS:
        reason = row.get(f"{name}_undefined")
        if reason:
            said[in_words(reason)].append(name)
    return "; ".join(f"{', '.join(names)}: {words}" for words, names in said.items())


_SHOWN = (
    *("decision", "subgroup", "level_a", "level_b", "n", "n_missing"),
    *(*_STATS, "test", "interval", "small", "note"),
)
_REPORTED_ROWS = 8


def counterfactual_report(block: dict[str, Any]) -> list[str]:
    """A line per pair of levels of each decision over all personas, for the end of a run."""
    lines = [
        f"counterfactual {block['attribute']}: {len(block['levels'])} levels x "
        f"{block['personas']} personas, {block['decisions_made']} decisions made, "
        f"{sum(block['decisions_failed'].values())} failed"
    ]
    overall = [row for row in block["rows"] if row["subgroup"] == "all"]
    for row in overall[:_REPORTED_ROWS]:
        mean, decision = row["mean_difference"], short_decision(row["decision"], width=1000)
        if mean is None:
            lines.append(f"  {decision}: {row['level_b']} - {row['level_a']}: {row['note']}")
            continue
        interval = (
            f" [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"
            if row["ci_low"] is not None
            else f" (no interval: {in_words(row.get('ci_low_undefined') or 'not recorded')})"
        )
        p = row["p_holm"]
        why = in_words(row.get("p_holm_undefined") or "no values")
        lines.append(
            f"  {decision}: {row['level_b']} - {row['level_a']} = {mean:+.2f}{interval}"
            f" (n={row['n']}, changed {row['changed']:.0%}, {row['test'].split(',')[0]}, Holm p "
            f"{f'undefined: {why}' if p is None else f'{p:.3g}'})"
        )
    if len(block["rows"]) > _REPORTED_ROWS:
        lines.append(f"  ({len(block['rows'])} rows in all: reports/counterfactual.csv)")
    return lines


def write_counterfactual_reports(block: dict[str, Any], directory: Path) -> list[Path]:
    """`counterfactual.csv` / `.md` (a row per pair × decision × subgroup) and
    `counterfactual.png` (`analysis.counterfactual_figure`)."""
    rows = [{name: row.get(name) for name in _SHOWN} for row in block["rows"]]
    used = dict.fromkeys(row["interval"] for row in rows if row.get("interval"))
    said = "; ".join(f"{kind}: {INTERVAL_METHODS[kind]}" for kind in used)
    notes = [
        f"Differences are {block['attribute']} level_b minus level_a, paired by persona; "
        f"{block['confidence']:.0%} interval ({said or 'none'}); p: the row's test (exact "
        "McNemar for 0/1 outcomes, Wilcoxon signed-rank with zero differences dropped "
        "otherwise); Holm over the pairs of one decision and subgroup.",
    ]
    if not rows:
        notes.append("No row: the twins recorded no decision to compare.")
    cells = counterfactual_cells(block["rows"], rows)
    paths = write_table(rows, directory, "counterfactual", flag="small", notes=notes, cells=cells)
    return [*paths, draw_counterfactual(block, directory)]


COUNTERFACTUAL_KINDS = ("agent.created", "decision.made", "decision.failed")
"""What the counterfactual block reads besides `run.started` and its outcomes' kinds: added to
a scenario's declared metric kinds (docs/performance.md)."""


def _counterfactual_block(scenario: type[Scenario], events: pd.DataFrame) -> dict[str, Any]:
    twins = twins_of(scenario) or Twins()
    block = counterfactual_metrics(events, twins.outcomes, twins.decisions)
    if block is None:
        return {}
    small = min_group_n(events)
    for row in block["rows"]:
        row["small"] = row["n"] < small
    return {"counterfactual": block}


def _counterfactual_kinds(scenario: type[Scenario]) -> tuple[str, ...]:
    twins = twins_of(scenario) or Twins()
    return (*COUNTERFACTUAL_KINDS, *(o.kind for o in twins.outcomes))


COUNTERFACTUAL = metrics_extension("counterfactual")(
    MetricsExtension(
        applies=lambda scenario: twins_of(scenario) is not None,
        compute=_counterfactual_block,
        report=lambda metrics: (
            counterfactual_report(metrics["counterfactual"])
            if metrics.get("counterfactual")
            else []
        ),
        write_reports=lambda metrics, folder: (
            write_counterfactual_reports(metrics["counterfactual"], folder)
            if metrics.get("counterfactual")
            else []
        ),
        kinds=_counterfactual_kinds,
    )
)
"""The `counterfactual` block, its lines and its reports, for every scenario with twins
(`twins_of`): registered under the `personasim.metrics_extensions` entry-point group."""
