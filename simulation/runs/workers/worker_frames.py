"""Frames between a run's driver and its worker processes (decision_workers.py): length-
prefixed pickles over a pipe, and errors sent as their parts."""

from __future__ import annotations

import asyncio
import os
import pickle
import struct
from collections.abc import Callable
from typing import Any

from personasim.simulation.llm.chat import LLMError, PermanentLLMError, TransientLLMError

__all__ = ["Outbox", "error_record", "frame", "read_first_frame", "read_frame", "rebuilt"]

_HEADER = struct.Struct("!I")
_ERRORS: dict[str, type[LLMError]] = {
    "transient": TransientLLMError,
    "permanent": PermanentLLMError,
    "llm": LLMError,
}


class Outbox:
    """Frames written at most once per turn of the event loop: one system call for all the
    messages a turn produced, not one each."""

    def __init__(self, write: Callable[[bytes], Any]) -> None:
        self._write = write
        self._frames: list[bytes] = []

    def put(self, message: Any) -> None:
        if not self._frames:
            asyncio.get_running_loop().call_soon(self.flush)
        self._frames.append(frame(message))

    def flush(self) -> None:
        frames, self._frames = self._frames, []
        if frames:
            self._write(b"".join(frames))


def frame(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> Any:
    (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    return pickle.loads(await reader.readexactly(size))


def error_record(exc: BaseException) -> tuple[str, str, float | None]:
    """An exception as (kind, message, retry_after), rebuilt in the driver (`_rebuilt`): our
    error classes do not pickle their extra fields."""
    if isinstance(exc, TransientLLMError):
        return "transient", str(exc), exc.retry_after
    if isinstance(exc, PermanentLLMError):
        return "permanent", str(exc), None
    if isinstance(exc, LLMError):
        return "llm", str(exc), None
    return "error", f"{type(exc).__name__}: {exc}", None


def rebuilt(record: tuple[str, str, float | None], pid: int) -> Exception:
    kind, message, retry_after = record
    if kind == "transient":
        return TransientLLMError(message, retry_after)
    if kind in _ERRORS:
        return _ERRORS[kind](message)
    return RuntimeError(f"in worker process {pid}: {message}")


def _read_exactly(size: int) -> bytes:
    """Exactly `size` bytes of stdin, unbuffered (a worker's first frame; its event loop reads
    the rest)."""
    data = b""
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            raise SystemExit("error: the driver closed the worker's input before its spec")
        data += chunk
    return data


def read_first_frame() -> Any:
    """A worker's first frame, read before its event loop starts."""
    (size,) = _HEADER.unpack(_read_exactly(_HEADER.size))
    return pickle.loads(_read_exactly(size))
