"""The readers' eighth round, on our own phrasings (docs/classroom.md, "Reading answers"): a
reply that gives a second answer beside the one it closes on is ambiguous, not read. An answer
given first, then a working that ends on a step; an asked quantity before a closing "so" and
another after it. Each rule has its refusals: a first step of the working is no rival answer."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.numeric_answers import read_answer

TRAIN = (
    "A train must cover 1,200 km in 4 days. It runs two legs of 120 km a day. How many more "
    "km per day must it run to arrive on time?"
)
STALLS = (
    "A market has 6 stalls. Each stall sells 5 pies on weekdays and 8 on weekends. How many "
    "pies does the market sell in one weekday and one weekend day?"
)
SAVING = (
    "Lena saves $40 a week and has saved $120 after 3 weeks. For how many weeks must she save "
    "in total to reach $400?"
)


@pytest.mark.parametrize(
    ("reply", "question", "candidates"),
    [
        (  # the answer first, then a working whose last sentence computes a step of it
            "It needs to run 60 more km a day. Over 4 days that is 1,200 ÷ 4 = 300 km a day; "
            "its two legs give only 240 km a day, and 300 − 240 = 60.\n\n(A long way!)",
            TRAIN,
            {60.0, 240.0},
        ),
        (
            "78 pies. On a weekday the stalls sell 6 × 5 = 30 pies, and on a weekend day "
            "they add 6 × 8 = 48 more.",
            STALLS,
            {78.0, 48.0},
        ),
        (  # the asked total before "so", the weeks still to go after it
            "She saves $40 per week. To reach $400 she needs 400 / 40 = 10 weeks in total, so 7 "
            "more weeks of saving.",
            SAVING,
            {10.0, 7.0},
        ),
    ],
)
def test_a_second_answer_makes_the_reply_ambiguous(
    reply: str, question: str, candidates: set[float]
) -> None:
    reading = read_answer(reply, question)
    assert reading.status == "ambiguous", reading
    assert set(reading.candidates) == candidates


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (  # the first sentence is a step the working computes with
            "Half of the 6 stalls is 3 stalls. Those 3 stalls sell 3 × 5 = 15 pies, so the "
            "market sells 15 pies from them.",
            "A market has 6 stalls; half of them sell 5 pies each. How many pies do they sell?",
            15.0,
        ),
        (  # the first sentence is not the kind of quantity asked for (hours, for a price)
            "From 2 PM to 6 PM is 4 hours. The first hour is free, so she pays for 3 hours at "
            "$12 each. She pays $36.",
            "Mia rents a boat from 2 PM to 6 PM. The first hour is free and each other hour costs "
            "$12. How much does she pay?",
            36.0,
        ),
        (  # the value before "so" was stated earlier: a restatement, not a second answer
            "Each week she saves $40. After 3 weeks she has $120. She has $120 so far, so she "
            "needs $280 more.",
            "Lena saves $40 a week. How much more does she need to reach $400 after 3 weeks?",
            280.0,
        ),
    ],
)
def test_a_first_step_is_no_second_answer(reply: str, question: str, value: float) -> None:
    reading = read_answer(reply, question)
    assert reading.ok and reading.value == value, reading


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (  # the bound the question asks for is the answer, not a hedge
            "He has 12 + 15 = 27 points so far and needs 40. He must score at least 13 points "
            "in the last game.",
            "Omar needs 40 points to qualify. He scored 12 and 15 in two games. What is the "
            "minimum number of points he needs in the third game?",
            13.0,
        ),
        (
            "The van holds 3 × 4 = 12 crates, so it can carry at most 12 crates per trip.",
            "A van has 3 rows that each hold 4 crates. What is the maximum number of crates it "
            "can carry per trip?",
            12.0,
        ),
    ],
)
def test_a_bound_the_question_asks_for_is_read(reply: str, question: str, value: float) -> None:
    reading = read_answer(reply, question)
    assert reading.ok and reading.value == value, reading


def test_a_bound_the_question_does_not_ask_for_still_hedges() -> None:
    reply = "He has 12 + 14 = 26 points so far and needs 40, so he must score at least 14 points."
    question = "Omar needs 40 points. He scored 12 and 14. How many points must he score next?"
    assert read_answer(reply, question).status == "ambiguous"


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (  # the second reader reads the closing piece up to the number after the value
            "Each of the 2 cousins reads all 4 books, so they read 4 × 2 = 8 books in all — "
            "though only 4 different titles.",
            "Ann has 3 books and Ben has 1. Each reads every book. How many books do they read?",
            8.0,
        ),
        (
            "Baking takes 20 minutes and icing 15, so the cake is ready in 35 minutes for all 12 "
            "guests.",
            "A cake bakes for 20 minutes and is iced for 15 minutes. How long until it is ready "
            "for the 12 guests?",
            35.0,
        ),
    ],
)
def test_what_follows_the_value_does_not_split_the_readers(
    reply: str, question: str, value: float
) -> None:
    reading = read_answer(reply, question)
    assert reading.ok and reading.value == value, reading
    assert "math-verify" in reading.by


def test_a_value_that_is_an_operand_still_splits_the_readers() -> None:
    """What follows the value computes with it ("= 120 new lines + 3 feet"): the second reader
    reads the whole piece, and the readers disagree rather than read 120."""
    reply = "So you'd need to buy a total of 6 * 20 = 120 new lines + 3 feet of line."
    assert not read_answer(reply).ok
