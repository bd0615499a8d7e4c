"""The Trust Game scenarios (seed 001, belief–behaviour consistency): `trust-population`,
`trust-beliefs`, `trust-conditioning` and `trust-forecast`, their packs, answers, scripted
double, metrics, tables and figures."""

from __future__ import annotations

from personasim.scenarios.trust import (  # noqa: F401 - registers the scripted rules
    scripted,
    scripted_beliefs,
    scripted_forecast,
)
from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "ForecastAnswer": "personasim.scenarios.trust.answers",
    "ReactAnswer": "personasim.scenarios.trust.answers",
    "TrustBeliefs": "personasim.scenarios.trust.beliefs",
    "TrustBeliefsParams": "personasim.scenarios.trust.beliefs",
    "TrustConditioning": "personasim.scenarios.trust.conditioning",
    "TrustConditioningParams": "personasim.scenarios.trust.conditioning",
    "TrustForecast": "personasim.scenarios.trust.forecast",
    "TrustForecastParams": "personasim.scenarios.trust.forecast",
    "TrustPopulation": "personasim.scenarios.trust.population",
    "TrustPopulationParams": "personasim.scenarios.trust.population",
    "TrustorAnswer": "personasim.scenarios.trust.answers",
}
"""Each public name and the module that defines it, imported on first use."""

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
