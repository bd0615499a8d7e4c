"""Places and people on a graph (persona-journey), and the journey's own place, the value
survey."""

from personasim.environments.journey.place import GraphSpace, JourneyMap, check_walk, parse_edges
from personasim.environments.journey.survey import ValueSurvey

__all__ = [
    "GraphSpace",
    "JourneyMap",
    "ValueSurvey",
    "check_walk",
    "parse_edges",
]
