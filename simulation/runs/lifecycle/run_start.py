"""Starting and stopping the writing of a run directory, so that a failed start leaves nothing.

What can fail before a run's first event fails before its directory is made (the response
cache is opened first, the inputs are hashed first); what fails after the directory is made
but before the first event is logged (a full disk, a signal) removes the directory again when
this process made it, so the same command can simply be run again. From the first event on, a
run that stops is kept and marked interrupted with the reason (`finish_interrupted`), to be
resumed.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from personasim.simulation.llm.cache import ResponseCache, default_cache_dir
from personasim.simulation.log.event_log import EventLog
from personasim.simulation.log.events import EventStore
from personasim.simulation.log.sqlite_store import EventStoreError, SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_dir import (
    EVENTS_FILE,
    RunError,
    finish_manifest,
    make_writable_dir,
    plan_run_dir,
)
from personasim.simulation.runs.lifecycle.run_lock import LOCK_FILE, RunLock, RunLockedError
from personasim.simulation.runs.lifecycle.run_signals import RunStopped
from personasim.simulation.runs.lifecycle.validity import ValidityLimits

__all__ = [
    "RunDirClaim",
    "check_log_exists",
    "describe_stop",
    "finish_interrupted",
    "has_first_event",
    "log_bad_cache_row",
    "open_cache",
    "open_log",
]


def open_cache(use_cache: bool, cache_dir: str | Path | None) -> ResponseCache | None:
    """The response cache, opened before the run directory is made: a cache folder that cannot
    be written or a file in it that is no cache is an error that leaves no run directory."""
    if not use_cache:
        return None
    directory = Path(cache_dir or default_cache_dir())
    make_writable_dir(directory, "--cache-dir")
    return ResponseCache(directory)


class RunDirClaim:
    """The run directory this process writes: made (or, to resume, found) and locked on
    entry; released on exit. A new directory is removed again on a failure before `keep` was
    called (the run's first event), so a failed start leaves nothing behind."""

    def __init__(self, out: str | Path | None, scenario: str, resume: bool) -> None:
        self.out, self.scenario, self.resume = out, scenario, resume
        self.run_dir = Path()
        self._made: Path | None = None  # the first folder this process made
        self._had_lock = False
        self._kept = resume
        self._lock: RunLock | None = None

    def __enter__(self) -> Path:
        self.run_dir = plan_run_dir(self.out, self.scenario, self.resume)
        self._had_lock = (self.run_dir / LOCK_FILE).exists()
        self._made = make_writable_dir(self.run_dir, "--out")
        lock = RunLock(self.run_dir)
        try:
            lock.acquire()
        except RunLockedError:
            raise  # another process took it first: what is there is its own
        except BaseException as exc:
            if not self.resume:
                self._abandon()
                exc.removed_run_dir = self.run_dir  # type: ignore[attr-defined]  # CLI message
            raise
        self._lock = lock
        return self.run_dir

    def keep(self) -> None:
        """The run has its first event: from now on a failure leaves the directory, marked."""
        self._kept = True

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, *_: object
    ) -> None:
        if exc is not None and not self._kept:
            self._abandon()
            exc.removed_run_dir = self.run_dir  # type: ignore[attr-defined]  # CLI message
        if self._lock is not None:
            self._lock.release()

    def _abandon(self) -> None:
        """Remove what this process made: the folders it created, or, in an empty directory
        that was there before, every file it put there (the lock file too, if it was new).
        A run directory being resumed is never touched."""
        if self.resume:
            return
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            return
        if not self.run_dir.is_dir():
            return
        for entry in self.run_dir.iterdir():
            if entry.name == LOCK_FILE and self._had_lock:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def check_log_exists(run_dir: Path) -> None:
    """Before a resume rewrites anything: a run directory whose log is gone cannot be resumed
    (opening it would start an empty log)."""
    path = run_dir / EVENTS_FILE
    if not path.is_file():
        raise RunError(f"{path}: the log is missing; start a new run or restore it")


@contextmanager
def open_log(run_dir: Path, resume: bool) -> Iterator[SQLiteEventStore]:
    if resume:
        check_log_exists(run_dir)
    with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        yield store


def has_first_event(store: EventStore) -> bool:
    """Whether the log holds any event (a store that cannot be read is taken to hold some, so
    that what it holds is kept)."""
    try:
        return next(iter(store.read(kinds=("run.started",))), None) is not None
    except (OSError, EventStoreError):
        return True


def log_bad_cache_row(log: EventLog) -> Callable[[str, str], None]:
    """A cache row that cannot be read is a miss, and an incident in the log."""

    def record(key: str, error: str) -> None:
        log.incident("cache.bad_row", {"request_key": key, "error": error})

    return record


def finish_interrupted(
    run_dir: Path,
    manifest: dict[str, Any],
    store: EventStore,
    validity: ValidityLimits,
    exc: BaseException,
) -> None:
    """Mark the run interrupted with the reason; when even that cannot be written (a full
    disk), the original error is what the user sees, and it says so."""
    exc.run_dir = run_dir  # type: ignore[attr-defined]  # for the CLI's message
    try:
        finish_manifest(run_dir, manifest, store, validity, "interrupted", describe_stop(exc))
    except (OSError, EventStoreError) as again:
        exc.manifest_error = str(again)  # type: ignore[attr-defined]


def describe_stop(exc: BaseException) -> str:
    """The manifest's `error`: why the run stopped."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted by the user"
    if isinstance(exc, RunStopped):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
