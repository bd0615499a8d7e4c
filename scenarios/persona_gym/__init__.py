"""`persona-gym` (seed 002): PersonaGym and PersonaScore. The scenario, its packs, tasks,
scripted double, metrics, figures and the importer of the published scores."""

from __future__ import annotations

from personasim.scenarios.persona_gym import importer, scripted  # noqa: F401 - register its import format and rules
from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "PUBLISHED_SCORES": "personasim.scenarios.persona_gym.importer",
    "PersonaGymParams": "personasim.scenarios.persona_gym.scenario",
    "PersonaGymScenario": "personasim.scenarios.persona_gym.scenario",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "PUBLISHED_SCORES",
    "PersonaGymParams",
    "PersonaGymScenario",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
