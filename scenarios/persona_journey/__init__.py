"""`persona-journey`: the same personas through several environments, in one run and one
log. The scenario, its pack, tasks, memory, scripted double and metrics."""

from personasim.scenarios.persona_journey import scripted  # noqa: F401 - registers the scripted rules
from personasim.scenarios.persona_journey.places import JourneyPlace, journey_place
from personasim.scenarios.persona_journey.scenario import PersonaJourney, PersonaJourneyParams

__all__ = [
    "JourneyPlace",
    "PersonaJourney",
    "PersonaJourneyParams",
    "journey_place",
]
