"""Running a scenario into a run directory, with progress, and resuming one that was cut short.

What a run directory holds and how it is written is `run_dir.py`; the checks that let a run be
resumed are `resume.py`. This module checks a run's inputs, plays its rounds and finishes it.
"""

from __future__ import annotations

import asyncio
import gc
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from personasim.simulation.core.model import Simulation
from personasim.simulation.core.scenario import Scenario, ScenarioParams
from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.chat import RESPONSE_FORMATS, Backend, ResponseFormat
from personasim.simulation.llm.client import RetryPolicy
from personasim.simulation.llm.endpoints_file import EndpointsError, EndpointsFile, load_endpoints
from personasim.simulation.llm.limiter import EndpointLimiter
from personasim.simulation.llm.masking import mask_secrets
from personasim.simulation.llm.model_spec import (
    check_pools,
    check_run_options,
    make_backend,
    parse_model_spec,
)
from personasim.simulation.llm.prompts import PromptPack, PromptPackError
from personasim.simulation.llm.roles import RoleError, bind_roles
from personasim.simulation.log.event_log import EventLog, ResumeState
from personasim.simulation.runs.decision_workers import (
    WorkerSpec,
    check_workers,
    with_workers,
)
from personasim.simulation.runs.input_files import input_files
from personasim.simulation.runs.long_lived_heap import long_lived_heap
from personasim.simulation.runs.model_clients import ClientSettings, build_models
from personasim.simulation.runs.progress import progress_bar, summary_lines
from personasim.simulation.runs.resume import (
    already_complete,
    endpoint_rekey,
    has_lost_calls,
    load_resumable,
    log_is_complete,
)
from personasim.simulation.runs.run_dir import (
    RunError,
    RunResult,
    compute_run_metrics,
    finish_manifest,
    new_manifest,
    write_manifest,
    write_metrics,
    write_run_reports,
)
from personasim.simulation.runs.run_signals import RunStopped, stop_on_signals, stops_raise
from personasim.simulation.runs.run_start import (
    RunDirClaim,
    finish_interrupted,
    has_first_event,
    log_bad_cache_row,
    open_cache,
    open_log,
)
from personasim.simulation.runs.scenario_file import (
    check_same_scenario_file,
    resolve_scenario,
    scenario_file_record,
)
from personasim.simulation.runs.source_run import SOURCE_SCORES, SourceRun
from personasim.simulation.runs.validity import ValidityLimits

__all__ = [
    "ClientLimits",
    "RunSettings",
    "arun_scenario",
    "read_endpoints",
    "run_scenario",
]
# RunError, RunResult, the file names and the metrics/report writers are run_dir.py's (the
# run-writing API importers use too), imported from there.


