"""`personasim run SCENARIO`: run or resume a scenario into a run directory."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.audit_command import add_audit_arguments, audit_options
from personasim.simulation.cli.options import (
    COUNT,
    NOT_VALID,
    SECONDS,
    add_run_arguments,
    err,
    out,
    run_config,
)
from personasim.simulation.cli.scenario_args import add_scenario_command, scenario_arguments

__all__ = ["MODEL_HELP", "add_run_command", "calls_line", "where_lines"]

MODEL_HELP = (
    "'scripted', 'scripted:drift=0.15' (real models' habits), 'openai:MODEL_NAME[@BASE_URL]' or "
    "'langchain:MODULE:CLASS[?NAME=VALUE&...]' (docs/backends.md)"
)


def add_run_command(commands: Any) -> None:
    run = add_scenario_command(
        commands,
        "run",
        "Run a scenario. Scenario parameters go as --name value (a boolean one also as --name "
        "/ --no-name).",
        help="run or resume a scenario",
    )
    run.add_argument("scenario", help="a scenario's name, or a .py file that defines one")
    run.add_argument("--model", default="scripted", help=MODEL_HELP)
    run.add_argument("--out", type=Path, help="run directory (default runs/SCENARIO-TIME)")
    run.add_argument("--resume", action="store_true", help="continue the interrupted run in --out")
    run.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: ask again the units whose model call failed (out of attempts, or "
        "past the model's context)",
    )
    add_run_arguments(run)
    reading = run.add_argument_group("reading audit (docs/readers.md)")
    reading.add_argument(
        "--audit",
        type=COUNT,
        metavar="N",
        help="at the end, re-read N readings per reader with an independent reader; a reader "
        "whose wrong-read rate may be over the limit makes the run not valid (exit 3)",
    )
    add_audit_arguments(reading)
    dry = run.add_argument_group("dry run (requests, tokens, cost and time before a run)")
    dry.add_argument(
        "--dry-run",
        action="store_true",
        help="play the scenario on the scripted double in memory and print the requests per "
        "role, tokens, cost and wall time the run would take; nothing is written without --out",
    )
    dry.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="with --dry-run: a price table (TOML, USD per million tokens), not the shipped one",
    )
    dry.add_argument(
        "--latency",
        type=SECONDS,
        metavar="SECONDS",
        help="with --dry-run: seconds a request is assumed to take (default 2)",
    )
    dry.add_argument(
        "--tokenizer",
        type=Path,
        metavar="FILE.gguf",
        help="with --dry-run: count tokens with this GGUF model file or OpenAI .tiktoken file",
    )
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.lifecycle.run_signals import stops_raise

    with stops_raise():  # from the first line: a stop during start-up is said, not silent
        if args.out is not None and not args.dry_run:  # named before the slow imports
            from personasim.simulation.runs.lifecycle.run_lock import refuse_if_locked

            refuse_if_locked(args.out, "then resume" if args.resume else "or choose another --out")
        from personasim.simulation.runs.lifecycle.run_dir import RunError
        from personasim.simulation.runs.lifecycle.scenario_file import resolve_scenario

        scenario = resolve_scenario(args.scenario)
        params = scenario.parse_params(scenario_arguments(args, extra, scenario))
        if args.dry_run:
            if args.resume:
                raise RunError("--dry-run plays a new run; it cannot --resume one")
            return _dry_run(scenario, params, args)
        dry_only = (("--prices", args.prices), ("--latency", args.latency))
        for flag, value in (*dry_only, ("--tokenizer", args.tokenizer)):
            if value is not None:
                raise RunError(f"{flag} is used only with --dry-run; add --dry-run or leave it out")
        return play(scenario, params, args)


def play(scenario: Any, params: Any, args: argparse.Namespace) -> int:
    """Run `scenario` with the command's run options and print its summary; the exit status
    (`counterfactual` plays its design through here too)."""
    from personasim.simulation.runs.lifecycle.run_signals import RunStopped, stops_raise
    from personasim.simulation.runs.runner import run_scenario

    with stops_raise():
        config = run_config(
            args, model=args.model, out=args.out, resume=args.resume, retry_failed=args.retry_failed
        )
        result = run_scenario(scenario, params, config=config, console=err)
        try:
            return _report(result, args)
        except RunStopped as exc:  # the run is complete: nothing to resume
            exc.complete_run_dir = result.run_dir  # type: ignore[attr-defined]
            raise


def _report(result: Any, args: argparse.Namespace) -> int:
    """The summary of a finished run (and its reading audit); the exit status."""
    for line in result.report:
        out.print(line)
    if "note" in result.manifest["model"]:
        out.print(f"model: {result.manifest['model']['note']}")
    out.print(calls_line(result.manifest))
    valid = result.valid
    if getattr(args, "audit", None):
        valid = _audit_after_run(result.run_dir, args) and valid
    for line in where_lines(result.run_dir):
        out.print(line)
    return 0 if valid else NOT_VALID


def _audit_after_run(run_dir: Path, args: argparse.Namespace) -> bool:
    """`--audit N`: the reading audit of the finished run, printed; whether it passed."""
    from personasim.simulation.runs.lifecycle.reading_audit import audit_failure, audit_summary
    from personasim.simulation.runs.tools.audit_run import audit_run

    result = audit_run(run_dir, audit_options(args, args.audit))
    out.print(f"reading audit ({result['audit']['auditor']}):", markup=False)
    for line in audit_summary(result["audit"]):
        out.print(f"  {line}", markup=False)
    if failure := audit_failure(result["manifest"]["validity"]):
        out.print(f"RUN NOT VALID: {failure}", markup=False)
    return bool(result["audit"]["ok"])


def _dry_run(scenario: Any, params: Any, args: argparse.Namespace) -> int:
    """`--dry-run`: the estimate of the run these arguments would make."""
    import asyncio

    from personasim.simulation.runs.tools.dry_run import ASSUMED_LATENCY_S, adry_run

    estimate = asyncio.run(
        adry_run(
            scenario,
            params,
            config=run_config(args, model=args.model, out=args.out),
            latency_s=args.latency or ASSUMED_LATENCY_S,
            prices=args.prices,
            tokenizer=args.tokenizer,
        )
    )
    for line in estimate.lines():
        out.print(line)
    return 0


def calls_line(manifest: dict[str, Any]) -> str:
    """Calls, cache hits, failed calls (model calls that ended in an error, the manifest's
    `llm.failures`) and failed decisions (no usable answer, what makes a run not valid), named
    apart since either can be 0 while the other is not; tokens only where a language model
    answered (the scripted model counts words, not tokens)."""
    from personasim.simulation.llm.roles import is_scripted

    llm, overall = manifest["llm"], manifest["validity"]["overall"]
    line = (
        f"model calls {llm['calls']}, cache hits {llm['cache_hits']}, failed calls "
        f"{llm['failures']}, failed decisions {overall['failed']}"
    )
    if overall.get("context_exceeded"):
        line += f" ({overall['context_exceeded']} outgrew the model's context)"
    if llm.get("hedged"):  # duplicates of hung requests, some beyond the concurrency
        beyond = llm.get("beyond_limit", 0)
        line += f", hedged calls {llm['hedged']} ({beyond} beyond --concurrency)"
    specs = [spec for specs in manifest.get("roles", {}).values() for spec in specs]
    if all(is_scripted(spec) for spec in specs):
        return line
    tokens = f"tokens {llm['prompt_tokens']}+{llm['completion_tokens']} (prompt+completion)"
    if any(is_scripted(spec) for spec in specs):
        tokens += ", the scripted roles' word counts included"
    return f"{line}, {tokens}"


def where_lines(run_dir: Path) -> list[str]:
    """Where the run went and how to look at it: the last lines of a run's summary."""
    from personasim.simulation.runs.lifecycle.run_dir import REPORTS_DIR

    lines = [f"run directory: {run_dir}"]
    if (run_dir / REPORTS_DIR).is_dir():
        lines.append(f"reports (tables, figures): {run_dir / REPORTS_DIR}")
    lines.append(f"to look at it: personasim view {shlex.quote(str(run_dir))}")
    return lines
