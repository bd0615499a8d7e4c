"""Level names in belief answers are matched as a person would (case, punctuation, spacing,
documented synonyms), and anything else is re-asked, never mapped to the closest level."""

from __future__ import annotations

import pytest

from personasim.agents import SYNONYMS, DecisionParseError, LevelNameError, match_level_names
from personasim.scenarios.trust.beliefs import (
    DollarBelief,
    RankingBelief,
    read_dollar_belief,
    read_ranking_belief,
)
from personasim.scenarios.trust.traits import TEST_SPLIT_LEVELS

POLITICS = ["Extremely liberal", "Slightly liberal", "Slightly conservative"]


@pytest.mark.parametrize(
    ("said", "levels", "expected"),
    [
        (["extremely liberal", "Slightly Liberal.", " slightly  conservative "], POLITICS,
         POLITICS),
        (["EXTREMELY-LIBERAL", "slightly_liberal", "Slightly conservative!"], POLITICS, POLITICS),
        (["A US citizen", "not a u.s. citizen"], list(TEST_SPLIT_LEVELS["Us Citizenship Status"]),
         ["A U.S. citizen", "Not a U.S. citizen"]),
        (["18 – 29", "65 and older"], ["18-29", "65+"], ["18-29", "65+"]),
        (["Bachelors", "Associate / Junior College"], ["Bachelor's", "Associate/junior college"],
         ["Bachelor's", "Associate/junior college"]),
        (["non-citizen", "citizen"], ["A U.S. citizen", "Not a U.S. citizen"],
         ["Not a U.S. citizen", "A U.S. citizen"]),
    ],
)  # fmt: skip
def test_names_a_person_reads_as_the_level_are_matched(
    said: list[str], levels: list[str], expected: list[str]
) -> None:
    assert match_level_names(said, levels) == expected


@pytest.mark.parametrize(
    ("said", "levels", "why"),
    [
        (["Liberal", "Slightly liberal", "Slightly conservative"], POLITICS, "not one of"),
        (["Extremely liberal", "Extremely liberal", "Slightly conservative"], POLITICS,
         "more than"),
        (["Extremely liberal", "Slightly liberal"], POLITICS, "missing"),
        (["Extremely liberal (most)", "Slightly liberal", "Slightly conservative"], POLITICS,
         "not one of"),
        (["65", "18-29"], ["18-29", "65+"], "not one of"),  # "+" is kept: 65 is not 65+
    ],
)  # fmt: skip
def test_other_names_are_not_guessed(said: list[str], levels: list[str], why: str) -> None:
    with pytest.raises(LevelNameError, match=why):
        match_level_names(said, levels)


def test_a_synonym_that_is_another_offered_level_is_not_used() -> None:
    """'None' means the Religion level, and 'no religion' its synonym, only when offered."""
    assert match_level_names(["no religion", "Jewish"], ["None", "Jewish"]) == ["None", "Jewish"]
    with pytest.raises(LevelNameError):
        match_level_names(["no religion"], ["Jewish"])


def test_every_synonym_names_a_level_of_table5() -> None:
    known = {level for levels in TEST_SPLIT_LEVELS.values() for level in levels}
    assert set(SYNONYMS) <= known | {"65+"}


def test_belief_readers_store_the_offered_names() -> None:
    ranking = read_ranking_belief(
        RankingBelief(
            ranking_descending=["slightly conservative", "Extremely Liberal.", "slightly liberal"],
            omnibus_effect_size="small",
        ),
        POLITICS,
    )
    assert ranking["ranking"] == ["Slightly conservative", "Extremely liberal", "Slightly liberal"]
    assert ranking["stated_names"]["Extremely Liberal."] == "Extremely liberal"
    dollars = read_dollar_belief(
        DollarBelief.model_validate(
            {"mean_sd_level_stats": {"extremely liberal": {"mean": 6, "sd": 1},
                                     "SLIGHTLY LIBERAL": {"mean": 4, "sd": 1},
                                     "Slightly conservative": {"mean": 3, "sd": 1}}}
        ),
        POLITICS,
        10,
    )  # fmt: skip
    assert dollars["ranking"] == POLITICS
    assert set(dollars["stated"]["mean_sd_level_stats"]) == set(POLITICS)
    with pytest.raises(DecisionParseError, match="exactly once"):
        read_ranking_belief(
            RankingBelief(ranking_descending=["Liberal", "x", "y"], omnibus_effect_size="small"),
            POLITICS,
        )


def test_the_rule_that_matched_a_name_is_named() -> None:
    """What a reading records as its `by`: the exact name (normalised), or a synonym."""
    from personasim.agents.level_names import matched_by

    assert matched_by("extremely liberal.", "Extremely liberal") == "exact"
    assert matched_by("18 – 29", "18-29") == "exact"
    assert matched_by("65 and older", "65+") == "synonym"
    assert matched_by("non-citizen", "Not a U.S. citizen") == "synonym"
