"""Places and people on a graph (persona-journey), and the journey's own place, the value
survey."""

from __future__ import annotations

from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "GraphSpace": "personasim.environments.journey.place",
    "JourneyMap": "personasim.environments.journey.place",
    "ValueSurvey": "personasim.environments.journey.survey",
    "check_walk": "personasim.environments.journey.place",
    "parse_edges": "personasim.environments.journey.place",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "GraphSpace",
    "JourneyMap",
    "ValueSurvey",
    "check_walk",
    "parse_edges",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
