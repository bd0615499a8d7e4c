"""The agreement block of a rescored run (`personasim rescore`): each item's score under the
source run's judge, which the rescore logged first (`rescore.source`), against its score under
the new judge, read from the rescored run's own decisions by the scenario's `ScoreItems`.

The statistics are `judge_agreement`'s; this module only pairs the items and says which judges
they are. An item only one judge scored (the other's decision failed) counts as missing for
the other and enters no statistic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from personasim.analysis.agreement import judge_agreement
from personasim.analysis.event_tables import payloads
from personasim.simulation import SOURCE_SCORES, ScoreItems
from personasim.simulation.core.metric_extensions import MetricsExtension, metrics_extension

if TYPE_CHECKING:
    from personasim.simulation.core.scenario import Scenario

__all__ = ["RESCORE", "compare_scores", "paired_scores", "rescore_agreement"]

"""Resamples of the items behind each interval of the agreement block."""


def paired_scores(events: pd.DataFrame, scores: ScoreItems) -> dict[str, float]:
    """Each item's score in this run's own `decision.made` events."""
    made = events[events["kind"] == "decision.made"]
    agents = [a if isinstance(a, str) else None for a in made["agent_id"]]
    return scores.items(zip(agents, made["payload"], strict=True))


def rescore_agreement(events: pd.DataFrame, scores: ScoreItems) -> dict[str, Any] | None:
    """The block between the source run's judge and this run's (None: not a rescore)."""
    source = payloads(events, SOURCE_SCORES)
    if not source:
        return None
    record = source[0]
    return {
        "source_run": record["run"],
        "source_log_sha256": record["log_sha256"],
        "judges": [
            [role, record["roles_before"][role], specs] for role, specs in record["roles"].items()
        ],
        **compare_scores(
            record["items"],
            paired_scores(events, scores),
            record["scores"],
            raters=("source run's judge", "new judge"),
        ),
    }


def compare_scores(
    first: Mapping[str, float],
    second: Mapping[str, float],
    declared: Mapping[str, Any],
    *,
    raters: tuple[str, str],
) -> dict[str, Any]:
    """Item counts and `judge_agreement` of two raters' item → score maps (all items of
    either; an item one of them lacks is missing for it)."""
    names = sorted(set(first) | set(second))
    return {
        "n_items_first": len(first),
        "n_items_second": len(second),
        "n_paired": len(set(first) & set(second)),
        "agreement": judge_agreement(
            [first.get(n) for n in names],
            [second.get(n) for n in names],
            items=names,
            level=declared["level"],
            icc_form=declared.get("icc_form"),
            raters=raters,
        ),
    }


def _rescore_block(scenario: type[Scenario], events: pd.DataFrame) -> dict[str, Any]:
    """`rescore`: agreement with the run this one rescored, and where the scenario's scores
    have a human reference in the run, the same between the new judge and the raters."""
    scores = scenario.scores
    assert scores is not None
    block = rescore_agreement(events, scores)
    if block is None:
        return {}
    human = scores.reference(events) if scores.reference else None
    if human:
        block["humans"] = compare_scores(
            paired_scores(events, scores),
            human,
            scores.describe(),
            raters=("new judge", "human raters' mean"),
        )
    return {"rescore": block}


RESCORE = metrics_extension("rescore")(
    MetricsExtension(
        applies=lambda scenario: scenario.scores is not None,
        compute=_rescore_block,
        kinds=lambda scenario: (
            SOURCE_SCORES,
            "decision.made",
            *(scenario.scores.reference_kinds if scenario.scores else ()),
        ),
    )
)
"""The `rescore` block of every scenario that declares `scores` (`personasim rescore` prints
it): registered under the `personasim.metrics_extensions` entry-point group."""
