"""The `personasim` command: run, sweep, list, replay, metrics, export, cache, view.

Errors the user can fix are printed as one `error:` line with a non-zero exit (2 for bad input,
1 for a run that failed, 130 for Ctrl-C); a run that finished but is not valid (too many failed
decisions) exits 3; tracebacks are for bugs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath
from types import UnionType
from typing import Any, Literal, NoReturn, Union, get_args, get_origin

from rich.console import Console
from rich.markup import escape

from personasim.simulation.cli.import_command import add_import_command
from personasim.simulation.core.scenario import Scenario, ScenarioError, list_scenarios, split_list
from personasim.simulation.llm.cache import CacheError, cache_info, clear_cache
from personasim.simulation.llm.chat import RESPONSE_FORMATS, LLMError
from personasim.simulation.llm.client import RetryPolicy
from personasim.simulation.llm.roles import RoleError, parse_role_args
from personasim.simulation.log.event_log import ResumeMismatchError
from personasim.simulation.log.sqlite_store import EventStoreError, SQLiteEventStore
from personasim.simulation.runs.event_data import (
    PARQUET_FILE,
    run_events,
    sweep_events,
    write_parquet,
)
from personasim.simulation.runs.replay import (
    agent_events,
    export_jsonl,
    render_overview,
    render_trajectory,
)
from personasim.simulation.runs.run_lock import RunLockedError, describe_holder, lock_holder
from personasim.simulation.runs.run_signals import RunStopped
from personasim.simulation.runs.runner import (
    EVENTS_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    RunError,
    RunSettings,
    compute_run_metrics,
    read_manifest,
    run_scenario,
    write_run_reports,
)
from personasim.simulation.runs.salvage import salvage_run
from personasim.simulation.runs.scenario_file import (
    is_scenario_path,
    resolve_scenario,
    scenario_for_run,
)
from personasim.simulation.runs.sweep import EXECUTORS, run_sweep
from personasim.simulation.runs.validity import ValidityLimits
from personasim.simulation.runs.viewer import ViewServer, collect_run, render_page, write_page

__all__ = ["main"]

INPUT_ERRORS = (
    ScenarioError,
    RunError,
    EventStoreError,
    ResumeMismatchError,
    CacheError,
    RunLockedError,
)
NOT_VALID = 3
"""Exit code of a run that finished with a failure rate over its limit."""

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class _UsageError(Exception):
    """A command line argparse rejects."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one `error:` line (exit 2) like every other error."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see {self.prog} --help)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and args.command not in ("run", "sweep", "import"):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except _UsageError as exc:
        return _fail(str(exc), 2)
    try:
        return args.handler(args, extra)
    except KeyboardInterrupt:
        err.print("interrupted; the run directory is marked interrupted and can be resumed")
        return 130
    except RunStopped as exc:
        return _stopped(exc, list(sys.argv[1:] if argv is None else argv))
    except INPUT_ERRORS as exc:
        resumable = not isinstance(exc, ResumeMismatchError)
        if resumable and getattr(exc, "run_dir", None) is not None:  # mid-run: a full disk...
            return _fail(f"{exc}{_marked(exc)}", 1)
        return _fail(str(exc), 2)
    except LLMError as exc:
        return _fail(f"model call failed: {exc}{_marked(exc)}", 1)
    except OSError as exc:  # a full disk, a folder that went away: no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}{_marked(exc)}", 1)


def _marked(exc: BaseException) -> str:
    """Where a run that failed part-way stands, for the end of its error line."""
    run_dir = getattr(exc, "run_dir", None)
    if run_dir is None:
        return ""
    if manifest_error := getattr(exc, "manifest_error", None):
        return (
            f"; {run_dir} stays marked interrupted, without this reason (its manifest could "
            f"not be rewritten: {manifest_error}); --resume --out {run_dir} continues once fixed"
        )
    return f"; {run_dir} is marked interrupted (--resume --out {run_dir} continues)"


def _stopped(exc: RunStopped, argv: list[str]) -> int:
    """A run stopped by SIGTERM or SIGINT: what happened and the command that resumes it."""
    run_dir = getattr(exc, "run_dir", None)
    command = list(argv)
    if run_dir is not None and command[:1] == ["run"]:
        if not any(a == "--out" or a.startswith("--out=") for a in command):
            command += ["--out", str(run_dir)]
        if "--resume" not in command:
            command.append("--resume")
    where = f"{run_dir} is marked interrupted; " if run_dir is not None else ""
    err.print(f"{exc}: {where}resume with: {shlex.join(['personasim', *command])}", markup=False)
    return exc.exit_code


