"""Mesa agents: personas and their decision graphs, trustees, persona data and banks."""

from personasim.agents.counterfactual import (
    attribute_levels,
    check_counterfactual,
    common_draws,
    counterfactual_twins,
    known_attributes,
    twin_suffixes,
    unknown_attribute,
    unknown_level,
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
from personasim.agents.persona_bank import PersonaFileError, load_personas, sample_personas
from personasim.agents.persona_sampling import select_personas, synthetic_population
from personasim.agents.persona_traits import (
    BIG_FIVE_LEVELS,
    TRAIT_FIELDS,
    augment_big_five,
    derive_traits,
)
from personasim.agents.researcher import ResearcherAgent
from personasim.agents.structured import format_instructions, json_parser, json_task
from personasim.agents.trustee import TrusteeAgent, archetype_cap

__all__ = [
    "BIG_FIVE_LEVELS",
    "SYNONYMS",
    "TRAIT_FIELDS",
    "Decision",
    "DecisionParseError",
    "DecisionTask",
    "LevelNameError",
    "Persona",
    "PersonaAgent",
    "PersonaFileError",
    "ResearcherAgent",
    "TrusteeAgent",
    "archetype_cap",
    "attribute_levels",
    "augment_big_five",
    "check_counterfactual",
    "common_draws",
    "counterfactual_twins",
    "decide",
    "derive_traits",
    "format_instructions",
    "json_parser",
    "json_task",
    "known_attributes",
    "level_key",
    "load_personas",
    "match_level_names",
    "parse_nonempty",
    "parse_structured",
    "sample_personas",
    "select_personas",
    "synthetic_population",
    "twin_suffixes",
    "unknown_attribute",
    "unknown_level",
]
