"""The readers' fourteenth round, on our own phrasings (docs/classroom.md, "Reading answers"): an
answer given first is read where the working below it ends on the same result; a total where
each one's share is asked, an amount where a difference is asked and two parts where both are
asked together are no answers."""

from __future__ import annotations

import pytest
from test_reader_round12 import U, _read

from personasim.environments.classroom.numeric_answers import read_answer

SHELVES = (
    "A library has 4 shelves of 12 books and 3 shelves of 9 books. How many books does it have?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "75 books.\n\nFour shelves: 4 × 12 = 48\nThree shelves: 3 × 9 = 27\n\n48 + 27 = 75",
        "The library has 75 books.\n\n- 4 × 12 = 48\n- 3 × 9 = 27\n- Total: 48 + 27 = 75",
        "It holds 75 books!\n\nLet b be the books: b = 4 × 12 + 3 × 9 = 48 + 27\nb = 75",
    ],
)
def test_an_answer_first_is_read_where_the_working_ends_on_it(reply: str) -> None:
    assert _read(reply, SHELVES) == 75


@pytest.mark.parametrize(
    "reply",
    [
        # the working below ends on another result: which one is the answer?
        "75 books.\n\nFour shelves: 4 × 12 = 48\nThree shelves: 3 × 9 = 27\n\n48 + 27 = 74",
        # a first paragraph of two sentences is no answer given first
        "There are 4 shelves. They hold 75 books.\n\n4 × 12 = 48\n3 × 9 = 27\n48 + 27 = 75",
        # a step, not an answer, opens the reply
        "4 × 12 = 48 books.\n\n3 × 9 = 27\n\n48 + 27 = 75",
    ],
)
def test_an_opening_line_the_working_does_not_end_on_is_not_read_as_given_first(
    reply: str,
) -> None:
    reading = read_answer(reply, SHELVES)
    assert not (reading.ok and reading.by and "answer-first" in reading.by), reading


SHARE = (
    "Ana and Ben share the cost of a $30 gift and a $6 card equally. How much does each one of "
    "them pay?"
)


@pytest.mark.parametrize(
    "closing",
    [
        "So the total cost is $30 + $6 = $36.",
        "Altogether they spend $36.",
    ],
)
def test_a_total_where_each_ones_share_is_asked_is_a_step(closing: str) -> None:
    reading = read_answer(f"The gift is $30 and the card $6.\n\n{closing}", SHARE)
    assert reading.status == U and "each one" in (reading.reason or ""), reading


@pytest.mark.parametrize(
    "closing",
    [
        "The total is $36, so each pays $36 / 2 = $18.",
        "Split two ways, the $36 total comes to $18.",
        "Each of them pays $18.",
    ],
)
def test_a_share_is_read_where_each_ones_is_asked(closing: str) -> None:
    assert _read(f"The gift is $30 and the card $6, $36 in all.\n\n{closing}", SHARE) == 18


DIFFERENCE = (
    "A phone plan costs $20 a month and a new one costs $27 a month. What is the difference "
    "between the two plans' monthly costs?"
)


def test_an_amount_where_the_difference_is_asked_is_a_step() -> None:
    reading = read_answer("Old plan: $20.\n\nSo the new plan will cost $27 a month.", DIFFERENCE)
    assert reading.status == U and "difference" in (reading.reason or ""), reading


@pytest.mark.parametrize(
    "closing",
    [
        "So the difference is $7 a month.",
        "The new plan costs $7 more each month.",
        "27 − 20 = 7, so they differ by $7.",
    ],
)
def test_the_difference_is_read_where_it_is_asked(closing: str) -> None:
    assert _read(f"Old plan $20, new plan $27.\n\n{closing}", DIFFERENCE) == 7


BOTH = (
    "Mila has 9 shells. Her brother has 3 more than half of Mila's. How many shells do Mila and "
    "her brother have?"
)


@pytest.mark.parametrize(
    "closing",
    [
        "So Mila has 9 shells and her brother has 7.5 shells.",
        "Mila has 9 shells while her brother has 7.5 shells.",
    ],
)
def test_two_parts_where_both_are_asked_together_are_no_answer(closing: str) -> None:
    reading = read_answer(f"Half of 9 is 4.5, and 3 more is 7.5.\n\n{closing}", BOTH)
    assert not reading.ok, reading


def test_the_total_of_both_is_read_where_it_is_given() -> None:
    reply = "Half of 9 is 4.5; 3 more is 7.5.\n\nTogether they have 16.5 shells: 9 and 7.5."
    assert _read(reply, BOTH) == 16.5


