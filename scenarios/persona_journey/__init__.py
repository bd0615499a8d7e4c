"""`persona-journey`: the same personas through several environments, in one run and one
log. The scenario, its pack, tasks, memory, scripted double and metrics."""

from __future__ import annotations

from personasim.scenarios.persona_journey import scripted  # noqa: F401 - registers the scripted rules
from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "JourneyPlace": "personasim.scenarios.persona_journey.places",
    "PersonaJourney": "personasim.scenarios.persona_journey.scenario",
    "PersonaJourneyParams": "personasim.scenarios.persona_journey.scenario",
    "journey_place": "personasim.scenarios.persona_journey.places",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "JourneyPlace",
    "PersonaJourney",
    "PersonaJourneyParams",
    "journey_place",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
