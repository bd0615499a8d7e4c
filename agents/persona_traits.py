"""Persona traits: the categorical traits derived from a persona's GSS-style raw fields (names
and levels as the Trust Game paper's Appendix A, Table 5 spells them), and Big-Five levels
drawn for every persona (that paper's §3.2). Every loaded persona carries its derived traits.

The vocabulary (level names, GSS long forms) is data, in `data/trait_vocabulary.json`
(`trait_vocabulary`); the rules that apply it (age bins, folding work statuses) are here."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence

import numpy as np

from personasim.agents.persona import AttributeValue, Persona
from personasim.agents.trait_vocabulary import FOLD_WORK_STATUS, trait_vocabulary

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
# Trait vocabulary (paper, Appendix A, Table 5; read from data/trait_vocabulary.json)
# --------------------------------------------------------------------------------------------

_VOCABULARY = trait_vocabulary()

#: Big-Five level vocabularies exactly as Table 5 spells them (note "Medium" for Agreeableness
#: and the Extraverted/Ambivert/Introverted scale for Extraversion).
BIG_FIVE_LEVELS: dict[str, tuple[str, ...]] = dict(_VOCABULARY.big_five_levels)

#: Raw attribute key under which each Big-Five level is stored.
BIG_FIVE_FIELDS: dict[str, str] = {
    trait: trait.lower().replace(" ", "_") for trait in BIG_FIVE_LEVELS
}

#: Table 5's age bins.
AGE_LEVELS: tuple[str, ...] = _VOCABULARY.age_levels

#: Table 5's wealth levels (en dashes as printed in the paper).
TOTAL_WEALTH_LEVELS: tuple[str, ...] = _VOCABULARY.total_wealth_levels

#: Paper trait name -> raw GSS field it is derived from, in the order traits are emitted.
TRAIT_FIELDS: dict[str, str] = {**_VOCABULARY.trait_fields, **BIG_FIVE_FIELDS}

#: The oldest age of each of Table 5's age bins but the last (which is open-ended).
_AGE_BIN_TOPS: tuple[int, ...] = (29, 44, 64)

# GSS long forms (as they occur in gss_agents.jsonl) -> Table 5 levels. Values that are
# already Table 5 levels stay; anything else unlisted becomes "Other".
_WORK_STATUS: dict[str, str] = dict(_VOCABULARY.gss_long_forms.work_status)
_WORK_STATUS_LEVELS = frozenset(_VOCABULARY.work_status_levels)

# Table 5 lists "Divorce" (the GSS value cut at its comma); the other bank values
# ("Lived with parents", "Parent died", "Institution", ...) pass through unchanged.
_FAMILY_STRUCTURE: dict[str, str] = dict(_VOCABULARY.gss_long_forms.family_structure_at_16)

# The 15 GSS wealth brackets in the bank -> the 6 coarser Table 5 levels.
_TOTAL_WEALTH: dict[str, str] = dict(_VOCABULARY.gss_long_forms.total_wealth)


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
    return AGE_LEVELS[bisect_left(_AGE_BIN_TOPS, age)]


def _work_status_level(value: str) -> str:
    if value in _WORK_STATUS_LEVELS:
        return value
    return _WORK_STATUS.get(value, FOLD_WORK_STATUS)


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
    draws = rng.integers(0, [len(options) for options in levels], size=(len(personas), len(levels)))
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
