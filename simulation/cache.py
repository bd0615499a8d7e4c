"""Content-addressed response cache, shared by every run on the machine.

A re-run of the same requests is answered here with zero model calls. Keys come from
`Backend.cache_key` (endpoint, model, sampling parameters, messages, response format, sample
index), never from timeouts, retries or concurrency, which do not change an answer.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .llm import ChatResponse

__all__ = ["ResponseCache", "default_cache_dir"]


def default_cache_dir() -> Path:
    """`$PERSONASIM_CACHE_DIR`, else `$XDG_CACHE_HOME/personasim`, else `~/.cache/personasim`."""
    if explicit := os.environ.get("PERSONASIM_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "personasim"


class ResponseCache:
    """Responses by request key in one SQLite file; each put is committed at once."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "responses.sqlite"
        self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, response TEXT NOT NULL)"
        )

    def get(self, key: str) -> ChatResponse | None:
        row = self._db.execute("SELECT response FROM responses WHERE key=?", (key,)).fetchone()
        return ChatResponse.model_validate_json(row[0]) if row else None

    def put(self, key: str, response: ChatResponse) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, response.model_dump_json())
        )

    def close(self) -> None:
        self._db.close()
