"""What the commands share: the consoles, argparse types, the options of `run` and `sweep`, the
`error:` line and opening a run's log.

Nothing heavy is imported here at module level: each helper imports the kernel part it needs
when it runs, so `personasim --help` stays fast.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from personasim.simulation.core.scenario import ScenarioError, split_list
from personasim.simulation.llm.chat import RESPONSE_FORMATS

if TYPE_CHECKING:
    from personasim.simulation.log.sqlite_store import SQLiteEventStore
    from personasim.simulation.runs.runner import RunSettings

__all__ = [
    "NOT_VALID",
    "add_run_arguments",
    "base_urls",
    "client_options",
    "err",
    "fail",
    "int_from",
    "open_store",
    "out",
    "positive",
    "run_options",
    "scenario_values",
    "seed_list",
    "size",
]

NOT_VALID = 3
"""Exit code of a run that finished with a failure rate over its limit."""

out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def fail(message: str, code: int) -> int:
    """One `error:` line; the message is escaped, so brackets in it are shown, not styled."""
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True)
    return code


def add_client_arguments(parser: argparse.ArgumentParser) -> None:
    """The model client's limits, retries and cache, for commands that ask a model about a
    finished run (`rescore`, `audit`)."""
    parser.add_argument(
        "--concurrency", type=int_from(1), default=16, help="model requests in flight"
    )
    parser.add_argument("--rpm", type=positive, help="at most this many requests per minute")
    parser.add_argument("--timeout", type=positive, default=60.0, help="seconds per attempt")
    parser.add_argument("--max-attempts", type=int_from(1), default=5, help="attempts per request")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--cache-dir", type=Path, help="response cache location")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """What `run` and `sweep` share: the seed, the endpoint and its limits, the cache, and
    the settings; a sweep passes every one of them to each of its runs."""
    parser.add_argument("--seed", type=int_from(0), default=0, help="seed of the run's draws")
    parser.add_argument(
        "--base-url",
        action="append",
        metavar="URL",
        help="OpenAI-compatible endpoint; key from OPENAI_API_KEY. Given more than once: one "
        "pool of replicas of the model, requests spread over them (docs/endpoints.md)",
    )
    parser.add_argument(
        "--endpoints",
        type=Path,
        metavar="FILE",
        help="pools of replicas (TOML or YAML), used as --model openai:NAME@pool:POOL",
    )
    parser.add_argument(
        "--concurrency", type=int_from(1), default=16, help="model requests in flight"
    )
    parser.add_argument("--rpm", type=positive, help="at most this many requests per minute")
    parser.add_argument(
        "--workers",
        type=int_from(1),
        default=1,
        help="processes that run the decisions, each with its share of the limits; results "
        "are the same (docs/performance.md)",
    )
    parser.add_argument("--timeout", type=positive, default=60.0, help="seconds per attempt")
    parser.add_argument("--max-attempts", type=int_from(1), default=5, help="attempts per request")
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


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """The model client's keyword arguments (cache, limits, retries, progress): a run's and a
    rescore's."""
    from personasim.simulation.llm.client import RetryPolicy

    return dict(
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        retry=RetryPolicy(max_attempts=args.max_attempts, timeout=args.timeout),
        progress=not args.no_progress,
        console=err,
    )


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """`run_scenario`'s keyword arguments from the options `add_run_arguments` added."""
    return dict(
        seed=args.seed,
        base_url=base_urls(args),
        endpoints=args.endpoints,
        **client_options(args),
        settings=_settings(args),
        roles=_roles(args),
        prompts=args.prompts,
        allow_endpoint_change=args.allow_endpoint_change,
        workers=args.workers,
    )


