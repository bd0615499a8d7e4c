"""Endpoint limits a run can share with other runs: the seam between `LLMClient` and a sweep.

A run on its own caps its requests with an asyncio semaphore and an evenly paced
`aiolimiter.AsyncLimiter` inside `LLMClient`. A sweep on several workers needs one cap per
endpoint across all of them, so the client accepts an `EndpointLimiter` in their place: the
same two objects (`slots`, an async context manager entered around every HTTP attempt, and
`pacer`, whose `acquire()` waits for the next request-per-minute slot), backed by anything —
`simulation/runs/ray_sweep.py` backs them with one Ray actor per endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

__all__ = ["EndpointLimiter", "Pacer", "endpoint_key"]


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


def endpoint_key(identity: Mapping[str, Any]) -> str | None:
    """`base_url model` for a backend that calls an endpoint; None for one that does not
    (the scripted behaviour model answers in-process and needs no limit)."""
    if "base_url" not in identity:
        return None
    return f"{identity['base_url']} {identity.get('model', '')}".strip()
