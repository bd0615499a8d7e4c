"""Running a scenario into a run directory, with progress, and resuming one that was cut short.

A run's options are one `RunConfig` (run_config.py); what it holds while it runs, and how it
lets go of it however it ends, is its `RunContext` (run_context.py); what a run directory holds
and how it is written is `run_dir.py`; the checks that let a run be resumed are `resume.py`.
This module checks a run's inputs, plays its rounds and finishes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from personasim.simulation.core.model import Simulation
from personasim.simulation.core.scenario import Scenario, ScenarioParams
from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.chat import Backend
from personasim.simulation.llm.limiter import EndpointLimiter
from personasim.simulation.llm.masking import mask_secrets
from personasim.simulation.llm.model_spec import parse_model_spec
from personasim.simulation.llm.prompts import PromptPack, PromptPackError
from personasim.simulation.llm.roles import RoleError, bind_roles
from personasim.simulation.runs.lifecycle.input_files import input_files
from personasim.simulation.runs.lifecycle.long_lived_heap import long_lived_heap
from personasim.simulation.runs.lifecycle.progress import progress_bar, summary_lines
from personasim.simulation.runs.lifecycle.run_config import RunConfig, RunSettings
from personasim.simulation.runs.lifecycle.run_context import RunContext
from personasim.simulation.runs.lifecycle.run_dir import RunError, RunResult, new_manifest
from personasim.simulation.runs.lifecycle.run_signals import stop_on_signals, stops_raise
from personasim.simulation.runs.lifecycle.scenario_file import (
    resolve_scenario,
    scenario_file_record,
)
from personasim.simulation.runs.lifecycle.source_run import SOURCE_SCORES, SourceRun
from personasim.simulation.runs.workers.decision_workers import (
    WorkerSpec,
    check_workers,
    with_workers,
)

__all__ = ["active_units", "arun_scenario", "run_scenario"]
# RunError, RunResult, the file names and the metrics/report writers are run_dir.py's (the
# run-writing API importers use too); RunConfig, RunSettings and ClientLimits run_config.py's.


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
    config: RunConfig | None = None,
    backend: Backend | None = None,
    console: Console | None = None,
    limiter_for: Callable[[Backend], EndpointLimiter | None] | None = None,
    source: SourceRun | None = None,
    **options: Any,
) -> RunResult:
    """Run (or resume) a scenario and return where it went and what it measured.

    `scenario`: a registered name, a scenario file's path (`.py`), or a `Scenario` class.
    `config`: the run's options (`RunConfig`: model, endpoints, seed, out, resume, cache,
    limits, settings, roles, prompts, workers, progress); `options`: the same by their flat
    names (`model=`, `out=`, `concurrency=`, `requests_per_minute=`, `retry=`, ...), in place
    of the config's where both are given (`RunConfig.from_options`).
    What is not configuration: `backend`, a backend object that plays every role `roles` does
    not bind (instead of `model`); `console`, where the progress bar goes (stderr); `limiter_for`,
    limits shared with other runs for a backend's endpoint (a sweep on Ray), or None to keep
    this run's own; `source`, the run this one rescores (`personasim rescore`,
    runs/tools/rescore.py): its roles but the rescored ones are answered from its log.
    Every input is checked before the run directory is created, so bad input leaves nothing.
    """
    with stops_raise():  # from here to the last report, a stop is recorded (run_signals.py)
        config = RunConfig.from_options(config, **options)
        unbuildable = (
            (backend and "a backend object")
            or (limiter_for and "a sweep on Ray")
            or (source and "a rescore")
        )
        run, instance = _checked(scenario, params, config, backend, source, unbuildable)
        async with RunContext(config, run.scenario.name, run.manifest) as ctx:
            if (done := ctx.resume(_at_default(run.params), run.scenario_file)) is not None:
                return done
            ctx.open(run.main_spec, run.backend, limiter_for=limiter_for, source=source)
            await _play_run(instance, run, ctx, console, source)
            del instance  # its state goes with the agents' (RunContext.finish collects them)
            metrics = ctx.finish(run.scenario)
            summary = summary_lines(ctx.manifest, run.scenario, metrics)
    if config.retry_failed:
        summary.insert(0, f"retried {len(ctx.retried)} unit(s) with a failed model call")
    return RunResult(ctx.run_dir, ctx.manifest, metrics, summary)


@dataclass(frozen=True)
class _Run:
    """A run's inputs, checked, and the manifest they make (not yet written)."""

    scenario: type[Scenario]
    params: ScenarioParams
    roles: dict[str, tuple[str, ...]]
    main_spec: str
    backend: Backend
    scenario_file: dict[str, str] | None
    manifest: dict[str, Any]