def _fail(message: str, code: int) -> int:
    """One `error:` line; the message is escaped, so brackets in it are shown, not styled."""
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True)
    return code


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="personasim",
        description="Simulate LLM persona agents and replay what they did.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "run",
        allow_abbrev=False,  # a scenario's --mode must not be taken for --model
        help="run or resume a scenario",
        description="Run a scenario. Scenario parameters go as --name value (see `list`).",
    )
    run.add_argument("scenario", help="a scenario's name, or a .py file that defines one")
    run.add_argument(
        "--model",
        default="scripted",
        help="'scripted', 'scripted:drift=0.15' (real models' habits) or 'openai:MODEL_NAME'",
    )
    run.add_argument("--out", type=Path, help="run directory (default runs/SCENARIO-TIME)")
    run.add_argument("--resume", action="store_true", help="continue the interrupted run in --out")
    run.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: ask again the units whose model call ran out of attempts",
    )
    _add_run_arguments(run)
    run.set_defaults(handler=_run)

    sweep = commands.add_parser(
        "sweep",
        allow_abbrev=False,
        help="one scenario over models and parameter values, into one combined table",
        description="Run SCENARIO for every model and every combination of --vary values "
        "(each an ordinary run under --out), then write OUT/combined.csv and .md. "
        "Other scenario parameters go as --name value.",
    )
    sweep.add_argument("scenario", help="a scenario's name, or a .py file that defines one")
    sweep.add_argument("--models", default="scripted", help="comma-separated model specs")
    sweep.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a parameter and its values (repeatable)",
    )
    sweep.add_argument(
        "--seeds",
        type=_seed_list,
        metavar="S1,S2",
        help="run every cell once per seed (a dimension of the sweep; replaces --seed)",
    )
    sweep.add_argument("--out", type=Path, required=True, help="folder for the runs and tables")
    sweep.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: cells one after another; ray: each cell a Ray task (the ray extra), "
        "endpoint limits held across all cells",
    )
    sweep.add_argument(
        "--ray-address", help="Ray cluster to join (default: a local one; see docs/sweeps.md)"
    )
    _add_run_arguments(sweep)
    sweep.set_defaults(handler=_sweep)

    prompts = commands.add_parser(
        "prompts", help="write a scenario's prompt pack (its texts and their sources)"
    )
    prompts.add_argument("scenario")
    prompts.add_argument("--output", type=Path, help="file to write (default: standard output)")
    prompts.set_defaults(handler=_prompts)

    listing = commands.add_parser("list", help="scenarios, their parameters and defaults")
    listing.add_argument(
        "scenario", nargs="?", help="only this scenario: a name, or a .py file that defines one"
    )
    listing.set_defaults(handler=_list)

    replay = commands.add_parser("replay", help="an agent's trajectory, step by step")
    replay.add_argument("run_dir", type=Path)
    replay.add_argument("--agent", help="agent id (without it: the run's agents)")
    replay.add_argument("--brief", action="store_true", help="last message only, truncated")
    replay.set_defaults(handler=_replay)

    metrics = commands.add_parser("metrics", help="recompute metrics.json from the log alone")
    metrics.add_argument("run_dir", type=Path)
    metrics.add_argument("--check", action="store_true", help="only compare; exit 1 if different")
    metrics.set_defaults(handler=_metrics)

    export = commands.add_parser("export", help="write the events in the documented schema")
    export.add_argument("run_dir", type=Path, help="a run directory (parquet: or a sweep's)")
    export.add_argument(
        "--format",
        choices=["jsonl", "parquet"],
        default="jsonl",
        help="jsonl: one JSON object per event; parquet: one row per event, payload fields "
        "flattened, a sweep's cells in one file (docs/sweeps.md)",
    )
    export.add_argument(
        "--output",
        type=Path,
        help="file to write, - for stdout (jsonl only; default RUN_DIR/events.jsonl|parquet)",
    )
    export.add_argument(
        "--salvage",
        action="store_true",
        help="copy the events a damaged log can still read into a new run directory "
        "(--output, default RUN_DIR-salvaged) that --resume can finish",
    )
    export.set_defaults(handler=_export)
    _add_cache_commands(commands)
    _add_view_command(commands)
    add_import_command(commands, out)
    return parser


