"""Built-in scenarios, one package per paper. Each scenario is registered under the
`personasim.scenarios` entry-point group in personasim's `pyproject.toml`, as an outside
package's would be, and its module is imported when that scenario is run or listed by class, so
running the Trust Game imports nothing of the career chat."""

from __future__ import annotations

from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "MODEL_BEHAVIOR_ADAPTION": "personasim.scenarios.career_chat.importer",
    "PUBLISHED_SCORES": "personasim.scenarios.persona_gym.importer",
    "CareerChatParams": "personasim.scenarios.career_chat.scenario",
    "CareerChatScenario": "personasim.scenarios.career_chat.scenario",
    "ClassroomParams": "personasim.scenarios.classroom.scenario",
    "ClassroomScenario": "personasim.scenarios.classroom.scenario",
    "PersonaGymParams": "personasim.scenarios.persona_gym.scenario",
    "PersonaGymScenario": "personasim.scenarios.persona_gym.scenario",
    "PersonaJourney": "personasim.scenarios.persona_journey.scenario",
    "PersonaJourneyParams": "personasim.scenarios.persona_journey.scenario",
    "TrustBeliefs": "personasim.scenarios.trust.beliefs",
    "TrustBeliefsParams": "personasim.scenarios.trust.beliefs",
    "TrustConditioning": "personasim.scenarios.trust.conditioning",
    "TrustConditioningParams": "personasim.scenarios.trust.conditioning",
    "TrustForecast": "personasim.scenarios.trust.forecast",
    "TrustForecastParams": "personasim.scenarios.trust.forecast",
    "TrustPopulation": "personasim.scenarios.trust.population",
    "TrustPopulationParams": "personasim.scenarios.trust.population",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "MODEL_BEHAVIOR_ADAPTION",
    "PUBLISHED_SCORES",
    "CareerChatParams",
    "CareerChatScenario",
    "ClassroomParams",
    "ClassroomScenario",
    "PersonaGymParams",
    "PersonaGymScenario",
    "PersonaJourney",
    "PersonaJourneyParams",
    "TrustBeliefs",
    "TrustBeliefsParams",
    "TrustConditioning",
    "TrustConditioningParams",
    "TrustForecast",
    "TrustForecastParams",
    "TrustPopulation",
    "TrustPopulationParams",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
