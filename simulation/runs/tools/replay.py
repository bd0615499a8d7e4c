"""Reading a run back: an agent's trajectory step by step, and the log as JSON lines."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from personasim.simulation.log.events import Event, EventStore

__all__ = [
    "agent_events",
    "concerned_agents",
    "export_jsonl",
    "render_overview",
    "render_trajectory",
]

_HIDDEN_KINDS = {"round.started", "round.completed"}


def agent_events(store: EventStore, agent_id: str) -> list[Event]:
    """Events by or about one agent, in log order (a transfer to it counts as about it)."""
    return [e for e in store.read() if agent_id in concerned_agents(e)]


def concerned_agents(event: Event) -> set[str]:
    """The agents an event is by or about: its actor and a transfer's other party."""
    ids = (event.agent_id, event.payload.get("trustee"), event.payload.get("trustor"))
    return {i for i in ids if isinstance(i, str)}


def render_trajectory(events: Iterable[Event], full: bool = False) -> Iterator[str]:
    """Readable lines: round, what the agent was asked, its answer, the parsed action, outcome."""
    current_round: object = object()
    for event in events:
        if event.kind in _HIDDEN_KINDS:
            continue
        if event.round != current_round:
            current_round = event.round
            yield "" if event.round is None else f"\n── round {event.round} ──"
        yield from _render(event, full)


def _render(event: Event, full: bool) -> Iterator[str]:
    p = event.payload
    if event.kind == "llm.call":
        source = "" if p["source"] == "model" else f" (from {p['source']})"
        yield f"[{event.seq}] asked the model{source} — task {p['task']}:"
        prompt = p["messages"] if full else p["messages"][-1:]
        for message in prompt:
            yield _indent(f"{message['role']}: {message['content']}", full)
        yield _indent(f"reply: {p['response']['text']}", full=True)
    elif event.kind == "agent.created":
        yield f"[{event.seq}] created as {p.get('type')}: {_brief(p)}"
    else:
        details = ", ".join(f"{k}={v}" for k, v in p.items() if k not in ("env", "persona"))
        where = f" in {p['env']}" if "env" in p else ""
        yield f"[{event.seq}] {event.kind}{where}" + (f": {details}" if details else "")


def _brief(payload: dict[str, Any]) -> str:
    persona = payload.get("persona")
    if persona:
        return ", ".join(f"{k}: {v}" for k, v in persona["traits"].items())
    return ", ".join(f"{k}={v}" for k, v in payload.items() if k != "type")


def _indent(text: str, full: bool, limit: int = 400) -> str:
    if not full and len(text) > limit:
        text = text[: limit - 1] + "…"
    return "\n".join("      " + line for line in text.splitlines())


def render_overview(store: EventStore) -> Iterator[str]:
    """The run's agents and how many events each has, to pick one to replay."""
    kinds: Counter[str] = Counter()
    agents: dict[str, str] = {}
    per_agent: Counter[str] = Counter()
    for event in store.read():
        kinds[event.kind] += 1
        if event.kind == "agent.created" and event.agent_id:
            agents[event.agent_id] = event.payload.get("type", "")
        if event.agent_id:
            per_agent[event.agent_id] += 1
    yield f"{sum(kinds.values())} events: " + ", ".join(
        f"{k} {n}" for k, n in sorted(kinds.items())
    )
    yield f"{len(agents)} agents (replay one with --agent ID):"
    for agent_id, kind in agents.items():
        yield f"  {agent_id}  {kind}  {per_agent[agent_id]} events"


def export_jsonl(store: EventStore, out: IO[str] | Path) -> int:
    """Write one JSON object per event (docs/events.md); returns the number written."""
    if isinstance(out, Path):  # written aside, then renamed: never a half-written file
        partial = out.with_name(out.name + ".partial")
        try:
            with partial.open("w", encoding="utf-8") as handle:
                count = export_jsonl(store, handle)
            partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
        return count
    count = 0
    for event in store.read():
        out.write(json.dumps(event.to_json(), ensure_ascii=False, sort_keys=True) + "\n")
        count += 1
    return count
