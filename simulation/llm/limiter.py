"""Endpoint limits a run can share with other runs: the seam between `LLMClient` and a sweep.

A run on its own caps its requests with an asyncio semaphore and an evenly paced
`aiolimiter.AsyncLimiter` inside `LLMClient`. A sweep on several workers needs one cap per
endpoint across all of them, so the client accepts an `EndpointLimiter` in their place: the
same two objects (`slots`, an async context manager entered around every HTTP attempt, and
`pacer`, whose `acquire()` waits for the next request-per-minute slot), backed by anything —
`simulation/runs/sweeps/ray_sweep.py` backs them with one Ray actor per endpoint. The replicas of an
endpoint pool (simulation/llm/endpoint_pool.py) each have one, made by a `LimiterFactory`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from aiolimiter import AsyncLimiter

__all__ = ["EndpointLimiter", "LimiterFactory", "LocalLimiter", "Pacer", "endpoint_key"]


class Pacer(Protocol):
    """Waits until the next request may be sent (the shape of `aiolimiter.AsyncLimiter`)."""

    async def acquire(self) -> None: ...


class EndpointLimiter(Protocol):
    """Concurrency slots and request pacing for one endpoint, possibly shared across runs."""

    @property
    def slots(self) -> AbstractAsyncContextManager[Any]:
        """Entered around every attempt; reusable and safe under concurrent use."""
        ...

    @property
    def pacer(self) -> Pacer | None:
        """None when the endpoint has no requests-per-minute limit."""
        ...


class LocalLimiter:
    """An `EndpointLimiter` held in this process: an asyncio semaphore of `concurrency` slots
    and, with a requests-per-minute limit, an evenly paced `AsyncLimiter` (a bucket of one, so a
    minute's quota is not spent in a first burst)."""

    def __init__(self, concurrency: int, requests_per_minute: float | None = None) -> None:
        self.slots = asyncio.Semaphore(concurrency)
        self.pacer = AsyncLimiter(1, 60 / requests_per_minute) if requests_per_minute else None


LimiterFactory = Callable[[str, int, "float | None"], EndpointLimiter]
"""(endpoint key, concurrency, requests per minute) → that endpoint's limiter."""


def endpoint_key(identity: Mapping[str, Any]) -> str | None:
    """`base_url model` for a backend that calls an endpoint, `pool:NAME model` for a pool of
    replicas (its run-wide limit); None for one that calls none (the scripted behaviour model
    answers in-process and needs no limit)."""
    if "base_url" in identity:
        return f"{identity['base_url']} {identity.get('model', '')}".strip()
    if "pool" in identity:
        return f"pool:{identity['pool']} {identity.get('model', '')}".strip()
    return None
