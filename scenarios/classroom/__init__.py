"""`classroom` (seed 000, REVERSO): can the model play a student with reversed (low) math
performance? The scenario, its pack, its scripted double, its metrics and tables."""

from personasim.scenarios.classroom import scripted  # noqa: F401 - registers the scripted rules
from personasim.scenarios.classroom.scenario import ClassroomParams, ClassroomScenario

__all__ = [
    "ClassroomParams",
    "ClassroomScenario",
]
