"""`personasim view DIR` of a sweep or a folder of runs: a run list page, each run's page one
click away and a link back.

The list is `run_list.find_runs` (manifests only), so it matches `personasim runs DIR`. Served
(`--serve`), a run's page is built when asked for, and only for a run the list holds: the path in
the URL must be one of the listed paths and must resolve inside DIR, so `..`, an absolute path
or a link out of DIR is a 404. Opening a run reads its JSON and SQLite files and never loads code
the run names (`collect_run` finds only installed scenarios by name).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_dir import (
    EVENTS_FILE,
    MANIFEST_FILE,
    RunError,
    read_manifest,
)
from personasim.simulation.runs.tools.run_list import RunRow, find_runs
from personasim.simulation.runs.viewer.viewer import (
    collect_run,
    render_list_page,
    render_page,
    write_page,
)
from personasim.simulation.runs.viewer.viewer_server import LocalServer

__all__ = ["FolderServer", "is_run_folder", "list_rows", "run_page", "write_folder_pages"]

PAGE_NAME = "view.html"
"""Each run's page, as `personasim view RUN` writes it."""
RUN_PREFIX = "/run/"
"""Served: `/run/PATH/` is the page of the listed run at PATH (relative to DIR)."""

Response = tuple[int, str, bytes]


def is_run_folder(directory: Path) -> bool:
    """A folder that is not itself a run but holds some (a sweep, a folder of runs)."""
    if not directory.is_dir():
        return False
    if (directory / MANIFEST_FILE).exists() or (directory / EVENTS_FILE).exists():
        return False
    return bool(find_runs(directory))


def list_rows(rows: list[RunRow], href: Callable[[RunRow], str | None]) -> list[dict[str, Any]]:
    """The rows as the list page's JSON: the listed columns and each run's link (None: the run
    cannot be opened, e.g. a damaged manifest)."""
    listed = []
    for row in rows:
        cells = {k: v for k, v in asdict(row).items() if k != "sort_key"}
        listed.append({**cells, "href": href(row) if row.status != "damaged" else None})
    return listed


def _open_run(run_dir: Path, list_href: str) -> str:
    """One run's page, reading its files only; RunError when it is not a readable run."""
    read_manifest(run_dir)
    if not (run_dir / EVENTS_FILE).is_file():  # opening would create an empty log
        raise RunError(f"{run_dir}: no {EVENTS_FILE} (the run's event log)")
    with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        run = collect_run(run_dir, store)
    return render_page([run], list_href=list_href)


def write_folder_pages(base: Path, target: Path) -> tuple[int, list[str]]:
    """The list page at `target` and each run's page as RUN/view.html, links relative (the pages
    work from file://). Returns the runs written and a line per run that could not be."""
    rows = find_runs(base)
    written: dict[str, str] = {}
    problems = []
    for row in rows:
        if row.status == "damaged":
            continue
        run_dir = base / row.path
        back = os.path.relpath(target, run_dir)
        try:
            write_page(_open_run(run_dir, quote(Path(back).as_posix())), run_dir / PAGE_NAME)
        except (RunError, OSError) as exc:
            problems.append(f"{row.path}: {exc}")
            continue
        written[row.path] = os.path.relpath(run_dir / PAGE_NAME, target.parent)

    def href(row: RunRow) -> str | None:
        return quote(Path(written[row.path]).as_posix()) if row.path in written else None

    write_page(render_list_page(base, list_rows(rows, href)), target)
    return len(written), problems


def run_page(base: Path, requested: str) -> str | None:
    """The page of the run at `requested` (a path relative to `base`), or None when the list of
    `base` does not hold it or it resolves outside `base`."""
    wanted = requested.strip("/")
    listed = {row.path for row in find_runs(base) if row.status != "damaged"}
    if wanted not in listed or wanted == ".":
        return None
    run_dir = base / wanted
    if not run_dir.resolve().is_relative_to(base.resolve()):
        return None
    try:
        return _open_run(run_dir, "/")
    except RunError:
        return None


def run_href(row: RunRow) -> str:
    return RUN_PREFIX + quote(row.path) + "/"


def answer(base: Path, url: str) -> Response:
    """What the folder server sends for `url`: the list page, the list as JSON, a run's page."""
    path = unquote(urlsplit(url).path)
    if path in ("/", "/index.html"):
        page = render_list_page(base, list_rows(find_runs(base), run_href))
        return 200, "text/html; charset=utf-8", page.encode("utf-8")
    if path == "/runs.json":
        body = {"dir": str(base), "runs": list_rows(find_runs(base), run_href)}
        return 200, "application/json", json.dumps(body, ensure_ascii=False).encode("utf-8")
    if path.startswith(RUN_PREFIX) and (page := run_page(base, path[len(RUN_PREFIX) :])):
        return 200, "text/html; charset=utf-8", page.encode("utf-8")
    return 404, "text/plain; charset=utf-8", b"not found: no such run in this folder\n"


class FolderServer(LocalServer):
    """The run list of `base` on loopback (standard library only), each run's page built when
    asked for. The list is read again on each request, so a sweep still running shows its new
    cells on reload."""

    def __init__(self, base: Path, port: int = 0, host: str = "127.0.0.1") -> None:
        super().__init__(lambda path: answer(base, path), port, host)
