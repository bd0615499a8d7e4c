"""The transfer reader's fifteenth round (docs/trust-population.md, "Reading the amount", rule
6): a condition on the decision, a doubt that closes it, a decision in play only and a wish
before a second decision are no decision; a sentence after it that takes it back without an
amount leaves none."""

from __future__ import annotations

import pytest

from personasim.environments.trust_game.transfer import read_transfer


@pytest.mark.parametrize(
    "reply",
    [
        "Finally, I will give 6 dollars if Player 2 promises to send back 9.",
        "Finally, I will give 300 dollars, but only if they have a good record.",
        "Finally, I will give 4 dollars unless they kept everything last time.",
        "Finally, I will give 3 dollars provided they return half.",
        "Finally, I will give 5 dollars as long as they play fair.",
        "Finally, I will give 7 dollars, I guess.",
        "Finally, I will give 2 dollars (tentatively).",
        "Finally, I will give 40 dollars, hypothetically speaking.",
        "Finally, I'd like to give 9 dollars, but I will give 4 dollars.",
    ],
)
def test_a_condition_or_a_doubt_on_the_decision_is_no_decision(reply: str) -> None:
    assert read_transfer(reply, 1000 if "300" in reply else 50).status == "ambiguous"


@pytest.mark.parametrize(
    "reply",
    [
        "Finally, I will give 6 dollars. Then again, maybe not.",
        "Finally, I will give 5 dollars. Please disregard that; I will think about it.",
        "Finally, I will give 8 dollars. I'll decide later, though.",
        "Finally, I will give 3 dollars. As an AI, I cannot really hand over money.",
        "最后，我会给4美元。不过，我还没想好。",
    ],
)
def test_a_decision_taken_back_after_it_is_no_decision(reply: str) -> None:
    assert read_transfer(reply, 10).status == "unreadable"


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Finally, I will give 5 dollars, even if they keep it all.", 5),
        ("Finally, I will give 6 dollars, as I think they will be fair.", 6),
        ("Finally, I will give 7 dollars. I think that is fair.", 7),
    ],
)
def test_a_plain_decision_is_still_read(reply: str, value: float) -> None:
    assert read_transfer(reply, 10).value == value
