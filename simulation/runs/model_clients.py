"""`build_models`: a run's model clients, built one way by the run's driver and by each
decision worker (`--workers`): one `LLMClient` per backend, with the run's cache, retry policy
and limits, writing its calls and incidents to the run's log, and the backend's request keys
kept where the run continues on another endpoint (`keep_request_keys`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from personasim.simulation.llm.cache import ResponseCache
from personasim.simulation.llm.chat import Backend
from personasim.simulation.llm.client import LLMClient, ModelPool, RetryPolicy
from personasim.simulation.log.event_log import EventLog
from personasim.simulation.runs.resume import keep_request_keys

__all__ = ["ClientSettings", "build_models"]


@dataclass(frozen=True)
class ClientSettings:
    """What every client of a run shares: its cache, retry policy and limits (a worker's
    part of them in a worker), and the request-key mapping of a run resumed elsewhere."""

    cache: ResponseCache | None
    retry: RetryPolicy
    concurrency: int
    requests_per_minute: float | None
    rekey: tuple[str, str] | None = None


def build_models(
    main_spec: str,
    main_backend: Backend,
    backend_for: Callable[[str], Backend],
    log: EventLog,
    settings: ClientSettings,
    *,
    per_backend: Callable[[Backend], dict[str, Any]] | None = None,
    **client_options: Any,
) -> ModelPool:
    """The run's model pool: the main model's client now (on `main_backend`, which the run
    has already described in its manifest), each role's on first use (`backend_for`).
    `per_backend`: options that depend on the backend (its endpoint's limiter);
    `client_options`: the driver's own (a resumed run's replay, a source run's answers)."""

    def client_for(backend: Backend) -> LLMClient:
        keep_request_keys(backend, settings.rekey)
        return LLMClient(
            backend,
            cache=settings.cache,
            retry=settings.retry,
            concurrency=settings.concurrency,
            requests_per_minute=settings.requests_per_minute,
            emit=log.emit,
            incident=log.incident,
            **client_options,
            **(per_backend(backend) if per_backend is not None else {}),
        )

    main = client_for(main_backend)
    return ModelPool(main, lambda spec: client_for(backend_for(spec)), main_spec=main_spec)
