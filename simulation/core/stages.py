"""Named stages of a long step (an import: reading, events, each resampling, reports), shown to
whoever listens: a step with no progress bar of decisions still says what it is doing."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from rich.console import Console

__all__ = ["printed_stages", "stage", "stage_listener"]

_LISTENER: ContextVar[Callable[[str], None] | None] = ContextVar("stage_listener", default=None)


def stage(text: str) -> None:
    """Announce the stage that starts now (nothing happens when no one listens)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(text)


@contextmanager
def stage_listener(callback: Callable[[str], None]) -> Iterator[None]:
    """Send every `stage` announced inside the block to `callback`."""
    token = _LISTENER.set(callback)
    try:
        yield
    finally:
        _LISTENER.reset(token)


@contextmanager
def printed_stages(console: Console | None = None, enabled: bool = True) -> Iterator[None]:
    """Print each stage on stderr with the seconds elapsed since the block began."""
    if not enabled:
        yield
        return
    out = console or Console(stderr=True)
    start = time.perf_counter()
    with stage_listener(lambda text: out.print(f"[{time.perf_counter() - start:6.1f} s] {text}")):
        yield
