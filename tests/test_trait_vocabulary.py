"""The trait vocabulary file (agents/data/trait_vocabulary.json): its values are the Trust Game
paper's Appendix A, Table 5 (written out below from the paper, not read from the file), and a
damaged copy fails with the file and the field to fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from personasim.agents.level_names import SYNONYMS
from personasim.agents.persona_traits import (
    AGE_LEVELS,
    BIG_FIVE_LEVELS,
    TOTAL_WEALTH_LEVELS,
    TRAIT_FIELDS,
    derive_traits,
)
from personasim.agents.trait_vocabulary import (
    VOCABULARY_FILE,
    VocabularyFileError,
    load_vocabulary,
    trait_vocabulary,
)

# Table 5 as the paper prints it (levels alphabetical, except Age and Total Wealth, which are
# in the paper's order). The PDF's "$75,000– $250,000" is one level broken across a line.
PAPER_TABLE_5: dict[str, list[str]] = {
    "Age": ["18-29", "30-44", "45-64", "65+"],
    "Agreeableness": ["High", "Low", "Medium"],
    "Conscientiousness": ["High", "Low", "Moderate"],
    "Extraversion": ["Ambivert", "Extraverted", "Introverted"],
    "Family Structure At 16": [
        "Armed forces",
        "Both parents",
        "Divorce",
        "Foster care",
        "Grandparents",
        "Institution",
        "Lived with parents",
        "Other guardian",
        "Single parent - father",
        "Single parent - mother",
    ],
    "Highest Degree Received": [
        "Associate/junior college",
        "Bachelor's",
        "Bachelor's degree",
        "Graduate",
        "Graduate or professional degree",
        "High school",
        "High school diploma or GED",
        "Less than high school",
        "No high school diploma",
        "Some college or associate degree",
    ],
    "Marital Status": ["Divorced", "Married", "Never married", "Separated", "Widowed"],
    "Neuroticism": ["High", "Low", "Moderate"],
    "Openness To Experience": ["High", "Low", "Moderate"],
    "Political Views": [
        "Conservative",
        "Extremely conservative",
        "Extremely liberal",
        "Liberal",
        "Moderate, middle of the road",
        "Slightly conservative",
        "Slightly liberal",
    ],
    "Race": ["Black", "Other", "White"],
    "Religion": [
        "Buddhism",
        "Christian",
        "Hinduism",
        "Jewish",
        "Muslim/Islam",
        "None",
        "Orthodox-Christian",
        "Protestant",
    ],
    "Same Residence Since 16": ["Different state", "Same city", "Same state, different city"],
    "Sex": ["Female", "Male"],
    "Total Wealth": [
        "Less than $20,000",
        "$20,000–$75,000",
        "$75,000–$250,000",
        "$250,000–$1 million",
        "$1 million–$5 million",
        "Above $5 million",
    ],
    "Us Citizenship Status": ["A U.S. citizen", "Not a U.S. citizen"],
    "Work Status": [
        "Full time",
        "In school",
        "Keeping house",
        "Other",
        "Part time",
        "Retired",
        "Temporarily not working",
        "Unemployed",
    ],
}
"""Table 5's traits that the GSS bank carries or the project draws (the Big-Five)."""

TABLE_5_NOT_IN_THE_BANK = (
    "Communication Quality",
    "Cultural Norms",
    "Ethnicity",
    "General Activity Level",
    "Type Of Disability If Any",
)
"""Table 5's other augmented traits, which neither the bank nor the project provides."""

BIG_FIVE = (
    "Openness To Experience",
    "Conscientiousness",
    "Extraversion",
    "Agreeableness",
    "Neuroticism",
)


def test_the_levels_are_table_5s() -> None:
    assert tuple(PAPER_TABLE_5["Age"]) == AGE_LEVELS
    assert tuple(PAPER_TABLE_5["Total Wealth"]) == TOTAL_WEALTH_LEVELS
    assert tuple(BIG_FIVE_LEVELS) == BIG_FIVE
    for trait, levels in BIG_FIVE_LEVELS.items():
        assert sorted(levels) == PAPER_TABLE_5[trait], trait
    assert list(trait_vocabulary().work_status_levels) == PAPER_TABLE_5["Work Status"]


def test_the_traits_are_table_5s_bank_and_big_five_traits() -> None:
    assert set(TRAIT_FIELDS) == set(PAPER_TABLE_5)
    assert not set(TRAIT_FIELDS) & set(TABLE_5_NOT_IN_THE_BANK)


