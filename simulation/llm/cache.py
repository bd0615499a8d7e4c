"""Content-addressed response cache, kept beside the user's runs (`./.personasim/cache`).

A re-run of the same requests is answered here with zero model calls. Keys come from
`Backend.cache_key` (endpoint, model, sampling parameters, messages, response format, sample
index; for the scripted backend also its rule's source), never from timeouts, retries or
concurrency, which do not change an answer. The cache lives with the project that uses it, not
in one folder shared by every checkout on the machine.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random

from personasim.simulation.llm.chat import ChatResponse

__all__ = [
    "CacheError",
    "CacheInfo",
    "ResponseCache",
    "cache_info",
    "clear_cache",
    "default_cache_dir",
]

CACHE_FILE = "responses.sqlite"
SQLITE_FILES = (CACHE_FILE, CACHE_FILE + "-wal", CACHE_FILE + "-shm")


class CacheError(RuntimeError):
    """A cache directory holds something that is not a response cache."""


def default_cache_dir() -> Path:
    """`$PERSONASIM_CACHE_DIR`, else `.personasim/cache` in the working directory (beside
    `runs/`)."""
    if explicit := os.environ.get("PERSONASIM_CACHE_DIR"):
        return Path(explicit)
    return Path(".personasim") / "cache"


@dataclass(frozen=True)
class CacheInfo:
    directory: Path
    entries: int
    size_bytes: int
    """Bytes on disk of the cache's SQLite files (database, write-ahead log, shared memory)."""


def cache_info(directory: str | Path | None = None) -> CacheInfo:
    """Where the cache is, how many responses it holds and its size; creates nothing."""
    directory = Path(directory) if directory else default_cache_dir()
    files = [directory / name for name in SQLITE_FILES if (directory / name).is_file()]
    size = sum(f.stat().st_size for f in files)
    if not (directory / CACHE_FILE).is_file():
        return CacheInfo(directory, 0, size)
    try:
        with closing(sqlite3.connect(directory / CACHE_FILE, timeout=30)) as db:
            (entries,) = db.execute("SELECT COUNT(*) FROM responses").fetchone()
    except sqlite3.DatabaseError as exc:
        raise CacheError(
            f"{directory / CACHE_FILE}: not a personasim response cache ({exc})"
        ) from None
    return CacheInfo(directory, entries, size)


def clear_cache(directory: str | Path | None = None) -> CacheInfo:
    """Delete the cache's files (and its folder when that leaves it empty); returns what was
    removed. Runs are untouched: their answers live in their own event logs."""
    info = cache_info(directory)
    for name in SQLITE_FILES:
        (info.directory / name).unlink(missing_ok=True)
    if info.directory.is_dir() and not any(info.directory.iterdir()):
        info.directory.rmdir()
    return info


BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another (a sweep's workers share one cache file)."""


def _locked(exc: BaseException) -> bool:
    """SQLite answers "database is locked" at once, without waiting out the busy timeout, when
    several processes open a new file together and switch it to WAL: opening is retried."""
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


class ResponseCache:
    """Responses by request key in one SQLite file; each put is committed at once.

    Safe for several processes on one machine at once (WAL, a busy timeout): the workers of a
    sweep share it. Not on a network file system, where SQLite's locks cannot be trusted.
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / CACHE_FILE
        self.on_bad_row: Callable[[str, str], None] = lambda key, error: None
        """Told of each row that cannot be read or written (the runner logs an incident)."""
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
            for attempt in Retrying(  # see _locked
                stop=stop_after_delay(BUSY_TIMEOUT_S),
                wait=wait_random(0.01, 0.1),
                retry=retry_if_exception(_locked),
                reraise=True,
            ):
                with attempt:
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute("PRAGMA synchronous=NORMAL")
                    self._db.execute(
                        "CREATE TABLE IF NOT EXISTS responses "
                        "(key TEXT PRIMARY KEY, response TEXT NOT NULL)"
                    )
        except sqlite3.DatabaseError as exc:
            raise CacheError(
                f"{self.path}: not a usable response cache ({exc}); `personasim cache clear` "
                "removes it, or pass --no-cache or another --cache-dir"
            ) from None

    def get(self, key: str) -> ChatResponse | None:
        """The cached answer, or None; a row that cannot be read is a miss (and reported)."""
        try:
            row = self._db.execute("SELECT response FROM responses WHERE key=?", (key,)).fetchone()
            return ChatResponse.model_validate_json(row[0]) if row else None
        except (sqlite3.DatabaseError, ValueError) as exc:  # ValidationError is a ValueError
            self.on_bad_row(key, f"unreadable cache row: {_first_line(exc)}")
            return None

    def put(self, key: str, response: ChatResponse) -> None:
        """Store an answer; a cache that cannot take it (full, damaged) is reported and
        skipped: the run's own log keeps every answer."""
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, response.model_dump_json())
            )
        except sqlite3.DatabaseError as exc:
            self.on_bad_row(key, f"cache write failed: {_first_line(exc)}")

    def close(self) -> None:
        self._db.close()


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
