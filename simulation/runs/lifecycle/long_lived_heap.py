"""Keep the garbage collector off what a run builds before its rounds (agents, personas, a
worker's models)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["long_lived_heap"]


@contextmanager
def long_lived_heap() -> Iterator[None]:
    """Freeze what exists and collect the youngest generation less often, until the block ends.

    With hundreds of decisions in flight, objects live long enough to reach the older
    generations, and every collection rescans the whole heap: measured at about half the CPU of
    a decision (benchmarks/). Freezing what setup built and collecting the youngest generation
    less often removes most of it; both are undone when the block ends.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
