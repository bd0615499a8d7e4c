"""A run's agents as data: one row per agent, built from the event log alone.

Every analysis used to start by pivoting the event frame by agent; this is that pivot, with one
documented layout (docs/sweeps.md, "Agents as data"): who the agent is (`agent.created`), the
model role(s) its calls used, its persona's traits, the value of each of its decisions (each
unit's last attempt, as metrics count them) and its failures and re-asks. Columns are typed by
`typed_column`'s rule, as the event frame's are.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.simulation.log.event_log import latest_attempts
from personasim.simulation.log.events import Event
from personasim.simulation.runs.tools.event_data import read_run_log, sweep_cells, typed_column
from personasim.simulation.runs.tools.sweep_labels import cell_labels, with_cell_labels

__all__ = ["AGENTS_PARQUET_FILE", "agents_table", "run_agents", "sweep_agents"]

AGENTS_PARQUET_FILE = "agents.parquet"
FIRST = ["agent_id", "type", "role", "persona_id"]
DECIDED = ("decision.made", "decision.failed")
COUNTS = ["decisions", "failures", "reasks", "failed_decisions"]


def agents_table(events: Iterable[Event]) -> pd.DataFrame:
    """One row per agent (in order of first appearance) of a run's events (`seq` order)."""
    events = latest_attempts(events)
    rows: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.agent_id is not None and event.agent_id not in rows:
            rows[event.agent_id] = {"agent_id": event.agent_id}
        if event.kind == "agent.created" and event.agent_id is not None:
            rows[event.agent_id].update(_described(event.payload))
    _add_roles(rows, events)
    decided = _add_decisions(rows, [e for e in events if e.kind in DECIDED and e.agent_id])
    _add_counts(rows, events)
    if not rows:
        return pd.DataFrame(columns=FIRST)
    names = list(dict.fromkeys(name for row in rows.values() for name in row))
    ordered = sorted(names, key=lambda name: _group(name, decided))
    columns = {name: typed_column([row.get(name) for row in rows.values()]) for name in ordered}
    return pd.DataFrame(columns)


def _group(name: str, decided: list[str]) -> tuple[int, int]:
    """Column order: who (FIRST), the agent's other fields, traits, decisions, counts."""
    if name in FIRST:
        return (0, FIRST.index(name))
    if name in decided:
        return (3, decided.index(name))
    if name in COUNTS:
        return (4, COUNTS.index(name))
    return (2, 0) if name.startswith("trait.") else (1, 0)


def run_agents(run_dir: str | Path) -> pd.DataFrame:
    """The agents of the run in `run_dir` (`agents_table` of its log)."""
    return agents_table(read_run_log(run_dir))


def sweep_agents(sweep_dir: str | Path) -> pd.DataFrame:
    """Every cell's agents in one frame: `cell` (the run directory's name), then what the cell
    ran (`model`, each varied parameter; `sweep_labels.cell_labels`), then the agents' columns;
    a column a cell lacks is missing there, and each column is retyped over all cells."""
    frames = []
    cells = sweep_cells(sweep_dir)
    labels = cell_labels(cells)
    for cell in cells:
        frame = run_agents(cell)
        frame.insert(0, "cell", cell.name)
        frames.append(frame)
    combined = pd.concat([f.astype(object) for f in frames], ignore_index=True)
    typed = pd.DataFrame({name: typed_column(combined[name]) for name in combined.columns})
    return with_cell_labels(typed, labels)


def _described(payload: dict[str, Any]) -> dict[str, Any]:
    """`agent.created`'s payload as columns: `type`, `persona_id`, `trait.<name>`, and the
    agent's other fields by name (a trustee's `archetype`, `max_return`)."""
    described = {key: value for key, value in payload.items() if key != "persona"}
    persona = payload.get("persona")
    if isinstance(persona, dict):
        described["persona_id"] = persona.get("id")
        traits = persona.get("traits") or {}
        described.update({f"trait.{name}": value for name, value in traits.items()})
    return described


