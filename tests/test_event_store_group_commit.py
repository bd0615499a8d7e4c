"""Group commit in the SQLite event store: batches queued inside a running event loop are
written together, whole, before any read and at close; a failed deferred write is raised by the
next call, never dropped. Real SQLite files; a second connection plays another process."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from personasim.simulation import Event, EventStoreError, SQLiteEventStore
from personasim.simulation.log import sqlite_store
from personasim.simulation.log.sqlite_store import FLUSH_DELAY_S


def _batch(tag: str, size: int = 3) -> list[Event]:
    return [Event("x", {"tag": tag, "i": i}, scope=tag) for i in range(size)]


def _seen(path: Path) -> list[tuple[int, str]]:
    """What another connection (another process, say) finds in the file."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT seq, scope FROM events ORDER BY seq").fetchall()
    db.close()
    return rows


class _Connection(sqlite3.Connection):
    """A real connection that records its statements and can be told to fail its writes."""

    statements: list[str]
    fail_writes = False

    def executemany(self, sql: str, rows: Any, /) -> sqlite3.Cursor:
        if self.fail_writes and sql.lstrip().upper().startswith("INSERT INTO EVENTS"):
            raise sqlite3.OperationalError("disk I/O error (injected)")
        return super().executemany(sql, rows)


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[_Connection]]:
    """Every connection the store opens, tracing its statements."""
    opened: list[_Connection] = []
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = connect(*args, **kwargs, factory=_Connection)
        db.statements = []
        db.set_trace_callback(db.statements.append)
        opened.append(db)
        return db

    monkeypatch.setattr(sqlite_store.sqlite3, "connect", traced)
    yield opened


def _commits(db: _Connection) -> int:
    return sum(1 for s in db.statements if s.strip().upper() == "COMMIT")


def _in_loop(work: Callable[[], Any]) -> Any:
    async def run() -> Any:
        return await work()

    return asyncio.run(run())


def test_batches_inside_a_loop_coalesce_into_few_transactions(
    tmp_path: Path, connections: list[_Connection]
) -> None:
    path = tmp_path / "events.sqlite"
    store = SQLiteEventStore(path)
    (db,) = connections
    before = _commits(db)

    async def work() -> None:
        for k in range(100):
            store.append(_batch(f"b{k}"))
            await asyncio.sleep(0)  # other tasks run between batches, as in a round

    _in_loop(work)
    store.close()
    commits = _commits(db) - before
    assert 1 <= commits <= 5, f"100 appends took {commits} transactions"
    assert [seq for seq, _ in _seen(path)] == list(range(1, 301))


def test_seq_is_contiguous_across_batches_and_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"

    async def append_three(store: SQLiteEventStore, tag: str) -> list[int]:
        return [e.seq or 0 for k in range(3) for e in store.append(_batch(f"{tag}{k}", 2))]

    with SQLiteEventStore(path) as store:
        first = _in_loop(lambda: append_three(store, "a"))
    with SQLiteEventStore(path) as store:
        second = _in_loop(lambda: append_three(store, "b"))
        assert [e.seq for e in store.read()] == list(range(1, 13))
    assert first + second == list(range(1, 13))
    assert [seq for seq, _ in _seen(path)] == list(range(1, 13))


