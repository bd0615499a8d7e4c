"""The compare view's numbers, computed here rather than in the page's script so they are
tested against the log: which shared personas changed a decision, the mean change of numeric
decisions with a t interval, the parameters that differ, and every metric with its difference.

A run's decisions come from `agents_table` (the agents-as-data pivot, docs/sweeps.md), so a
decision here is the value the metrics count (each unit's last attempt; a failed one is None).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from personasim.simulation.log.events import Event
from personasim.simulation.runs.tools.agent_data import agents_table

__all__ = ["NO_PAIRS", "NO_SPREAD", "ONE_PAIR", "compare_runs", "decision_values", "mean_interval"]

CONFIDENCE = 0.95
NO_PAIRS = "no shared persona has a numeric decision in both runs"
ONE_PAIR = "one pair: an interval needs at least two"
NO_SPREAD = "all differences are equal (no spread)"
_SHOWN = 60
"""A decision shown in the personas table is cut to this many characters."""

Decisions = dict[str, dict[str, dict[str, Any]]]
"""unit (persona id, `#k` for its k-th agent) → task → {column: value}."""


def decision_values(events: Sequence[Event]) -> Decisions:
    """Each persona's decisions by task, the unit of comparison between runs. A persona with
    several agents (levels of a counterfactual) is one unit per agent, in agent id order."""
    tasks = sorted({str(e.payload.get("task")) for e in events if e.kind.startswith("decision.")})
    frame = agents_table(events)
    if "persona_id" not in frame or not tasks:
        return {}
    columns = {task: _task_columns(frame.columns, task) for task in tasks}
    rows = [row for row in frame.to_dict("records") if _plain(row.get("persona_id")) is not None]
    agents: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        agents[row["persona_id"]].append(row["agent_id"])
    units: Decisions = {}
    for row in rows:  # in the run's order; a persona's k-th agent by agent id is unit `#k`
        k = sorted(agents[row["persona_id"]]).index(row["agent_id"]) + 1
        unit = row["persona_id"] if k == 1 else f"{row['persona_id']}#{k}"
        units[unit] = {
            task: {c: _plain(row[c]) for c in cols} for task, cols in columns.items() if cols
        }
    return units


def _task_columns(columns: Iterable[str], task: str) -> list[str]:
    """A task's value columns in `agents_table`'s layouts (`task`, `task.rN`, `task@scope`),
    without its `task.n` count."""
    return [
        c
        for c in columns
        if c == task or (c.startswith((f"{task}.r", f"{task}@")) and c != f"{task}.n")
    ]


def _plain(value: Any) -> Any:
    """A frame cell as JSON: pandas' missing markers as None, numpy scalars as Python's."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def compare_runs(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Run `b` against run `a` (both `collect_run`'s dicts): the page's whole compare data."""
    a, b = (
        {**a, "decisions": a.get("decisions") or {}},
        {**b, "decisions": b.get("decisions") or {}},
    )
    shared = [unit for unit in a["decisions"] if unit in b["decisions"]]
    tasks = sorted({t for u in shared for t in (*a["decisions"][u], *b["decisions"][u])})
    personas = [_persona(unit, a["decisions"][unit], b["decisions"][unit]) for unit in shared]
    personas.sort(key=lambda p: not p["changed"])  # changed first, each group in run order
    return {
        "shared": len(shared),
        "only_a": len(a["decisions"].keys() - b["decisions"].keys()),
        "only_b": len(b["decisions"].keys() - a["decisions"].keys()),
        "changed": sum(p["changed"] for p in personas),
        "tasks": [_task_summary(task, shared, a["decisions"], b["decisions"]) for task in tasks],
        "personas": personas,
        "parameters": _differing(_settings(a["manifest"]), _settings(b["manifest"])),
        "metrics": _metric_rows(a.get("metrics"), b.get("metrics")),
    }


