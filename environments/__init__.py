"""Places agents act in: their rules and state, no prompts."""

from __future__ import annotations

from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "MAX_ENDOWMENT": "personasim.environments.trust_game.place",
    "ARCHETYPE_PATTERN": "personasim.environments.trust_game.trustee",
    "TASKS": "personasim.environments.persona_gym.place",
    "CareerChat": "personasim.environments.career_chat",
    "CareerChatFileError": "personasim.environments.career_chat",
    "Classroom": "personasim.environments.classroom.place",
    "Grade": "personasim.environments.classroom.place",
    "GymFileError": "personasim.environments.persona_gym.place",
    "GymQuestion": "personasim.environments.persona_gym.place",
    "HumanReference": "personasim.environments.trust_game.reference",
    "PersonaGym": "personasim.environments.persona_gym.place",
    "Profile": "personasim.environments.career_chat",
    "QuestionFileError": "personasim.environments.classroom.gsm8k",
    "SurveyItem": "personasim.environments.career_chat",
    "TrustGame": "personasim.environments.trust_game.place",
    "TrustOutcome": "personasim.environments.trust_game.place",
    "TrusteeAgent": "personasim.environments.trust_game.trustee",
    "archetype_cap": "personasim.environments.trust_game.trustee",
    "WordProblem": "personasim.environments.classroom.gsm8k",
    "follows_format": "personasim.environments.classroom.numeric_answers",
    "human_reference": "personasim.environments.trust_game.reference",
    "load_profiles": "personasim.environments.career_chat",
    "load_survey": "personasim.environments.career_chat",
    "load_word_problems": "personasim.environments.classroom.gsm8k",
    "read_answer": "personasim.environments.classroom.numeric_answers",
    "read_transfer": "personasim.environments.trust_game.transfer",
    "sample_problems": "personasim.environments.classroom.gsm8k",
    "synthetic_profiles": "personasim.environments.career_chat",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "ARCHETYPE_PATTERN",
    "MAX_ENDOWMENT",
    "TASKS",
    "CareerChat",
    "CareerChatFileError",
    "Classroom",
    "Grade",
    "GymFileError",
    "GymQuestion",
    "HumanReference",
    "PersonaGym",
    "Profile",
    "QuestionFileError",
    "SurveyItem",
    "TrustGame",
    "TrustOutcome",
    "TrusteeAgent",
    "WordProblem",
    "archetype_cap",
    "follows_format",
    "human_reference",
    "load_profiles",
    "load_survey",
    "load_word_problems",
    "read_answer",
    "read_transfer",
    "sample_problems",
    "synthetic_profiles",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
