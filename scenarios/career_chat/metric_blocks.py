"""career-chat's metrics block, declared (`ScenarioMetrics.block`): the top-level keys of
`compute_metrics` and their types."""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

__all__ = ["CareerChatMetrics"]


@with_config(ConfigDict(extra="forbid"))
class CareerChatMetrics(TypedDict):
    """career-chat's metrics block (`compute_metrics`): the dialogues, the probes of both
    formats, the adaptation per grouping, consistency, the judge and its human alignment."""

    model: str
    n_users: int
    n_items: int
    min_group_n: int
    dialogues: dict[str, Any]
    probes: dict[str, dict[str, Any]]
    adaptation: dict[str, dict[str, Any]]
    consistency: dict[str, Any]
    judge: dict[str, Any]
    human_alignment: list[dict[str, Any]] | None
    human_alignment_undefined: NotRequired[str]
    design: list[str]
    job_labels: dict[str, Any]
    failures: dict[str, int]
    reasks: dict[str, int]
