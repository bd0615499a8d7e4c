"""What a run shows while it runs (a progress bar over its decisions) and when it ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from personasim.simulation.core.metric_extensions import extended_report
from personasim.simulation.core.scenario import Scenario
from personasim.simulation.runs.lifecycle.validity import validity_summary

__all__ = ["progress_bar", "summary_lines"]


@contextmanager
def progress_bar(
    console: Console, enabled: bool, label: str
) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar over units of work; a no-op when disabled."""
    if not enabled:
        yield lambda done, total: None
        return
    columns = (
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("decisions"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("run", total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def summary_lines(
    manifest: dict[str, Any], scenario_cls: type[Scenario], metrics: dict[str, Any]
) -> list[str]:
    """The end-of-run lines; a run that is not valid says so first."""
    verdict = validity_summary(manifest["validity"])
    return [*([verdict] if verdict else []), *extended_report(scenario_cls, metrics["metrics"])]
