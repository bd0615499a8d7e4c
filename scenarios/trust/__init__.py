"""The Trust Game scenarios (seed 001, belief–behaviour consistency): `trust-population`,
`trust-beliefs`, `trust-conditioning` and `trust-forecast`, their packs, answers, scripted
double, metrics, tables and figures."""

from personasim.scenarios.trust import (  # noqa: F401 - registers the scripted rules
    scripted,
    scripted_beliefs,
    scripted_forecast,
)
from personasim.scenarios.trust.answers import ForecastAnswer, ReactAnswer, TrustorAnswer
from personasim.scenarios.trust.beliefs import TrustBeliefs, TrustBeliefsParams
from personasim.scenarios.trust.conditioning import TrustConditioning, TrustConditioningParams
from personasim.scenarios.trust.forecast import TrustForecast, TrustForecastParams
from personasim.scenarios.trust.population import TrustPopulation, TrustPopulationParams

__all__ = [
    "ForecastAnswer",
    "ReactAnswer",
    "TrustBeliefs",
    "TrustBeliefsParams",
    "TrustConditioning",
    "TrustConditioningParams",
    "TrustForecast",
    "TrustForecastParams",
    "TrustPopulation",
    "TrustPopulationParams",
    "TrustorAnswer",
]