def _add_cache_commands(commands: Any) -> None:
    """`personasim cache info|clear`: the response cache (default ./.personasim/cache)."""
    cache = commands.add_parser("cache", help="the response cache: where, how big; clear it")
    actions = cache.add_subparsers(dest="action", required=True)
    for name, handler, text in (
        ("info", _cache_info, "location, entries and size on disk"),
        ("clear", _cache_clear, "delete every cached response (runs keep their own answers)"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("--cache-dir", type=Path, help="cache location (default as for run)")
        action.set_defaults(handler=handler)


def _add_view_command(commands: Any) -> None:
    """`personasim view RUN_DIR [RUN_DIR ...]`: the runs as one self-contained HTML page."""
    view = commands.add_parser("view", help="inspect runs in a browser (one HTML file, offline)")
    view.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR", help="2+: compare")
    view.add_argument("--output", type=Path, help="HTML file to write (default RUN_DIR/view.html)")
    view.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 instead")
    view.add_argument("--port", type=_int_from(0), default=8000, help="with --serve (0: any free)")
    view.set_defaults(handler=_view)


def _view(args: argparse.Namespace, extra: Sequence[str]) -> int:
    runs = []
    for run_dir in args.run_dirs:
        with _open_store(run_dir) as store:
            runs.append(collect_run(run_dir, store))
    html = render_page(runs)
    if args.serve:
        try:
            server = ViewServer(html, args.port)
        except OSError as exc:
            reason = f"cannot serve on 127.0.0.1:{args.port} ({exc.strerror})"
            raise RunError(f"{reason}; choose another --port (0: any free)") from None
        out.print(f"serving {len(runs)} run(s) at {server.url} (Ctrl-C stops)")
        with server:
            server.serve_forever()
        return 0
    target = args.output or args.run_dirs[0] / "view.html"
    try:
        write_page(html, target)
    except OSError as exc:
        raise RunError(f"cannot write {target} ({exc.strerror}); choose another --output") from None
    size = target.stat().st_size
    out.print(f"{target}: {_size(size)}, {sum(len(r['agents']['rows']) for r in runs)} agents")
    return 0


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """What `run` and `sweep` share: the seed, the endpoint and its limits, the cache, and
    the settings; a sweep passes every one of them to each of its runs."""
    parser.add_argument("--seed", type=_int_from(0), default=0)
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint; key from OPENAI_API_KEY")
    parser.add_argument(
        "--concurrency", type=_int_from(1), default=16, help="model requests in flight"
    )
    parser.add_argument("--rpm", type=_positive, help="at most this many requests per minute")
    parser.add_argument("--timeout", type=_positive, default=60.0, help="seconds per attempt")
    parser.add_argument("--max-attempts", type=_int_from(1), default=5, help="attempts per request")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--cache-dir", type=Path, help="response cache location")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--allow-endpoint-change",
        action="store_true",
        help="with --resume: the model's endpoint URL changed but serves the same model "
        "(recorded in the manifest)",
    )
    _add_settings_arguments(parser)


def _run_options(args: argparse.Namespace) -> dict[str, Any]:
    """`run_scenario`'s keyword arguments from the options `_add_run_arguments` added."""
    return dict(
        seed=args.seed,
        base_url=args.base_url,
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        retry=RetryPolicy(max_attempts=args.max_attempts, timeout=args.timeout),
        progress=not args.no_progress,
        console=err,
        settings=_settings(args),
        roles=_roles(args),
        prompts=args.prompts,
        allow_endpoint_change=args.allow_endpoint_change,
    )


def _add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """Who answers, how decisions are asked for and when a run counts as valid."""
    parser.add_argument(
        "--prompts",
        type=Path,
        metavar="FILE",
        help="an edited prompt pack (`personasim prompts SCENARIO` writes the shipped one)",
    )
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="NAME=MODEL[,MODEL]",
        help="the model(s) playing one of the scenario's roles (repeatable; `list` shows the "
        "roles); --model plays the others",
    )
    parser.add_argument(
        "--response-format",
        choices=RESPONSE_FORMATS,
        default="text",
        help="text: the prompts' own format; json_schema (OpenAI, vLLM) or json_object "
        "(llama.cpp's server): JSON constrained by each answer's schema",
    )
    parser.add_argument("--max-tokens", type=_int_from(1), help="cap on every reply's tokens")
    parser.add_argument(
        "--max-failure-rate",
        type=float,
        default=0.2,
        help="above this share of failed decisions the run is marked not valid (exit 3)",
    )
    parser.add_argument(
        "--min-group-n", type=_int_from(1), default=5, help="groups smaller than this are flagged"
    )


