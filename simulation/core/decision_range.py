"""`DecisionRange`: how many decisions a role's units may take, declared by a scenario.

A dry run (`personasim run --dry-run`) plays the scenario on the scripted double, whose
dialogues end where its rules say; a model may end them sooner or run them to their limit. A
scenario whose decision counts depend on the model says so with `Scenario.decision_ranges`,
from its parameters and the scripted run's log (how many units it played), so the dry run's
range covers them without knowing the scenario.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DecisionRange"]


@dataclass(frozen=True)
class DecisionRange:
    """A role makes at least `low` and at most `high` decisions in the run; `why` says from
    which limits, in words (printed by the dry run). Each decision then takes 1 to
    `max_repairs + 1` requests."""

    low: int
    high: int
    why: str

    def __post_init__(self) -> None:
        if not 0 <= self.low <= self.high:
            raise ValueError(f"a decision range needs 0 <= low <= high: {self.low}, {self.high}")
