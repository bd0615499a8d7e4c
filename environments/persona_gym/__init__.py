"""PersonaGym's environment (seed 002): its settings, who is placed where, and its questions."""

from __future__ import annotations

from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "BENCHMARK_SETTING": "personasim.environments.persona_gym.place",
    "SETTINGS_POOLS": "personasim.environments.persona_gym.place",
    "TASKS": "personasim.environments.persona_gym.place",
    "TASK_ALIASES": "personasim.environments.persona_gym.place",
    "BenchmarkEntry": "personasim.environments.persona_gym.place",
    "GymFileError": "personasim.environments.persona_gym.place",
    "GymInputParams": "personasim.environments.persona_gym.place",
    "GymInputs": "personasim.environments.persona_gym.place",
    "GymQuestion": "personasim.environments.persona_gym.place",
    "PersonaGym": "personasim.environments.persona_gym.place",
    "load_benchmark": "personasim.environments.persona_gym.place",
    "load_gym_inputs": "personasim.environments.persona_gym.place",
    "load_human_scores": "personasim.environments.persona_gym.place",
    "load_persona_descriptions": "personasim.environments.persona_gym.place",
    "load_settings": "personasim.environments.persona_gym.place",
    "shipped_file": "personasim.environments.persona_gym.place",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "BENCHMARK_SETTING",
    "SETTINGS_POOLS",
    "TASKS",
    "TASK_ALIASES",
    "BenchmarkEntry",
    "GymFileError",
    "GymInputParams",
    "GymInputs",
    "GymQuestion",
    "PersonaGym",
    "load_benchmark",
    "load_gym_inputs",
    "load_human_scores",
    "load_persona_descriptions",
    "load_settings",
    "shipped_file",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
