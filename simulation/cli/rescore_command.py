"""`personasim rescore RUN --role judge=MODEL --out NEW`: score a finished run again with
another judge; NEW holds the scenario's metrics under the new judge and the agreement between
the two (docs/rescore.md). Only the rescored roles are asked; RUN is only read."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import (
    NOT_VALID,
    add_client_arguments,
    client_options,
    err,
    out,
)
from personasim.simulation.cli.run_command import calls_line, where_lines
from personasim.simulation.core.scenario import split_list

__all__ = ["add_rescore_command"]


def add_rescore_command(commands: Any) -> None:
    rescore = commands.add_parser(
        "rescore",
        help="score a finished run again with another judge (agreement between the two)",
        description="Re-run only the scoring of RUN with the judge(s) bound by --role; every "
        "other answer is read from RUN's log. The new run directory holds the scenario's "
        "metrics under the new judge and the agreement between the two judges.",
    )
    rescore.add_argument("run_dir", type=Path, metavar="RUN", help="a complete run directory")
    rescore.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="NAME=MODEL[,MODEL]",
        help="a scorer role and its new model(s) (repeatable): classroom judge=…, persona-gym "
        "evaluator=A,B, career-chat judge=…",
    )
    rescore.add_argument("--out", type=Path, help="the new run directory (default runs/…)")
    rescore.add_argument("--resume", action="store_true", help="continue the rescore in --out")
    rescore.add_argument(
        "--regenerate-examples",
        action="store_true",
        help="PersonaGym: ask the score examples again (default: RUN's are reused)",
    )
    rescore.add_argument(
        "--swap-order",
        action="store_true",
        help="classroom: also ask each comparison with the two answers in the other order "
        "(position bias)",
    )
    rescore.add_argument(
        "--prompts", type=Path, metavar="FILE", help="the edited pack RUN used, if it used one"
    )
    add_client_arguments(rescore)
    rescore.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    rescore.set_defaults(handler=_rescore)


def _rescore(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.llm.roles import RoleError, parse_role_args
    from personasim.simulation.runs.lifecycle.run_config import RunConfig
    from personasim.simulation.runs.lifecycle.run_dir import RunError, read_manifest
    from personasim.simulation.runs.tools.rescore import rescore_run

    if read_manifest(args.run_dir).get("scenario_file") is not None:  # never loaded: data only
        raise RunError(f"{args.run_dir}: a scenario file's run cannot be rescored")

    try:
        roles = parse_role_args(args.role, split_list)
    except RoleError as exc:
        raise RunError(str(exc)) from None
    config = RunConfig.from_options(
        out=args.out, resume=args.resume, prompts=args.prompts, **client_options(args)
    )
    result = rescore_run(
        args.run_dir,
        roles,
        regenerate_examples=args.regenerate_examples,
        swap_order=args.swap_order,
        config=config,
        console=err,
    )
    for line in result.report:
        out.print(line)
    for line in agreement_lines(result.metrics["metrics"]):
        out.print(line)
    out.print(calls_line(result.manifest))
    out.print(
        f"answers read from {args.run_dir}: {result.manifest['llm'].get('source_run_answers', 0)}"
    )
    for line in where_lines(result.run_dir):
        out.print(line)
    return 0 if result.valid else NOT_VALID


def agreement_lines(metrics: dict[str, Any]) -> list[str]:
    """The agreement block (and the position bias, if asked): items paired, each statistic
    with its bootstrap interval."""
    lines: list[str] = []
    if block := metrics.get("rescore"):
        judges = "; ".join(
            f"{role}: {','.join(b)} → {','.join(a)}" for role, b, a in block["judges"]
        )
        lines.append(f"agreement of the two judges ({judges}), {block['n_paired']} items paired:")
        lines += _statistic_lines(block["agreement"])
        if "humans" in block:
            lines.append(f"new judge vs human raters, {block['humans']['n_paired']} items paired:")
            lines += _statistic_lines(block["humans"]["agreement"])
    if bias := metrics.get("position_bias"):
        change = bias["mean_abs_change"]
        shown = "undefined" if change is None else f"{change:.3f}"
        lines.append(
            f"position bias over {bias['n_paired']} pairs asked in both orders: mean absolute "
            f"change of the score {shown}"
        )
        exact = bias["agreement"]["statistics"]["exact_agreement"]
        lines.append(f"  share of pairs scored the same in both orders: {_shown(exact)}")
    return lines


def _statistic_lines(agreement: dict[str, Any]) -> list[str]:
    lines = [f"  {stat['label']}: {_shown(stat)}" for stat in agreement["statistics"].values()]
    return lines + [f"  note: {note}" for note in agreement.get("notes", [])]


def _shown(stat: dict[str, Any]) -> str:
    """`0.812 [0.700, 0.890] (n 38)`, or why the value is undefined."""
    if stat.get("value") is None:
        return f"undefined ({stat.get('value_undefined', 'no reason given')}) (n {stat['n']})"
    low, high = stat.get("low"), stat.get("high")
    interval = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    return f"{stat['value']:.3f}{interval} (n {stat['n']})"
