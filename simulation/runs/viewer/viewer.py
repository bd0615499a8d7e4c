"""`personasim view`: one self-contained HTML page to inspect runs in a browser.

The page holds the run's data as JSON (escaped so no text can close its `<script>` block) and
a small script that renders it with `textContent` only, so a model's reply is never markup, and
a Content-Security-Policy that lets nothing else run (`page_csp`).
Each agent's events sit in their own JSON block, parsed only when that agent is opened, so a
10,000-agent run opens in seconds. No network, no CDN: it works from `file://`.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from personasim.simulation.core.metric_extensions import extended_report
from personasim.simulation.core.scenario import Scenario, ScenarioError
from personasim.simulation.log.events import Event, EventStore
from personasim.simulation.runs.lifecycle.run_dir import METRICS_FILE, REPORTS_DIR, read_manifest
from personasim.simulation.runs.lifecycle.run_lock import lock_holder
from personasim.simulation.runs.lifecycle.scenario_file import scenario_for_run
from personasim.simulation.runs.lifecycle.source_run import SOURCE_SCORES
from personasim.simulation.runs.tools.replay import concerned_agents
from personasim.simulation.runs.viewer.viewer_compare import compare_runs, decision_values

__all__ = [
    "collect_run",
    "page_csp",
    "render_list_page",
    "render_page",
    "write_page",
]

_LABEL_KEYS = ("name", "first_name", "age", "sex", "gender", "job_title", "performance_level")
_TABLE_ATTRIBUTES = 6
"""Attribute columns shown in the agents table by default (the page can show all)."""
_SHORT = 40
"""A non-numeric decision is tabled (and filterable) when every value is text this short."""
_LONG = object()
"""Marks a task with a long or structured value: it gets no column (its agent's page shows it)."""


def collect_run(
    run_dir: Path,
    store: EventStore,
    decisions: bool = False,
    scenario_file: str | Path | None = None,
) -> dict[str, Any]:
    """Everything the page shows about one run, read from its directory and log alone.

    `decisions` adds each persona's decisions, which only the compare view needs (they cost
    about 1.5 s for 10,000 agents, so a single run's page goes without). The summary lines
    and a rescore's judges come from the scenario's code: an installed scenario's, found by
    name, or a scenario file's only when the user names it (`scenario_file`, checked against
    the run's record). A run directory never names code to run; without its scenario the page
    shows everything else, and `notes` says what it leaves out."""
    manifest = read_manifest(run_dir)
    metrics = _read_json(run_dir / METRICS_FILE)
    events = list(store.read())
    calls = [e for e in events if e.kind == "llm.call"]
    agents, trajectories = _agents(events)
    scenario, notes = _scenario(manifest, scenario_file)
    return {
        "dir": run_dir.name or str(run_dir),
        "running": lock_holder(run_dir) is not None,
        "manifest": manifest,
        "metrics": metrics,
        "summary": _summary(scenario, metrics, notes),
        "notes": notes,
        "reports": _reports(run_dir / REPORTS_DIR),
        "kinds": dict(sorted(Counter(e.kind for e in events).items())),
        "sources": dict(Counter(str(e.payload.get("source")) for e in calls)),
        "agents": agents,
        "calls": _call_owners(calls, trajectories.keys()),
        "trajectories": trajectories,
        "judges": _judges(scenario, events),
        "decisions": decision_values(events) if decisions else {},
    }


def _scenario(
    manifest: dict[str, Any], scenario_file: str | Path | None
) -> tuple[type[Scenario] | None, list[str]]:
    """The run's scenario (never code the run directory names), or None and why. A file the
    user names that is not the run's is an error; a missing one only leaves lines out."""
    if scenario_file is not None and manifest.get("scenario_file") is not None:
        return scenario_for_run(manifest, scenario_file), []
    try:
        return scenario_for_run(manifest), []
    except ScenarioError as exc:
        return None, [f"the scenario's summary lines and a rescore's judges are not shown: {exc}"]


def _judges(scenario: type[Scenario] | None, events: Sequence[Event]) -> dict[str, Any] | None:
    """A rescore's two judges side by side: each item's score in the rescored run and in this
    one (null where that judge has none), with the difference (None: not a rescore)."""
    source = next((e.payload for e in events if e.kind == SOURCE_SCORES), None)
    if source is None:
        return None
    scores = scenario.scores if scenario else None
    if scores is None:
        return None
    made = [(e.agent_id, e.payload) for e in events if e.kind == "decision.made"]
    first, second = source["items"], scores.items(made)
    rows = [
        [item, first.get(item), second.get(item), _difference(first.get(item), second.get(item))]
        for item in sorted(set(first) | set(second))
    ]
    rows.sort(key=lambda row: (row[3] is None, -abs(row[3] or 0)))  # largest change first
    before, after = _bound(source["roles_before"]), _bound(source["roles"])
    return {"first": f"rescored run ({before})", "second": f"this run ({after})", "rows": rows}


def _bound(roles: dict[str, list[str]]) -> str:
    return "; ".join(f"{role}: {','.join(specs)}" for role, specs in roles.items())


def _difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else second - first


def _call_owners(calls: Sequence[Event], agents: Iterable[str]) -> dict[str, str]:
    """Each `llm.call`'s seq → the agent whose page shows it, so `#call/SEQ` survives a reload
    without the page parsing every agent's events."""
    known = set(agents)
    return {str(e.seq): e.agent_id for e in calls if e.agent_id in known}


def _read_json(path: Path) -> dict[str, Any] | None:
    """metrics.json when present (an interrupted run has none: the page says so)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return {"unreadable": f"{path.name}: {exc}"}


def _summary(
    scenario: type[Scenario] | None, metrics: dict[str, Any] | None, notes: list[str]
) -> list[str]:
    """The scenario's own report lines (as `personasim run` prints them), when it is known."""
    if not metrics or "metrics" not in metrics:
        return []
    if scenario is None:
        return [f"({note})" for note in notes]
    try:
        return [str(line) for line in extended_report(scenario, metrics["metrics"])]
    except Exception as exc:
        return [f"(the scenario's report is unavailable: {exc})"]


def _reports(directory: Path) -> list[dict[str, Any]]:
    """Tables (CSV, as rows) and figures (PNG, as data: URIs) from `RUN_DIR/reports/`."""
    if not directory.is_dir():
        return []
    reports: list[dict[str, Any]] = []
    for path in sorted(directory.iterdir()):
        if path.suffix == ".png":
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            src = f"data:image/png;base64,{data}"
            reports.append({"name": path.name, "kind": "figure", "src": src})
        elif path.suffix == ".csv":
            with path.open(newline="", encoding="utf-8") as handle:
                rows = list(csv.reader(handle))
            reports.append({"name": path.name, "kind": "table", "rows": rows})
    return reports


def _agents(events: Sequence[Event]) -> tuple[dict[str, Any], dict[str, list[list[Any]]]]:
    """The agents table (one compact row each) and each agent's events, keyed by agent id."""
    created = {e.agent_id: e.payload for e in events if e.kind == "agent.created" and e.agent_id}
    trajectories: dict[str, list[list[Any]]] = defaultdict(list)
    for event in events:
        for agent_id in concerned_agents(event) & created.keys():
            trajectories[agent_id].append(
                [event.seq, event.round, event.kind, event.agent_id, event.payload]
            )
    attributes = _attribute_names(created.values())
    stats = {agent_id: _agent_stats(agent_id, trajectories[agent_id]) for agent_id in created}
    long = {name for row in stats.values() for name, value in row.items() if value is _LONG}
    outcomes = sorted({name for row in stats.values() for name in row if ":" in name} - long)
    counts = ["decisions", "failed", "reasks", "calls", "tokens"]
    columns = ["id", "label", "persona", "type", "role", *attributes, *counts, *outcomes]
    rows = []
    for agent_id, payload in created.items():
        persona = payload.get("persona") or {}
        values = persona.get("attributes") or {}
        rows.append(
            [
                agent_id,
                _label(agent_id, payload),
                persona.get("id"),
                payload.get("type"),
                stats[agent_id].get("role"),
                *(_cell(values.get(name)) for name in attributes),
                *(stats[agent_id].get(name) for name in (*counts, *outcomes)),
            ]
        )
    table = {
        "columns": columns,
        "attributes": attributes,
        "shown_attributes": attributes[:_TABLE_ATTRIBUTES],
        "rows": rows,
    }
    return table, dict(trajectories)


def _attribute_names(payloads: Iterable[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for payload in payloads:
        for name in (payload.get("persona") or {}).get("attributes") or {}:
            names.setdefault(name, None)
    return list(names)


def _cell(value: Any) -> Any:
    """Table cells are scalars; anything else is shown as its JSON text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _label(agent_id: str, payload: dict[str, Any]) -> str:
    """A readable name: a few persona attributes, a trustee's archetype, or the type."""
    persona = payload.get("persona")
    if persona:
        values = persona.get("attributes") or {}
        parts = [str(values[key]) for key in _LABEL_KEYS if values.get(key) not in (None, "")]
        if not parts and values.get("description"):
            parts = [_short(str(values["description"]), 60)]
        return " · ".join(parts[:3]) or str(persona.get("id", agent_id))
    if "archetype" in payload:
        return f"trustee {payload['archetype']}"
    role = payload.get("role")
    return f"{payload.get('type', 'agent')}" + (f" ({_short(str(role), 40)})" if role else "")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _agent_stats(agent_id: str, events: list[list[Any]]) -> dict[str, Any]:
    """Counts of the agent's decision steps, the model role(s) of its calls, and its outcomes:
    the mean of each numeric field of its own environment events (`trust.transfer:sent`) and of
    each task's numeric decisions (`decision:trust.trustor`); a mean over one event is that
    event's value. A task whose decisions are not all numbers lists its distinct values."""
    counts: Counter[str] = Counter()
    numbers: dict[str, list[float]] = defaultdict(list)
    texts: dict[str, dict[str, None]] = defaultdict(dict)
    roles: dict[str, None] = {}
    for _, _, kind, actor, payload in events:
        if actor != agent_id:
            continue
        if kind == "llm.call":
            if payload.get("role"):
                roles.setdefault(str(payload["role"]), None)
            counts["calls"] += 1
            usage = (payload.get("response") or {}).get("usage") or {}
            counts["tokens"] += sum(v for v in usage.values() if isinstance(v, int))
        elif kind in ("decision.made", "decision.failed"):
            counts["decisions"] += 1
            counts["failed"] += kind == "decision.failed"
            if _is_number(payload.get("value")):
                numbers[f"decision:{payload.get('task')}"].append(payload["value"])
            elif kind == "decision.made" and payload.get("value") is not None:
                texts[f"decision:{payload.get('task')}"].setdefault(_text(payload["value"]), None)
        elif kind == "decision.reask":
            counts["reasks"] += 1
        elif not kind.startswith(("agent.", "env.", "llm.", "round.", "run.")):
            for name, value in payload.items():
                if _is_number(value):
                    numbers[f"{kind}:{name}"].append(value)
    stats: dict[str, Any] = dict(counts)
    for name, values in texts.items():  # any text value: the task is shown as its values
        listed = [*map(_text, numbers.pop(name, [])), *values]
        short = all(len(v) <= _SHORT and "\n" not in v for v in listed)
        stats[name] = ", ".join(listed) if short else _LONG
    stats.update({name: round(sum(v) / len(v), 4) for name, v in numbers.items()})
    if roles:
        stats["role"] = ", ".join(roles)
    return stats


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _asset(name: str) -> str:
    return files("personasim.simulation.runs.viewer").joinpath(f"viewer_assets/{name}").read_text()


def _fill(title: str, data: str, agents: str) -> str:
    """The page template with its parts; one pass, so a run's text that looks like a
    placeholder is never substituted."""
    parts = {
        "title": _html_text(title),
        "csp": page_csp(),
        "style": _asset("viewer.css"),
        "data": data,
        "agents": agents,
        "script": _asset("viewer.js"),
    }
    return re.sub(r"\{\{(\w+)\}\}", lambda match: parts[match.group(1)], _asset("viewer.html"))


def page_csp(frame: bool = False) -> str:
    """The pages' Content-Security-Policy: their own script and style (by hash) and `data:`
    figures, nothing else: no other script, no fetch, no form, no base. `frame` adds what only
    a header can say (no framing); the page's meta tag carries the rest, so it holds offline."""

    def digest(name: str) -> str:
        value = base64.b64encode(hashlib.sha256(_asset(name).encode("utf-8")).digest()).decode()
        return f"'sha256-{value}'"

    policy = (
        f"default-src 'none'; script-src {digest('viewer.js')}; "
        f"style-src {digest('viewer.css')}; img-src data:; base-uri 'none'; form-action 'none'"
    )
    return policy + ("; frame-ancestors 'none'" if frame else "")


def render_list_page(base: Path, rows: list[dict[str, Any]]) -> str:
    """The run list of a folder: one row per run (run_list's columns and a link to its page)."""
    listing = {"dir": base.resolve().name or str(base), "rows": rows}
    data = _json_block("runs", []) + "\n" + _json_block("run-list", listing)
    return _fill(f"personasim — runs in {listing['dir']}", data, "")


def render_page(runs: Sequence[dict[str, Any]], list_href: str | None = None) -> str:
    """The HTML page for one run, or for several (with the compare view); `list_href` links
    back to the run list the run was opened from."""
    blocks = []
    for index, run in enumerate(runs):
        for number, events in enumerate(run["trajectories"].values()):
            blocks.append(_json_block(f"r{index}-a{number}", events))
    data = [
        {
            **{k: v for k, v in run.items() if k not in ("trajectories", "decisions")},
            "blocks": {
                agent_id: f"r{index}-a{n}" for n, agent_id in enumerate(run["trajectories"])
            },
            "list": list_href,
        }
        for index, run in enumerate(runs)
    ]
    if len(runs) > 1:  # run 1 against each other run (docs/viewer.md, "Compare")
        comparisons = [compare_runs(runs[0], run) for run in runs[1:]]
        blocks.append(_json_block("compare", comparisons))
    title = " vs ".join(f"{r['manifest'].get('scenario', '?')} ({r['dir']})" for r in runs)
    return _fill(f"personasim — {title}", _json_block("runs", data), "\n".join(blocks))


def _json_block(element_id: str, value: Any) -> str:
    """A `<script type="application/json">` block whose text no content can break out of."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_page(html: str, path: Path) -> None:
    """Written aside, then renamed: never a half-written page."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(html, encoding="utf-8")
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
