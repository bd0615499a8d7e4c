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
from personasim.simulation.llm.request_bounds import (
    MAX_ATTEMPTS,
    MAX_CONCURRENCY,
    MAX_RPM,
    MAX_TIMEOUT_S,
)

if TYPE_CHECKING:
    from personasim.simulation.log.sqlite_store import SQLiteEventStore
    from personasim.simulation.runs.lifecycle.run_config import RunConfig, RunSettings

__all__ = [
    "ATTEMPTS",
    "CONCURRENCY",
    "COUNT",
    "MAX_COUNT",
    "MAX_SEED",
    "MAX_TOKENS",
    "MAX_WORKERS",
    "NOT_VALID",
    "RPM",
    "SECONDS",
    "SEED",
    "WORKERS",
    "add_run_arguments",
    "base_urls",
    "client_options",
    "err",
    "fail",
    "int_from",
    "open_store",
    "out",
    "positive_up_to",
    "rate",
    "run_config",
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


# --- argparse types: every number bounded, the limit said in the error ----------------------

MAX_SEED = 2**63 - 1
"""Seeds are stored as SQLite integers (64 bits, signed) and given to NumPy as such."""
MAX_WORKERS = 256
"""Worker processes on one machine; each needs a share of at least one request in flight."""
MAX_TOKENS = 1_000_000
"""A reply's tokens: more than any model's context holds."""
MAX_COUNT = 1_000_000
"""Readings audited, the smallest group size flagged: no run has more units than this."""


def int_from(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer of at least `low` and, given, at most `high` (argparse
    names the flag)."""
    bound = f"of at least {low}" + (f" and at most {high}" if high is not None else "")

    def parse(text: str) -> int:
        try:
            value: int | None = int(text)
        except ValueError:  # not a whole number, or more digits than Python converts
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {_shown(text)}")
        return value

    return parse


def positive_up_to(high: float) -> Callable[[str], float]:
    """An argparse type: a finite number greater than 0 and at most `high`."""
    shown = int(high) if float(high).is_integer() else high

    def parse(text: str) -> float:
        value = _number(text)
        if not (0 < value <= high):  # NaN fails every comparison
            raise argparse.ArgumentTypeError(
                f"must be a number greater than 0 and at most {shown}, got {_shown(text)}"
            )
        return value

    return parse


def rate(text: str) -> float:
    """An argparse type: a share from 0 to 1."""
    value = _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {_shown(text)}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _shown(text: str) -> str:
    """The value as typed, cut short: a pasted megabyte stays off the error line."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text):,} characters)"


# The argparse types of the flags every command that runs a model shares (docs/performance.md
# states the limits).
SEED = int_from(0, MAX_SEED)
CONCURRENCY = int_from(1, MAX_CONCURRENCY)
WORKERS = int_from(1, MAX_WORKERS)
ATTEMPTS = int_from(1, MAX_ATTEMPTS)
COUNT = int_from(1, MAX_COUNT)
RPM = positive_up_to(MAX_RPM)
SECONDS = positive_up_to(MAX_TIMEOUT_S)


def add_client_arguments(parser: argparse.ArgumentParser) -> None:
    """The model client's limits, retries and cache: for commands that ask a model about a
    finished run (`rescore`, `audit`), and part of a run's own options."""
    parser.add_argument(
        "--concurrency", type=CONCURRENCY, default=16, help="model requests in flight"
    )
    parser.add_argument("--rpm", type=RPM, help="at most this many requests per minute")
    parser.add_argument("--timeout", type=SECONDS, default=60.0, help="seconds per attempt")
    parser.add_argument("--max-attempts", type=ATTEMPTS, default=5, help="attempts per request")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--cache-dir", type=Path, help="response cache location")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """What `run` and `sweep` share: the seed, the endpoint and its limits, the cache, and
    the settings; a sweep passes every one of them to each of its runs."""
    parser.add_argument("--seed", type=SEED, default=0, help="seed of the run's draws")
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
    add_client_arguments(parser)
    parser.add_argument(
        "--workers",
        type=WORKERS,
        default=1,
        help="processes that run the decisions, each with its share of the limits; results "
        "are the same (docs/performance.md)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--allow-endpoint-change",
        action="store_true",
        help="with --resume: the model's endpoint URL changed but serves the same model "
        "(recorded in the manifest)",
    )
    _add_settings_arguments(parser)


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """The model client's options (cache, limits, retries, progress) by their flat names: a
    run's, a rescore's and an audit's."""
    from personasim.simulation.llm.client import RetryPolicy

    return dict(
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        retry=RetryPolicy(max_attempts=args.max_attempts, timeout=args.timeout),
        progress=not args.no_progress,
    )


def run_config(args: argparse.Namespace, **fields: Any) -> RunConfig:
    """The run's `RunConfig` from the options `add_run_arguments` added, and the command's
    own `fields` (model, out, resume...)."""
    from personasim.simulation.runs.lifecycle.run_config import RunConfig

    return RunConfig.from_options(
        seed=args.seed,
        base_url=base_urls(args),
        endpoints=args.endpoints,
        **client_options(args),
        settings=_settings(args),
        roles=_roles(args),
        prompts=args.prompts,
        allow_endpoint_change=args.allow_endpoint_change,
        workers=args.workers,
        **fields,
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
    parser.add_argument(
        "--max-tokens", type=int_from(1, MAX_TOKENS), help="cap on every reply's tokens"
    )
    parser.add_argument(
        "--max-failure-rate",
        type=rate,
        default=0.2,
        help="above this share of failed decisions the run is marked not valid (exit 3)",
    )
    parser.add_argument(
        "--min-group-n", type=COUNT, default=5, help="groups smaller than this are flagged"
    )


def _roles(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    from personasim.simulation.llm.roles import RoleError, parse_role_args
    from personasim.simulation.runs.lifecycle.run_dir import RunError

    try:
        return parse_role_args(args.role, split_list)
    except RoleError as exc:
        raise RunError(str(exc)) from None


def _settings(args: argparse.Namespace) -> RunSettings:
    from personasim.simulation.runs.lifecycle.run_config import RunSettings
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.lifecycle.validity import ValidityLimits

    try:
        validity = ValidityLimits(args.max_failure_rate, args.min_group_n)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    return RunSettings(args.response_format, args.max_tokens, validity)


def seed_list(text: str) -> list[int]:
    """An argparse type: comma-separated seeds (whole numbers of at least 0), each once."""
    seeds = [SEED(item) for item in split_list(text)]
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"give one or more seeds, each once, got {text!r}")
    return seeds


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
    from personasim.simulation.runs.lifecycle.run_dir import EVENTS_FILE, RunError, read_manifest

    read_manifest(run_dir)  # a clear error when this is not a run directory
    _note_if_running(run_dir)
    if not (run_dir / EVENTS_FILE).is_file():  # opening would create an empty log
        raise RunError(f"{run_dir}: no {EVENTS_FILE} (the run's event log); nothing to read")
    return SQLiteEventStore(run_dir / EVENTS_FILE)


def _note_if_running(run_dir: Path) -> None:
    """Readers work on a run being written (the log is SQLite in WAL mode) and say so."""
    from personasim.simulation.runs.lifecycle.run_lock import describe_holder, lock_holder

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
