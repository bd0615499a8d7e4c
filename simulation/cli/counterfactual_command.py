"""`personasim counterfactual SCENARIO --attribute NAME --levels A,B`: each sampled persona run
once per level of one attribute, all else held fixed, into one run directory
(docs/counterfactual.md)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import add_run_arguments
from personasim.simulation.cli.scenario_args import add_scenario_command, scenario_arguments

__all__ = ["add_counterfactual_command", "counterfactual_params"]


def add_counterfactual_command(commands: Any) -> None:
    from personasim.simulation.cli.run_command import MODEL_HELP

    command = add_scenario_command(
        commands,
        "counterfactual",
        "Run each sampled persona once per level of --attribute, everything else "
        "held fixed, and report per pair of levels the paired difference of each decision "
        "(reports/counterfactual.csv, .png). Scenario parameters go as --name value.",
        help="run each persona once per level of one attribute; paired differences",
    )
    command.add_argument("scenario", help="a scenario whose personas carry attributes")
    command.add_argument("--attribute", required=True, help="the attribute to set, e.g. Sex")
    command.add_argument(
        "--levels",
        required=True,
        action="append",
        help="its levels, comma-separated (A,B[,C...]); a level holding a comma: repeat "
        "--levels once per level",
    )
    command.add_argument("--by", help="another attribute whose levels split the statistics")
    command.add_argument("--model", default="scripted", help=MODEL_HELP)
    command.add_argument("--out", type=Path, help="run directory (default runs/SCENARIO-TIME)")
    command.add_argument(
        "--resume", action="store_true", help="continue the interrupted run in --out"
    )
    command.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: ask again the units whose model call failed (out of attempts, or "
        "past the model's context)",
    )
    add_run_arguments(command)
    command.set_defaults(handler=_counterfactual)


def counterfactual_params(
    scenario: Any, attribute: str, levels: Sequence[str], by: str | None, values: dict[str, Any]
) -> Any:
    """The scenario's parameters with the design; a `ScenarioError` for a scenario whose
    personas carry no attributes, or a design given twice."""
    from personasim.simulation.core.counterfactual import (
        COUNTERFACTUAL_FIELDS,
        CounterfactualParams,
    )
    from personasim.simulation.core.scenario import ScenarioError

    if not issubclass(scenario.Params, CounterfactualParams):
        raise ScenarioError(
            f"{scenario.name} takes no counterfactual design: its personas are free text or it "
            "has none, or it has a design of its own (the classroom runs every question under "
            "each of its --races, and every run reports their paired statistics); it works for "
            "scenarios whose personas have attributes (the trust scenarios, persona-journey, "
            "career-chat)"
        )
    given = [f"--{name.replace('_', '-')}" for name in COUNTERFACTUAL_FIELDS if name in values]
    if given:
        raise ScenarioError(f"{', '.join(given)}: give the design as --attribute, --levels, --by")
    if len(levels) < 2 or len(set(levels)) != len(levels) or not all(levels):
        raise ScenarioError(
            f"--levels for {attribute!r}: name two or more distinct levels, comma-separated "
            f"(got {','.join(levels) or 'none'})"
        )
    design = dict(zip(COUNTERFACTUAL_FIELDS, (attribute, tuple(levels), by), strict=True))
    return scenario.parse_params({**values, **design})


def _levels(given: list[str]) -> list[str]:
    """One --levels: a comma-separated list; several: one level each."""
    from personasim.simulation.core.scenario import split_list

    return split_list(given[0]) if len(given) == 1 else [level.strip() for level in given]


def _counterfactual(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.cli.run_command import play
    from personasim.simulation.runs.lifecycle.scenario_file import resolve_scenario

    scenario = resolve_scenario(args.scenario)
    params = counterfactual_params(
        scenario,
        args.attribute,
        _levels(args.levels),
        args.by,
        scenario_arguments(args, extra, scenario),
    )
    return play(scenario, params, args)
