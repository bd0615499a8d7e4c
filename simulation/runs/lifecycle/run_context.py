"""`RunContext`: what a run holds from its start to its end, and how it lets go of it.

`async with RunContext(config, scenario, manifest) as ctx` opens the response cache and claims
the run directory (made or found, and locked: run_start.py); `resume` checks a run being
resumed against this one; `open` opens the event store and log and builds the model clients;
`finish` writes the metrics, reports and the complete manifest. On the way out, whatever
happened: a run that stopped with events in its log is kept and marked interrupted with the
reason (`finish_interrupted`), a run that stopped before is removed (`RunDirClaim`), the store,
the lock and the cache are closed, and a stop after the run was complete says so
(`complete_run_dir`, for the CLI's message).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Collection
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

from personasim.simulation.core.scenario import Scenario
from personasim.simulation.llm.cache import ResponseCache
from personasim.simulation.llm.chat import Backend
from personasim.simulation.llm.client import ModelPool
from personasim.simulation.llm.limiter import EndpointLimiter
from personasim.simulation.log.event_log import EventLog, ResumeState
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.model_clients import build_models
from personasim.simulation.runs.lifecycle.resume import (
    already_complete,
    endpoint_rekey,
    has_lost_calls,
    load_resumable,
    log_is_complete,
)
from personasim.simulation.runs.lifecycle.run_config import RunConfig
from personasim.simulation.runs.lifecycle.run_dir import (
    RunResult,
    compute_run_metrics,
    finish_manifest,
    write_manifest,
    write_metrics,
    write_run_reports,
)
from personasim.simulation.runs.lifecycle.run_signals import RunStopped
from personasim.simulation.runs.lifecycle.run_start import (
    RunDirClaim,
    finish_interrupted,
    has_first_event,
    log_bad_cache_row,
    open_cache,
    open_log,
)
from personasim.simulation.runs.lifecycle.scenario_file import check_same_scenario_file
from personasim.simulation.runs.lifecycle.source_run import SourceRun

__all__ = ["RunContext"]


class RunContext:
    """One run's cache, directory claim, event store, log and model clients, for its lifetime.

    `manifest` is the run's, as checked inputs describe it (not yet written): the context
    completes it (a resumed run's start time, endpoint reports) and writes it."""

    def __init__(self, config: RunConfig, scenario: str, manifest: dict[str, Any]) -> None:
        self.config, self.scenario, self.manifest = config, scenario, manifest
        self.run_dir = Path()
        self.cache: ResponseCache | None = None
        self.previous: dict[str, Any] | None = None
        """A resumed run's manifest as it was (None for a new run)."""
        self.store: SQLiteEventStore | None = None
        self.log: EventLog | None = None
        self.models: ModelPool | None = None
        self.rekey: tuple[str, str] | None = None
        self.retried: list[Any] = []
        """The units `retry_failed` asks again."""
        self._claim = RunDirClaim(config.out, scenario, config.resume)
        self._stack = ExitStack()
        self._models_open = False
        self._finished = False

    async def __aenter__(self) -> RunContext:
        self.cache = open_cache(self.config.use_cache, self.config.cache_dir)  # before the
        try:  # run directory: a cache that cannot be used leaves none (run_start.py)
            self.run_dir = self._stack.enter_context(self._claim)
        except BaseException:
            self._close_cache()
            raise
        return self

    def resume(self, params_at_default: Collection[str], scenario_file: Any) -> RunResult | None:
        """With `config.resume`: the run in the directory checked against this one (its
        fingerprint, input files, scenario file); the run's own result when its log shows it
        complete and there is nothing to retry, else None (the run goes on)."""
        config = self.config
        if not config.resume:
            return None
        previous = load_resumable(
            self.run_dir, self.manifest, config.allow_endpoint_change, params_at_default
        )
        check_same_scenario_file(previous.get("scenario_file"), scenario_file, self.run_dir)
        complete = log_is_complete(self.run_dir, previous)
        retrying = config.retry_failed and complete and has_lost_calls(self.run_dir)
        if complete and not retrying:
            return already_complete(self.run_dir, previous, config.retry_failed)
        self.manifest["created_at"] = previous["created_at"]
        self.previous = previous
        return None

    def open(
        self,
        main_spec: str,
        main_backend: Backend,
        *,
        limiter_for: Callable[[Backend], EndpointLimiter | None] | None = None,
        source: SourceRun | None = None,
    ) -> None:
        """Open the event store (a resumed run's, replayed) and log, write the manifest, and
        build the model clients (`build_models`); from here a failure marks the run
        interrupted when its log holds an event."""
        resumed = self.previous is not None
        self.rekey = endpoint_rekey(self.manifest)
        self.store = store = self._stack.enter_context(open_log(self.run_dir, resume=resumed))
        write_manifest(self.run_dir, self.manifest)
        resume_state = ResumeState.from_store(store) if resumed else None
        if resume_state and self.config.retry_failed:
            self.retried = resume_state.retry_failed()
        self.log = log = EventLog(store, resume_state)
        if self.cache is not None:
            self.cache.on_bad_row = log_bad_cache_row(log)
        self.models = build_models(
            self.config,
            log,
            self.cache,
            rekey=self.rekey,
            main_backend=main_backend,
            main_spec=main_spec,
            per_backend=lambda backend: {"limiter": limiter_for(backend) if limiter_for else None},
            replay=log.logged_response if resume_state else None,
            recorded=source.answerer(log) if source else None,
        )
        self._models_open = True

    async def close_models(self) -> None:
        """The endpoint pools' reports into the manifest, and the clients closed (when the
        rounds end, however they end)."""
        if self.models is None or not self._models_open:
            return
        self._models_open = False
        if reports := self.models.endpoint_reports():
            self.manifest["endpoints"] = reports
        await self.models.aclose()

    def finish(self, scenario: type[Scenario]) -> dict[str, Any]:
        """The run is complete: its metrics and reports written, its manifest marked complete
        (all read from the log); returns the metrics."""
        assert self.store is not None, "open() before finish()"
        self.models = None  # agents and models hold each other: collected here, so the
        gc.collect()  # metrics (read from the log) reuse their memory
        metrics = compute_run_metrics(self.store, scenario)
        write_metrics(self.run_dir, metrics)
        write_run_reports(self.run_dir, metrics, scenario)
        validity = self.config.settings.validity
        finish_manifest(self.run_dir, self.manifest, self.store, validity, "complete")
        self._claim.keep()
        self._finished = True
        return metrics

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: Any
    ) -> None:
        try:
            if exc is not None and not self._finished:
                await self._stopped(exc)
        finally:
            try:
                self._stack.__exit__(kind, exc, traceback)  # the store, then the claim (lock)
            finally:
                if isinstance(exc, RunStopped) and self._finished:  # nothing to resume
                    exc.complete_run_dir = self.run_dir  # type: ignore[attr-defined]  # CLI
                self._close_cache()

    async def _stopped(self, exc: BaseException) -> None:
        """A run that stopped: kept and marked interrupted, resumable, when its log holds an
        event (or it is being resumed); its clients closed if the rounds never closed them."""
        store = self.store
        if store is not None and (self.previous is not None or has_first_event(store)):
            self._claim.keep()  # a run with events: kept, marked, resumable
            validity = self.config.settings.validity
            finish_interrupted(self.run_dir, self.manifest, store, validity, exc)
        if self._models_open and self.models is not None:
            self._models_open = False
            with suppress(Exception):  # the error the user sees is the one that stopped the run
                await self.models.aclose()

    def _close_cache(self) -> None:
        if self.cache is not None:
            self.cache.close()
