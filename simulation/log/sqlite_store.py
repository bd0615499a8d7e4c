"""The default event store: one SQLite file (WAL) per run directory, group-committed."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from personasim.simulation.log.events import SCHEMA_VERSION, Event, EventStore, dumps_payload

__all__ = ["FLUSH_DELAY_S", "FLUSH_ROWS", "EventStoreError", "SQLiteEventStore"]

FLUSH_ROWS = 1_000
"""Queued rows that make `append` write at once: bounds the memory held and one transaction's
size (a 1,000-row commit takes about a millisecond)."""

FLUSH_DELAY_S = 0.025
"""How long after the first queued batch the queue is written, when appends come from inside a
running event loop. A round appends about three batches per decision at ~1 ms of CPU each, so
25 ms gathers tens of batches into one commit (~40 µs each, most of the gain: a longer window
saves a few µs per decision more) while a SIGKILL loses at most 25 ms of work, which a resumed
run does again."""

_INSERT = (
    "INSERT INTO events (seq, round, agent_id, kind, scope, ts, payload) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_COLUMNS = "SELECT seq, round, agent_id, kind, scope, ts, payload FROM events"

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

Row = tuple[int, Any, Any, str, str, float, str]


class EventStoreError(RuntimeError):
    """The store cannot be opened, was written by an incompatible version, or lost a write."""


class SQLiteEventStore(EventStore):
    """Events in an SQLite database, appended batches written together (group commit).

    `append` gives a batch its `seq` numbers at once, from a counter read from the file at the
    first append: one process writes a run directory (`runs.lifecycle.run_lock.RunLock`, an OS
    lock held for the whole run), and should a second store write the same file, the one that
    writes a taken `seq` second gets an `EventStoreError` rather than interleaving.

    Batches are queued and written in one transaction, never split across two: when
    `FLUSH_ROWS` rows are queued, `FLUSH_DELAY_S` after the first queued batch (a timer on the
    running event loop), before any `read`, `digest` or `schema_version`, on `flush()` and on
    `close()`. Outside a running loop `append` writes at once. The queue is visible to this
    store's readers at once; a normal end, an exception or SIGINT/SIGTERM close the store,
    which writes it; a process killed with SIGKILL loses at most the batches of the last
    `FLUSH_DELAY_S` (whole batches: the log stays a prefix of what was appended, which resume
    does again).

    A write that fails is never passed over: a failed deferred write is raised as
    `EventStoreError` by the next `append`, `read`, `digest`, `flush` or `close`, and the store
    then takes no more writes (later batches would leave a gap), while reads still show what
    the file holds.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._queue: list[Row] = []
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._lost: EventStoreError | None = None
        self._unreported = False
        with self._errors():
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._ensure_version()
        self._last_seq: int | None = None  # read at the first append: readers need not

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Any SQLite failure (a damaged file can fail on any page, at any read) as one
        `EventStoreError` naming the file."""
        try:
            yield
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise  # a caller's bug (an unbindable value), not a damaged file
        except sqlite3.IntegrityError as exc:
            raise EventStoreError(
                f"{self.path}: {exc}: another writer appended to this log (one writer per file)"
            ) from exc
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
        self._settle()
        with self._errors():
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0])

    def append(self, events: Sequence[Event]) -> list[Event]:
        """Queue one batch (written whole, in one transaction) and return it with its `seq`."""
        self._refuse_if_lost()
        if not events:
            return []
        if self._last_seq is None:
            with self._errors():
                (self._last_seq,) = self._db.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM events"
                ).fetchone()
        first = self._last_seq + 1
        rows = [
            (first + i, e.round, e.agent_id, e.kind, e.scope, e.ts, dumps_payload(e.payload))
            for i, e in enumerate(events)
        ]
        for row in rows:
            _check_bindable(row)  # here, so a bad batch fails alone, not the batches beside it
        self._queue.extend(rows)
        self._last_seq += len(rows)
        loop = _running_loop()
        if loop is None or len(self._queue) >= FLUSH_ROWS or self._timer_loop not in (None, loop):
            self._write(own=len(rows))  # no loop to wait on, a full queue, or a timer's loop gone
        elif self._timer is None:
            self._timer = loop.call_later(FLUSH_DELAY_S, self._deferred_write)
            self._timer_loop = loop
        return [
            Event(e.kind, e.payload, e.round, e.agent_id, e.scope, e.ts, first + i)
            for i, e in enumerate(events)
        ]

    def flush(self) -> None:
        """Write the queued batches now, in one transaction."""
        self._refuse_if_lost()
        self._write()

    def _write(self, own: int = 0) -> None:
        """Write the queue in one transaction; `own`: how many of its rows (the last) belong to
        the caller, who learns of a failure; a failure that loses anyone else's rows stops the
        store's writes."""
        self._cancel_timer()
        if not self._queue:
            return
        rows, self._queue = self._queue, []
        try:
            with self._errors(), _Transaction(self._db):
                self._db.executemany(_INSERT, rows)
        except BaseException as exc:
            if self._db.in_transaction:  # a failed COMMIT can leave it open: its rows unread
                with suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            if len(rows) == own:  # only the caller's batch, refused whole: no gap follows
                self._last_seq = rows[0][0] - 1
                raise
            self._lost = EventStoreError(
                f"{self.path}: writing events seq {rows[0][0]}-{rows[-1][0]} failed "
                f"({type(exc).__name__}: {exc}); the log ends at seq {rows[0][0] - 1} and "
                "this store takes no more writes"
            )
            self._lost.__cause__ = exc
            raise

    def _deferred_write(self) -> None:
        """The timer's write: a failure is kept for the next call on the store to raise (an
        exception here would only reach the event loop's log)."""
        self._timer = self._timer_loop = None
        try:
            self._write()
        except Exception:
            self._unreported = True
        except BaseException:
            self._unreported = True
            raise

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_loop = None

    def _refuse_if_lost(self) -> None:
        if self._lost is not None:
            self._unreported = False
            raise EventStoreError(str(self._lost)) from self._lost.__cause__

    def _settle(self) -> None:
        """Before a read: raise a deferred write's unreported failure, else write the queue."""
        if self._unreported:
            self._refuse_if_lost()
        if self._lost is None:
            self._write()

    def read(self, kinds: Iterable[str] | None = None) -> Iterator[Event]:
        self._settle()
        query, params = _COLUMNS, []
        if kinds is not None:
            params = list(kinds)
            query += f" WHERE kind IN ({','.join('?' * len(params))})"
        return self._events(query + " ORDER BY seq", params)

    def _events(self, query: str, params: list[str]) -> Iterator[Event]:
        with self._errors():
            for seq, rnd, agent_id, kind, scope, ts, payload in self._db.execute(query, params):
                yield Event(kind, json.loads(payload), rnd, agent_id, scope, ts, seq)

    def digest(self) -> tuple[int, str]:
        """How many events the log holds and the SHA-256 of their rows (what the manifest
        records and `metrics --check` verifies): each row's columns in order, tab-separated,
        null as empty, one line per row in `seq` order."""
        self._settle()
        digest = hashlib.sha256()
        count = 0
        with self._errors():
            for row in self._db.execute(_COLUMNS + " ORDER BY seq"):
                digest.update(("\t".join("" if v is None else str(v) for v in row) + "\n").encode())
                count += 1
        return count, digest.hexdigest()

    def close(self) -> None:
        """Write the queue (or raise a deferred write's failure), then close the file."""
        try:
            self._settle()
        finally:
            self._cancel_timer()
            self._db.close()


_SQL_TYPES = (int, float, str, bytes)


def _check_bindable(row: Row) -> None:
    for value in row[1:6]:
        if value is not None and not isinstance(value, _SQL_TYPES):
            raise TypeError(
                f"event {row[3]!r}: a {type(value).__name__} ({value!r}) cannot be stored; "
                "the event's columns take None, int, float or str"
            )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on error, so a batch lands whole or not at all."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
