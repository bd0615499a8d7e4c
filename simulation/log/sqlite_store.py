"""The default event store: one SQLite file (WAL) per run directory."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from personasim.simulation.log.events import SCHEMA_VERSION, Event, EventStore, dumps_payload

__all__ = ["EventStoreError", "SQLiteEventStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    round INTEGER,
    agent_id TEXT,
    kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    ts REAL NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_kind ON events (kind);
"""


class EventStoreError(RuntimeError):
    """The store cannot be opened or was written by an incompatible version."""


class SQLiteEventStore(EventStore):
    """Events in an SQLite database; each `append` is one transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with self._errors():
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._ensure_version()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Any SQLite failure (a damaged file can fail on any page, at any read) as one
        `EventStoreError` naming the file."""
        try:
            yield
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise  # a caller's bug (an unbindable value), not a damaged file
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "malformed" not in str(exc):
                raise EventStoreError(f"{self.path}: {exc}") from exc  # locked, full, read-only
            raise EventStoreError(
                f"{self.path}: not a readable event store ({exc}); the file is damaged or is "
                "not a personasim event log"
            ) from exc

    def _ensure_version(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif int(row[0]) > SCHEMA_VERSION:
            raise EventStoreError(
                f"{self.path}: written with event schema v{row[0]}, this personasim reads up to "
                f"v{SCHEMA_VERSION}; upgrade personasim to read it"
            )

    def schema_version(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0])

    def append(self, events: Sequence[Event]) -> list[Event]:
        if not events:
            return []
        rows = [
            (e.round, e.agent_id, e.kind, e.scope, e.ts, dumps_payload(e.payload)) for e in events
        ]
        with self._errors(), self._transaction():
            first = self._next_seq()
            self._db.executemany(
                "INSERT INTO events (seq, round, agent_id, kind, scope, ts, payload) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(first + i, *row) for i, row in enumerate(rows)],
            )
        return [
            Event(e.kind, e.payload, e.round, e.agent_id, e.scope, e.ts, first + i)
            for i, e in enumerate(events)
        ]

    def _next_seq(self) -> int:
        (last,) = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        return last + 1

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def read(self, kinds: Iterable[str] | None = None) -> Iterator[Event]:
        query = "SELECT seq, round, agent_id, kind, scope, ts, payload FROM events"
        params: list[str] = []
        if kinds is not None:
            params = list(kinds)
            query += f" WHERE kind IN ({','.join('?' * len(params))})"
        with self._errors():
            for seq, rnd, agent_id, kind, scope, ts, payload in self._db.execute(
                query + " ORDER BY seq", params
            ):
                yield Event(kind, json.loads(payload), rnd, agent_id, scope, ts, seq)

    def digest(self) -> tuple[int, str]:
        """How many events the log holds and the SHA-256 of their rows (what the manifest
        records and `metrics --check` verifies): each row's columns in order, tab-separated,
        null as empty, one line per row in `seq` order."""
        digest = hashlib.sha256()
        count = 0
        with self._errors():
            for row in self._db.execute(
                "SELECT seq, round, agent_id, kind, scope, ts, payload FROM events ORDER BY seq"
            ):
                digest.update(("\t".join("" if v is None else str(v) for v in row) + "\n").encode())
                count += 1
        return count, digest.hexdigest()

    def close(self) -> None:
        self._db.close()


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on error, so a batch lands whole or not at all."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
