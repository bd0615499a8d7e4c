"""The journey's own place: the value survey (persona-journey; the other places are reused).

The Trust Game and PersonaGym are the environments of their own scenarios; the VSM survey of
career-chat is asked there inside a conversation, so the journey needs a place where the items are
simply asked. Its rules are the items and their options, logged in the environment's settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from personasim.environments.career_chat.survey import SurveyItem
from personasim.simulation import Environment

if TYPE_CHECKING:
    from personasim.simulation import Simulation

__all__ = ["ValueSurvey"]


class ValueSurvey(Environment):
    """The place where the VSM items are asked (its rules: the items and their options)."""

    kind = "value_survey"

    def __init__(self, sim: Simulation, items: Sequence[SurveyItem], name: str = "survey") -> None:
        self.items = tuple(items)
        super().__init__(sim, name)

    def settings(self) -> dict[str, Any]:
        return {"items": [{"index": i.index, "profile": i.profile_text} for i in self.items]}