def _checked(
    scenario: str | Path | type[Scenario],
    params: dict[str, Any] | ScenarioParams | None,
    config: RunConfig,
    backend: Backend | None,
    source: SourceRun | None,
    unbuildable: Any,
) -> tuple[_Run, Scenario]:
    """The run's inputs checked, in order, before anything is written; and the scenario."""
    scenario_cls = resolve_scenario(str(scenario)) if isinstance(scenario, str | Path) else scenario
    checked = (
        params if isinstance(params, ScenarioParams) else scenario_cls.parse_params(params or {})
    )
    main_spec = config.model if backend is None else backend.name
    bound = _bind_roles(scenario_cls, main_spec, config.roles)
    if backend is None:
        config.check_models([s for specs in bound.values() for s in specs])
    backend = backend or config.backend(config.model)
    instance = scenario_cls(checked, _prompt_pack(scenario_cls, config.prompts))
    instance.prepare()
    check_workers(config, unbuildable)
    endpoints = config.endpoints.source if config.endpoints else None
    inputs = input_files(checked, config.prompts, endpoints)
    scenario_file = scenario_file_record(scenario_cls)
    manifest = new_manifest(
        config.settings.to_json(),
        scenario_cls.name,
        checked.model_dump(mode="json"),
        config.seed,
        backend.describe(),
    )
    manifest |= {"scenario_version": scenario_cls.version, "model_spec": main_spec}
    manifest["client"] = {**config.limits.to_json(), "workers": config.workers}
    manifest["roles"] = {name: list(specs) for name, specs in bound.items()}
    manifest["prompts"] = instance.prompts.describe() if instance.prompts else None
    manifest["inputs"] = inputs
    if scenario_file is not None:
        manifest["scenario_file"] = scenario_file
    if source is not None:
        manifest["rescore_of"] = source.record()
    run = _Run(scenario_cls, checked, bound, main_spec, backend, scenario_file, manifest)
    return run, instance


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


async def _play_run(
    instance: Scenario,
    run: _Run,
    ctx: RunContext,
    console: Console | None,
    source: SourceRun | None,
) -> None:
    """The rounds on the run's models and log, with its progress bar and worker processes."""
    config = ctx.config
    assert ctx.models is not None and ctx.log is not None, "RunContext.open() first"
    bar = progress_bar(console or Console(stderr=True), config.progress, run.scenario.name)
    with bar as on_progress:
        sim = Simulation(
            seed=config.seed,
            models=ctx.models,
            log=ctx.log,
            on_progress=on_progress,
            response_format=config.settings.response_format,
            max_tokens=config.settings.max_tokens,
            roles=run.roles,
            max_active_units=active_units(config.limits.concurrency, run.main_spec, run.roles),
        )
        spec = WorkerSpec(config, run.roles, ctx.rekey, **WorkerSpec.scenario_sources(run.scenario))
        play = _play(instance, sim, ctx, source)
        await stop_on_signals(with_workers(sim, spec, config.workers, ctx.manifest, play))


async def _play(
    scenario: Scenario, sim: Simulation, ctx: RunContext, source: SourceRun | None
) -> None:
    try:
        header = ("scenario", "params", "seed", "model", "roles", "prompts")
        header += tuple(RunSettings().to_json())
        sim.emit("run.started", {k: ctx.manifest[k] for k in header})
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
        await ctx.close_models()  # a pool's endpoint reports, for the manifest
