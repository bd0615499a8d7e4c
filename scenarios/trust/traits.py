"""The Trust Game paper's trait split (seed 001, Appendix A, Table 5): the test traits every
reported experiment uses, Table 3's nine, and the test levels of each."""

from __future__ import annotations

from personasim.agents.persona_traits import AGE_LEVELS

__all__ = [
    "TABLE3_TRAITS",
    "TEST_SPLIT_LEVELS",
    "TRUST_TEST_TRAITS",
]

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
