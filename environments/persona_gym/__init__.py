"""PersonaGym's environment (seed 002): its settings, who is placed where, and its questions."""

from personasim.environments.persona_gym.place import (
    BENCHMARK_SETTING,
    SETTINGS_POOLS,
    TASK_ALIASES,
    TASKS,
    BenchmarkEntry,
    GymFileError,
    GymInputParams,
    GymInputs,
    GymQuestion,
    PersonaGym,
    load_benchmark,
    load_gym_inputs,
    load_human_scores,
    load_persona_descriptions,
    load_settings,
    shipped_file,
)

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
