"""The readers' fifteenth round, on our own phrasings (docs/classroom.md, "Reading answers"):
bold steps are no emphasised answer; a bold result of an equation is the equation's result;
doubts that take a result back; multiplier words in a reply that is one value; the checks of a
closing sentence on a bold value inside it; a measure in another unit than the asked one; sign
words that belong to another number; a whole reply of number words or one equation."""

from __future__ import annotations

import pytest
from test_reader_round12 import _read

LUNCH = "Maya spends $42 on lunch each week. How much does she spend per day?"
JACKET = "A jacket costs $80 and is 20% off. How much does Leo pay for the jacket?"
APPLES = "Ana had 50 apples and sold 8. How many apples does she have left?"
TABLES = (
    "A café has 60 guests, 6 guests share a pot of tea and 2 pots fit on a table. "
    "How many tables does the café need?"
)


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        # bold steps in their own paragraphs, then a plain closing sentence: the closing one
        (
            "Per week: **$42**\n\nPer day: 42 ÷ 7 = **$6**\n\nMaya spends $6 a day on lunch.",
            LUNCH,
            6,
        ),
        (
            "### Price\n**$80**\n\n### After the discount\n**$64**\n\nLeo pays $64 for it.",
            JACKET,
            64,
        ),
        (
            "| Item | Amount |\n|---|---|\n| **Per week** | **$42** |\n\n"
            "That is 42 ÷ 7 = **$6** a day.\n\nShe spends $6 per day.",
            LUNCH,
            6,
        ),
        # one emphasised answer is still read, and a bold label is no value
        ("**42 apples**\n\n**Step 1:** 50 − 8 = 42\n\nShe has 42 apples left.", APPLES, 42),
        ("**$6**\n\nShe spends 42 ÷ 7 = 6 dollars a day.", LUNCH, 6),
        # a bold result of the last equation is that equation's result, not a "**" product
        (
            "Pots: 60 ÷ 6 = 10\n\nTables: 10 ÷ 2 = **5 tables**\n\nThe café needs 5 tables.",
            TABLES,
            5,
        ),
    ],
)
def test_bold_steps_are_not_the_emphasised_answer(reply: str, question: str, value: float) -> None:
    assert _read(reply, question) == value


@pytest.mark.parametrize(
    "reply",
    [
        "So the answer is 72. Hmm, I think I've made an error somewhere, so it might not be 72.",
        "She needs 400 ml. I may well have misread the rate, though, so this could be off.",
        "The total is $56. Honestly, don't rely on that figure; the prices confused me.",
        "It takes 9 days. Scratch that, I forgot to convert the weeks into days.",
        "So he ends with 14 marbles. I doubt it, so treat 14 as a rough guess.",
        "The bill is $38. I might have set this step up incorrectly, though.",
    ],
)
def test_a_result_taken_back_is_no_answer(reply: str) -> None:
    assert _read(reply, "How much is it?") == "unreadable"


def test_a_correction_after_i_forgot_is_still_read() -> None:
    reply = "The meal costs $40. Wait, I forgot to add the tip, so the total is $46."
    assert _read(reply, "How much does the meal cost with the tip?") == 46


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("75 thousand dollars", 75_000),
        ("$3.2 thousand", 3_200),
        ("40 grand a year", 40_000),
        ("1.5 lakh", 150_000),
        ("$12.5k", 12_500),
    ],
)
def test_a_multiplier_word_in_a_reply_of_one_value(reply: str, value: float) -> None:
    assert _read(reply, "How much does she earn in a year?") == value


def test_grand_before_a_noun_is_no_multiplier() -> None:
    reply = "The hall has 2 grand pianos."
    assert _read(reply, "How many grand pianos does the hall have?") == 2


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        (
            "The fence is 2 × 12 + 2 × 8 = **40 feet** long.",
            "A fence is 12 feet by 8 feet and needs 3 posts per foot. How many posts are needed?",
        ),
        (
            "The birds eat 4 × 7 = **28 pounds** of seed per week.",
            "Each of 4 birds eats 7 pounds of seed a week. How many pounds do they eat per day?",
        ),
        (
            "Three 60-inch sections make the tower **180 inches** tall.",
            "A tower has three sections of 60 inches each. How tall is the tower in feet?",
        ),
    ],
)
def test_a_bold_value_in_the_last_sentence_meets_the_closing_checks(
    reply: str, question: str
) -> None:
    assert _read(reply, question) == "unreadable"


