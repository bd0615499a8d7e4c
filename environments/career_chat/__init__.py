"""The career-chat place (seed 003): user profiles, the value survey, the dialogue controller,
and dialogues made once and probed many times."""

from __future__ import annotations

from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "DIMENSIONS": "personasim.environments.career_chat.files",
    "EDUCATION_ALIASES": "personasim.environments.career_chat.profiles",
    "EDUCATION_LEVELS": "personasim.environments.career_chat.profiles",
    "PROFILE_FIELDS": "personasim.environments.career_chat.profiles",
    "REFERENCE_YEAR": "personasim.environments.career_chat.profiles",
    "SEED_COLUMNS": "personasim.environments.career_chat.profiles",
    "CareerChat": "personasim.environments.career_chat.place",
    "CareerChatFileError": "personasim.environments.career_chat.files",
    "DialogueSource": "personasim.environments.career_chat.dialogues",
    "Profile": "personasim.environments.career_chat.profiles",
    "RecordedDialogue": "personasim.environments.career_chat.place",
    "RecordedTurn": "personasim.environments.career_chat.place",
    "SurveyItem": "personasim.environments.career_chat.survey",
    "education_label": "personasim.environments.career_chat.profiles",
    "jsonl_rows": "personasim.environments.career_chat.files",
    "load_dialogues": "personasim.environments.career_chat.dialogues",
    "load_human_ratings": "personasim.environments.career_chat.files",
    "load_job_groups": "personasim.environments.career_chat.files",
    "load_profiles": "personasim.environments.career_chat.profiles",
    "load_survey": "personasim.environments.career_chat.survey",
    "profile_from_row": "personasim.environments.career_chat.profiles",
    "shipped_career_file": "personasim.environments.career_chat.files",
    "synthetic_profiles": "personasim.environments.career_chat.profiles",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "DIMENSIONS",
    "EDUCATION_ALIASES",
    "EDUCATION_LEVELS",
    "PROFILE_FIELDS",
    "REFERENCE_YEAR",
    "SEED_COLUMNS",
    "CareerChat",
    "CareerChatFileError",
    "DialogueSource",
    "Profile",
    "RecordedDialogue",
    "RecordedTurn",
    "SurveyItem",
    "education_label",
    "jsonl_rows",
    "load_dialogues",
    "load_human_ratings",
    "load_job_groups",
    "load_profiles",
    "load_survey",
    "profile_from_row",
    "shipped_career_file",
    "synthetic_profiles",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
