"""Metrics a scenario gets by declaring, not by wrapping: the counterfactual statistics for a
scenario with twins (`core/counterfactual.py`), the rescore agreement for a scenario with
scores (`Scenario.scores`).

An extension says which scenarios it applies to, the block(s) it adds to their metrics, its
report lines and report files, and the event kinds it reads. The kernel cannot import the
statistics (`analysis` sits above it), so the extensions register under the entry-point group
`personasim.metrics_extensions`, personasim's own like an outside package's, and are loaded the
first time a run's metrics are computed. The run's pipeline (`runs/lifecycle/run_dir.py`, the
progress lines, the viewer, imports) calls the four functions below, never the scenario's
hooks alone, so a scenario file that overrides `compute_metrics` is extended too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.base.registry import Registry, origin_of

if TYPE_CHECKING:
    import pandas as pd

    from personasim.simulation.core.scenario import Scenario

__all__ = [
    "ENTRY_POINT_GROUP",
    "METRICS_EXTENSIONS",
    "MetricsExtension",
    "extended_kinds",
    "extended_metrics",
    "extended_report",
    "extended_reports",
    "metrics_extension",
]

ENTRY_POINT_GROUP = "personasim.metrics_extensions"


@dataclass(frozen=True)
class MetricsExtension:
    """`applies(scenario)`: whether a scenario gets it; `compute(scenario, events)`: the
    blocks to add to its metrics (empty: the run has nothing for it, e.g. a plain run);
    `report` and `write_reports`: lines and files made from those metrics (nothing where the
    blocks are absent); `kinds(scenario)`: the event kinds `compute` reads for it."""

    applies: Callable[[type[Scenario]], bool]
    compute: Callable[[type[Scenario], pd.DataFrame], dict[str, Any]]
    report: Callable[[dict[str, Any]], list[str]] = lambda metrics: []
    write_reports: Callable[[dict[str, Any], Path], list[Path]] = lambda metrics, folder: []
    kinds: Callable[[type[Scenario]], tuple[str, ...]] = lambda scenario: ()


METRICS_EXTENSIONS: Registry[MetricsExtension] = Registry("metrics extension", ENTRY_POINT_GROUP)


def metrics_extension(name: str) -> Callable[[MetricsExtension], MetricsExtension]:
    """Registers an extension under `name` (its module is named in the entry-point group);
    where it is defined is where its `compute` is, so two extensions under one name are
    told apart and refused."""

    def register(extension: MetricsExtension) -> MetricsExtension:
        METRICS_EXTENSIONS.register(name, extension, origin_of(extension.compute))
        return extension

    return register


def _applying(scenario: type[Scenario]) -> list[MetricsExtension]:
    return [e for e in METRICS_EXTENSIONS.items().values() if e.applies(scenario)]


def extended_metrics(scenario: type[Scenario], events: pd.DataFrame) -> dict[str, Any]:
    """The scenario's metrics and, after them, every applying extension's blocks; a block
    under a name the scenario already uses is an error, not an overwrite."""
    metrics = scenario.compute_metrics(events)
    for extension in _applying(scenario):
        blocks = extension.compute(scenario, events)
        if taken := sorted(set(blocks) & set(metrics)):
            raise ValueError(
                f"{scenario.name}: its metrics already hold {', '.join(taken)}, which a metrics "
                f"extension adds (remove the scenario's own block)"
            )
        metrics.update(blocks)
    return metrics


def extended_report(scenario: type[Scenario], metrics: dict[str, Any]) -> list[str]:
    """The scenario's end-of-run lines, then each applying extension's."""
    lines = list(scenario.report(metrics))
    for extension in _applying(scenario):
        lines += extension.report(metrics)
    return lines


def extended_reports(scenario: type[Scenario], metrics: dict[str, Any], folder: Path) -> list[Path]:
    """The scenario's report files, then each applying extension's."""
    paths = list(scenario.write_reports(metrics, folder))
    for extension in _applying(scenario):
        paths += extension.write_reports(metrics, folder)
    return paths


def extended_kinds(scenario: type[Scenario]) -> tuple[str, ...] | None:
    """The event kinds the extended metrics read (None: all, as the scenario's own)."""
    kinds = scenario.metric_kinds()
    if kinds is None:
        return None
    extra = [k for e in _applying(scenario) for k in e.kinds(scenario)]
    return tuple(dict.fromkeys((*kinds, *extra)))