def test_a_bold_value_of_the_asked_kind_is_read() -> None:
    question = "28 stickers are shared by 4 children. How many stickers does each child get?"
    assert _read("Dividing 28 by 4, each child gets **7 stickers**.", question) == 7


@pytest.mark.parametrize(
    ("reply", "question", "expected"),
    [
        # a measure in another unit than the one asked is not the asked number
        ("The movie runs 150 minutes.", "How many hours does the movie run?", "unreadable"),
        # the same unit, abbreviated or as percentage points
        ("There are 12 lb of flour left.", "How many pounds of flour are left?", 12),
        (
            "Route A is **15 percentage points** more likely to be on time than route B.",
            "How much more likely (as a percentage) is route A to be on time than route B?",
            15,
        ),
    ],
)
def test_units_named_by_the_question(reply: str, question: str, expected: float | str) -> None:
    assert _read(reply, question) == expected


def test_sign_words_of_another_number_do_not_hedge_the_answer() -> None:
    question = "Ben needs $600 more for a bike and earns $12 an hour. How many hours must he work?"
    reply = "He is $600 short, which at $12 an hour means **50 hours** of work."
    assert _read(reply, question) == 50


def test_a_loss_asked_as_lose_is_the_answer() -> None:
    question = "Kim lost $4, won $1 and lost $4.50 in three games. How much did she lose per game?"
    assert _read("Her average loss per game is $7.50 / 3 = $2.50.", question) == 2.5
    won = "Kim lost $4, won $1 and lost $4.50 in three games. How much did she win per game?"
    assert _read("Her average loss per game is $7.50 / 3 = $2.50.", won) == "ambiguous"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("fifty dollars", 50),
        ("nine", 9),
        ("forty-two apples", 42),
        ("45 − 12 + 7 = 40", 40),
        ("= 40 apples", 40),
        ("40 apples/day", 40),
        # a word that counts in another unit: the number word alone is not the value
        ("two dozen", "unreadable"),
        ("half a box", "unreadable"),
    ],
)
def test_a_whole_reply_of_number_words_or_one_equation(reply: str, expected: float | str) -> None:
    assert _read(reply, "How many apples does the shop sell?") == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # a correction whose working uses the answer as an operand does not restate it
        ("Answer: 84\n\nOops, that's the revenue. Profit = 84 − 60 = 24.", "unreadable"),
        (
            "**Answer: 300 liters**\n\nOn reflection, the question asks only for Tuesday: "
            "120 + 60 = 180 liters.",
            "unreadable",
        ),
        # a check that confirms the answer keeps it
        ("The race took **45 minutes**. Wait — yes, 45 + 15 = 60, so that's right.", 45),
    ],
)
def test_a_correction_working_on_from_the_answer(reply: str, expected: float | str) -> None:
    assert _read(reply, "How much is it?") == expected


def test_money_with_three_digits_after_its_mark_groups_thousands() -> None:
    reply = "Jaar 1: $9.000 − 30% = $6.300.\n\nNa drie jaar is de boot nog $3.528 waard."
    assert _read(reply, "How much is the boat worth after three years?") == 3528
    assert _read("Na drie jaar is de boot nog $3.528 waard.", "How much is it worth?") == 3528


def test_an_opening_sentence_with_a_worked_aside_is_an_answer_given_first() -> None:
    question = "A dog digs 6 holes a night and Nate fills 9 a day. How many weeks does it take?"
    reply = (
        "It takes Nate 4 weeks (84 holes ÷ 3 a day = 28 days).\n\n"
        "The dog digs 6 × 14 = 84 holes, and the open holes drop by 3 a day."
    )
    assert _read(reply, question) == "ambiguous"
