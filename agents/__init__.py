"""Mesa agents: personas and their decision graphs, trustees, persona data and banks."""

from personasim.agents import (  # register scripted rules
    scripted_behaviours,
    scripted_beliefs,
    scripted_career_chat,
    scripted_classroom,
    scripted_forecast,
    scripted_persona_gym,
)
from personasim.agents.decision import (
    Decision,
    DecisionParseError,
    DecisionTask,
    decide,
    parse_nonempty,
    parse_structured,
)
from personasim.agents.level_names import SYNONYMS, LevelNameError, level_key, match_level_names
from personasim.agents.persona import Persona
from personasim.agents.persona_agent import PersonaAgent
from personasim.agents.persona_bank import (
    BIG_FIVE_LEVELS,
    TABLE3_TRAITS,
    TEST_SPLIT_LEVELS,
    TRAIT_FIELDS,
    TRUST_TEST_TRAITS,
    PersonaFileError,
    augment_big_five,
    derive_traits,
    load_personas,
    sample_personas,
    select_personas,
    synthetic_population,
)
from personasim.agents.researcher import ResearcherAgent
from personasim.agents.structured import format_instructions, json_parser, json_task
from personasim.agents.trust_answers import ForecastAnswer, ReactAnswer, TrustorAnswer
from personasim.agents.trustee import TrusteeAgent, archetype_cap

__all__ = [
    "BIG_FIVE_LEVELS",
    "SYNONYMS",
    "TABLE3_TRAITS",
    "TEST_SPLIT_LEVELS",
    "TRAIT_FIELDS",
    "TRUST_TEST_TRAITS",
    "Decision",
    "DecisionParseError",
    "DecisionTask",
    "ForecastAnswer",
    "LevelNameError",
    "Persona",
    "PersonaAgent",
    "PersonaFileError",
    "ReactAnswer",
    "ResearcherAgent",
    "TrusteeAgent",
    "TrustorAnswer",
    "archetype_cap",
    "augment_big_five",
    "decide",
    "derive_traits",
    "format_instructions",
    "json_parser",
    "json_task",
    "level_key",
    "load_personas",
    "match_level_names",
    "parse_nonempty",
    "parse_structured",
    "sample_personas",
    "scripted_behaviours",
    "scripted_beliefs",
    "scripted_career_chat",
    "scripted_classroom",
    "scripted_forecast",
    "scripted_persona_gym",
    "select_personas",
    "synthetic_population",
]
