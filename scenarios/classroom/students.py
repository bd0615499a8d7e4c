"""The classroom scenario's students (seed 000): their personas and the sample index that keeps
each repetition, strategy and race an independent sample."""

from __future__ import annotations

from personasim.agents.persona import Persona
from personasim.scenarios.classroom.metrics import RACE_NAMES, RACES, STRATEGIES

__all__ = ["sample_index", "student_persona"]


def student_persona(level: str, race: str) -> Persona:
    """A middle-school student of a performance level and, unless "none", a racial background;
    the students of one level are twins over races (their paired statistics: classroom.md)."""
    attributes = {"performance_level": level}
    if race != "none":
        attributes["racial_background"] = RACE_NAMES[race]
    suffix = "" if race == "none" else f"-{race}"
    return Persona(
        id=f"student-{level}{suffix}",
        attributes=attributes,
        traits={"level": level, "race": race},
        counterfactual={"of": f"student-{level}", "attribute": "race", "level": race},
    )


def sample_index(repetition: int, strategy: str, race: str) -> int:
    """Distinct per repetition, strategy and race, so repetitions, a self-refinement's first turn
    (the zero-shot prompt) and a two-stage stage 1 (the level-only prompt, the same for every
    race) are independent samples with their own cache and log entries."""
    per_repetition = len(STRATEGIES) * len(RACES)
    return (
        (repetition - 1) * per_repetition
        + STRATEGIES.index(strategy) * len(RACES)
        + (RACES.index(race))
    )