def _add_roles(rows: dict[str, dict[str, Any]], events: list[Event]) -> None:
    """`role`: the scenario role(s) whose model answered the agent's calls, comma-separated;
    missing for an agent that asked no model (a fixed-rule agent)."""
    roles: dict[str, set[str]] = defaultdict(set)
    for event in events:
        if event.kind == "llm.call" and event.agent_id in rows and event.payload.get("role"):
            roles[event.agent_id].add(event.payload["role"])
    for agent_id, names in roles.items():
        rows[agent_id]["role"] = ",".join(sorted(names))


def _add_decisions(rows: dict[str, dict[str, Any]], decisions: list[Event]) -> list[str]:
    """Each task's values in one layout per task (docs/sweeps.md): `<task>` when every agent
    decides it at most once; `<task>.r<round>` when at most once per round; else one column per
    unit of work, `<task>@<scope>` (`classroom.answer@r1/two-stage/HS/after/q26`; `#<k>` added
    for the k-th decision of one unit), beside `<task>.n`, the agent's decisions of it.
    Returns the columns made, in order (by task, then round or first appearance)."""
    columns: list[str] = []
    by_task: dict[str, list[Event]] = defaultdict(list)
    for event in decisions:
        by_task[event.payload.get("task", "?")].append(event)
    for task, events in sorted(by_task.items()):
        per_agent = Counter(e.agent_id for e in events)
        per_round = Counter((e.agent_id, e.round) for e in events)
        many = max(per_round.values()) > 1
        seen: Counter[tuple[str | None, str]] = Counter()
        for event in events:
            row = rows[event.agent_id]
            if max(per_agent.values()) == 1:
                column = task
            elif not many:
                column = f"{task}.r{event.round}"
            else:
                seen[(event.agent_id, event.scope)] += 1
                k = seen[(event.agent_id, event.scope)]
                column = f"{task}@{event.scope}" + (f"#{k}" if k > 1 else "")
                row[f"{task}.n"] = row.get(f"{task}.n", 0) + 1
                if f"{task}.n" not in columns:
                    columns.append(f"{task}.n")
            row[column] = _value(event)
            if column not in columns:
                columns.append(column)
            if event.kind == "decision.failed":
                where = f" @{event.scope}" if many else ""
                where = f" r{event.round}" if max(per_agent.values()) > 1 and not many else where
                _add_failure(row, f"{task}{where}", event)
        if many:
            for row in rows.values():
                row.setdefault(f"{task}.n", 0)  # a count: 0 where the agent was not asked
    return sorted(columns, key=lambda c: _column_order(c, columns.index(c)))


def _column_order(column: str, seen: int) -> tuple[str, int, int]:
    """By task; within one, `<task>.n` first, rounds in number order, units as first seen."""
    task, _, unit = column.partition("@")
    if unit or column.endswith(".n"):
        return (task.removesuffix(".n") if not unit else task, 0 if not unit else 1, seen)
    found = re.search(r"^(.*)\.r(\d+)$", column)
    return (found[1], int(found[2]), seen) if found else (column, 0, seen)


def _add_failure(row: dict[str, Any], which: str, event: Event) -> None:
    """`failed_decisions`: why the agent's value `which` is missing, in words."""
    why = f"{event.payload.get('reason', 'failed')} after {event.payload.get('attempts', '?')}"
    failed = row.get("failed_decisions")
    row["failed_decisions"] = (f"{failed}; " if failed else "") + f"{which}: {why} attempts"


def _value(event: Event) -> Any:
    return event.payload.get("value") if event.kind == "decision.made" else None


def _add_counts(rows: dict[str, dict[str, Any]], events: list[Event]) -> None:
    """`decisions` (made + failed), `failures` and `reasks`, for every agent (0 when none)."""
    counts = {"decisions": DECIDED, "failures": ("decision.failed",), "reasks": ("decision.reask",)}
    for name, kinds in counts.items():
        tally = Counter(e.agent_id for e in events if e.kind in kinds)
        for agent_id, row in rows.items():
            row[name] = tally.get(agent_id, 0)
    for row in rows.values():
        row.setdefault("failed_decisions", None)
