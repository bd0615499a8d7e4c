"""`build_models`: a run's model clients, built one way by the run's driver and by each
decision worker (`--workers`), and by the audit's reader role: one `LLMClient` per backend, with
the run's cache, retry policy and limits (a worker's part of them in a worker), writing its
calls and incidents to the run's log where there is one, and the backend's request keys kept
where the run continues on another endpoint (`keep_request_keys`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from personasim.simulation.llm.cache import ResponseCache
from personasim.simulation.llm.chat import Backend
from personasim.simulation.llm.client import LLMClient, ModelPool
from personasim.simulation.log.event_log import EventLog
from personasim.simulation.runs.lifecycle.resume import keep_request_keys
from personasim.simulation.runs.lifecycle.run_config import RunConfig

__all__ = ["build_models"]


def build_models(
    config: RunConfig,
    log: EventLog | None,
    cache: ResponseCache | None,
    *,
    rekey: tuple[str, str] | None = None,
    worker: tuple[int, int] | None = None,
    main_backend: Backend | None = None,
    main_spec: str | None = None,
    per_backend: Callable[[Backend], dict[str, Any]] | None = None,
    **client_options: Any,
) -> ModelPool:
    """The run's model pool: the main model's client now, each role's on first use, every
    backend built from `config` (`RunConfig.backend`).

    `log`: where calls and incidents are written (None: nowhere, as for an audit, which only
    reads its run). `rekey`: the request-key mapping of a run resumed at another endpoint.
    `worker`: (index, count) of a decision worker, which takes its part of each limit and of
    each pool.
    `main_backend`, `main_spec`: the driver's main backend (which the manifest already
    describes; a backend object the caller built) and its spec (default `config.model`).
    `per_backend`: options that depend on the backend (its endpoint's limiter);
    `client_options`: the driver's own (a resumed run's replay, a source run's answers)."""
    concurrency, requests_per_minute = config.limits.share(worker)

    def backend_for(spec: str) -> Backend:
        backend = config.backend(spec)
        take_share = getattr(backend, "take_share", None)  # a pool: this worker's part of it
        if worker is not None and take_share is not None:
            take_share(*worker, config.limits.concurrency)
        return backend

    def client_for(backend: Backend) -> LLMClient:
        keep_request_keys(backend, rekey)
        return LLMClient(
            backend,
            cache=cache,
            retry=config.limits.retry,
            concurrency=concurrency,
            requests_per_minute=requests_per_minute,
            emit=log.emit if log else None,
            incident=log.incident if log else None,
            **client_options,
            **(per_backend(backend) if per_backend is not None else {}),
        )

    main = client_for(main_backend or backend_for(config.model))
    return ModelPool(
        main, lambda spec: client_for(backend_for(spec)), main_spec=main_spec or config.model
    )