COOKIES = (
    "Susan baked 60 cookies for her 4 nephews, and her husband ate 8 of them. How many cookies "
    "will each nephew get?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "60 − 8 = 52, 52 ÷ 4 = 13.\nОтвет: 13.\nИтак, каждый племянник получит 14 печений.",
        "Quedan 52 galletas; 52 ÷ 4 = 13.\nRespuesta: 13\nAsí que cada sobrino recibe 14 galletas.",
        "52 ÷ 4 = 13。\n答え：13枚\nつまり、甥はそれぞれ14枚もらいます。",
        "52 : 4 = 13.\nAntwoord: 13\nDus krijgt elke neef 14 koekjes.",
    ],
)
def test_a_conclusion_after_the_answer_line_that_says_otherwise_is_ambiguous(reply: str) -> None:
    reading = read_answer(reply, COOKIES)
    assert reading.status == "ambiguous" and "concludes otherwise" in (reading.reason or "")


@pytest.mark.parametrize(
    "reply",
    [
        "60 − 8 = 52, 52 ÷ 4 = 13.\nОтвет: 13.\nИтак, каждый племянник получит 13 печений.",
        "Quedan 52 galletas; 52 ÷ 4 = 13.\nRespuesta: 13\nAsí que cada sobrino recibe 13 galletas.",
    ],
)
def test_a_conclusion_after_the_answer_line_that_agrees_is_read(reply: str) -> None:
    assert _read(reply, COOKIES) == 13


RUN = "John runs 60 miles a week over 6 hours. How fast does he run, in miles per hour?"


@pytest.mark.parametrize(
    "reply",
    [
        "Toplam süre 6 saat, toplam mesafe 60 mil.\nJohn saatte 10 mil koşar.",
        "Jarak 60 mil dalam 6 jam.\nJadi, John berlari 10 mil per jam.",
    ],
)
def test_mil_is_a_mile_where_the_question_speaks_of_miles(reply: str) -> None:
    assert _read(reply, RUN) == 10


def test_mil_is_still_a_thousand_in_spanish() -> None:
    question = "A house cost $200,000 and rose by 20%. What is it worth now?"
    reply = "El 20 % de 200 mil es 40 mil, así que la casa vale 240 mil dólares."
    assert _read(reply, question) == 240000


BREAKS = (
    "Each workday he takes a 30-minute lunch and two 15-minute breaks. After 5 days, how many "
    "hours do his lunches and breaks add up to?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "60 minutes a day for 5 days.\n\nThe answer is 300 minutes, i.e. 5 hours.",
        "60 × 5 = 300.\n\nFinal Answer: 300 minutes (5 hours)",
        "60 × 5 = 300.\n\nAnswer: 300 minutes, which is 5 hours.",
    ],
)
def test_an_answer_line_restated_in_the_asked_unit_is_read_in_it(reply: str) -> None:
    assert _read(reply, BREAKS) == 5


def test_an_answer_line_restated_in_another_unit_keeps_the_asked_one() -> None:
    assert _read("60 × 5 = 300 minutes.\n\nThe answer is 5 hours, i.e. 300 minutes.", BREAKS) == 5


def test_money_restated_in_cents_is_read_as_first_stated() -> None:
    question = "Kim has $3 and spends $1.95. How much money does she have left?"
    assert _read("3 − 1.95 = 1.05.\n\nThe answer is $1.05, i.e. 105 cents.", question) == 1.05


SCENTS = (
    "A shop sold 5 vanilla candles of each of 4 scents and 2 fruity candles of each of 8 scents. "
    "How many more vanilla candles than fruity candles were sold?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "Vanilla: 20. Fruity: 16. So 4 more vanilla candles were sold.\n\nIn percentage terms, "
        "vanilla outsold fruity by 25%.",
        "20 vanilla against 16 fruity → 4 more.\n\nThat's a 25% higher number of vanilla sales.",
    ],
)
def test_a_percent_where_things_are_counted_is_no_answer(reply: str) -> None:
    reading = read_answer(reply, SCENTS)
    assert not (reading.ok and reading.value == 25), reading


SHELLS = (
    "On Monday Kylie collects 25 shells. On Tuesday she collects twice as many as on Monday. How "
    "many shells does Kylie collect on Tuesday?"
)


@pytest.mark.parametrize(
    "closing",
    [
        "On Tuesday Kylie collects 50 shells, bringing her two-day total to 75.",
        "Kylie gets 50 shells on Tuesday, making 75 altogether.",
    ],
)
def test_a_total_the_question_does_not_ask_beside_the_value_is_ambiguous(closing: str) -> None:
    reading = read_answer(f"2 × 25 = 50.\n{closing}", SHELLS)
    assert reading.status == "ambiguous" and "does not ask" in (reading.reason or ""), reading


