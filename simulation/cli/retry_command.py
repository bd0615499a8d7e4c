"""`personasim retry RUN`: resume a run with the settings its manifest recorded.

`run --resume` needs the command that started the run again, every field resume compares
included; the manifest holds them all, so this command needs only the run directory. What may
legitimately differ on a resume (the client's limits, the cache, where the endpoint or the
prompt pack is now) can be given; the resume itself is `run_scenario`'s (runs/tools/retry.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import (
    ATTEMPTS,
    CONCURRENCY,
    NOT_VALID,
    RPM,
    SECONDS,
    WORKERS,
    err,
    out,
)

__all__ = ["add_retry_command"]


def add_retry_command(commands: Any) -> None:
    retry = commands.add_parser(
        "retry",
        allow_abbrev=False,
        help="resume a run with the settings its manifest recorded",
        description="Resume the run in RUN (interrupted, or complete with failed calls and "
        "--retry-failed) with the scenario, parameters, seed, models, roles, prompts and "
        "settings its manifest recorded; the client limits too, unless given here. Keys come "
        "from the environment (OPENAI_API_KEY), as for `run`.",
    )
    retry.add_argument("run_dir", type=Path, metavar="RUN", help="a run directory")
    retry.add_argument(
        "--retry-failed",
        action="store_true",
        help="also ask again the units whose model call failed (out of attempts, or past the "
        "model's context)",
    )
    limits = retry.add_argument_group("limits (default: the run's own, from its manifest)")
    limits.add_argument(
        "--concurrency", type=CONCURRENCY, metavar="N", help="model requests in flight"
    )
    limits.add_argument(
        "--rpm", type=RPM, metavar="N", help="at most this many requests per minute"
    )
    limits.add_argument(
        "--workers", type=WORKERS, metavar="N", help="processes that run the decisions"
    )
    limits.add_argument("--timeout", type=SECONDS, metavar="SECONDS", help="seconds per attempt")
    limits.add_argument("--max-attempts", type=ATTEMPTS, metavar="N", help="attempts per request")
    limits.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    limits.add_argument("--cache-dir", type=Path, metavar="DIR", help="response cache location")
    limits.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    where = retry.add_argument_group("where things are now (checked against the run)")
    where.add_argument(
        "--base-url",
        action="append",
        metavar="URL",
        help="the model's endpoint, when not the one recorded (a new URL needs "
        "--allow-endpoint-change) or when a role's model used one the manifest does not hold",
    )
    where.add_argument(
        "--allow-endpoint-change",
        action="store_true",
        help="the endpoint URL changed but serves the same model (recorded in the manifest)",
    )
    where.add_argument(
        "--endpoints",
        type=Path,
        metavar="FILE",
        help="the endpoints file of a run on a pool (the manifest names the pool, not the file)",
    )
    where.add_argument(
        "--prompts",
        type=Path,
        metavar="FILE",
        help="the edited prompt pack the run used, when it is no longer at the recorded path",
    )
    where.add_argument(
        "--scenario-file",
        type=Path,
        metavar="FILE",
        help="a run of a scenario file: that file (its sha256 must be the one the run recorded; "
        "the path in a run directory is never followed)",
    )
    retry.set_defaults(handler=_retry)


def _retry(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.cli.run_command import calls_line, where_lines
    from personasim.simulation.runs.lifecycle.run_lock import (
        RunLockedError,
        describe_holder,
        lock_holder,
    )
    from personasim.simulation.runs.runner import run_scenario
    from personasim.simulation.runs.tools.retry import (
        nothing_to_retry,
        plan_retry,
        read_run_manifest,
    )

    run_dir: Path = args.run_dir
    manifest = read_run_manifest(run_dir)
    if (done := nothing_to_retry(run_dir, manifest, args.retry_failed)) is not None:
        out.print(done, markup=False)
        return 0
    if (holder := lock_holder(run_dir)) is not None:  # said before the plan loads anything
        raise RunLockedError(
            f"{run_dir} is still running ({describe_holder(holder)}); wait for it to end or "
            "stop it, then retry"
        )
    plan = plan_retry(
        run_dir,
        manifest,
        base_url=args.base_url,
        endpoints=args.endpoints,
        prompts=args.prompts,
        scenario_file=args.scenario_file,
    )
    config = plan.run_config(
        concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        timeout=args.timeout,
        max_attempts=args.max_attempts,
        workers=args.workers,
        retry_failed=args.retry_failed,
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        progress=not args.no_progress,
        allow_endpoint_change=args.allow_endpoint_change,
    )
    err.print(
        f"retrying {run_dir} ({manifest['status']}): {plan.scenario.name}, model {plan.model}, "
        f"seed {plan.seed}, concurrency {config.limits.concurrency}, workers {config.workers}"
        " — as its manifest recorded",
        markup=False,
    )
    result = run_scenario(plan.scenario, plan.params, config=config, console=err)
    for line in result.report:
        out.print(line, markup=False)
    if "note" in result.manifest["model"]:
        out.print(f"model: {result.manifest['model']['note']}", markup=False)
    out.print(calls_line(result.manifest), markup=False)
    for line in where_lines(result.run_dir):
        out.print(line, markup=False)
    return 0 if result.valid else NOT_VALID
