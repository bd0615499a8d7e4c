"""The event log's record type and storage contract.

Every metric, replay and resume reads only events, so this module is the schema's single source
of truth (documented in docs/events.md). Stores implement `EventStore`; `tests/test_event_store`
holds the conformance suite any new backend must pass.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "INCIDENT_SCOPE",
    "MAIN_SCOPE",
    "SCHEMA_VERSION",
    "Event",
    "EventStore",
    "NoRunHeaderError",
    "RunHeader",
    "events_frame",
    "run_header",
]

SCHEMA_VERSION = 1
"""Bumped whenever an event's meaning or a column changes; readers refuse newer versions."""

MAIN_SCOPE = "main"
"""Scope of events emitted by the sequential part of a run (not inside a concurrent branch)."""

INCIDENT_SCOPE = "incident"
"""Scope of events about the run rather than its content (a model call that failed): written at
once, even from a unit of work that is then abandoned, and never re-derived on resume."""


@dataclass(frozen=True)
class Event:
    """One thing that happened in a run.

    `seq` is assigned by the store (run-wide, strictly increasing); `scope` names the unit of
    work the event was committed with, which is what resume uses to skip finished work.
    """

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    round: int | None = None
    agent_id: str | None = None
    scope: str = MAIN_SCOPE
    ts: float = 0.0
    seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The documented export form (one JSON object per event)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "seq": self.seq,
            "round": self.round,
            "agent_id": self.agent_id,
            "kind": self.kind,
            "scope": self.scope,
            "ts": self.ts,
            "payload": self.payload,
        }


CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
"""What `json.dumps(..., sort_keys=True, ensure_ascii=False, separators=(",", ":"))` uses, built
once: `json.dumps` with any non-default option builds a new encoder on every call."""


def dumps_payload(payload: dict[str, Any]) -> str:
    """Canonical JSON so equal payloads are byte-equal in the store."""
    return CANONICAL_JSON.encode(payload)


class EventStore(ABC):
    """Append-only storage of one run's events.

    `append` must be atomic per call: all events of a batch become visible together or not at
    all, which is what lets a run killed mid-way resume without half-written units of work. A
    batch is visible to readers of this store at once and durable within the store's flush
    window (the SQLite store writes batches together: `SQLiteEventStore.flush`); `close`
    writes whatever is still pending.
    """

    @abstractmethod
    def append(self, events: Sequence[Event]) -> list[Event]:
        """Persist events atomically (visible to this store's readers at once, durable within
        the flush window) and return them with their assigned `seq`."""

    @abstractmethod
    def read(self, kinds: Iterable[str] | None = None) -> Iterator[Event]:
        """Events in `seq` order, optionally only the given kinds."""

    @abstractmethod
    def schema_version(self) -> int:
        """The schema version the store was written with."""

    @abstractmethod
    def close(self) -> None:
        """Write what is pending, then release the underlying resources; the data stays."""

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


EVENT_COLUMNS = ["seq", "round", "agent_id", "kind", "scope", "ts", "payload"]


def events_frame(events: Iterable[Event], shared: bool = False) -> pd.DataFrame:
    """Events as a table (payload left as a dict column), the input every metric takes.

    `shared`: equal strings in the payloads become one object (a persona's hundred trait
    names and levels repeat across 100,000 agents), so a large run's table takes about half
    the memory; the payloads are equal either way.
    """
    import pandas as pd  # here, so reading a command line does not import pandas

    memo: dict[str, str] = {}
    rows = [
        (e.seq, e.round, e.agent_id, e.kind, e.scope, e.ts, _shared(e.payload, memo))
        if shared
        else (e.seq, e.round, e.agent_id, e.kind, e.scope, e.ts, e.payload)
        for e in events
    ]
    return pd.DataFrame(rows, columns=EVENT_COLUMNS)


def _shared(value: Any, memo: dict[str, str]) -> Any:
    """`value` rebuilt with each string (key or value) taken from `memo`."""
    if isinstance(value, str):
        return memo.setdefault(value, value)
    if isinstance(value, dict):
        return {memo.setdefault(k, k): _shared(v, memo) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v, memo) for v in value]
    return value


class RunHeader(TypedDict, total=False):
    """The `run.started` payload (docs/events.md): what was run, on what, with which settings;
    the one block every scenario's metrics read before their own events."""

    scenario: str
    params: dict[str, Any]
    seed: int
    model: str
    roles: dict[str, Any]
    prompts: dict[str, Any]
    validity: dict[str, Any]


class NoRunHeaderError(ValueError):
    """An event table without a `run.started` event: not a personasim run's log."""


def run_header(events: pd.DataFrame) -> RunHeader:
    """The run's header: its first `run.started` payload (a resumed run logs no second one)."""
    started = events.loc[events["kind"] == "run.started", "payload"]
    if started.empty:
        raise NoRunHeaderError("the event log has no run.started event; it is not a personasim run")
    return cast(RunHeader, started.iloc[0])
