"""The readers' seventh round, on our own phrasings (docs/classroom.md, "Reading answers"):
rates beside totals, a check sentence after the answer, an explaining aside after a dash, and
coins called quarters. Each rule also has its refusals: where a grader would hesitate, no value."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.answer_units import rate_item
from personasim.environments.classroom.numeric_answers import read_answer


def value_of(reply: str, question: str) -> float | None:
    reading = read_answer(reply, question)
    return reading.value if reading.ok else None


@pytest.mark.parametrize(
    ("text", "item"),
    [
        ("64 emails a day", "day"),
        ("1,800 per school", "school"),
        ("2 cups of mint tea in each row", "row"),
        ("$20 an hour", "hour"),
        ("32 cookies for a party", None),  # "a party" is no rate
        ("5 apples, each red", None),  # a comma ends the quantity's phrase
        ("60 cows in total", None),
    ],
)
def test_what_a_quantity_is_stated_per(text: str, item: str | None) -> None:
    end = len(text.split(" ")[0])
    assert rate_item(text, end) == item


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (
            "He runs 5 miles a day, which is 35 miles a week.",
            "Tom runs 35 miles a week. How many miles does he run each day?",
            5,
        ),
        (
            "It sells 30 loaves a day, so 210 loaves in a week.",
            "A bakery sells 30 loaves a day. How many loaves does it sell in a week?",
            210,
        ),
        (
            "The club raises $400 in total, which is $50 per member.",
            "A club of 8 members raises $400. How much does it raise per member?",
            50,
        ),
        (
            "Each gardener planted 12 trees a day for 6 days, 72 trees in all.",
            "3 gardeners planted trees for 6 days. How many trees did each gardener plant?",
            72,
        ),
    ],
)
def test_a_rate_beside_a_total_is_read_by_what_the_question_asks_per(
    reply: str, question: str, value: float
) -> None:
    assert value_of(reply, question) == value


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("She earns $15 an hour, $600 a week.", "Ana earns $600 for 40 hours. What is her pay?"),
        ("He spends $6 a day and $42 a week.", "How much does he spend a day and a week?"),
    ],
)
def test_rates_the_question_does_not_settle_stay_unread(reply: str, question: str) -> None:
    assert value_of(reply, question) is None


def test_a_check_sentence_after_the_answer_does_not_hide_it() -> None:
    question = "A farmer has 600 eggs, sells 198 and 209. How many eggs are left?"
    reply = "He sells 198 + 209 = 407 eggs. He has 193 eggs left. To double-check: 193 + 407 = 600."
    assert value_of(reply, question) == 193
    tip = "The shop charged $31 in all. Tip: keep the receipt for the $2 rebate next time."
    assert value_of(tip, "How much did the shop charge?") == 31


def test_a_check_sentence_before_any_answer_settles_nothing() -> None:
    question = "How many eggs are left?"
    reply = "Let me check the numbers first: 600 − 407 = 193 and then"
    assert value_of(reply, question) is None


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (
            "Together they baked 45 pies — Ada 20 and Ben 25.",
            "Ada baked 20 pies and Ben 25. How many pies did they bake?",
            45,
        ),
        (
            "The jacket first cost $80.00 — the sale took $20.00 off.",
            "A jacket on sale for $60 is 25% off. What was its original price?",
            80,
        ),
        (
            "She ends up with 4 dollars — 16 quarters.",
            "She gets her change in quarters. How many quarters does she get?",
            16,  # the aside alone names the asked things: it is the answer, not an aside
        ),
    ],
)
def test_an_explaining_aside_after_a_dash(reply: str, question: str, value: float) -> None:
    assert value_of(reply, question) == value


@pytest.mark.parametrize(
    "reply",
    [
        "He has 41 marbles — no, actually 43.",
        "He has 41 marbles — or 43 if you count the broken ones.",
        "He has 41 marbles — give or take a few.",
    ],
)
def test_a_dash_that_corrects_offers_or_hedges_is_no_aside(reply: str) -> None:
    assert value_of(reply, "How many marbles does he have?") != 41


def test_coins_called_quarters_are_counted_not_a_fraction() -> None:
    question = "She pays $21 with $25 and gets quarters back. How many quarters does she get?"
    assert value_of("Her change is $4, which comes to 16 quarters.", question) == 16
    pie = "They ate 3 quarters of the pie."
    assert value_of(pie, "How much of the pie did they eat?") is None  # a fraction in words
