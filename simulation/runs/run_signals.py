"""SIGTERM and SIGINT stop a run cleanly: the work is cancelled, the runner closes the log and
marks the run interrupted with the signal as its reason, and the CLI prints how to resume and
exits 128 + the signal's number (143, 130) instead of a traceback.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["RunStopped", "stop_on_signals"]

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class RunStopped(Exception):
    """The run was stopped by a signal; `exit_code` is 128 + its number."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


async def stop_on_signals(work: Coroutine[Any, Any, T]) -> T:
    """Run `work`; a SIGTERM or SIGINT cancels it and raises `RunStopped`.

    Only where this process owns its stops: in the main thread, with SIGTERM not handled by
    anyone else (a Ray worker handles its own). Elsewhere `work` runs as it is. The handlers
    found are put back afterwards.
    """
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    if (
        threading.current_thread() is not threading.main_thread()
        or previous[signal.SIGTERM] != signal.SIG_DFL
    ):
        return await work
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    received: list[int] = []

    def stop(signum: int) -> None:
        if not received:
            received.append(signum)
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
