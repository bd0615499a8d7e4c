"""Persona traits: the categorical traits derived from a persona's GSS-style raw fields (names
and levels as the Trust Game paper's Appendix A, Table 5 spells them), and Big-Five levels
drawn for every persona (that paper's §3.2). Every loaded persona carries its derived traits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from personasim.agents.persona import AttributeValue, Persona

__all__ = [
    "AGE_LEVELS",
    "BIG_FIVE_FIELDS",
    "BIG_FIVE_LEVELS",
    "TOTAL_WEALTH_LEVELS",
    "TRAIT_FIELDS",
    "augment_big_five",
    "derive_traits",
]

# --------------------------------------------------------------------------------------------
# Trait vocabulary (paper, Appendix A, Table 5)
# --------------------------------------------------------------------------------------------

#: Big-Five level vocabularies exactly as Table 5 spells them (note "Medium" for Agreeableness
#: and the Extraverted/Ambivert/Introverted scale for Extraversion).
BIG_FIVE_LEVELS: dict[str, tuple[str, ...]] = {
    "Openness To Experience": ("High", "Moderate", "Low"),
    "Conscientiousness": ("High", "Moderate", "Low"),
    "Extraversion": ("Extraverted", "Ambivert", "Introverted"),
    "Agreeableness": ("High", "Medium", "Low"),
    "Neuroticism": ("High", "Moderate", "Low"),
}

#: Raw attribute key under which each Big-Five level is stored.
BIG_FIVE_FIELDS: dict[str, str] = {
    trait: trait.lower().replace(" ", "_") for trait in BIG_FIVE_LEVELS
}

#: Table 5's age bins.
AGE_LEVELS: tuple[str, ...] = ("18-29", "30-44", "45-64", "65+")

#: Table 5's wealth levels (en dashes as printed in the paper).
TOTAL_WEALTH_LEVELS: tuple[str, ...] = (
    "Less than $20,000",
    "$20,000–$75,000",
    "$75,000–$250,000",
    "$250,000–$1 million",
    "$1 million–$5 million",
    "Above $5 million",
)

#: Paper trait name -> raw GSS field it is derived from, in the order traits are emitted.
TRAIT_FIELDS: dict[str, str] = {
    "Age": "age",
    "Sex": "sex",
    "Race": "race",
    "Political Views": "political_views",
    "Religion": "religion",
    "Highest Degree Received": "highest_degree_received",
    "Work Status": "work_status",
    "Family Structure At 16": "family_structure_at_16",
    "Same Residence Since 16": "same_residence_since_16",
    "Us Citizenship Status": "us_citizenship_status",
    "Marital Status": "marital_status",
    "Total Wealth": "total_wealth",
    **BIG_FIVE_FIELDS,
}

# GSS long forms (as they occur in gss_agents.jsonl) -> Table 5 levels. "Retired",
# "In school", "Keeping house" and "Other" already match; anything unlisted becomes "Other".
_WORK_STATUS: dict[str, str] = {
    "Working full time": "Full time",
    "Working part time": "Part time",
    "With a job, but not at work because of temporary illness, vacation, strike": (
        "Temporarily not working"
    ),
    "Unemployed, laid off, looking for work": "Unemployed",
    "Retired": "Retired",
    "In school": "In school",
    "Keeping house": "Keeping house",
}
_WORK_STATUS_LEVELS = frozenset(_WORK_STATUS.values()) | {"Other"}

# Table 5 lists "Divorce" (the GSS value cut at its comma); the other bank values
# ("Lived with parents", "Parent died", "Institution", ...) pass through unchanged.
_FAMILY_STRUCTURE: dict[str, str] = {"Divorce, separated": "Divorce"}

# The 15 GSS wealth brackets in the bank -> the 6 coarser Table 5 levels.
_TOTAL_WEALTH: dict[str, str] = {
    "Less than $5,000": TOTAL_WEALTH_LEVELS[0],
    "$5,000 to $20,000": TOTAL_WEALTH_LEVELS[0],
    "$20,000 to $40,000": TOTAL_WEALTH_LEVELS[1],
    "$40,000 to $75,000": TOTAL_WEALTH_LEVELS[1],
    "$75,000 to $100,000": TOTAL_WEALTH_LEVELS[2],
    "$100,000 to $150,000": TOTAL_WEALTH_LEVELS[2],
    "$150,000 to $250,000": TOTAL_WEALTH_LEVELS[2],
    "$250,000 to $500,000": TOTAL_WEALTH_LEVELS[3],
    "$500,000 to $1 million": TOTAL_WEALTH_LEVELS[3],
    "$1 million to $2 million": TOTAL_WEALTH_LEVELS[4],
    "$2 million to $3 million": TOTAL_WEALTH_LEVELS[4],
    "$3 million to $4 million": TOTAL_WEALTH_LEVELS[4],
    "$4 million to $5 million": TOTAL_WEALTH_LEVELS[4],
    "$5 million to $10 million": TOTAL_WEALTH_LEVELS[5],
    "Above $10 million": TOTAL_WEALTH_LEVELS[5],
}


# --------------------------------------------------------------------------------------------
# Trait derivation
# --------------------------------------------------------------------------------------------


def _as_whole_number(value: AttributeValue) -> int | None:
    """The integer an age value stands for, or None when it is not a whole number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    try:
        return int(value.strip())
    except ValueError:
        return None


