"""`personasim rescore RUN`: score a finished run again with other judges, into a new run.

The new run plays RUN's scenario with RUN's parameters, seed and settings; the roles the user
binds anew (each one a scorer the scenario declares, `Role(scorer=True)`) are asked, every other
request is answered from RUN's log (source_run.py). The new run directory is an ordinary one:
its manifest's `rescore_of` names RUN and its log's hash, its log starts with RUN's scores
(`rescore.source`), and the scenario's metrics pair them with the new judge's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from personasim.simulation.core.scenario import Scenario, ScenarioError, list_scenarios
from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.model_spec import make_backend
from personasim.simulation.llm.prompts import PromptPack, PromptPackError
from personasim.simulation.runs.lifecycle.run_config import RunConfig, RunSettings
from personasim.simulation.runs.lifecycle.run_dir import RunError, RunResult, read_manifest
from personasim.simulation.runs.lifecycle.source_run import SourceRun
from personasim.simulation.runs.lifecycle.validity import ValidityLimits
from personasim.simulation.runs.runner import arun_scenario

__all__ = ["RescorePlan", "arescore_run", "plan_rescore", "rescorable", "rescore_run"]

SWAP_PARAM = "swap_order"
"""The parameter of a scenario whose judge compares two answers in fixed slots."""


@dataclass(frozen=True)
class RescorePlan:
    """Everything `arun_scenario` needs to rescore RUN (checked before anything is written)."""

    scenario: type[Scenario]
    params: dict[str, Any]
    roles: dict[str, tuple[str, ...]]
    rescored: dict[str, tuple[str, ...]]
    model: str
    base_url: str | None
    seed: int
    settings: RunSettings


def rescorable() -> dict[str, list[str]]:
    """Each scenario with something to rescore, and its scorer roles."""
    return {
        name: [role for role, spec in cls.roles.items() if spec.scorer]
        for name, cls in list_scenarios().items()
        if cls.scores is not None and any(spec.scorer for spec in cls.roles.values())
    }


def plan_rescore(
    run_dir: Path,
    named: Mapping[str, Sequence[str]],
    *,
    regenerate_examples: bool = False,
    swap_order: bool = False,
) -> RescorePlan:
    """What rescoring RUN with the `named` roles means, or a RunError saying why it cannot."""
    manifest = read_manifest(run_dir)
    try:
        scenario = list_scenarios()[manifest["scenario"]]
    except KeyError:
        raise RunError(
            f"{run_dir}: scenario {manifest.get('scenario')!r} is not installed (a scenario "
            "file's run cannot be rescored)"
        ) from None
    rescored = _rescored_roles(scenario, manifest, named, regenerate_examples)
    before = {role: tuple(specs) for role, specs in manifest["roles"].items() if specs}
    roles = {**before, **rescored}
    params = dict(manifest["params"])
    if swap_order:
        if SWAP_PARAM not in scenario.Params.model_fields:
            raise RunError(
                f"--swap-order: {scenario.name}'s judge does not compare two answers in fixed "
                "slots (the classroom's DoC judge does)"
            )
        params[SWAP_PARAM] = True
    keep = [spec for role, specs in before.items() if role not in rescored for spec in specs]
    validity = manifest.get("validity", {})
    settings = RunSettings(
        manifest["response_format"],
        manifest["max_tokens"],
        ValidityLimits(validity.get("max_failure_rate", 0.2), validity.get("min_group_n", 5)),
    )
    base_url = manifest["model"].get("base_url")
    model = _main_spec(keep or next(iter(rescored.values())), manifest, base_url)
    return RescorePlan(
        scenario, params, roles, rescored, model, base_url, manifest["seed"], settings
    )


def _rescored_roles(
    scenario: type[Scenario],
    manifest: Mapping[str, Any],
    named: Mapping[str, Sequence[str]],
    regenerate_examples: bool,
) -> dict[str, tuple[str, ...]]:
    roles = scenario.roles
    scorers = [name for name, role in roles.items() if role.scorer]
    if scenario.scores is None or not scorers:
        others = "; ".join(f"{s}: {', '.join(r)}" for s, r in rescorable().items())
        raise RunError(
            f"{scenario.name} has no scorer role to rescore; scenarios that have one: {others}"
        )
    if not named:
        raise RunError(
            f"pass --role NAME=MODEL for a scorer of {scenario.name}: {_listed(scorers)}"
        )
    inputs = [name for name, role in roles.items() if role.scorer_input]
    for name in named:
        if name in inputs and not regenerate_examples:
            raise RunError(
                f"--role {name}: {name!r} writes what the scorers read; it is reused from the "
                "run unless --regenerate-examples"
            )
        if name not in roles or not (roles[name].scorer or roles[name].scorer_input):
            raise RunError(
                f"--role {name}: {scenario.name} can rescore only its scorer roles "
                f"{_listed(scorers)}; {name!r} is not one"
            )
    if regenerate_examples and not inputs:
        raise RunError(
            f"--regenerate-examples: {scenario.name} has no score examples to regenerate"
        )
    rescored = {name: tuple(specs) for name, specs in named.items()}
    if regenerate_examples:
        for name in inputs:
            rescored.setdefault(name, tuple(manifest["roles"][name]))
    return rescored


def _listed(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _main_spec(candidates: Sequence[str], manifest: Mapping[str, Any], base_url: str | None) -> str:
    """The spec of RUN's `--model`: the first of its roles' specs that builds the backend its
    manifest describes (else its first kept role's)."""
    for spec in candidates:
        try:
            if make_backend(spec, base_url, manifest["seed"]).describe() == manifest["model"]:
                return spec
        except ModelSpecError:
            continue
    return candidates[0]


async def arescore_run(
    run_dir: str | Path,
    roles: Mapping[str, Sequence[str]],
    *,
    regenerate_examples: bool = False,
    swap_order: bool = False,
    config: RunConfig | None = None,
    console: Console | None = None,
    **options: Any,
) -> RunResult:
    """Rescore RUN into `config.out` (or resume that rescore with `resume`). `config` (or the
    flat `options`: out, resume, prompts, cache, concurrency, retry, progress...; see
    `RunConfig.from_options`) gives the new run's options but those RUN's manifest fixes:
    its model, base URL, seed, settings and roles (with the rescored ones bound anew). RUN is
    only read."""
    config = RunConfig.from_options(config, **options)
    run_dir = Path(run_dir)
    out = config.out
    if out is not None and Path(out).resolve() == run_dir.resolve():
        raise RunError("--out is the run being rescored; a rescore writes a new run directory")
    plan = plan_rescore(
        run_dir, roles, regenerate_examples=regenerate_examples, swap_order=swap_order
    )
    _check_prompts(plan.scenario, read_manifest(run_dir), config.prompts)
    checked = plan.scenario.parse_params(plan.params)
    scores = plan.scenario.scores
    assert scores is not None  # plan_rescore refuses a scenario without scores
    source = SourceRun.read(run_dir, plan.rescored, scores)
    config = replace(
        config,
        seed=plan.seed,
        model=plan.model,
        base_url=plan.base_url,
        settings=plan.settings,
        roles=plan.roles,
    )
    return await arun_scenario(
        plan.scenario, checked, config=config, source=source, console=console
    )


def _check_prompts(
    scenario: type[Scenario], manifest: Mapping[str, Any], prompts: str | Path | None
) -> None:
    """An edited pack RUN was run with must be passed again, unchanged."""
    recorded = manifest.get("prompts")
    if not recorded or recorded.get("shipped", True):
        if prompts is not None:
            raise RunError("--prompts: the run used the shipped pack; leave --prompts out")
        return
    if prompts is None:
        raise RunError("the run used an edited prompt pack: pass it again with --prompts FILE")
    try:
        pack = PromptPack.load(prompts)
    except (PromptPackError, ScenarioError) as exc:
        raise RunError(f"--prompts {exc}") from None
    if pack.sha256 != recorded["sha256"]:
        raise RunError(f"--prompts {prompts}: not the pack the run used (its hash differs)")


def rescore_run(*args: Any, **kwargs: Any) -> RunResult:
    """`arescore_run` from synchronous code."""
    return asyncio.run(arescore_run(*args, **kwargs))
