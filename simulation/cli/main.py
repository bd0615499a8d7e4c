"""The `personasim` command: builds the parser from one module per command and dispatches.

Errors the user can fix are printed as one `error:` line with a non-zero exit (2 for bad input,
1 for a run that failed, 130 for Ctrl-C); a run that finished but is not valid (too many failed
decisions) exits 3; tracebacks are for bugs. Command modules import the runner, Mesa, LangGraph,
pandas and openai only when their command runs, so `personasim --help` starts fast.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import NoReturn

from personasim.simulation.cli.audit_command import add_audit_command
from personasim.simulation.cli.cache_command import add_cache_command
from personasim.simulation.cli.counterfactual_command import add_counterfactual_command
from personasim.simulation.cli.export_command import add_export_command
from personasim.simulation.cli.import_command import add_import_command
from personasim.simulation.cli.init_command import add_init_command
from personasim.simulation.cli.list_command import add_list_command
from personasim.simulation.cli.metrics_command import add_metrics_command
from personasim.simulation.cli.options import err, fail, out
from personasim.simulation.cli.prompts_command import add_prompts_command
from personasim.simulation.cli.replay_command import add_replay_command
from personasim.simulation.cli.rescore_command import add_rescore_command
from personasim.simulation.cli.retry_command import add_retry_command
from personasim.simulation.cli.run_command import add_run_command
from personasim.simulation.cli.runs_command import add_runs_command
from personasim.simulation.cli.sweep_command import add_sweep_command
from personasim.simulation.cli.view_command import add_view_command

__all__ = ["main"]

INPUT_ERRORS = (
    ("personasim.simulation.core.scenario", "ScenarioError"),
    ("personasim.simulation.runs.runner", "RunError"),
    ("personasim.simulation.log.sqlite_store", "EventStoreError"),
    ("personasim.simulation.log.event_log", "ResumeMismatchError"),
    ("personasim.simulation.llm.cache", "CacheError"),
    ("personasim.simulation.runs.lifecycle.run_lock", "RunLockedError"),
    ("personasim.simulation.llm.backend_kind", "ModelSpecError"),
)
"""Errors of bad input (exit 2, or 1 mid-run), by module: an error can only come from a module
that was imported, so checking them imports nothing."""


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
        if extra and args.command not in ("run", "sweep", "import", "counterfactual"):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except _UsageError as exc:
        return fail(str(exc), 2)
    command = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args, extra)
    except KeyboardInterrupt as exc:
        run_dir = getattr(exc, "run_dir", None)
        marked = f"; {run_dir} is marked interrupted and can be resumed" if run_dir else ""
        err.print(f"interrupted{marked}", markup=False)
        return 130
    except Exception as exc:
        code = _exit_code(exc, command)
        if code is None:
            raise
        return code
    except BaseException as exc:  # a stop (run_signals.RunStopped) is not an Exception
        if isinstance(
            exc, _loaded((("personasim.simulation.runs.lifecycle.run_signals", "RunStopped"),))
        ):
            return _stopped(exc, command)
        raise


def _exit_code(exc: Exception, argv: list[str]) -> int | None:
    """The exit code (after its message) of an error the user can act on; None for a bug."""
    if isinstance(exc, _loaded(INPUT_ERRORS)):
        mismatch = _loaded((("personasim.simulation.log.event_log", "ResumeMismatchError"),))
        resumable = not isinstance(exc, mismatch)
        if resumable and getattr(exc, "run_dir", None) is not None:  # mid-run: a full disk...
            return fail(f"{exc}{_marked(exc)}", 1)
        return fail(f"{exc}{_marked(exc)}", 2)
    if isinstance(exc, _loaded((("personasim.simulation.llm.chat", "LLMError"),))):
        return fail(f"model call failed: {exc}{_marked(exc)}", 1)
    if isinstance(exc, OSError):  # a full disk, a folder that went away: no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        return fail(f"{where}{exc.strerror or exc}{_marked(exc)}", 1)
    return None


def _loaded(names: Sequence[tuple[str, str]]) -> tuple[type[BaseException], ...]:
    return tuple(getattr(sys.modules[m], n) for m, n in names if m in sys.modules)


def _marked(exc: BaseException) -> str:
    """Where a run that failed part-way stands, for the end of its error line."""
    run_dir = getattr(exc, "run_dir", None)
    if (removed := getattr(exc, "removed_run_dir", None)) is not None:
        return f"; nothing had been logged, so {removed} was removed: run the command again"
    if run_dir is None:
        return ""
    if manifest_error := getattr(exc, "manifest_error", None):
        return (
            f"; {run_dir} stays marked interrupted, without this reason (its manifest could "
            f"not be rewritten: {manifest_error}); `personasim retry {run_dir}` continues once "
            "fixed"
        )
    return f"; {run_dir} is marked interrupted (`personasim retry {run_dir}` continues)"


def _stopped(exc: BaseException, argv: list[str]) -> int:
    """A run stopped by SIGTERM or SIGINT: where it stands and the command to go on with."""
    run_dir = getattr(exc, "run_dir", None)
    code = int(getattr(exc, "exit_code", 1))
    if (complete := getattr(exc, "complete_run_dir", None)) is not None:
        err.print(f"{exc} after {complete} was complete; nothing to resume", markup=False)
        return code
    command = list(argv)
    if run_dir is not None and command[:1] in (["run"], ["rescore"]):
        if not any(a == "--out" or a.startswith("--out=") for a in command):
            command += ["--out", str(run_dir)]
        if "--resume" not in command:
            command.append("--resume")
    again = shlex.join(["personasim", *command])
    if run_dir is not None:
        said = f"{run_dir} is marked interrupted; resume with: {again}"
    elif "--resume" in command:
        said = f"before the run resumed; its run directory is as it was; resume with: {again}"
    else:
        said = f"before a run directory was made; nothing was written; run again: {again}"
    err.print(f"{exc}: {said}", markup=False)
    return code


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="personasim",
        description="Simulate LLM persona agents and replay what they did.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_run_command(commands)
    add_retry_command(commands)
    add_sweep_command(commands)
    add_counterfactual_command(commands)
    add_init_command(commands)
    add_prompts_command(commands)
    add_list_command(commands)
    add_runs_command(commands)
    add_replay_command(commands)
    add_metrics_command(commands)
    add_rescore_command(commands)
    add_audit_command(commands)
    add_export_command(commands)
    add_cache_command(commands)
    add_view_command(commands)
    add_import_command(commands, out)
    return parser


if __name__ == "__main__":
    sys.exit(main())