def test_the_gss_long_forms_map_onto_table_5_levels() -> None:
    long_forms = trait_vocabulary().gss_long_forms
    assert set(long_forms.work_status.values()) <= set(PAPER_TABLE_5["Work Status"])
    assert set(long_forms.total_wealth.values()) == set(PAPER_TABLE_5["Total Wealth"])
    assert set(long_forms.family_structure_at_16.values()) <= set(
        PAPER_TABLE_5["Family Structure At 16"]
    )
    traits = derive_traits(
        {
            "work_status": "Unemployed, laid off, looking for work",
            "family_structure_at_16": "Divorce, separated",
            "total_wealth": "$150,000 to $250,000",
        }
    )
    assert traits == {
        "Work Status": "Unemployed",
        "Family Structure At 16": "Divorce",
        "Total Wealth": "$75,000–$250,000",
    }


def test_each_synonym_is_for_a_table_5_level() -> None:
    table_5_levels = {level for levels in PAPER_TABLE_5.values() for level in levels}
    assert set(SYNONYMS) <= table_5_levels
    assert SYNONYMS["65+"][:2] == ("65 and over", "65 and older")


def test_the_source_block_cites_the_paper_and_credits_each_field() -> None:
    source = trait_vocabulary().source
    assert "Do Role-Playing Agents Practice What They Preach?" in source.paper
    assert "Table 5" in source.table
    assert set(source.from_project) == {"gss_long_forms", "synonyms"}


def test_the_shipped_file_is_read_once() -> None:
    assert trait_vocabulary() is trait_vocabulary()
    assert trait_vocabulary.cache_info().misses <= 1


# --------------------------------------------------------------------------------------------
# A damaged file
# --------------------------------------------------------------------------------------------


def _shipped() -> dict[str, Any]:
    resource = resources.files("personasim.agents").joinpath("data", VOCABULARY_FILE)
    return json.loads(resource.read_text(encoding="utf-8"))


def _broken_copy(tmp_path: Path, damage: Callable[[dict[str, Any]], None]) -> Path:
    data = _shipped()
    damage(data)
    path = tmp_path / VOCABULARY_FILE
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _drop_other(data: dict[str, Any]) -> None:
    data["work_status_levels"].remove("Other")


DAMAGE: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "level twice": (
        lambda d: d["big_five_levels"].update(Agreeableness=["High", "High", "Low"]),
        "big_five_levels.Agreeableness: names a level more than once: ['High']",
    ),
    "a Big-Five trait missing": (
        lambda d: d["big_five_levels"].pop("Neuroticism"),
        "big_five_levels: Dictionary should have at least 5 items",
    ),
    "three age bins": (
        lambda d: d["age_levels"].pop(),
        "age_levels: Tuple should have at least 4 items after validation, not 3",
    ),
    "a level not a string": (
        lambda d: d["total_wealth_levels"].__setitem__(2, 75000),
        "total_wealth_levels.2: Input should be a valid string",
    ),
    "a padded name": (
        lambda d: d["trait_fields"].update(Age=" age"),
        "trait_fields.Age: String should match pattern",
    ),
    "a field misspelt": (
        lambda d: d.update(synonym=d.pop("synonyms")),
        "synonyms: Field required",
    ),
    "an empty synonym list": (
        lambda d: d["synonyms"].update({"65+": []}),
        "synonyms.65+: Tuple should have at least 1 item",
    ),
    "a long form onto no level": (
        lambda d: d["gss_long_forms"]["total_wealth"].update({"Above $10 million": "Above $10M"}),
        "gss_long_forms.total_wealth maps onto names that are not levels: ['Above $10M']",
    ),
    "no Other": (_drop_other, "work_status_levels must include 'Other'"),
    "a field not credited": (
        lambda d: d["source"]["from_project"].pop("synonyms"),
        "source.from_paper and source.from_project must name each field once "
        "(missing ['synonyms'], unknown or twice [])",
    ),
    "an empty object": (lambda d: d.clear(), "source: Field required"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_file_names_the_file_and_the_field(tmp_path: Path, damage: str) -> None:
    how, expected = DAMAGE[damage]
    path = _broken_copy(tmp_path, how)
    with pytest.raises(VocabularyFileError) as caught:
        load_vocabulary(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"age_levels": [], "age_levels": []}', "the key 'age_levels' appears twice"),
        ('{"age_levels": ["18-29",', "not valid JSON"),
        ("[1, 2]", "Input should be a valid dictionary"),
    ],
)
def test_a_file_that_is_not_a_vocabulary(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / VOCABULARY_FILE
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VocabularyFileError) as caught:
        load_vocabulary(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(VocabularyFileError, match="cannot read the vocabulary"):
        load_vocabulary(tmp_path / "absent.json")


def test_the_shipped_file_loads_as_the_modules_export_it() -> None:
    loaded = load_vocabulary(
        Path(str(resources.files("personasim.agents").joinpath("data", VOCABULARY_FILE)))
    )
    assert loaded == trait_vocabulary()
    assert dict(loaded.big_five_levels) == BIG_FIVE_LEVELS
    assert dict(loaded.synonyms) == SYNONYMS
