"""SIGTERM and SIGINT stop a run cleanly at every phase, from start-up to the last report.

While a run is being written (`stops_raise`: the CLI's `run` from its first line, and every
`run_scenario` call), a stop raises `RunStopped` wherever the main thread is: an import, the
metrics, a report being written. While the rounds play (`stop_on_signals`), a stop cancels the
work instead, so that requests in flight and worker processes end first. Either way the runner
marks the run interrupted with the signal as its reason (or, before the run directory holds a
run, removes what it made), and the CLI prints how to resume and exits 128 + the signal's
number (143, 130) instead of a traceback or a silent death.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

__all__ = ["RunStopped", "stop_on_signals", "stops_raise"]

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_stopping: list[int] = []
"""The signal of the stop under way in this process: a second signal while the first one is
being recorded is let go, so the record of the stop is written whole."""


class RunStopped(BaseException):
    """The run was stopped by a signal; `exit_code` is 128 + its number.

    A `BaseException`, like `KeyboardInterrupt`: no `except Exception` on its way (a scenario
    file's import, a metric's fallback) may swallow a stop."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    if _stopping:
        return
    _stopping.append(signum)
    raise RunStopped(signum)


def _owns_stops() -> bool:
    """Whether this process's stops are ours to handle: in the main thread, with SIGTERM
    handled by no one else (a Ray worker handles its own)."""
    return threading.current_thread() is threading.main_thread() and signal.getsignal(
        signal.SIGTERM
    ) in (signal.SIG_DFL, _raise_stop)


@contextmanager
def stops_raise() -> Iterator[None]:
    """Inside, SIGTERM and SIGINT raise `RunStopped` (once) where the main thread is; the
    handlers found are put back afterwards. Nested uses are one."""
    if not _owns_stops():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    outermost = previous[signal.SIGTERM] is not _raise_stop
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise_stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        if outermost:
            _stopping.clear()


async def stop_on_signals(work: Coroutine[Any, Any, T]) -> T:
    """Run `work`; a SIGTERM or SIGINT cancels it and raises `RunStopped`.

    Only where this process owns its stops (`_owns_stops`); elsewhere `work` runs as it is. The
    handlers found are put back afterwards.
    """
    if not _owns_stops():
        return await work
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    received: list[int] = []

    def stop(signum: int) -> None:
        if not received and not _stopping:
            received.append(signum)
            if previous[signal.SIGTERM] is _raise_stop:  # stops_raise clears it at its end
                _stopping.append(signum)
            task.cancel()

    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, stop, signum)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):  # a loop without signals
            pass
    try:
        return await task
    except asyncio.CancelledError:
        if received:
            raise RunStopped(received[0]) from None
        raise
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
            if previous[signum] is not None:
                signal.signal(signum, previous[signum])
