"""Persona banks: loading, trait derivation, Big-Five augmentation, sampling.

Reproduces §3.2 "Participant Generation" of the Trust Game belief-behaviour paper: personas
come from the GenAgents GSS bank (Park et al., 2024), are augmented with independently drawn
Big-Five levels, and are analysed through the categorical traits of its Appendix A, Table 5.

File format accepted by :func:`load_personas` (chosen by extension):

* ``.jsonl`` / ``.ndjson`` / ``.json`` - JSON Lines: one JSON object per line.
* ``.csv`` - a header row, then one persona per row (UTF-8, an optional BOM is fine).

Each persona may carry an ``"id"`` field; without one its id is ``"{file stem}-{line}"``.
Every other field is an attribute whose value must be a scalar (string, number, boolean).
``null`` values and empty CSV cells mean "missing" and are dropped. Blank lines are skipped.
In CSV files ``age`` becomes an int when it parses as one; all other cells stay strings.
"""

from __future__ import annotations

import csv
import json
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from personasim.agents.persona import AttributeValue, Persona
from personasim.simulation import csv_separator_problem

__all__ = [
    "AGE_LEVELS",
    "BIG_FIVE_FIELDS",
    "BIG_FIVE_LEVELS",
    "SYNTHETIC_AGE_BINS",
    "SYNTHETIC_MARGINALS",
    "TABLE3_TRAITS",
    "TEST_SPLIT_LEVELS",
    "TOTAL_WEALTH_LEVELS",
    "TRAIT_FIELDS",
    "TRUST_TEST_TRAITS",
    "PersonaFileError",
    "augment_big_five",
    "derive_traits",
    "load_personas",
    "sample_personas",
    "select_personas",
    "synthetic_population",
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

#: The traits of the paper's test split (the te-marked rows of Table 5), which all reported
#: experiments use.
TRUST_TEST_TRAITS: tuple[str, ...] = (
    "Age",
    "Conscientiousness",
    "Family Structure At 16",
    "Highest Degree Received",
    "Openness To Experience",
    "Political Views",
    "Religion",
    "Same Residence Since 16",
    "Us Citizenship Status",
    "Work Status",
)

AGE_LEVELS: tuple[str, ...] = ("18-29", "30-44", "45-64", "65+")

#: The nine traits of Table 3 (Table 5's test traits less Religion, which no reported table
#: analyses): the trust scenarios' default.
TABLE3_TRAITS: tuple[str, ...] = tuple(t for t in TRUST_TEST_TRAITS if t != "Religion")

#: The te-marked levels of Table 5 per test trait, as `derive_traits` spells them. With
#: `split="test"` only personas at one of these levels enter a trait's analysis. GSS values map
#: onto them as `derive_traits` documents; none is renamed to reach the test split (the GSS bank
#: has no te level of Family Structure At 16: "Lived with parents" is Table 5's tr level, distinct
#: from te's "Both parents"), so such a trait is left out with a reason rather than guessed.
TEST_SPLIT_LEVELS: dict[str, tuple[str, ...]] = {
    "Age": AGE_LEVELS,
    "Conscientiousness": ("High", "Low", "Moderate"),
    "Family Structure At 16": (
        "Both parents",
        "Foster care",
        "Grandparents",
        "Other guardian",
        "Single parent - father",
        "Single parent - mother",
    ),
    "Highest Degree Received": (
        "Associate/junior college",
        "Bachelor's",
        "Graduate",
        "High school",
        "Less than high school",
    ),
    "Openness To Experience": ("High", "Low", "Moderate"),
    "Political Views": (
        "Extremely conservative",
        "Extremely liberal",
        "Slightly conservative",
        "Slightly liberal",
    ),
    "Religion": ("Jewish", "Muslim/Islam", "None", "Orthodox-Christian", "Protestant"),
    "Same Residence Since 16": ("Different state", "Same city", "Same state, different city"),
    "Us Citizenship Status": ("A U.S. citizen", "Not a U.S. citizen"),
    "Work Status": ("In school", "Keeping house", "Other", "Retired"),
}

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
# Loading
# --------------------------------------------------------------------------------------------


class PersonaFileError(ValueError):
    """A persona file that cannot be used, with the file and (1-based) line to fix."""

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.line = line
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


_JSON_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
_CSV_SUFFIXES = frozenset({".csv"})
_FORMAT_HINT = (
    "each line must be one JSON object of scalar fields, "
    'e.g. {"id": "p1", "age": 34, "sex": "Female"}'
)

# (line number, raw fields) for each persona in a file.
_Row = tuple[int, dict[str, Any]]


def _reject_duplicate_keys(
    path: Path, line: int
) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise PersonaFileError(
                    path, f"field {key!r} appears twice in one object; keep only one", line
                )
            seen[key] = value
        return seen

    return hook


def _read_jsonl(path: Path, text: str) -> Iterator[_Row]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw, object_pairs_hook=_reject_duplicate_keys(path, number))
        except json.JSONDecodeError as exc:
            raise PersonaFileError(
                path, f"not a JSON object ({exc.msg} at column {exc.colno}); {_FORMAT_HINT}", number
            ) from None
        if not isinstance(record, dict):
            raise PersonaFileError(
                path,
                f"expected a JSON object, got a {type(record).__name__}; {_FORMAT_HINT}",
                number,
            )
        yield number, record