PIZZA = (
    "Becky ate 10 slices of a 32-slice pizza, Jake ate 3 fewer than Becky and Silvia twice as "
    "many as Jake. How many slices did they eat in all?"
)


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("Jake 7, Silvia 14, Becky 10.\nThey ate 31 slices, so only 1 slice was left.", PIZZA),
    ],
)
def test_a_remainder_or_total_the_question_does_not_ask_is_ambiguous(
    reply: str, question: str
) -> None:
    reading = read_answer(reply, question)
    assert reading.status == "ambiguous" and "does not ask" in (reading.reason or ""), reading


def test_a_given_restated_after_so_is_no_conclusion() -> None:
    question = (
        "Charlie had 54 stickers, gave 9 to his sister and used 28 on a card. How many stickers "
        "does Charlie have left?"
    )
    reply = "54 − 37 = 17.\nCharlie is left with 17 stickers, so he gave away 9."
    reading = read_answer(reply, question)
    assert reading.status == "ambiguous" and "does not ask" in (reading.reason or ""), reading


def test_the_asked_total_beside_a_remainder_in_its_own_clause_is_read() -> None:
    assert (
        _read("Jake 7, Silvia 14, Becky 10.\nThey ate 31 slices, and 1 slice remained.", PIZZA)
        == 31
    )


def test_a_total_concluded_after_so_is_read() -> None:
    question = (
        "Ed pays $15 for the first hour and $30 for each of the next two. How much does he pay?"
    )
    assert _read("15 + 30 + 30 = 75, so $75 total for the evening.", question) == 75


def test_a_remainder_the_question_asks_is_read() -> None:
    question = "A pizza has 32 slices and they ate 31. How many slices were left?"
    assert _read("32 − 31 = 1.\nThey ate 31 slices, so 1 slice was left.", question) == 1


def test_a_total_after_a_given_is_the_result() -> None:
    question = (
        "Tom had 5 apples. Then 6 more apples fell from the tree and he kept them all. How many "
        "apples did he bring home?"
    )
    reply = "He had 5. 6 more apples fell, bringing his total to 5 + 6 = 11 apples."
    assert _read(reply, question) == 11


WALK = (
    "Jason must walk 240 minutes over three weeks, 4 days a week. How many minutes must he walk "
    "each day?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "Answer: In three weeks he walks 3 × 4 = 12 days. 240 / 12 = 20. He walks 20 a day.",
        "**Answer:** 3 × 4 = 12 walking days, and 240 ÷ 12 = 20, so 20 minutes each day.",
    ],
)
def test_an_answer_line_that_works_on_to_another_value_is_ambiguous(reply: str) -> None:
    reading = read_answer(reply, WALK)
    assert reading.status == "ambiguous", reading


@pytest.mark.parametrize(
    "reply",
    [
        "Answer: 20 minutes. He walks on 3 × 4 = 12 days, and 240 / 12 = 20.",
        "The answer is 20. That is 240 minutes over 12 days.",
    ],
)
def test_an_answer_line_followed_by_its_reasons_is_read(reply: str) -> None:
    assert _read(reply, WALK) == 20


ENROLLED = (
    "Last year 50 students enrolled, and this year 20% more did. How many enrolled this year?"
)


@pytest.mark.parametrize(
    "closing",
    [
        "At that growth rate, next year would see 72.",
        "If it keeps growing, it'd be 72 next year.",
    ],
)
def test_a_supposition_after_the_conclusion_is_ambiguous(closing: str) -> None:
    reading = read_answer(
        f"20% of 50 is 10.\n\nSo, 60 students enrolled this year. {closing}", ENROLLED
    )
    assert not reading.ok, reading


def test_a_last_step_after_a_so_sentence_is_read() -> None:
    reply = "20% of 50 is 10. So, 10 more students came. This year 50 + 10 = 60 students enrolled."
    assert _read(reply, ENROLLED) == 60


@pytest.mark.parametrize(
    ("reply", "value"),
    [("答え：1箱32ドル", 32), ("답: 1개당 2달러", 2), ("答えは1週間です", 1)],
)
def test_one_box_naming_what_a_price_is_per_is_no_second_quantity(reply: str, value: float) -> None:
    assert _read(reply, "How much does a box of fruit cost?") == value


@pytest.mark.parametrize(("reply", "value"), [("$720 a year.", 720), ("**42 apples**", 42)])
def test_a_reply_that_is_one_value_and_a_few_words_is_read(reply: str, value: float) -> None:
    assert _read(reply, "How much does he pay a year for 42 apples?") == value
