"""Tests for the persona type and persona banks (loading, traits, Big Five, sampling)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA

from personasim.agents.persona import Persona
from personasim.agents.persona_bank import PersonaFileError, load_personas, sample_personas
from personasim.agents.persona_sampling import (
    SYNTHETIC_AGE_BINS,
    SYNTHETIC_MARGINALS,
    select_personas,
    synthetic_population,
)
from personasim.agents.persona_traits import (
    AGE_LEVELS,
    BIG_FIVE_FIELDS,
    BIG_FIVE_LEVELS,
    TOTAL_WEALTH_LEVELS,
    augment_big_five,
    derive_traits,
)
from personasim.scenarios.trust.traits import TRUST_TEST_TRAITS

REAL_BANK = DATA / "genagents" / "gss_agents.jsonl"

GSS_RECORD = {
    "id": "p-1",
    "first_name": "Ethan",
    "last_name": "Robinson",
    "age": 25,
    "sex": "Male",
    "race": "White",
    "street_address": "123 Elmwood Drive",
    "city": "Little Rock",
    "state": "AR",
    "political_views": "Slightly liberal",
    "family_structure_at_16": "Divorce, separated",
    "work_status": "Working full time",
    "religion": "Catholic",
    "us_citizenship_status": "A U.S. citizen",
    "highest_degree_received": "High school",
    "total_wealth": "$40,000 to $75,000",
}


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_persona(persona_id: str = "p-1", **attributes: str | int) -> Persona:
    return Persona(id=persona_id, attributes=attributes, traits=derive_traits(attributes))


# --- Persona -------------------------------------------------------------------------------


def test_profile_text_hides_identifying_fields_and_keeps_attribute_order() -> None:
    attributes = {k: v for k, v in GSS_RECORD.items() if k != "id"}
    persona = Persona(id="p-1", attributes=attributes, traits=derive_traits(attributes))
    lines = persona.profile_text().splitlines()
    assert lines[:4] == ["Age: 25", "Sex: Male", "Race: White", "City: Little Rock"]
    assert "Political views: Slightly liberal" in lines
    assert "US citizenship status: A U.S. citizen" in lines
    text = persona.profile_text()
    for hidden in ("Ethan", "Robinson", "Elmwood", "p-1", "First name", "Street address"):
        assert hidden not in text


def test_persona_record_round_trip_and_value_equality() -> None:
    persona = make_persona(age=40, sex="Female", speaks_spanish=True)  # type: ignore[arg-type]
    record = persona.to_record()
    assert json.loads(json.dumps(record)) == record
    assert type(record["attributes"]) is dict and type(record["traits"]) is dict
    clone = Persona.from_record(record)
    assert clone == persona
    assert hash(clone) == hash(persona)
    assert "Speaks spanish: Yes" in clone.profile_text()


def test_persona_is_immutable_and_detached_from_caller_dicts() -> None:
    attributes = {"age": 40}
    persona = Persona(id="x", attributes=attributes, traits={"Age": "30-44"})
    attributes["age"] = 99
    assert persona.attributes["age"] == 40
    with pytest.raises(TypeError):
        persona.attributes["age"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        persona.id = "y"  # type: ignore[misc]


def test_persona_rejects_nested_attribute_values_and_empty_id() -> None:
    with pytest.raises(ValueError, match="'hobbies'"):
        Persona(id="x", attributes={"hobbies": ["chess"]}, traits={})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="non-empty"):
        Persona(id="", attributes={}, traits={})


# --- Loading -------------------------------------------------------------------------------


def test_load_jsonl_keeps_ids_generates_missing_ones_and_derives_traits(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "bank.jsonl",
        [
            json.dumps(GSS_RECORD),
            "",
            json.dumps({"age": 70, "work_status": "Retired", "note": None, "score": 1.5}),
        ],
    )
    first, second = load_personas(path)
    assert first.id == "p-1"
    assert "id" not in first.attributes
    assert first.attributes["age"] == 25
    assert first.traits["Age"] == "18-29"
    assert first.traits["Work Status"] == "Full time"
    assert first.traits["Family Structure At 16"] == "Divorce"
    assert first.traits["Total Wealth"] == "$20,000–$75,000"
    assert second.id == "bank-3"  # file stem + 1-based line number (line 2 is blank)
    assert dict(second.attributes) == {"age": 70, "work_status": "Retired", "score": 1.5}
    assert second.traits == {"Age": "65+", "Work Status": "Retired"}


def test_load_csv_converts_age_only_and_drops_empty_cells(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text(
        "id,age,sex,political_views,zip\n"
        'a,45,Female,"Moderate, middle of the road",02139\n'
        ",unknown,Male,,10001\n",
        encoding="utf-8",
    )
    first, second = load_personas(path)
    assert first.id == "a"
    assert first.attributes["age"] == 45
    assert first.attributes["zip"] == "02139"  # other numeric-looking cells stay strings
    assert first.traits["Political Views"] == "Moderate, middle of the road"
    assert first.traits["Age"] == "45-64"
    assert second.id == "people-3"
    assert second.attributes["age"] == "unknown"
    assert second.traits["Age"] == "unknown"
    assert "political_views" not in second.attributes


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "personas.jsonl", [json.dumps(GSS_RECORD), '{"age": 3 "x": 1}'])
    with pytest.raises(PersonaFileError) as info:
        load_personas(path)
    message = str(info.value)
    assert "personas.jsonl, line 2" in message
    assert "not a JSON object" in message and "column" in message
    assert info.value.line == 2
    assert info.value.path == path


def test_non_object_json_line_is_rejected(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "personas.json", ['[{"age": 30}]'])
    with pytest.raises(PersonaFileError, match=r"line 1: expected a JSON object, got a list"):
        load_personas(path)


def test_nested_value_names_field_and_line(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl", [json.dumps({"age": 30}), json.dumps({"age": 31, "pets": ["cat"]})]
    )
    with pytest.raises(PersonaFileError, match=r"p\.jsonl, line 2: field 'pets' has a list"):
        load_personas(path)


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl",
        [json.dumps({"id": "dup", "age": 30}), json.dumps({"id": "x"}), json.dumps({"id": "dup"})],
    )
    with pytest.raises(PersonaFileError) as info:
        load_personas(path)
    assert "line 3: duplicate id 'dup' (first used on line 1)" in str(info.value)
    assert info.value.line == 3


@pytest.mark.parametrize("content", ["", "\n  \n\n"])
def test_empty_file_is_an_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PersonaFileError, match=r"empty\.jsonl: the file holds no personas"):
        load_personas(path)


def test_header_only_csv_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("id,age\n", encoding="utf-8")
    with pytest.raises(PersonaFileError, match="no personas"):
        load_personas(path)


def test_unknown_extension_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "personas.xlsx"
    path.write_text("whatever", encoding="utf-8")
    with pytest.raises(PersonaFileError, match=r"unknown persona file type '\.xlsx'.*\.jsonl"):
        load_personas(path)


def test_csv_row_with_extra_values_names_line(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("id,age\na,30\nb,31,extra\n", encoding="utf-8")
    with pytest.raises(PersonaFileError, match=r"line 3: row has more values"):
        load_personas(path)


def test_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_personas(tmp_path / "nope.jsonl")


# --- Trait derivation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "level"),
    [
        (18, "18-29"),
        (29, "18-29"),
        (30, "30-44"),
        (44, "30-44"),
        (45, "45-64"),
        (64, "45-64"),
        (65, "65+"),
        (89, "65+"),
        ("44", "30-44"),
        (44.0, "30-44"),
        ("89 or older", "89 or older"),
    ],
)
def test_age_bins_at_the_edges(age: int | str | float, level: str) -> None:
    assert derive_traits({"age": age})["Age"] == level
    assert level in AGE_LEVELS or level == str(age)


@pytest.mark.parametrize(
    ("raw", "level"),
    [
        ("Working full time", "Full time"),
        ("Working part time", "Part time"),
        (
            "With a job, but not at work because of temporary illness, vacation, strike",
            "Temporarily not working",
        ),
        ("Unemployed, laid off, looking for work", "Unemployed"),
        ("Retired", "Retired"),
        ("In school", "In school"),
        ("Keeping house", "Keeping house"),
        ("Other", "Other"),
        ("Volunteering abroad", "Other"),
    ],
)
def test_work_status_mapping(raw: str, level: str) -> None:
    assert derive_traits({"work_status": raw}) == {"Work Status": level}


def test_total_wealth_bins_cover_all_gss_brackets() -> None:
    brackets = [value for value, _ in SYNTHETIC_MARGINALS["total_wealth"]]
    levels = {derive_traits({"total_wealth": b})["Total Wealth"] for b in brackets}
    assert levels == set(TOTAL_WEALTH_LEVELS)
    assert derive_traits({"total_wealth": "$4 million to $5 million"}) == {
        "Total Wealth": "$1 million–$5 million"
    }


def test_unknown_values_pass_through_and_missing_fields_are_absent() -> None:
    traits = derive_traits({"religion": "Pastafarian", "sex": "Female", "hobby": "chess"})
    assert traits == {"Sex": "Female", "Religion": "Pastafarian"}
    assert derive_traits({}) == {}


def test_gss_record_maps_to_paper_trait_names() -> None:
    traits = derive_traits(GSS_RECORD)
    assert traits["Us Citizenship Status"] == "A U.S. citizen"
    assert traits["Highest Degree Received"] == "High school"
    assert traits["Political Views"] == "Slightly liberal"
    assert set(traits) >= {"Age", "Political Views", "Religion", "Work Status"}
    assert "Openness To Experience" not in traits  # not in the raw bank


# --- Big Five ------------------------------------------------------------------------------


def test_big_five_vocabulary_matches_table_5() -> None:
    assert BIG_FIVE_LEVELS["Agreeableness"] == ("High", "Medium", "Low")
    assert BIG_FIVE_LEVELS["Extraversion"] == ("Extraverted", "Ambivert", "Introverted")
    assert BIG_FIVE_FIELDS["Openness To Experience"] == "openness_to_experience"
    assert set(TRUST_TEST_TRAITS) >= {"Conscientiousness", "Openness To Experience"}
    assert len(TRUST_TEST_TRAITS) == 10


def test_big_five_augmentation_is_reproducible_and_seed_dependent() -> None:
    base = [make_persona(f"p{i}", age=30 + i) for i in range(50)]
    first = augment_big_five(base, np.random.default_rng(7))
    again = augment_big_five(base, np.random.default_rng(7))
    other = augment_big_five(base, np.random.default_rng(8))
    assert first == again
    assert first != other
    assert all("Conscientiousness" not in p.traits for p in base)  # inputs untouched
    persona = first[0]
    assert persona.traits["Age"] == "30-44"
    for trait, field in BIG_FIVE_FIELDS.items():
        assert persona.attributes[field] == persona.traits[trait]
        assert persona.traits[trait] in BIG_FIVE_LEVELS[trait]
    assert "Openness to experience: " in persona.profile_text()


def test_big_five_draw_order_is_persona_then_trait() -> None:
    base = [make_persona("a"), make_persona("b")]
    augmented = augment_big_five(base, np.random.default_rng(3))
    expected = np.random.default_rng(3).integers(0, [3, 3, 3, 3, 3], size=(2, 5))
    for persona, row in zip(augmented, expected, strict=True):
        drawn = [persona.traits[t] for t in BIG_FIVE_LEVELS]
        assert drawn == [BIG_FIVE_LEVELS[t][i] for t, i in zip(BIG_FIVE_LEVELS, row, strict=True)]


def test_big_five_levels_are_uniform_over_3000_personas() -> None:
    base = [make_persona(f"p{i}") for i in range(3000)]
    augmented = augment_big_five(base, np.random.default_rng(2024))
    for trait, levels in BIG_FIVE_LEVELS.items():
        counts = Counter(p.traits[trait] for p in augmented)
        assert set(counts) == set(levels)
        for level in levels:
            assert abs(counts[level] / 3000 - 1 / 3) < 0.04, (trait, level, counts)


def test_big_five_traits_are_roughly_independent() -> None:
    base = [make_persona(f"p{i}") for i in range(3000)]
    augmented = augment_big_five(base, np.random.default_rng(11))
    pairs = Counter(
        (p.traits["Openness To Experience"], p.traits["Neuroticism"]) for p in augmented
    )
    assert len(pairs) == 9
    assert all(abs(count / 3000 - 1 / 9) < 0.03 for count in pairs.values())


def test_big_five_on_empty_list() -> None:
    assert augment_big_five([], np.random.default_rng(0)) == []


# --- Synthetic population ------------------------------------------------------------------


def test_synthetic_population_is_reproducible_with_ids_and_traits() -> None:
    first = synthetic_population(25, np.random.default_rng(5))
    assert first == synthetic_population(25, np.random.default_rng(5))
    assert first != synthetic_population(25, np.random.default_rng(6))
    assert [p.id for p in first[:2]] == ["synthetic-0001", "synthetic-0002"]
    assert first[-1].id == "synthetic-0025"
    for persona in first:
        assert 18 <= persona.attributes["age"] <= 89
        assert set(persona.attributes) == {"age", *SYNTHETIC_MARGINALS}
        assert persona.traits["Age"] in AGE_LEVELS
        assert persona.traits["Total Wealth"] in TOTAL_WEALTH_LEVELS


def test_synthetic_marginals_match_the_table() -> None:
    n = 5000
    population = synthetic_population(n, np.random.default_rng(1))
    for field in ("sex", "political_views", "work_status", "religion", "total_wealth"):
        options = SYNTHETIC_MARGINALS[field]
        total = sum(p for _, p in options)
        counts = Counter(persona.attributes[field] for persona in population)
        for value, p in options:
            assert abs(counts[value] / n - p / total) < 0.03, (field, value)
    age_counts = Counter(persona.traits["Age"] for persona in population)
    for level, (_, _, p) in zip(AGE_LEVELS, SYNTHETIC_AGE_BINS, strict=True):
        assert abs(age_counts[level] / n - p) < 0.03, level


def test_synthetic_marginal_rows_are_probability_tables() -> None:
    for field, options in SYNTHETIC_MARGINALS.items():
        assert abs(sum(p for _, p in options) - 1) < 0.01, field
        assert len({value for value, _ in options}) == len(options), field
    assert abs(sum(p for _, _, p in SYNTHETIC_AGE_BINS) - 1) < 0.01


@pytest.mark.parametrize("n", [0, -3])
def test_synthetic_population_rejects_non_positive_n(n: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        synthetic_population(n, np.random.default_rng(0))


# --- Shipped sample and selection ----------------------------------------------------------


def test_sample_personas_ships_120_with_traits() -> None:
    personas = sample_personas()
    assert len(personas) == 120
    assert len({p.id for p in personas}) == 120
    for persona in personas:
        for trait in set(TRUST_TEST_TRAITS) - set(BIG_FIVE_LEVELS):
            assert trait in persona.traits
    assert {p.traits["Age"] for p in personas} == set(AGE_LEVELS)
    work = {p.traits["Work Status"] for p in personas}
    assert len(work) == 8


def test_select_personas_is_distinct_reproducible_and_ordered_by_draw() -> None:
    bank = synthetic_population(30, np.random.default_rng(0))
    chosen = select_personas(bank, 10, np.random.default_rng(4))
    assert len({p.id for p in chosen}) == 10
    assert chosen == select_personas(bank, 10, np.random.default_rng(4))
    expected = np.random.default_rng(4).choice(30, size=10, replace=False)
    assert [p.id for p in chosen] == [bank[int(i)].id for i in expected]
    assert len(select_personas(bank, 30, np.random.default_rng(0))) == 30


def test_select_personas_errors_name_both_numbers() -> None:
    bank = synthetic_population(5, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"cannot select 6 .* bank of 5.*synthetic_population"):
        select_personas(bank, 6, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least 1"):
        select_personas(bank, 0, np.random.default_rng(0))


# --- The real GenAgents bank ---------------------------------------------------------------


def test_real_bank_loads_all_3505_personas() -> None:
    personas = load_personas(REAL_BANK)
    assert len(personas) == 3505
    assert len({p.id for p in personas}) == 3505
    assert personas[0].id == "0023952f-142e-434b-82e2-7a7451b7c55f"
    work = Counter(p.traits["Work Status"] for p in personas)
    assert set(work) == {
        "Full time",
        "Part time",
        "Temporarily not working",
        "Unemployed",
        "Retired",
        "In school",
        "Keeping house",
        "Other",
    }
    wealth = {p.traits["Total Wealth"] for p in personas}
    assert wealth == set(TOTAL_WEALTH_LEVELS)
    assert {p.traits["Age"] for p in personas} == set(AGE_LEVELS)
