"""The readers' thirteenth round, on our own phrasings (docs/classroom.md, "Reading answers"): a
last sentence about one member of a group whose total the question asks is an intermediate step;
so is one about another thing by its place ("the first crate" where the third is asked)."""

from __future__ import annotations

import pytest
from test_reader_round12 import U, _read

from personasim.environments.classroom.numeric_answers import read_answer

GROUP = (
    "Omar has 5 stamps. Lena has twice as many stamps as Omar, and Priya has 3 fewer than Lena. "
    "How many stamps do the three have in total?"
)
GROUP_WORK = "Omar has 5. Lena has 2 × 5 = 10. Priya has 10 − 3 = 7.\n\n"


@pytest.mark.parametrize(
    "closing",
    [
        "So Priya has 7 stamps.",
        "Therefore, Lena has 10 stamps.",
        "Lena ends up with 10 stamps.",
    ],
)
def test_one_member_where_the_group_total_is_asked_is_a_step(closing: str) -> None:
    reading = read_answer(GROUP_WORK + closing, GROUP)
    assert reading.status == U and "alone" in (reading.reason or ""), reading


@pytest.mark.parametrize(
    ("closing", "value"),
    [
        ("So together they have 22 stamps.", 22),
        ("Omar, Lena and Priya have 22 stamps in total.", 22),
        ("In all, the three have 22 stamps.", 22),
    ],
)
def test_the_group_total_is_read(closing: str, value: float) -> None:
    assert _read(GROUP_WORK + closing, GROUP) == value


def test_a_total_asked_for_one_person_is_read_from_a_sentence_about_that_person() -> None:
    question = (
        "Omar buys 5 stamps on Monday and 7 on Tuesday. How many stamps does Omar buy in total?"
    )
    assert _read("5 + 7 = 12.\n\nSo Omar buys 12 stamps.", question) == 12


def test_three_days_are_no_group_of_people() -> None:
    question = (
        "Rita writes 3 pages on Monday, 4 on Tuesday and 5 on Wednesday. How many pages did she "
        "write in total over the three days?"
    )
    assert _read("3 + 4 + 5 = 12.\n\nRita wrote 12 pages over the three days.", question) == 12


PLACES = (
    "A shop fills three crates. The second crate holds twice what the first holds, and the third "
    "holds 4 more than the second. Together they hold 34 apples. How many apples does the third "
    "crate hold?"
)
PLACES_WORK = "Let the first hold x: x + 2x + (2x + 4) = 34, so 5x = 30 and x = 6.\n\n"


@pytest.mark.parametrize(
    "closing",
    ["The first crate holds 6 apples.", "So the 2nd crate holds 12 apples."],
)
def test_another_thing_by_its_place_is_a_step(closing: str) -> None:
    reading = read_answer(PLACES_WORK + closing, PLACES)
    assert reading.status == U and "the question asks the third" in (reading.reason or ""), reading


@pytest.mark.parametrize(
    ("closing", "value"),
    [
        ("The third crate holds 16 apples.", 16),
        ("The 3rd crate holds 16 apples.", 16),
        ("So the third crate holds 2 × 6 + 4 = 16 apples.", 16),
    ],
)
def test_the_asked_place_is_read(closing: str, value: float) -> None:
    assert _read(PLACES_WORK + closing, PLACES) == value


def test_last_and_final_may_be_any_place() -> None:
    question = (
        "Ana scored 80, 85 and 90 on her first three tests. What must she score on the fourth "
        "test to average 87?"
    )
    assert _read("87 × 4 = 348; 348 − 255 = 93.\n\nThe final test must be 93.", question) == 93


def test_a_place_in_the_question_s_condition_is_not_the_asked_one() -> None:
    question = (
        "At the first stop 4 people got on, and 20 people were on the bus heading to the third "
        "stop. How many people got on at the terminal?"
    )
    assert _read("20 − 4 = 16.\n\nSo 16 people got on before the first stop.", question) == 16


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (
            "1日に4ページ読みます。4 × 7 = 28。\n\nしたがって、エマは1週間に28ページ読みます。",
            "Emma reads 4 pages a day. How many pages does she read in a week?",
            28,
        ),
        (
            "エマは1回の練習で15分走ります。15 × 4 = 60。\n\n合計で60分です。",
            "Emma runs 15 minutes each practice and practises 4 times. How many minutes in all?",
            60,
        ),
        (
            "하루에 3잔씩 7일이면 3 × 7 = 21잔입니다.\n\n그래서 민수는 1주일에 21잔을 마십니다.",
            "Minsu drinks 3 cups a day. How many cups does he drink in a week?",
            21,
        ),
    ],
)
def test_one_period_in_japanese_and_korean_names_the_period(
    reply: str, question: str, value: float
) -> None:
    """ "1週間に" (in one week), "1回の練習で" (in one practice), "1주일에" name a rate's period,
    not a second quantity beside the answer."""
    assert _read(reply, question) == value


def test_one_week_as_the_answer_is_still_read() -> None:
    question = "Emma reads 4 pages a day. How many weeks does she need for 28 pages?"
    assert _read("28 ÷ 4 = 7日。\n\n答えは1週間です。", question) == 1
