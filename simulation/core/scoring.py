"""What a scenario's scorers score: the items a judge rates, so two judges can be compared.

`personasim rescore` binds a scenario's scorer roles anew and pairs each item's score under the
run's judge with its score under the new one. Which decisions are scores, what one item is and
on which scale it lies are the scenario's to say, in one declaration on its class
(`scores = ScoreItems(...)`); the kernel only pairs what it reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Level", "ScoreItems", "ScoreReader", "detail_scores"]

Level = Literal["ordinal", "interval"]
"""Krippendorff's level: ordinal for a rubric's labels (1–3, 1–5), interval for numbers."""

ScoreReader = Callable[[str | None, Mapping[str, Any]], Iterable[tuple[str, float]]]
"""(agent id, a score decision's payload) → (item, score) pairs (a batch holds several)."""


@dataclass(frozen=True)
class ScoreItems:
    """A scenario's scored items. `tasks`: the decision tasks that are scores; `read`: the
    items and scores of one such decision; `level`: the scale's level; `icc_form`: the ICC the
    paper reports, where it names one (None: ICC(2,1) and ICC(2,k)); `scale`: the rubric's
    lowest and highest score, where it has one. A score given more than once for an item
    (career chat's judge samples) enters as its mean."""

    tasks: tuple[str, ...]
    read: ScoreReader
    level: Level = "ordinal"
    icc_form: str | None = None
    scale: tuple[float, float] | None = None
    reference: Callable[[pd.DataFrame], Mapping[str, float] | None] | None = None
    """Human raters' score of each item, where a run has them (career chat's
    `--human-ratings`): a rescored run's block then compares the new judge with them too."""
    reference_kinds: tuple[str, ...] = ()
    """The event kinds `reference` reads."""

    def items(self, decisions: Iterable[tuple[str | None, Mapping[str, Any]]]) -> dict[str, float]:
        """Each item's score over a run's `decision.made` payloads (others are skipped)."""
        given: dict[str, list[float]] = defaultdict(list)
        for agent_id, payload in decisions:
            if payload.get("task") in self.tasks:
                for item, score in self.read(agent_id, payload):
                    given[item].append(float(score))
        return {item: sum(scores) / len(scores) for item, scores in sorted(given.items())}

    def describe(self) -> dict[str, Any]:
        """The declaration as the log records it (what the agreement statistics need)."""
        return {
            "tasks": list(self.tasks),
            "level": self.level,
            "icc_form": self.icc_form,
            "scale": list(self.scale) if self.scale else None,
        }


def detail_scores(*fields: str, score: Callable[[Any], Any] = lambda value: value) -> ScoreReader:
    """The reader of decisions that score one item each: the item is the decision's `fields`
    joined by "/", the score `score(value)`; a decision whose score is None scores nothing."""

    def read(agent_id: str | None, payload: Mapping[str, Any]) -> Iterable[tuple[str, float]]:
        value = score(payload.get("value"))
        if value is None:
            return []
        return [("/".join(str(payload.get(f)) for f in fields), float(value))]

    return read
