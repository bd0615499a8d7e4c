"""Conformance suite for the `EventStore` contract (simulation/log/events.py).

Every backend must pass the parametrized tests. To add one, append a `pytest.param` to
`STORE_BACKENDS`: a function that opens (or reopens) the store kept in a given directory.
The tests at the bottom are specific to the SQLite file format.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from personasim.simulation import (
    SCHEMA_VERSION,
    Event,
    EventStore,
    EventStoreError,
    SQLiteEventStore,
    events_frame,
)

StoreOpener = Callable[[Path], EventStore]

STORE_BACKENDS = [
    pytest.param(lambda directory: SQLiteEventStore(directory / "events.sqlite"), id="sqlite"),
]

# What a store may raise when a batch cannot be persisted (serialisation or binding errors).
BATCH_ERRORS = (TypeError, ValueError, sqlite3.Error)

PAYLOAD: dict[str, Any] = {
    "text": "héllo ☃ 日本語 — “quoted” \n tab\t",
    "nested": {"list": [1, 2.5, None, True, False, {"deep": [[], {}]}], "empty": {}},
    "int": -7,
    "big": 2**53,
    "float": 0.1,
}


@pytest.fixture(params=STORE_BACKENDS)
def open_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], EventStore]]:
    """Opens the backend's store in this test's directory; each call reopens the same data."""
    opener: StoreOpener = request.param
    opened: list[EventStore] = []

    def _open() -> EventStore:
        store = opener(tmp_path)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: Callable[[], EventStore]) -> EventStore:
    return open_store()


def _events(*kinds: str, scope: str = "main") -> list[Event]:
    return [
        Event(kind, {"i": i}, round=1, agent_id=f"a{i}", scope=scope)
        for i, kind in enumerate(kinds)
    ]


def test_append_assigns_increasing_seq_from_one(store: EventStore) -> None:
    first = store.append(_events("a", "b", "c"))
    second = store.append(_events("d", "e"))
    assert [e.seq for e in first] == [1, 2, 3]
    assert [e.seq for e in second] == [4, 5]
    assert [e.kind for e in first + second] == ["a", "b", "c", "d", "e"]


def test_append_returns_the_events_with_seq_and_nothing_else_changed(store: EventStore) -> None:
    events = _events("x", "y")
    stored = store.append(events)
    assert [e.seq for e in events] == [None, None]  # the inputs are not mutated
    assert [(e.kind, e.payload, e.agent_id) for e in stored] == [
        (e.kind, e.payload, e.agent_id) for e in events
    ]


def test_empty_append_writes_nothing(store: EventStore) -> None:
    assert store.append([]) == []
    assert list(store.read()) == []
    assert [e.seq for e in store.append(_events("a"))] == [1]


def test_seq_continues_after_reopen(open_store: Callable[[], EventStore]) -> None:
    store = open_store()
    store.append(_events("a", "b", "c"))
    store.close()
    reopened = open_store()
    assert [e.seq for e in reopened.append(_events("d", "e"))] == [4, 5]
    assert [e.seq for e in reopened.read()] == [1, 2, 3, 4, 5]
    assert [e.kind for e in reopened.read()] == ["a", "b", "c", "d", "e"]


def test_read_round_trips_every_field_in_seq_order(store: EventStore) -> None:
    batch = [
        Event("run.started", PAYLOAD, round=None, agent_id=None, scope="main", ts=1.5),
        Event("decision.made", {"value": 3}, round=2, agent_id="persona-é", scope="r2/p1", ts=2.25),
    ]
    stored = store.append(batch) + store.append([Event("run.completed", {}, ts=3.0)])
    read = list(store.read())
    assert read == stored
    assert [e.seq for e in read] == [1, 2, 3]
    assert read[0].payload == PAYLOAD
    assert read[0].payload["text"] == PAYLOAD["text"]
    assert isinstance(read[0].payload["big"], int)
    assert read[1].round == 2 and read[1].agent_id == "persona-é" and read[1].scope == "r2/p1"
    assert read[1].ts == 2.25


def test_read_filters_by_kind_keeping_order(store: EventStore) -> None:
    store.append(_events("a", "b", "a", "c", "b"))
    assert [(e.kind, e.seq) for e in store.read(kinds=["a"])] == [("a", 1), ("a", 3)]
    assert [e.seq for e in store.read(kinds=("b", "c"))] == [2, 4, 5]
    assert [e.seq for e in store.read(kinds=iter(["c"]))] == [4]
    assert list(store.read(kinds=["zzz"])) == []
    assert list(store.read(kinds=[])) == []
    assert len(list(store.read())) == 5


def _unserialisable_payload() -> Event:
    return Event("bad", {"obj": object()})


def _unbindable_round() -> Event:
    return Event("bad", {}, round=object())  # type: ignore[arg-type]


@pytest.mark.parametrize("bad_event", [_unserialisable_payload, _unbindable_round])
def test_append_is_atomic_when_a_batch_fails(
    store: EventStore, bad_event: Callable[[], Event]
) -> None:
    store.append(_events("before"))
    with pytest.raises(BATCH_ERRORS):
        store.append([*_events("x", "y", "z"), bad_event()])
    assert [e.kind for e in store.read()] == ["before"]
    # the store is still usable and seq carries on without a gap
    assert [e.seq for e in store.append(_events("after"))] == [2]
    assert [(e.seq, e.kind) for e in store.read()] == [(1, "before"), (2, "after")]


def test_failed_batch_leaves_nothing_after_reopen(open_store: Callable[[], EventStore]) -> None:
    store = open_store()
    with pytest.raises(BATCH_ERRORS):
        store.append([*_events("x", "y"), _unbindable_round()])
    store.close()
    assert list(open_store().read()) == []


def test_schema_version_is_current(open_store: Callable[[], EventStore]) -> None:
    store = open_store()
    assert store.schema_version() == SCHEMA_VERSION
    store.append(_events("a"))
    store.close()
    assert open_store().schema_version() == SCHEMA_VERSION


def test_store_is_a_context_manager(open_store: Callable[[], EventStore]) -> None:
    with open_store() as store:
        store.append(_events("a"))
    assert [e.kind for e in open_store().read()] == ["a"]


def test_events_frame_columns(store: EventStore) -> None:
    store.append([Event("k", {"nested": {"a": [1]}}, round=3, agent_id="p", scope="s", ts=9.0)])
    frame = events_frame(store.read())
    assert list(frame.columns) == ["seq", "round", "agent_id", "kind", "scope", "ts", "payload"]
    assert len(frame) == 1
    row = frame.iloc[0]
    assert (row["seq"], row["round"], row["agent_id"], row["kind"]) == (1, 3, "p", "k")
    assert (row["scope"], row["ts"]) == ("s", 9.0)
    assert row["payload"] == {"nested": {"a": [1]}}
    empty = events_frame([])
    assert list(empty.columns) == list(frame.columns) and empty.empty


def test_event_to_json_is_the_documented_form() -> None:
    event = Event("k", {"x": 1}, round=2, agent_id="a", scope="s", ts=1.0, seq=7)
    assert event.to_json() == {
        "schema_version": SCHEMA_VERSION,
        "seq": 7,
        "round": 2,
        "agent_id": "a",
        "kind": "k",
        "scope": "s",
        "ts": 1.0,
        "payload": {"x": 1},
    }


# --- SQLite file format ------------------------------------------------------------------


def test_sqlite_refuses_a_newer_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    with SQLiteEventStore(path) as store:
        store.append(_events("a"))
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    db.close()
    with pytest.raises(EventStoreError) as info:
        SQLiteEventStore(path)
    assert str(path) in str(info.value)
    assert f"v{SCHEMA_VERSION + 1}" in str(info.value)


def test_sqlite_accepts_its_own_schema_version_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    SQLiteEventStore(path).close()
    db = sqlite3.connect(path)
    rows = db.execute("SELECT key, value FROM meta").fetchall()
    db.close()
    assert rows == [("schema_version", str(SCHEMA_VERSION))]
    with SQLiteEventStore(path) as store:
        assert store.schema_version() == SCHEMA_VERSION


def test_sqlite_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"this is certainly not an SQLite database\n" * 50)
    with pytest.raises(EventStoreError) as info:
        SQLiteEventStore(path)
    assert str(path) in str(info.value)


def test_sqlite_damage_found_while_reading_names_the_file(tmp_path: Path) -> None:
    """A damaged page deep in the file passes opening and fails only when read."""
    path = tmp_path / "events.sqlite"
    with SQLiteEventStore(path) as store:
        store.append([Event("x", {"text": "y" * 2000, "i": i}) for i in range(200)])
    data = bytearray(path.read_bytes())
    data[-4096:] = bytes(range(256)) * 16  # the last page overwritten
    path.write_bytes(bytes(data))
    store = SQLiteEventStore(path)  # page 1 and the meta table are intact: it opens
    with store, pytest.raises(EventStoreError) as info:
        list(store.read())
    assert str(path) in str(info.value) and "damaged" in str(info.value)
    assert not isinstance(info.value, sqlite3.DatabaseError)