@dataclass(frozen=True)
class RunSettings:
    """How decisions are asked and judged; they change answers or validity, so they are in the
    manifest and the log, and a resumed run must repeat them."""

    response_format: ResponseFormat = "text"
    max_tokens: int | None = None
    validity: ValidityLimits = field(default_factory=ValidityLimits)

    def __post_init__(self) -> None:
        if self.response_format not in RESPONSE_FORMATS:
            raise RunError(
                f"--response-format {self.response_format!r}: use one of "
                f"{', '.join(RESPONSE_FORMATS)}"
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise RunError("--max-tokens must be at least 1")

    def to_json(self) -> dict[str, Any]:
        return {
            "response_format": self.response_format,
            "max_tokens": self.max_tokens,
            "validity": self.validity.to_json(),
        }


def _backend(
    model: str, base_url: str | Sequence[str] | None, seed: int, endpoints: EndpointsFile | None
) -> Backend:
    """`make_backend`, a spec that cannot be used raised as bad input (`RunError`)."""
    try:
        return make_backend(model, base_url, seed, endpoints)
    except ModelSpecError as exc:
        raise RunError(str(exc)) from None


@dataclass(frozen=True)
class ClientLimits:
    """How the run talks to its model; recorded in the manifest, never part of a cache key."""

    concurrency: int = 16
    requests_per_minute: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        """Checked before the run directory exists, so a bad value leaves nothing behind."""
        rpm = self.requests_per_minute
        if self.concurrency < 1:
            raise RunError(f"concurrency must be at least 1, got {self.concurrency}")
        if rpm is not None and not (math.isfinite(rpm) and rpm > 0):
            raise RunError(f"requests_per_minute must be a number greater than 0, got {rpm}")

    def to_json(self) -> dict[str, Any]:
        """The manifest's `client` record."""
        return {
            "concurrency": self.concurrency,
            "requests_per_minute": self.requests_per_minute,
            "timeout_s": self.retry.timeout,
            "max_attempts": self.retry.max_attempts,
            "hedge": self.retry.hedge.to_json(),
        }


def run_scenario(*args: Any, **kwargs: Any) -> RunResult:
    """Run (or resume) a scenario; see `arun_scenario` for the arguments.

    Inside a running event loop (a Jupyter notebook), `await arun_scenario(...)` instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun_scenario(*args, **kwargs))
    raise RunError(
        "run_scenario was called inside a running event loop (e.g. Jupyter); "
        "use `await arun_scenario(...)` there"
    )


async def arun_scenario(
    scenario: str | Path | type[Scenario],
    params: dict[str, Any] | ScenarioParams | None = None,
    *,
    seed: int = 0,
    model: str = "scripted",
    base_url: str | Sequence[str] | None = None,
    endpoints: EndpointsFile | str | Path | None = None,
    backend: Backend | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    concurrency: int = 16,
    requests_per_minute: float | None = None,
    retry: RetryPolicy | None = None,
    progress: bool = True,
    console: Console | None = None,
    settings: RunSettings | None = None,
    roles: Mapping[str, Sequence[str]] | None = None,
    prompts: str | Path | None = None,
    limiter_for: Callable[[Backend], EndpointLimiter | None] | None = None,
    retry_failed: bool = False,
    allow_endpoint_change: bool = False,
    source: SourceRun | None = None,
    workers: int = 1,
) -> RunResult:
    """Run (or resume) a scenario and return where it went and what it measured.

    `scenario`: a registered name, a scenario file's path (`.py`), or a `Scenario` class.
    `base_url`: the endpoint of specs without their own URL; several URLs are one pool of
    replicas. `endpoints`: an endpoints file (or its path) whose pools specs name as
    `openai:NAME@pool:POOL` (docs/endpoints.md).
    `settings`: response format, a completion-token cap and validity limits (defaults: text,
    no cap, at most 20% failed decisions, groups of 5). `roles`: model specs for the scenario's
    roles by name (`{"judge": ["openai:gpt-4o"]}`); `model` (or `backend`) plays the others.
    `prompts`: an edited prompt pack (`personasim prompts SCENARIO` writes the shipped one).
    `limiter_for`: limits shared with other runs for a backend's endpoint (a sweep on Ray),
    or None to keep this run's own `concurrency` and `requests_per_minute`.
    `retry_failed` (with `resume`): ask again the units whose decisions were lost to a model call
    that ran out of attempts (docs/events.md, "Failed calls and --retry-failed").
    `allow_endpoint_change`: resume although the model's endpoint URL changed (same model name).
    `source`: the run this one rescores (`personasim rescore`, runs/rescore.py): its roles but
    the rescored ones are answered from its log.
    `workers`: processes that run the fresh decisions (decision_workers.py; 1: this one alone).
    Every input is checked before the run directory is created, so bad input leaves nothing.
    """
    settings = settings or RunSettings()
    with stops_raise():  # from here to the last report, a stop is recorded (run_signals.py)
        scenario_cls = (
            resolve_scenario(str(scenario)) if isinstance(scenario, str | Path) else scenario
        )
        checked = (
            params
            if isinstance(params, ScenarioParams)
            else scenario_cls.parse_params(params or {})
        )
        main_spec = model if backend is None else backend.name
        unbuildable = (
            (backend and "a backend object")
            or (limiter_for and "a sweep on Ray")
            or (source and "a rescore")
        )
        bound = _bind_roles(scenario_cls, main_spec, roles or {})
        endpoints = read_endpoints(endpoints)
        if backend is None:
            specs = [s for specs in bound.values() for s in specs]
            _check_run_options(specs, base_url, settings, endpoints)
        backend = backend or _backend(model, base_url, seed, endpoints)
        instance = scenario_cls(checked, _prompt_pack(scenario_cls, prompts))
        instance.prepare()
        limits = ClientLimits(concurrency, requests_per_minute, retry or RetryPolicy())
        check_workers(workers, model, unbuildable, concurrency, endpoints)
        if seed < 0:
            raise RunError(f"seed must be an integer of at least 0, got {seed}")
        if retry_failed and not resume:
            raise RunError("--retry-failed asks a run's failed units again: it needs --resume")
        inputs = input_files(checked, prompts, endpoints.source if endpoints else None)
        scenario_file = scenario_file_record(scenario_cls)
        cache = open_cache(use_cache, cache_dir)  # before the run directory: see run_start.py
        claim, finished = RunDirClaim(out, scenario_cls.name, resume), False
        try:
            with claim as run_dir:
                manifest = new_manifest(
                    settings.to_json(),
                    scenario_cls.name,
                    checked.model_dump(mode="json"),
                    seed,
                    backend.describe(),
                )
                manifest |= {"scenario_version": scenario_cls.version, "model_spec": main_spec}
                manifest["client"] = {**limits.to_json(), "workers": workers}
                manifest["roles"] = {name: list(specs) for name, specs in bound.items()}
                manifest["prompts"] = instance.prompts.describe() if instance.prompts else None
                manifest["inputs"] = inputs
                if scenario_file is not None:
                    manifest["scenario_file"] = scenario_file
                if source is not None:
                    manifest["rescore_of"] = source.record()
                previous = (
                    load_resumable(run_dir, manifest, allow_endpoint_change, _at_default(checked))
                    if resume
                    else None
                )
                if previous is not None:
                    check_same_scenario_file(previous.get("scenario_file"), scenario_file, run_dir)
                complete = previous is not None and log_is_complete(run_dir, previous)
                retrying = retry_failed and complete and has_lost_calls(run_dir)
                if previous is not None and complete and not retrying:
                    return already_complete(run_dir, previous, retry_failed)
                if previous is not None:
                    manifest["created_at"] = previous["created_at"]
                rekey = endpoint_rekey(manifest)
                with open_log(run_dir, resume=previous is not None) as store:
                    try:
                        write_manifest(run_dir, manifest)
                        resume_state = (
                            ResumeState.from_store(store) if previous is not None else None
                        )
                        retried = (
                            resume_state.retry_failed() if resume_state and retry_failed else []
                        )
                        log = EventLog(store, resume_state)
                        if cache is not None:
                            cache.on_bad_row = log_bad_cache_row(log)

                        models = build_models(
                            main_spec,
                            backend,
                            lambda spec: _backend(spec, base_url, seed, endpoints),
                            log,
                            ClientSettings(
                                cache,
                                limits.retry,
                                limits.concurrency,
                                limits.requests_per_minute,
                                rekey,
                            ),
                            per_backend=lambda backend: {
                                "limiter": limiter_for(backend) if limiter_for else None
                            },
                            replay=log.logged_response if resume_state else None,
                            recorded=source.answerer(log) if source else None,
                        )
                        bar = progress_bar(
                            console or Console(stderr=True), progress, scenario_cls.name
                        )
                        with bar as on_progress:
                            sim = Simulation(
                                seed=seed,
                                models=models,
                                log=log,
                                on_progress=on_progress,
                                response_format=settings.response_format,
                                max_tokens=settings.max_tokens,
                                roles=bound,
                                max_active_units=active_units(limits.concurrency, main_spec, bound),
                            )
                            spec = WorkerSpec(
                                model, base_url, endpoints, seed, bound, settings.response_format,
                                settings.max_tokens, limits.concurrency,
                                limits.requests_per_minute, limits.retry,
                                str(cache.directory) if cache else None, rekey,
                                **WorkerSpec.scenario_sources(scenario_cls),
                            )  # fmt: skip
                            play = _play(instance, sim, manifest, source)
                            await stop_on_signals(with_workers(sim, spec, workers, manifest, play))
                        del sim, models, instance  # agents and model hold each other: collected
                        gc.collect()  # here, so the metrics (read from the log) reuse their memory
                        metrics = compute_run_metrics(store, scenario_cls)
                        write_metrics(run_dir, metrics)
                        write_run_reports(run_dir, metrics, scenario_cls)
                        finish_manifest(run_dir, manifest, store, settings.validity, "complete")
                        claim.keep()
                        finished = True
                    except BaseException as exc:
                        if previous is not None or has_first_event(store):
                            claim.keep()  # a run with events: kept, marked, resumable
                            finish_interrupted(run_dir, manifest, store, settings.validity, exc)
                        raise
            summary = summary_lines(manifest, scenario_cls, metrics)
        except RunStopped as exc:
            if finished:  # stopped after the run was complete: nothing to resume
                exc.complete_run_dir = run_dir  # type: ignore[attr-defined]  # CLI message
            raise
        finally:
            if cache is not None:
                cache.close()
    if retry_failed:
        summary.insert(0, f"retried {len(retried)} unit(s) with a failed model call")
    return RunResult(run_dir, manifest, metrics, summary)


def _at_default(params: ScenarioParams) -> set[str]:
    """The parameters left at their defaults (resume: one added to the scenario since)."""
    return set(type(params).model_fields) - set(params.model_dump(exclude_defaults=True))


def active_units(
    concurrency: int, main_spec: str | None, roles: Mapping[str, tuple[str, ...]]
) -> int:
    """How many units of a round may be under way at once: twice the requests the run's models
    can have in flight, so each slot has a unit waiting with its prompt built while no more
    than that spend CPU before the first answers come back (benchmarks/bench_round.py)."""
    models = {main_spec, *(spec for specs in roles.values() for spec in specs)}
    return 2 * concurrency * len(models)


def _prompt_pack(scenario_cls: type[Scenario], path: str | Path | None) -> PromptPack | None:
    """The edited pack at `path`, checked against the scenario's shipped one."""
    if path is None:
        return None
    shipped = scenario_cls.shipped_prompts()
    if shipped is None:
        raise RunError(f"--prompts: {scenario_cls.name} has no prompt pack to replace")
    try:
        pack = PromptPack.load(path)
        pack.check_against(shipped)
    except PromptPackError as exc:
        raise RunError(f"--prompts {exc}") from None
    return pack


def endpoint_options(base_url: str | Sequence[str] | None, settings: RunSettings) -> dict[str, Any]:
    """The run options only some backend kinds use, None where not given."""
    fmt = None if settings.response_format == "text" else settings.response_format
    return {"base_url": base_url, "response_format": fmt}


def _check_run_options(
    specs: Sequence[str],
    base_url: str | Sequence[str] | None,
    settings: RunSettings,
    endpoints: EndpointsFile | None = None,
) -> None:
    """`--base-url`, `--endpoints` or `--response-format` that no model of the run would use,
    or a pool no endpoints file defines: bad input."""
    try:
        check_run_options(specs, endpoint_options(base_url, settings))
        check_pools(specs, endpoints)
    except ModelSpecError as exc:
        raise RunError(str(exc)) from None


def read_endpoints(endpoints: EndpointsFile | str | Path | None) -> EndpointsFile | None:
    """The endpoints file, read when given as a path (a bad file: `RunError`)."""
    if endpoints is None or isinstance(endpoints, EndpointsFile):
        return endpoints
    try:
        return load_endpoints(endpoints)
    except EndpointsError as exc:
        raise RunError(str(exc)) from None


def _bind_roles(
    scenario_cls: type[Scenario], main_spec: str, named: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """Each role's model specs, checked before anything is written."""
    for name, specs in named.items():
        for spec in specs:
            try:
                parse_model_spec(spec)
            except ModelSpecError as exc:
                raise RunError(f"--role {name}={mask_secrets(spec)}: {exc}") from None
    try:
        return bind_roles(scenario_cls.roles, main_spec, named, scenario=scenario_cls.name)
    except RoleError as exc:
        raise RunError(str(exc)) from None


async def _play(
    scenario: Scenario, sim: Simulation, manifest: dict[str, Any], source: SourceRun | None
) -> None:
    try:
        header = ("scenario", "params", "seed", "model", "roles", "prompts")
        header += tuple(RunSettings().to_json())
        sim.emit("run.started", {k: manifest[k] for k in header})
        if source is not None:
            sim.emit(SOURCE_SCORES, source.event())
        scenario.setup(sim)
        with long_lived_heap():
            for index in range(1, scenario.rounds() + 1):
                sim.begin_round(index)
                await scenario.play_round(sim, index)
                sim.end_round()
        sim.round = None
        sim.emit("run.completed")
    finally:
        if reports := sim.models.endpoint_reports():  # a pool's endpoints, for the manifest
            manifest["endpoints"] = reports
        await sim.models.aclose()