def base_urls(args: argparse.Namespace) -> str | list[str] | None:
    """`--base-url` as given: one URL (a string, as always), several (a pool), or None."""
    urls: list[str] | None = args.base_url
    if not urls:
        return None
    return urls[0] if len(urls) == 1 else urls


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
    parser.add_argument("--max-tokens", type=int_from(1), help="cap on every reply's tokens")
    parser.add_argument(
        "--max-failure-rate",
        type=float,
        default=0.2,
        help="above this share of failed decisions the run is marked not valid (exit 3)",
    )
    parser.add_argument(
        "--min-group-n", type=int_from(1), default=5, help="groups smaller than this are flagged"
    )


def _roles(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    from personasim.simulation.llm.roles import RoleError, parse_role_args
    from personasim.simulation.runs.runner import RunError

    try:
        return parse_role_args(args.role, split_list)
    except RoleError as exc:
        raise RunError(str(exc)) from None


def _settings(args: argparse.Namespace) -> RunSettings:
    from personasim.simulation.runs.runner import RunError, RunSettings
    from personasim.simulation.runs.validity import ValidityLimits

    try:
        validity = ValidityLimits(args.max_failure_rate, args.min_group_n)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    return RunSettings(args.response_format, args.max_tokens, validity)


def seed_list(text: str) -> list[int]:
    """An argparse type: comma-separated seeds (whole numbers of at least 0), each once."""
    seeds = [int_from(0)(item) for item in split_list(text)]
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"give one or more seeds, each once, got {text!r}")
    return seeds


def int_from(low: int) -> Callable[[str], int]:
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


def positive(text: str) -> float:
    """An argparse type: a finite number greater than 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, got {text!r}")
    return value


def scenario_values(tokens: Sequence[str], switches: Collection[str] = ()) -> dict[str, str]:
    """`--n-personas 50 --endowment=44` → {"n_personas": "50", "endowment": "44"}; a boolean
    parameter named in `switches` also goes as `--big-five` ("true") and `--no-big-five`
    ("false"), as a user expects of an on/off flag."""
    values: dict[str, str] = {}
    items = list(tokens)
    while items:
        token = items.pop(0)
        if not token.startswith("--") or token == "--":
            raise ScenarioError(
                f"unexpected argument {token!r}; scenario parameters are --name value"
            )
        name, has_value, value = token[2:].partition("=")
        field = name.replace("-", "_")
        if field.startswith("no_") and field[3:] in switches:
            if has_value:
                raise ScenarioError(f"--{name} takes no value (--{name[3:]} {value} does)")
            field, value = field[3:], "false"
        elif not has_value:
            value = _value_after(name, items, field in switches)
        values[field] = value
    return values


def _value_after(name: str, items: list[str], switch: bool) -> str:
    """The value after `--name` (taken from `items`); a switch with none is on."""
    if items and not items[0].startswith("--"):
        return items.pop(0)
    if switch:
        return "true"
    raise ScenarioError(f"--{name} needs a value")


def open_store(run_dir: Path) -> SQLiteEventStore:
    """A run's event log for reading; a clear error when `run_dir` is not a run directory."""
    from personasim.simulation.log.sqlite_store import SQLiteEventStore
    from personasim.simulation.runs.runner import EVENTS_FILE, RunError, read_manifest

    read_manifest(run_dir)  # a clear error when this is not a run directory
    _note_if_running(run_dir)
    if not (run_dir / EVENTS_FILE).is_file():  # opening would create an empty log
        raise RunError(f"{run_dir}: no {EVENTS_FILE} (the run's event log); nothing to read")
    return SQLiteEventStore(run_dir / EVENTS_FILE)


def _note_if_running(run_dir: Path) -> None:
    """Readers work on a run being written (the log is SQLite in WAL mode) and say so."""
    from personasim.simulation.runs.run_lock import describe_holder, lock_holder

    if (holder := lock_holder(run_dir)) is not None:
        err.print(
            f"note: {run_dir} is still running ({describe_holder(holder)}); what follows "
            "covers the events logged so far",
            markup=False,
        )


def size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} bytes"
    if n_bytes < 1024**2:
        return f"{n_bytes / 1024:.1f} KiB"
    return f"{n_bytes / 1024**2:.1f} MiB"