def test_reads_see_queued_batches_without_a_flush(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    store = SQLiteEventStore(path)

    async def work() -> tuple[list[tuple[int, str]], list[str | None], tuple[int, str]]:
        store.append(_batch("a"))
        store.append(_batch("b"))
        queued = _seen(path)  # not yet written: the timer has not fired
        scopes = [e.scope for e in store.read()]
        return queued, scopes, store.digest()

    queued, scopes, (count, _) = _in_loop(work)
    assert queued == []
    assert scopes == ["a"] * 3 + ["b"] * 3 and count == 6
    assert len(_seen(path)) == 6  # the read wrote them
    store.close()


def test_the_timer_writes_the_queue_without_any_call(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    with SQLiteEventStore(path) as store:

        async def work() -> int:
            store.append(_batch("a"))
            for _ in range(200):  # the window is FLUSH_DELAY_S; a busy machine may be slower
                await asyncio.sleep(FLUSH_DELAY_S / 2)
                if _seen(path):
                    break
            return len(_seen(path))

        assert _in_loop(work) == 3


def test_a_batch_is_never_split_across_transactions(
    tmp_path: Path, connections: list[_Connection], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "FLUSH_ROWS", 4)  # batches of 3 overflow it
    path = tmp_path / "events.sqlite"
    store = SQLiteEventStore(path)
    (db,) = connections
    before = _commits(db)

    async def work() -> list[int]:
        visible = []
        for k in range(10):
            store.append(_batch(f"b{k}"))
            visible.append(len(_seen(path)))
        return visible

    visible = _in_loop(work)
    store.close()
    assert all(n % 3 == 0 for n in visible) and visible[-1] >= 27
    assert _commits(db) - before == 5  # every second append fills the queue (6 rows ≥ 4)
    assert [scope for _, scope in _seen(path)] == [f"b{k}" for k in range(10) for _ in range(3)]


def test_close_writes_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    store = SQLiteEventStore(path)

    async def work() -> int:
        store.append(_batch("a"))
        store.close()
        return len(_seen(path))

    assert _in_loop(work) == 3


def test_without_a_running_loop_append_writes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    with SQLiteEventStore(path) as store:
        store.append(_batch("a"))
        assert len(_seen(path)) == 3
        store.append(_batch("b"))
        assert [seq for seq, _ in _seen(path)] == list(range(1, 7))


def test_a_bad_batch_fails_alone_inside_a_loop(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    store = SQLiteEventStore(path)

    async def work() -> None:
        store.append(_batch("a"))
        with pytest.raises(TypeError, match="cannot be stored"):
            store.append([*_batch("bad", 2), Event("x", {}, round={"no": 1})])  # type: ignore[arg-type]
        store.append(_batch("c"))

    _in_loop(work)
    store.close()
    assert _seen(path) == [(i + 1, tag) for i, tag in enumerate(["a"] * 3 + ["c"] * 3)]


@pytest.mark.parametrize("next_call", ["append", "read", "digest", "flush", "close"])
def test_a_failed_deferred_write_is_raised_by_the_next_call(
    tmp_path: Path, connections: list[_Connection], next_call: str
) -> None:
    path = tmp_path / "events.sqlite"
    store = SQLiteEventStore(path)
    (db,) = connections
    store.append(_batch("kept"))  # no loop: written at once
    loop_errors: list[dict[str, Any]] = []

    async def work() -> list[int]:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: loop_errors.append(ctx))
        returned = [e.seq or 0 for e in store.append(_batch("lost"))]
        db.fail_writes = True
        await asyncio.sleep(FLUSH_DELAY_S * 4)  # the timer's write fails
        db.fail_writes = False
        return returned

    assert _in_loop(work) == [4, 5, 6]  # numbered when queued ...
    assert loop_errors == [] and [seq for seq, _ in _seen(path)] == [1, 2, 3]  # ... not written
    calls: dict[str, Callable[[], object]] = {
        "append": lambda: store.append(_batch("after")),
        "read": lambda: list(store.read()),
        "digest": store.digest,
        "flush": store.flush,
        "close": store.close,
    }
    with pytest.raises(EventStoreError, match=r"seq 4-6 failed .*disk I/O error \(injected\)"):
        calls[next_call]()
    if next_call != "close":
        with pytest.raises(EventStoreError, match="takes no more writes"):
            store.append(_batch("after"))  # a later batch would leave a gap
        assert [e.scope for e in store.read()] == ["kept"] * 3  # what the file holds
        store.close()  # reported already: closes quietly
    assert [scope for _, scope in _seen(path)] == ["kept"] * 3
    with SQLiteEventStore(path) as reopened:
        assert [e.seq for e in reopened.append(_batch("next"))] == [4, 5, 6]


def test_a_second_writer_of_the_file_is_refused_not_interleaved(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    with SQLiteEventStore(path) as first, SQLiteEventStore(path) as second:
        first.append(_batch("a"))
        second.append(_batch("b"))  # its counter was read after the first's write: seq 4-6
        with pytest.raises(EventStoreError, match="another writer appended"):
            first.append(_batch("c"))  # seq 4-6 again
    assert [scope for _, scope in _seen(path)] == ["a"] * 3 + ["b"] * 3
