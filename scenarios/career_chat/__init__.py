"""`career-chat` (seed 003): sociodemographic adaptation, profile vs dialogue. The scenario,
its pack, tasks, scripted double, metrics, reports and the importer of the authors' answers."""

from __future__ import annotations

from personasim.scenarios.career_chat import importer, scripted  # noqa: F401 - register its import format and rules
from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "MODEL_BEHAVIOR_ADAPTION": "personasim.scenarios.career_chat.importer",
    "CareerChatParams": "personasim.scenarios.career_chat.scenario",
    "CareerChatScenario": "personasim.scenarios.career_chat.scenario",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "MODEL_BEHAVIOR_ADAPTION",
    "CareerChatParams",
    "CareerChatScenario",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
