"""Sampling personas: a synthetic population drawn attribute by attribute from the marginal
frequencies of the GenAgents GSS bank (Park et al., 2024), for runs without a persona file,
and a seeded selection of personas from a bank."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from personasim.agents.persona import AttributeValue, Persona
from personasim.agents.persona_traits import derive_traits

__all__ = [
    "SYNTHETIC_AGE_BINS",
    "SYNTHETIC_MARGINALS",
    "select_personas",
    "synthetic_population",
]

# Marginal frequencies computed ONCE from the GenAgents GSS bank (gss_agents.jsonl, 3,505
# personas) and rounded to 3 decimals; values that round to 0.000 are left out (state NV, DC,
# SD; religion "Native American"). Sampling renormalises each row. Left out on purpose:
# names, street address and city (identifying/high-cardinality), ethnicity (90 values),
# hispanic_origin (constant) and detailed_race (would contradict an independently drawn race).
# fmt: off
SYNTHETIC_AGE_BINS: tuple[tuple[int, int, float], ...] = (
    (18, 29, 0.165),
    (30, 44, 0.295),
    (45, 64, 0.311),
    (65, 89, 0.229),
)

SYNTHETIC_MARGINALS: dict[str, tuple[tuple[str, float], ...]] = {
    "sex": (("Female", 0.537), ("Male", 0.463)),
    "race": (("White", 0.664), ("Black", 0.187), ("Other", 0.149)),
    "state": (
        ("SC", 0.105), ("IL", 0.096), ("CA", 0.094), ("PA", 0.066), ("NJ", 0.058), ("TX", 0.057),
        ("OR", 0.049), ("AL", 0.047), ("IA", 0.046), ("NC", 0.042), ("WI", 0.033), ("OH", 0.032),
        ("AR", 0.028), ("GA", 0.027), ("CO", 0.023), ("MA", 0.02), ("FL", 0.019), ("WA", 0.017),
        ("RI", 0.017), ("ID", 0.016), ("MT", 0.012), ("IN", 0.01), ("MI", 0.01), ("KS", 0.01),
        ("ME", 0.009), ("NY", 0.008), ("AZ", 0.006), ("NH", 0.005), ("OK", 0.005), ("KY", 0.005),
        ("MN", 0.004), ("LA", 0.004), ("NM", 0.004), ("CT", 0.003), ("VA", 0.003), ("MO", 0.003),
        ("MD", 0.003), ("TN", 0.001), ("VT", 0.001), ("HI", 0.001),
    ),
    "political_views": (
        ("Moderate, middle of the road", 0.391), ("Liberal", 0.138), ("Conservative", 0.138),
        ("Slightly conservative", 0.12), ("Slightly liberal", 0.113),
        ("Extremely liberal", 0.057), ("Extremely conservative", 0.044),
    ),
    "party_identification": (
        ("Independent (neither, no response)", 0.229), ("Strong democrat", 0.172),
        ("Not very strong democrat", 0.145), ("Independent, close to democrat", 0.118),
        ("Strong republican", 0.113), ("Not very strong republican", 0.102),
        ("Independent, close to republican", 0.092), ("Other party", 0.03),
    ),
    "residence_at_16": (
        ("South Atlantic", 0.178), ("East North Central", 0.174), ("Pacific", 0.14),
        ("Middle Atlantic", 0.113), ("Foreign", 0.096), ("West South Central", 0.085),
        ("West North Central", 0.062), ("Mountain", 0.053), ("East South Central", 0.052),
        ("New England", 0.046),
    ),
    "same_residence_since_16": (
        ("Same city", 0.381), ("Different state", 0.31), ("Same state, different city", 0.309),
    ),
    "family_structure_at_16": (
        ("Lived with parents", 0.838), ("Divorce, separated", 0.096), ("Parent died", 0.044),
        ("Other (left home before 16, e.g., for school)", 0.019), ("Institution", 0.002),
        ("Armed forces", 0.001),
    ),
    "family_income_at_16": (
        ("Average", 0.442), ("Below average", 0.271), ("Above average", 0.153),
        ("Far below average", 0.108), ("Far above average", 0.027),
    ),
    "fathers_highest_degree": (
        ("High school", 0.588), ("Less than high school", 0.192), ("Bachelor's", 0.106),
        ("Graduate", 0.087), ("Associate/junior college", 0.027),
    ),
    "mothers_highest_degree": (
        ("High school", 0.547), ("Less than high school", 0.199), ("Bachelor's", 0.125),
        ("Graduate", 0.071), ("Associate/junior college", 0.059),
    ),
    "mothers_work_history": (("Yes", 0.783), ("No", 0.217)),
    "marital_status": (
        ("Married", 0.425), ("Never married", 0.317), ("Divorced", 0.163), ("Widowed", 0.067),
        ("Separated", 0.028),
    ),
    "work_status": (
        ("Working full time", 0.46), ("Retired", 0.202), ("Working part time", 0.103),
        ("Keeping house", 0.076), ("Unemployed, laid off, looking for work", 0.056),
        ("Other", 0.047), ("In school", 0.029),
        ("With a job, but not at work because of temporary illness, vacation, strike", 0.027),
    ),
    "military_service_duration": (
        ("No active duty", 0.9), ("Yes, 2-4 years", 0.041), ("Yes, more than 4 years", 0.039),
        ("Yes, less than 2 years", 0.021),
    ),
    "religion": (
        ("Protestant", 0.396), ("None", 0.286), ("Catholic", 0.208), ("Christian", 0.026),
        ("Other", 0.023), ("Jewish", 0.016), ("Buddhism", 0.013), ("Hinduism", 0.012),
        ("Muslim/Islam", 0.01), ("Orthodox-Christian", 0.007), ("Inter-nondenominational", 0.001),
        ("Other eastern religions", 0.001),
    ),
    "religion_at_16": (
        ("Protestant", 0.475), ("Catholic", 0.322), ("None", 0.122), ("Christian", 0.015),
        ("Jewish", 0.015), ("Hinduism", 0.014), ("Buddhism", 0.011), ("Muslim/Islam", 0.011),
        ("Other", 0.007), ("Orthodox-Christian", 0.007), ("Other eastern religions", 0.001),
        ("Inter-nondenominational", 0.001),
    ),
    "born_in_us": (("Yes", 0.854), ("No", 0.146)),
    "us_citizenship_status": (("A U.S. citizen", 0.977), ("Not a U.S. citizen", 0.023)),
    "highest_degree_received": (
        ("High school", 0.462), ("Bachelor's", 0.211), ("Graduate", 0.141),
        ("Less than high school", 0.096), ("Associate/junior college", 0.09),
    ),
    "speak_other_language": (("No", 0.691), ("Yes", 0.309)),
    "total_wealth": (
        ("Less than $5,000", 0.254), ("$40,000 to $75,000", 0.249), ("$20,000 to $40,000", 0.146),
        ("$75,000 to $100,000", 0.119), ("$100,000 to $150,000", 0.069),
        ("$5,000 to $20,000", 0.049), ("$250,000 to $500,000", 0.041),
        ("$500,000 to $1 million", 0.026), ("$150,000 to $250,000", 0.024),
        ("$1 million to $2 million", 0.013), ("$2 million to $3 million", 0.005),
        ("$5 million to $10 million", 0.001), ("$4 million to $5 million", 0.001),
        ("$3 million to $4 million", 0.001), ("Above $10 million", 0.001),
    ),
}
# fmt: on


def _positive_count(n: int, what: str) -> int:
    count = operator.index(n)
    if count < 1:
        raise ValueError(f"{what} must be at least 1, got {count}")
    return count


def _sample_ages(n: int, rng: np.random.Generator) -> np.ndarray:
    weights = np.array([p for _, _, p in SYNTHETIC_AGE_BINS])
    bins = rng.choice(len(SYNTHETIC_AGE_BINS), size=n, p=weights / weights.sum())
    lows = np.array([lo for lo, _, _ in SYNTHETIC_AGE_BINS])[bins]
    highs = np.array([hi for _, hi, _ in SYNTHETIC_AGE_BINS])[bins]
    return rng.integers(lows, highs + 1)


def _sample_field(
    options: tuple[tuple[str, float], ...], n: int, rng: np.random.Generator
) -> list[str]:
    weights = np.array([p for _, p in options])
    picks = rng.choice(len(options), size=n, p=weights / weights.sum())
    return [options[int(i)][0] for i in picks]


def synthetic_population(n: int, rng: np.random.Generator) -> list[Persona]:
    """``n`` GSS-like personas with every field drawn independently from the bank's marginals.

    For offline runs and tests without the real bank. Fields are independent, so joint
    structure (e.g. age vs. retirement) is not preserved. Draw order: age bins, ages within
    bins, then one vectorised draw per field in ``SYNTHETIC_MARGINALS`` order; the same rng
    state gives the same population. Ids are ``synthetic-0001``, ``synthetic-0002``, ...
    """
    count = _positive_count(n, "synthetic_population size n")
    ages = _sample_ages(count, rng)
    columns = {
        field: _sample_field(options, count, rng) for field, options in SYNTHETIC_MARGINALS.items()
    }
    width = max(4, len(str(count)))
    personas = []
    for i in range(count):
        attributes: dict[str, AttributeValue] = {"age": int(ages[i])}
        attributes.update({field: values[i] for field, values in columns.items()})
        personas.append(
            Persona(
                id=f"synthetic-{i + 1:0{width}d}",
                attributes=attributes,
                traits=derive_traits(attributes),
            )
        )
    return personas


# --------------------------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------------------------


def select_personas(personas: Sequence[Persona], n: int, rng: np.random.Generator) -> list[Persona]:
    """``n`` distinct personas drawn without replacement with ``rng``, in sampled order."""
    count = _positive_count(n, "number of personas to select n")
    if count > len(personas):
        raise ValueError(
            f"cannot select {count} distinct personas from a bank of {len(personas)}; "
            "use a larger persona bank or synthetic_population() to generate more"
        )
    picks = rng.choice(len(personas), size=count, replace=False)
    return [personas[int(i)] for i in picks]
