"""The two shapes of persona-gym's metrics block, declared (`ScenarioMetrics.block`): a run's
(`gym_metrics`) and an import of the paper's published scores (`published_metrics`)."""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

__all__ = ["GymMetricsBlock", "PersonaGymMetrics", "PublishedGymMetrics"]


@with_config(ConfigDict(extra="forbid"))
class PersonaGymMetrics(TypedDict):
    """A run's metrics: who generated and scored, scores per task, evaluator and persona
    (Table 2), refusals, evaluator agreement, failures and the human alignment (Table 3)."""

    model: str
    pipeline: str
    tasks: list[str]
    evaluators: dict[str, str]
    generator: str
    n_scored_by_evaluator: dict[str, int]
    n_personas: int
    n_questions: int
    n_scored_questions: int
    min_group_n: int
    n_scored_by_task: dict[str, int]
    small_tasks: list[str]
    scores: dict[str, Any]
    by_evaluator: dict[str, dict[str, Any]]
    personas: dict[str, dict[str, Any]]
    refusals: dict[str, Any]
    agreement: list[dict[str, Any]]
    failures: dict[str, int]
    reasks: dict[str, int]
    batch_reasks: dict[str, int]
    human_alignment: list[dict[str, Any]] | None
    human_alignment_undefined: NotRequired[str]


@with_config(ConfigDict(extra="forbid"))
class PublishedGymMetrics(TypedDict):
    """An imported run's metrics (`personasim import persona-gym`): the published rows, the
    models whose two PersonaScores differ beyond rounding, the runs shown beside them; no n."""

    model: str
    imported: dict[str, Any]
    tasks: list[str]
    spread_with_scripted: bool
    published: list[dict[str, Any]]
    differing: list[str]
    beside: list[dict[str, Any]]
    n_scored_questions: None
    n_scored_questions_undefined: str


GymMetricsBlock = PersonaGymMetrics | PublishedGymMetrics
"""persona-gym's block: either shape, by whether the run is an import of the published scores."""
