"""`personasim cache info|clear`: the response cache (default ./.personasim/cache)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import out, size
from personasim.simulation.llm.cache import cache_info, clear_cache

__all__ = ["add_cache_command"]


def add_cache_command(commands: Any) -> None:
    cache = commands.add_parser("cache", help="the response cache: where, how big; clear it")
    actions = cache.add_subparsers(dest="action", required=True)
    for name, handler, text in (
        ("info", _cache_info, "location, entries and size on disk"),
        ("clear", _cache_clear, "delete every cached response (runs keep their own answers)"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("--cache-dir", type=Path, help="cache location (default as for run)")
        action.set_defaults(handler=handler)


def _cache_info(args: argparse.Namespace, extra: Sequence[str]) -> int:
    info = cache_info(args.cache_dir)
    out.print(f"cache: {info.directory.resolve()}")
    out.print(f"entries: {info.entries}")
    out.print(f"size on disk: {size(info.size_bytes)}")
    return 0


def _cache_clear(args: argparse.Namespace, extra: Sequence[str]) -> int:
    info = clear_cache(args.cache_dir)
    out.print(
        f"removed {info.entries} cached responses ({size(info.size_bytes)}) from "
        f"{info.directory.resolve()}"
    )
    return 0
