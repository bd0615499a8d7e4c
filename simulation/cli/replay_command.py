"""`personasim replay RUN_DIR [--agent ID]`: the run's agents, or one agent's trajectory."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import open_store, out

__all__ = ["add_replay_command"]


def add_replay_command(commands: Any) -> None:
    replay = commands.add_parser("replay", help="an agent's trajectory, step by step")
    replay.add_argument("run_dir", type=Path)
    replay.add_argument("--agent", help="agent id (without it: the run's agents)")
    replay.add_argument("--brief", action="store_true", help="last message only, truncated")
    replay.set_defaults(handler=_replay)


def _replay(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.tools.replay import (
        agent_events,
        render_overview,
        render_trajectory,
    )

    with open_store(args.run_dir) as store:
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