def _age_level(value: AttributeValue) -> str:
    """Bin an age into Table 5's levels; non-numeric or under-18 values pass through."""
    age = _as_whole_number(value)
    if age is None or age < 18:
        return str(value)  # e.g. "89 or older" or 29.5: keep the raw value rather than guess
    if age <= 29:
        return "18-29"
    if age <= 44:
        return "30-44"
    if age <= 64:
        return "45-64"
    return "65+"


def _work_status_level(value: str) -> str:
    if value in _WORK_STATUS_LEVELS:
        return value
    return _WORK_STATUS.get(value, "Other")


def _trait_level(trait: str, value: AttributeValue) -> str:
    if trait == "Age":
        return _age_level(value)
    text = str(value)
    if trait == "Work Status":
        return _work_status_level(text)
    if trait == "Family Structure At 16":
        return _FAMILY_STRUCTURE.get(text, text)
    if trait == "Total Wealth":
        return _TOTAL_WEALTH.get(text, text)
    return text


def derive_traits(attributes: Mapping[str, AttributeValue]) -> dict[str, str]:
    """Map GSS-style raw fields to the paper's trait names and Table 5 levels.

    A trait is present only when its raw field is; raw values without a known mapping are
    kept verbatim so no information is lost (only Work Status folds unknowns into "Other",
    as Table 5 does).
    """
    return {
        trait: _trait_level(trait, attributes[field])
        for trait, field in TRAIT_FIELDS.items()
        if field in attributes
    }


# --------------------------------------------------------------------------------------------
# Big-Five augmentation
# --------------------------------------------------------------------------------------------


def augment_big_five(personas: Sequence[Persona], rng: np.random.Generator) -> list[Persona]:
    """Give every persona independently, uniformly drawn Big-Five levels (paper §3.2).

    Draw order (fixed, for reproducibility): one ``rng.integers`` call of shape
    ``(len(personas), 5)``; row ``i`` is persona ``i`` in input order, columns follow
    ``BIG_FIVE_LEVELS`` order. Levels are stored both as attributes (``BIG_FIVE_FIELDS`` keys,
    replacing any existing values) and as traits. Input personas are not modified.
    """
    if not personas:
        return []
    levels = list(BIG_FIVE_LEVELS.values())
    draws = rng.integers(0, [len(options) for options in levels], size=(len(personas), 5))
    augmented = []
    for persona, row in zip(personas, draws, strict=True):
        drawn = {
            trait: levels[column][int(index)]
            for column, (trait, index) in enumerate(zip(BIG_FIVE_LEVELS, row, strict=True))
        }
        attributes = dict(persona.attributes)
        attributes.update({BIG_FIVE_FIELDS[trait]: level for trait, level in drawn.items()})
        traits = {**persona.traits, **drawn}
        augmented.append(Persona(id=persona.id, attributes=attributes, traits=traits))
    return augmented
