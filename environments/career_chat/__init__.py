"""The career-chat place (seed 003): user profiles, the value survey, the dialogue controller,
and dialogues made once and probed many times."""

from personasim.environments.career_chat.dialogues import DialogueSource, load_dialogues
from personasim.environments.career_chat.files import (
    DIMENSIONS,
    CareerChatFileError,
    jsonl_rows,
    load_human_ratings,
    load_job_groups,
    shipped_career_file,
)
from personasim.environments.career_chat.place import CareerChat, RecordedDialogue, RecordedTurn
from personasim.environments.career_chat.profiles import (
    EDUCATION_ALIASES,
    EDUCATION_LEVELS,
    PROFILE_FIELDS,
    REFERENCE_YEAR,
    SEED_COLUMNS,
    Profile,
    education_label,
    load_profiles,
    profile_from_row,
    synthetic_profiles,
)
from personasim.environments.career_chat.survey import SurveyItem, load_survey

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
