"""PersonaGym's evaluators as an instrument, for `personasim rescore`: one item is one answer
as one seat of the ensemble scored it (persona × task × question × evaluator seat, 1–5 rubric,
ordinal), so seat k of the run is compared with seat k of the rescore. A batched evaluation
(`--grading-batch`) scores several answers in one decision, each its own item."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from personasim.simulation import ScoreItems

__all__ = ["EVALUATOR_SCORES"]


def _read(agent_id: str | None, payload: Mapping[str, Any]) -> Iterable[tuple[str, float]]:
    """(persona/task/question/seat, score) of an evaluation or of each answer of a batch."""
    value = payload.get("value")
    if payload.get("task") == "persona_gym.evaluate":
        questions, evaluations = [payload.get("question")], [value]
    else:
        questions, evaluations = payload.get("questions", []), value or []
    base = f"{payload.get('persona')}/{payload.get('gym_task')}"
    return [
        (f"{base}/{q}/{payload.get('evaluator')}", float(e["score"]))
        for q, e in zip(questions, evaluations, strict=False)
        if isinstance(e, Mapping) and e.get("score") is not None
    ]


EVALUATOR_SCORES = ScoreItems(
    tasks=("persona_gym.evaluate", "persona_gym.evaluate_batch"),
    read=_read,
    level="ordinal",
    scale=(1, 5),
)