def _persona(
    unit: str, a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """One shared persona: each task's decision in both runs, and whether any changed."""
    tasks = {
        task: {
            "a": _shown(a.get(task)),
            "b": _shown(b.get(task)),
            "changed": a.get(task) != b.get(task),
        }
        for task in sorted({*a, *b})
    }
    return {"unit": unit, "changed": any(t["changed"] for t in tasks.values()), "tasks": tasks}


def _shown(values: dict[str, Any] | None) -> str | None:
    """A task's decision as text: the value, or `column: value; …` when it has several."""
    if not values:
        return None
    if len(values) == 1:
        text = _text(next(iter(values.values())))
    else:
        text = "; ".join(f"{column}: {_text(value)}" for column, value in values.items())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _text(value: Any) -> str:
    if value is None:
        return "failed"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _task_summary(task: str, shared: Sequence[str], a: Decisions, b: Decisions) -> dict[str, Any]:
    """How many shared personas changed this task's decision, and the mean numeric change."""
    pairs = [(a[u].get(task) or {}, b[u].get(task) or {}) for u in shared]
    present = [(x, y) for x, y in pairs if x or y]
    changed = sum(x != y for x, y in present)
    differences = [d for x, y in present if (d := _mean_difference(x, y)) is not None]
    return {"task": task, "n": len(present), "changed": changed, **mean_interval(differences)}


def _mean_difference(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """A persona's paired difference: B − A averaged over the task's values numeric in both
    runs (one value for a task decided once); None when there is none to pair."""
    both = [(a[c], b[c]) for c in a if c in b and _is_number(a[c]) and _is_number(b[c])]
    return sum(y - x for x, y in both) / len(both) if both else None


def mean_interval(differences: Sequence[float]) -> dict[str, Any]:
    """The mean of paired differences with its t interval over personas; an interval that
    cannot be computed (n < 2, or no spread) is None with the reason in `undefined`."""
    from scipy import stats

    n = len(differences)
    if n == 0:
        return {"pairs": 0, "mean": None, "low": None, "high": None, "undefined": NO_PAIRS}
    mean = sum(differences) / n
    result = {"pairs": n, "mean": mean, "low": None, "high": None, "undefined": None}
    if n < 2:
        return {**result, "undefined": ONE_PAIR}
    if all(d == differences[0] for d in differences):
        return {**result, "undefined": NO_SPREAD}
    low, high = stats.ttest_1samp(differences, 0.0).confidence_interval(CONFIDENCE)
    return {**result, "low": float(low), "high": float(high)}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _settings(manifest: dict[str, Any]) -> dict[str, Any]:
    """What a run was asked to do, by name: the settings the manifest records, then each
    scenario parameter (what the run produced, such as its cost, is not a setting)."""
    prompts = manifest.get("prompts") or {}
    pack = f"{prompts.get('scenario', prompts.get('file', '?'))} {str(prompts.get('sha256'))[:12]}"
    settings = {
        "scenario": manifest.get("scenario"),
        "model": manifest.get("model_spec", manifest.get("model")),
        **{f"roles.{role}": specs for role, specs in (manifest.get("roles") or {}).items()},
        "seed": manifest.get("seed"),
        "response format": manifest.get("response_format"),
        "max tokens": manifest.get("max_tokens"),
        "prompt pack": pack if prompts else None,
        "scenario file": manifest.get("scenario_file"),
    }
    return {**settings, **(manifest.get("params") or {})}


def _differing(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The settings whose values differ (as text: name, run A, run B), and how many are equal."""
    names = list(dict.fromkeys([*a, *b]))
    rows = [[name, _setting(a.get(name)), _setting(b.get(name))] for name in names]
    differ = [row for row in rows if row[1] != row[2]]
    return {"differ": differ, "equal": len(rows) - len(differ)}


def _setting(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _metric_rows(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    """Every metric of both runs' metrics.json flattened: the ones that differ, the largest
    numeric |B − A| first (then those without a number to subtract), and how many are equal."""
    flat_a, flat_b = _flatten((a or {}).get("metrics"), ""), _flatten((b or {}).get("metrics"), "")
    rows, same = [], []
    for name in dict.fromkeys([*flat_a, *flat_b]):
        x, y = flat_a.get(name), flat_b.get(name)
        if x == y and _is_number(x) == _is_number(y) and (name in flat_a) == (name in flat_b):
            same.append([name, x])
        else:
            rows.append([name, x, y, y - x if _is_number(x) and _is_number(y) else None])
    rows.sort(key=lambda row: (row[3] is None, -abs(row[3] or 0)))
    return {"differ": rows, "same": same, "equal": len(same), "total": len(rows) + len(same)}


def _flatten(value: Any, prefix: str) -> dict[str, Any]:
    """Nested metrics as `a.b.c` → a scalar (a list of scalars is one value, as JSON text)."""
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        return {
            k: v
            for i, item in enumerate(value)
            for k, v in _flatten(item, f"{prefix}[{i}]").items()
        }
    if isinstance(value, list):
        return {prefix: json.dumps(value, ensure_ascii=False)}
    return {prefix: value} if prefix else {}