def _csv_cell(field: str, cell: str) -> AttributeValue:
    if field == "age":
        try:
            return int(cell.strip())
        except ValueError:
            return cell
    return cell


def _read_csv(path: Path, text: str) -> Iterator[_Row]:
    reader = csv.DictReader(text.splitlines(keepends=True))
    header = reader.fieldnames or []
    if problem := csv_separator_problem(header):
        raise PersonaFileError(path, problem, 1)
    if any(not name.strip() for name in header):
        raise PersonaFileError(path, "the header row has an empty column name; name it", 1)
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise PersonaFileError(
            path, f"the header row repeats column(s) {', '.join(duplicates)}; rename them", 1
        )
    for row in reader:
        number = reader.line_num
        if None in row:
            raise PersonaFileError(
                path,
                f"row has more values than the {len(header)} header columns; "
                "quote values that contain commas",
                number,
            )
        yield (
            number,
            {name: _csv_cell(name, cell) for name, cell in row.items() if cell not in (None, "")},
        )


def _row_to_persona(path: Path, number: int, fields: dict[str, Any]) -> Persona:
    raw_id = fields.pop("id", None)
    if raw_id is None:
        persona_id = f"{path.stem}-{number}"
    elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool) and str(raw_id).strip():
        persona_id = str(raw_id).strip()
    else:
        raise PersonaFileError(
            path, f"'id' must be a non-empty string or integer, got {raw_id!r}", number
        )
    attributes: dict[str, AttributeValue] = {}
    for key, value in fields.items():
        if value is None:
            continue
        if not isinstance(value, str | int | float | bool):
            raise PersonaFileError(
                path,
                f"field {key!r} has a {type(value).__name__} value; persona fields must be "
                "scalars (string, number, boolean), so flatten it into separate fields",
                number,
            )
        attributes[key] = value
    return Persona(id=persona_id, attributes=attributes, traits=derive_traits(attributes))


def _read_rows(path: Path) -> Iterator[_Row]:
    suffix = path.suffix.lower()
    if suffix not in _JSON_SUFFIXES | _CSV_SUFFIXES:
        raise PersonaFileError(
            path,
            f"unknown persona file type {suffix or '(no extension)'!r}; "
            "use .jsonl (one JSON object per line) or .csv (header row)",
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PersonaFileError(
            path, f"not UTF-8 text ({exc.reason}); re-save it as UTF-8"
        ) from None
    return _read_csv(path, text) if suffix in _CSV_SUFFIXES else _read_jsonl(path, text)


def load_personas(path: str | Path) -> list[Persona]:
    """Load a persona bank (JSON Lines or CSV, see the module docstring), deriving traits.

    Raises :class:`PersonaFileError` naming the file and line for anything malformed, and
    :class:`FileNotFoundError` when the file does not exist.
    """
    path = Path(path)
    personas: list[Persona] = []
    first_line: dict[str, int] = {}
    for number, fields in _read_rows(path):
        persona = _row_to_persona(path, number, fields)
        if persona.id in first_line:
            raise PersonaFileError(
                path,
                f"duplicate id {persona.id!r} (first used on line {first_line[persona.id]}); "
                "ids must be unique - rename one, or drop 'id' to get generated ids",
                number,
            )
        first_line[persona.id] = number
        personas.append(persona)
    if not personas:
        raise PersonaFileError(path, "the file holds no personas; add at least one record")
    return personas


def sample_personas() -> list[Persona]:
    """The 120-persona GSS sample shipped with the package (see ``agents/data/README.md``)."""
    resource = resources.files("personasim.agents").joinpath("data", "gss_sample.jsonl")
    with resources.as_file(resource) as path:
        return load_personas(path)


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


# --------------------------------------------------------------------------------------------
# Synthetic population
# --------------------------------------------------------------------------------------------

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
