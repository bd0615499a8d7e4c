"""One writer per run directory: an OS file lock held while a process writes a run.

`flock` on `RUN_DIR/.personasim.lock`: the kernel drops it when the process ends, however it
ends (a SIGKILL included), so a killed run never leaves a stale lock behind. The file also says
who holds it (pid, host, since) so that a second writer, refused at once, can name the holder,
and a reader can say that the run is still being written.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

__all__ = [
    "LOCK_FILE",
    "RunLock",
    "RunLockedError",
    "describe_holder",
    "lock_holder",
    "locked_message",
    "refuse_if_locked",
]

LOCK_FILE = ".personasim.lock"

_PROBE_TRIES = 20
"""A reader probes the lock with a shared lock for a moment; a writer starting in that moment
tries again this many times, 10 ms apart, before it calls the directory taken."""


class RunLockedError(RuntimeError):
    """Another process is writing this run directory."""


class RunLock:
    """The exclusive lock of one run directory; `acquire` raises `RunLockedError` at once when
    another process holds it."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self, then: str = "then resume") -> None:
        """Take the lock, or raise `RunLockedError` naming its holder (`then`: what the user
        does once it is free). A lock file that cannot be written (a full disk, a read-only
        folder) is an `OSError` naming it, with nothing held."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None
        for _ in range(_PROBE_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(0.01)
        else:
            os.close(fd)
            raise RunLockedError(locked_message(self.run_dir, lock_holder(self.run_dir), then))
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": _now()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(holder).encode(), 0)
        except OSError as exc:
            os.close(fd)  # closing drops the lock
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None
        self._fd = fd

    def release(self) -> None:
        """Let go of the lock (the file stays: removing it would race with a new writer)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


def lock_holder(run_dir: str | Path) -> dict[str, Any] | None:
    """Who is writing `run_dir` now (pid, host, since), or None when no process is.

    Probed with a shared lock taken and dropped at once, so readers never block a writer.
    """
    path = Path(run_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None  # no lock file: never written by this version, or not a run
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        holder = {}
    return holder if isinstance(holder, dict) else {}


def refuse_if_locked(run_dir: str | Path, then: str = "then resume") -> None:
    """`RunLockedError` naming the holder when another process writes `run_dir` now: a check a
    command makes before its slow start-up, so a second writer is told at once (the lock it
    takes later is what makes the refusal certain)."""
    if (holder := lock_holder(run_dir)) is not None:
        raise RunLockedError(locked_message(Path(run_dir), holder, then))


def locked_message(run_dir: Path, holder: dict[str, Any] | None, then: str) -> str:
    return (
        f"{run_dir} is being written by another personasim process "
        f"({describe_holder(holder)}); wait for it to end or stop it, {then}"
    )


def describe_holder(holder: dict[str, Any] | None) -> str:
    """`pid 123 on HOST, since 2026-…` for a message."""
    if not holder:
        return "holder unknown"
    return (
        f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, "
        f"since {holder.get('since', '?')}"
    )


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
