"""`classroom` (seed 000, REVERSO): can the model play a student with reversed (low) math
performance? The scenario, its pack, its scripted double, its metrics and tables."""

from __future__ import annotations

from personasim.scenarios.classroom import scripted  # noqa: F401 - registers the scripted rules
from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "ClassroomParams": "personasim.scenarios.classroom.scenario",
    "ClassroomScenario": "personasim.scenarios.classroom.scenario",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "ClassroomParams",
    "ClassroomScenario",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