def _roles(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    try:
        return parse_role_args(args.role, split_list)
    except RoleError as exc:
        raise RunError(str(exc)) from None


def _settings(args: argparse.Namespace) -> RunSettings:
    try:
        validity = ValidityLimits(args.max_failure_rate, args.min_group_n)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    return RunSettings(args.response_format, args.max_tokens, validity)


def _seed_list(text: str) -> list[int]:
    """An argparse type: comma-separated seeds (whole numbers of at least 0), each once."""
    seeds = [_int_from(0)(item) for item in split_list(text)]
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"give one or more seeds, each once, got {text!r}")
    return seeds


def _int_from(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least `low` (argparse names the flag)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be an integer of at least {low}, got {text!r}")
        return value

    return parse


def _positive(text: str) -> float:
    """An argparse type: a finite number greater than 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, got {text!r}")
    return value


def scenario_values(tokens: Sequence[str]) -> dict[str, str]:
    """`--n-personas 50 --endowment=44` → {"n_personas": "50", "endowment": "44"}."""
    values: dict[str, str] = {}
    items = list(tokens)
    while items:
        token = items.pop(0)
        if not token.startswith("--") or token == "--":
            raise ScenarioError(
                f"unexpected argument {token!r}; scenario parameters are --name value"
            )
        name, has_value, value = token[2:].partition("=")
        if not has_value:
            if not items or items[0].startswith("--"):
                raise ScenarioError(f"--{name} needs a value")
            value = items.pop(0)
        values[name.replace("-", "_")] = value
    return values


def _run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    scenario = resolve_scenario(args.scenario)
    params = scenario.parse_params(scenario_values(extra))
    result = run_scenario(
        scenario,
        params,
        model=args.model,
        out=args.out,
        resume=args.resume,
        retry_failed=args.retry_failed,
        **_run_options(args),
    )
    llm = result.manifest["llm"]
    for line in result.report:
        out.print(line)
    if "note" in result.manifest["model"]:
        out.print(f"model: {result.manifest['model']['note']}")
    out.print(
        f"model calls {llm['calls']}, cache hits {llm['cache_hits']}, failures {llm['failures']}, "
        f"tokens {llm['prompt_tokens']}+{llm['completion_tokens']}"
    )
    out.print(f"run directory: {result.run_dir}")
    return 0 if result.valid else NOT_VALID


def _sweep(args: argparse.Namespace, extra: Sequence[str]) -> int:
    grid = {}
    for item in args.vary:
        name, sep, values = item.partition("=")
        if not sep or not values:
            raise ScenarioError(f"--vary {item!r}: use NAME=V1,V2 (e.g. endowment=10,44,100)")
        grid[name.replace("-", "_")] = values.split(",")
    result = run_sweep(
        args.scenario,
        [m for m in split_list(args.models) if m],
        grid,
        scenario_values(extra),
        out=args.out,
        executor=args.executor,
        ray_address=args.ray_address,
        seeds=args.seeds,
        **_run_options(args),
    )
    out.print(f"{len(result.runs)} runs under {result.directory}")
    if result.failed:
        for failure in result.failed:
            err.print(f"cell {failure.cell} failed: {failure.error}", markup=False)
        names = ", ".join(failure.cell for failure in result.failed)
        return _fail(
            f"{len(result.failed)} of {len(result.failed) + len(result.runs)} cells failed "
            f"({names}); no combined table written; the same command resumes them",
            1,
        )
    for report in result.reports:
        out.print(f"  {report}")
    invalid = [str(run.run_dir) for run in result.runs if not run.valid]
    if invalid:
        out.print(f"NOT VALID (failure rate over the limit): {', '.join(invalid)}")
        return NOT_VALID
    return 0


def _prompts(args: argparse.Namespace, extra: Sequence[str]) -> int:
    scenario = resolve_scenario(args.scenario)
    pack = scenario.shipped_prompts()
    if pack is None:
        raise ScenarioError(f"{scenario.name} has no prompt pack")
    text = Path(pack.path).read_text(encoding="utf-8")
    if args.output is None:
        sys.stdout.write(text)
        return 0
    if args.output.exists() and args.output.is_dir():
        raise RunError(f"--output {args.output} is a directory; name a file")
    args.output.write_text(text, encoding="utf-8")
    err.print(f"{scenario.name}: {len(pack.entries)} prompts written to {args.output}")
    return 0


def _list(args: argparse.Namespace, extra: Sequence[str]) -> int:
    scenarios: dict[str, type[Scenario]]
    if args.scenario is None:
        scenarios = list_scenarios()
    else:
        scenario = resolve_scenario(args.scenario)
        scenarios = {scenario.name: scenario}
    for name, scenario in scenarios.items():
        origin = f" ({args.scenario})" if args.scenario and is_scenario_path(args.scenario) else ""
        out.print(f"{name} — {scenario.summary}{origin}", style="bold")
        for role_name, role in scenario.roles.items():
            seats = "" if role.max_models == 1 else f" ({role.arity()})"
            seats += " (optional: only when --role names it)" if role.optional else ""
            out.print(f"  role {role_name:<15} {role.description}{seats}")
        for field, info in scenario.Params.model_fields.items():
            flag = "--" + field.replace("_", "-")
            kind = type_label(info.annotation)
            default = "required" if info.is_required() else _default(info.default)
            out.print(f"  {flag:<24} {kind:<12} {default:<22} {info.description or ''}")
    return 0


def type_label(annotation: Any) -> str:
    """A parameter's type as a user types it: int, float, FILE, LIST, or the choices a|b|c."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return "|".join(map(str, args))
    if origin in (tuple, list):
        return f"{type_label(args[0])},..." if args else "LIST"
    if origin in (Union, UnionType):
        return "|".join(type_label(a) for a in args if a is not type(None))
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return "FILE"
    return getattr(annotation, "__name__", str(annotation))


def _default(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(map(str, value)) if len(value) < 3 else f"{value[0]},… ({len(value)})"
    return str(value)


def _open_store(run_dir: Path) -> SQLiteEventStore:
    read_manifest(run_dir)  # a clear error when this is not a run directory
    _note_if_running(run_dir)
    if not (run_dir / EVENTS_FILE).is_file():  # opening would create an empty log
        raise RunError(f"{run_dir}: no {EVENTS_FILE} (the run's event log); nothing to read")
    return SQLiteEventStore(run_dir / EVENTS_FILE)


def _note_if_running(run_dir: Path) -> None:
    """Readers work on a run being written (the log is SQLite in WAL mode) and say so."""
    if (holder := lock_holder(run_dir)) is not None:
        err.print(
            f"note: {run_dir} is still running ({describe_holder(holder)}); what follows "
            "covers the events logged so far",
            markup=False,
        )


def _replay(args: argparse.Namespace, extra: Sequence[str]) -> int:
    with _open_store(args.run_dir) as store:
        if args.agent is None:
            lines = render_overview(store)
        else:
            events = agent_events(store, args.agent)
            if not events:
                raise RunError(
                    f"no agent {args.agent!r} in {args.run_dir}; run replay without "
                    "--agent to list them"
                )
            lines = render_trajectory(events, full=not args.brief)
        for line in lines:
            out.print(line, markup=False)
    return 0


def _metrics(args: argparse.Namespace, extra: Sequence[str]) -> int:
    scenario, note = scenario_for_run(read_manifest(args.run_dir))
    if note:
        err.print(f"note: {note}")
    with _open_store(args.run_dir) as store:
        metrics = compute_run_metrics(store, scenario)
        log_ok = _check_log_against_manifest(args.run_dir, store) if args.check else True
    path = args.run_dir / METRICS_FILE
    text = json.dumps(metrics, indent=2, sort_keys=True, allow_nan=False) + "\n"
    same = path.exists() and path.read_text() == text
    if args.check:
        out.print(f"{path}: {'identical to' if same else 'DIFFERS from'} the recomputed metrics")
        return 0 if same and log_ok else 1
    path.write_text(text)
    state = "unchanged" if same else "written"
    out.print(f"{path}: {state} (recomputed from {EVENTS_FILE}, no model call)")
    if metrics["partial"]:
        out.print("partial: the run did not complete, so these metrics cover only its events")
    for report in write_run_reports(args.run_dir, metrics, scenario):
        out.print(f"  {report}")
    return 0


def _check_log_against_manifest(run_dir: Path, store: SQLiteEventStore) -> bool:
    """The log's event count and hash against what the manifest recorded when the run last
    stopped or finished; False when they differ."""
    recorded = read_manifest(run_dir).get("log")
    path = run_dir / EVENTS_FILE
    if not recorded or recorded.get("events") is None:
        out.print(
            f"{path}: the manifest records no event count or hash (a run still running, or "
            "written by an older personasim); not compared"
        )
        return True
    count, sha256 = store.digest()
    if recorded == {"events": count, "sha256": sha256}:
        out.print(f"{path}: {count} events, identical to what the manifest recorded")
        return True
    out.print(
        f"{path}: DIFFERS from the manifest: it recorded {recorded['events']} events (sha256 "
        f"{recorded['sha256'][:12]}…), the log holds {count} (sha256 {sha256[:12]}…)"
    )
    return False


def _export(args: argparse.Namespace, extra: Sequence[str]) -> int:
    if args.salvage:
        return _salvage(args)
    if args.format == "parquet":
        return _export_parquet(args.run_dir, args.output)
    target = args.output or args.run_dir / "events.jsonl"
    with _open_store(args.run_dir) as store:
        if str(target) == "-":  # stdout carries the events alone; the count goes to stderr
            if (written := _export_to_stdout(store)) is not None:
                err.print(f"{written} events written to stdout")
            return 0
        try:
            count = export_jsonl(store, target)
        except OSError as exc:
            reason = exc.strerror or exc
            raise RunError(f"cannot write {target} ({reason}); choose another --output") from None
    out.print(f"{count} events written to {target}")
    return 0


def _salvage(args: argparse.Namespace) -> int:
    """`export RUN --salvage`: the readable events of a damaged log into a new run directory."""
    result = salvage_run(args.run_dir, args.output)
    left = (
        f"; {result.left_out} readable events left out: the unit of work the damage may have "
        "cut, or rows after a gap"
        if result.left_out
        else ""
    )
    why = f" (reading stopped {result.stopped_by}{left})" if result.stopped_by else ""
    out.print(f"{result.kept} events copied to {result.target}{why}", markup=False)
    manifest = read_manifest(result.target)
    out.print(
        f"resume it with: personasim run {manifest['scenario']} --out {result.target} --resume "
        "and the run's original options",
        markup=False,
    )
    return 0


def _export_parquet(run_dir: Path, output: Path | None) -> int:
    """A run's events, or every cell's of a sweep (a folder of runs), as one Parquet file."""
    if output is not None and str(output) == "-":
        raise RunError("--output -: Parquet is binary; name a file (stdout is for jsonl)")
    is_sweep = run_dir.is_dir() and not (run_dir / MANIFEST_FILE).exists()
    frame = sweep_events(run_dir) if is_sweep else run_events(run_dir)
    target = output or run_dir / PARQUET_FILE
    count = write_parquet(frame, target)
    what = f" from {frame['cell'].nunique()} runs" if is_sweep else ""
    out.print(f"{count} events{what} written to {target}")
    return 0


def _export_to_stdout(store: SQLiteEventStore) -> int | None:
    """The events on stdout; None when the reader stopped early (`... | head`)."""
    try:
        count = export_jsonl(store, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return None
    return count


def _cache_info(args: argparse.Namespace, extra: Sequence[str]) -> int:
    info = cache_info(args.cache_dir)
    out.print(f"cache: {info.directory.resolve()}")
    out.print(f"entries: {info.entries}")
    out.print(f"size on disk: {_size(info.size_bytes)}")
    return 0


def _cache_clear(args: argparse.Namespace, extra: Sequence[str]) -> int:
    info = clear_cache(args.cache_dir)
    out.print(
        f"removed {info.entries} cached responses ({_size(info.size_bytes)}) from "
        f"{info.directory.resolve()}"
    )
    return 0


def _size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} bytes"
    if n_bytes < 1024**2:
        return f"{n_bytes / 1024:.1f} KiB"
    return f"{n_bytes / 1024**2:.1f} MiB"


if __name__ == "__main__":
    sys.exit(main())
