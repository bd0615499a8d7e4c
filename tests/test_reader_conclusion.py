"""The concluding-sentence rule of the classroom's answer reader (answer_conclusion.py): a
reply with no final statement is read by its last sentence's one new quantity, with the
question beside it; our own phrasings, none taken from a labelled corpus."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.numeric_answers import read_answer

FUEL = "Fuel costs $1.89 per litre. Sam buys 15 litres. How much does Sam pay?"
WORKED = "The price is $1.89 a litre, so 15 × 1.89 = 28.35.\n\n15 litres of petrol cost $28.35."


def test_the_question_settles_which_quantity_is_new() -> None:
    reading = read_answer(WORKED, FUEL)
    assert (reading.status, reading.value) == ("read", 28.35)
    assert reading.by.startswith("grammar:concluding")
    assert read_answer(WORKED).status == "ambiguous"  # without the question: two quantities


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (
            "Her savings grow by $20,000 a year.\n\nLauren needs to work 40 more years.",
            "Lauren saves 40% of her $50,000 salary. She needs $800,000. How many years?",
            40.0,
        ),
        (
            "3 × 4 = 12 apples.\n\nShe has 12 apples left over.\n\nCheck: 12 + 3 = 15 ✓",
            "Ann had 15 apples and gave away 3. How many are left?",
            12.0,
        ),
        (
            "El bambú crece 30 pulgadas al día: 360 ÷ 30 = 12.\n\n"
            "El bambú tardará 12 días en medir 600 pulgadas.",
            "A bamboo grows 30 inches a day. How many days until it is 600 inches tall?",
            12.0,
        ),
        (
            "2 × 3 = 6, and 6 × 5 = 30.\n\nJeff walks 30 miles every week. (That's roughly 48 km.)",
            "Jeff walks 3 miles each way, 5 days a week. How many miles a week?",
            30.0,
        ),
    ],
)
def test_checks_notes_and_givens_do_not_hide_the_answer(
    reply: str, question: str, value: float
) -> None:
    reading = read_answer(reply, question)
    assert (reading.status, reading.value) == ("read", value)


@pytest.mark.parametrize(
    ("reply", "question", "status"),
    [
        (
            "Ann had 15 apples and gave away 3.",
            "Ann had 15 apples and gave away 3. How many?",
            "unreadable",
        ),
        (
            "He answers 64 emails a day, which is 320 emails in a week of 5 days.",
            "James answers 80 emails a day and skips 16. How many in a 5-day week?",
            "ambiguous",
        ),
        (
            "First work out the eggs for 28 days, then divide by 12 to get dozens.",
            "Claire eats 3 eggs a day. How many dozens in 4 weeks?",
            "ambiguous",
        ),
        (
            "- Week 1: 8,000 bars\n- Week 2: 4,000 bars.",
            "8,000 bars a week. Three weeks?",
            "ambiguous",
        ),
        (
            "Spread over 7 days, that's 280 ÷ 7 = 40, so Mack saw about 40 birds a day.",
            "Mack saw 280 birds in 7 days. What is his daily average?",
            "ambiguous",
        ),
        (
            "```python\nx = 24 - 4 + 10\nprint(x)\n```\n\nRunning it prints Jeff's age.",
            "Mike is 24; Martha is 4 years younger; Jeff is 10 years older than Martha.",
            "unreadable",
        ),
        (
            "The total is $20 + $30 = $50.\n\nDepending on the fee, Ana pays either $50 or $55.",
            "Ana buys a $20 and a $30 item. What does she pay?",
            "ambiguous",
        ),
        (
            "Tom has 7 marbles.\n\nHe started with 12 and lost 3, and he has 9 marbles now.",
            "Tom had 12 marbles and lost 3. How many does he have?",
            "ambiguous",
        ),
    ],
)
def test_no_value_where_a_grader_would_hesitate(reply: str, question: str, status: str) -> None:
    reading = read_answer(reply, question)
    assert reading.status == status, reading
    assert reading.reason


@pytest.mark.parametrize(
    ("reply", "question", "status", "value"),
    [
        (  # a depth below sea level in words is negative
            "−10 + 4 = −6.\n\nThe diver ends at −6 m, i.e. 6 metres below sea level.",
            "A diver is 10 m below sea level and rises 4 m. Where is she?",
            "read",
            -6.0,
        ),
        (  # a sign in words the question does not ask in: a grader cannot settle it
            "He spent $70 of his $50, so the account is overdrawn by $20.",
            "Max has $50 and spends $70. What is his balance?",
            "ambiguous",
            None,
        ),
        (  # the question asks in those words: the positive value answers it
            "It sold for $80 after costing $95, so the shop made a loss of $15.",
            "A shop buys a lamp for $95 and sells it for $80. What is its loss?",
            "read",
            15.0,
        ),
        (  # the prose before a box says otherwise, and nothing corrects either
            "So the twins are 6 + 6 = 12 together.\n\nEach twin is 5 years old.\n\n$\\boxed{12}$",
            "Twins are 6 years old. What is their combined age?",
            "ambiguous",
            None,
        ),
        (  # a first paragraph of working is no answer given first
            "Half of 30 is 30 ÷ 2 = 15 pens.\n\nSince she gave away 3, she has 15 − 3 = 12 left.",
            "Ada has 30 pens, keeps half, and gives away 3 of those. How many are left?",
            "read",
            12.0,
        ),
        (  # two quantities side by side with a unit between them
            "Final Answer: 3 hours 20 minutes",
            "How long does the trip take, in minutes?",
            "ambiguous",
            None,
        ),
        (  # a title's full stop ends no sentence
            "Mr. Lee sells 40 − 12 = 28 cakes.\n\nThat leaves Mr. Lee with 28 cakes.",
            "Mr. Lee bakes 40 cakes and sells 12. How many are left?",
            "read",
            28.0,
        ),
        (  # a leading condition and its consequence
            "If one box holds 6 eggs, then 4 boxes hold 4 × 6 = 24 eggs.",
            "A box holds 6 eggs. How many eggs are in 4 boxes?",
            "read",
            24.0,
        ),
        (  # a hypothetical consequence is a case, not the answer
            "She has 12 eggs.\n\nIf she bought one more box, she would have 18 eggs.",
            "Tina has 2 boxes of 6 eggs. How many eggs does she have?",
            "unreadable",
            None,
        ),
    ],
)
def test_signs_boxes_and_sentences_as_a_grader_reads_them(
    reply: str, question: str, status: str, value: float | None
) -> None:
    reading = read_answer(reply, question)
    assert (reading.status, reading.value) == (status, value), reading


@pytest.mark.parametrize(
    ("reply", "question", "status", "value"),
    [
        ("20", "How many cookies are left?", "read", 20.0),  # the reply is the number alone
        ("The winning horse is No. 4.", None, "unreadable", None),  # a number that names
        (  # a label's number names a runner, not a quantity
            "Daher setzen 9 Leute auf Läufer Nr. 3.",
            "Von 30 Leuten setzen 70 % auf Läufer Nr. 1. Wie viele setzen auf Läufer Nr. 3?",
            "read",
            9.0,
        ),
        (
            "Magazine: $6 ÷ 3 = $2.\n\nThe pen costs one dollar.",
            "A pen costs $1 less.",
            "read",
            1.0,
        ),
        (  # an intermediate result the sentence goes on to use
            "She bakes 2 × 30 = 60 on Monday, and 30 + 60 = 90 over the two days.",
            "She bakes 30 on Sunday and twice as many on Monday. How many in all?",
            "read",
            90.0,
        ),
        ("Balance: **($8.50)**", None, "unreadable", None),  # accounting: no value taken
        (
            "−30 − 12 = −42\n\n答え：海面下42メートル",
            "A diver at -30 m dives 12 m more.",
            "read",
            -42.0,
        ),
    ],
)
def test_labels_units_and_replies_of_one_number(
    reply: str, question: str | None, status: str, value: float | None
) -> None:
    reading = read_answer(reply, question)
    assert (reading.status, reading.value) == (status, value), reading


BUSES = "120 pupils and 10 teachers go on a trip. A bus holds 40 people. How many buses?"


def test_an_earlier_same_sentence_with_another_value_is_ambiguous() -> None:
    twice = (
        "120 ÷ 40 = 3. So the school needs 3 buses for the trip.\n\n"
        "With the teachers that is 130 people. So the school needs 4 buses for the trip."
    )
    reading = read_answer(twice, BUSES)
    assert reading.status == "ambiguous"
    assert "an earlier sentence says the same" in (reading.reason or "")
    labelled = "So the school needs 3 buses.\n\nAnswer: So the school needs 4 buses."
    assert read_answer(labelled, BUSES).status == "ambiguous"  # an answer line says it too
    corrected = twice.replace("With the teachers", "Wait, I forgot the teachers: with them")
    assert read_answer(corrected, BUSES).value == 4.0  # a correction between: the last wins
    same = twice.replace("needs 3 buses", "needs 4 buses")
    assert read_answer(same, BUSES).value == 4.0  # the same value twice: one answer
