"""What the question asks for (answer_units.py): a last sentence with several quantities is
read by the one of the asked kind; one whose value is a unit of another dimension stopped at
an intermediate step. Our own phrasings, none taken from a labelled corpus."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.answer_units import Asked, asked_quantity, quantity_kind
from personasim.environments.classroom.numeric_answers import read_answer


@pytest.mark.parametrize(
    ("asking", "asked"),
    [
        ("How much money does Ben have left?", Asked("money")),
        ("How much did the plumber charge for the job?", Asked("money")),
        ("How many dollars does each ticket cost?", Asked("money", True, frozenset({"ticket"}))),
        ("What percent of the apples are red?", Asked("percent")),
        ("How long did the trip take, in minutes?", Asked("minute")),
        ("How many red marbles does Ann have?", Asked("marble")),
        ("What is the total number of wheels in the garage?", Asked("wheel")),
        ("How much flour does she use?", Asked(None)),  # no auxiliary: not money, no noun
        ("How many cats and how many dogs are there?", Asked(None)),  # two things
        ("How many cups and plates did he wash?", Asked(None)),
        ("¿Cuántas manzanas quedan?", Asked(None)),  # only English questions are read
    ],
)
def test_the_asked_kind(asking: str, asked: Asked) -> None:
    assert asked_quantity(asking) == asked


@pytest.mark.parametrize(
    ("sentence", "number", "kind"),
    [
        ("So he paid $45 for it.", "45", "money"),
        ("She drove 120 miles on Monday.", "120", "mile"),
        ("That is 35 percent of the class.", "35", "percent"),
        ("He has 42 left.", "42", None),
        ("There are 12 more puppies now.", "12", "puppy"),
        ("They ate 7 apples and pears.", "7", None),  # two things named
        ("Le billet coûte 30 dólares.", "30", "money"),
    ],
)
def test_the_kind_a_sentence_gives(sentence: str, number: str, kind: str | None) -> None:
    start = sentence.index(number)
    assert quantity_kind(sentence, start, start + len(number)) == kind


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (
            "Each lap takes 3 minutes, and she runs 8 laps.\n\n"
            "She runs for 24 minutes in all, which is 1440 seconds.",
            "A lap takes 3 minutes. She runs 8 laps. How long does she run, in seconds?",
            1440.0,
        ),
        (
            "Eleven buses carry 40 people each: 11 × 40 = 440.\n\n"
            "So 440 people rode, which is 440 ÷ 55 = 8 trains.",
            "440 people must take trains that seat 55. What is the number of trains needed?",
            8.0,
        ),
        (
            "Three notebooks cost $12 in total, which is $4 each.",
            "Three notebooks cost $12. How much did each notebook cost?",
            4.0,
        ),
        (
            "The price dropped by $18, which is a 30% drop.",
            "A lamp cost $60 and now costs $42. By what percent did the price drop?",
            30.0,
        ),
    ],
)
def test_the_asked_kind_picks_one_quantity(reply: str, question: str, value: float) -> None:
    reading = read_answer(reply, question)
    assert (reading.status, reading.value) == ("read", value)
    assert read_answer(reply).status == "ambiguous"  # without the question: several quantities


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        (
            "She babysat 4 hours on Friday and 6 on Saturday, so 4 + 6 = 10 hours in all.",
            "Mia earns $12 an hour babysitting. She babysat 4 hours on Friday and 6 hours on "
            "Saturday. How much did she earn?",
        ),
        (
            "The trip is 240 miles in all.",
            "A car drives 240 miles at 60 miles an hour. How many hours does the trip take?",
        ),
    ],
)
def test_another_dimension_is_an_intermediate_step(reply: str, question: str) -> None:
    reading = read_answer(reply, question)
    assert reading.status == "unreadable"
    assert "the question asks for" in (reading.reason or "")


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (  # the same dimension in another unit: a stated answer, right or wrong
            "Each pen costs $0.80.",
            "A box of 5 pens costs $4. How much does one pen cost, in cents?",
            0.8,
        ),
        (  # a counted noun is never refused on the word alone
            "So she has 17 fruits now.",
            "Amy had 10 pieces of fruit and bought 7 more. How many pieces of fruit does she have?",
            17.0,
        ),
        (  # per item and still the answer where the question does not ask per item
            "He drove 250 miles in 5 hours, so 250 / 5 = 50 miles per hour.",
            "He drove 250 miles in 5 hours. What was his average speed?",
            50.0,
        ),
    ],
)
def test_what_the_kind_leaves_alone(reply: str, question: str, value: float) -> None:
    reading = read_answer(reply, question)
    assert (reading.status, reading.value) == ("read", value)


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        (
            "400 + 50 = 450 cents in the jar, so the jar holds $4.50, or 450 cents.",
            "A jar has 400 cents and Ann adds 50 cents. How much money is in the jar?",
            4.5,
        ),
        (
            "She walked 2 hours each day, so in all she walked 2 hours, or 120 minutes.",
            "Mia walks 1 hour on Monday and 1 hour on Tuesday. How many minutes does she walk?",
            120.0,
        ),
        (
            "9 of 36 pupils is 1/4 of the class, or 25 percent.",
            "9 of 36 pupils cycle to school. What percent of the class cycles?",
            25.0,
        ),
    ],
)
def test_one_quantity_in_two_units_is_no_alternative(
    reply: str, question: str, value: float
) -> None:
    reading = read_answer(reply, question)
    assert (reading.status, reading.value) == ("read", value)


def test_two_amounts_offered_with_or_stay_unread() -> None:
    question = "A repair costs $450 and a new bike $1,000. How much should Sam spend?"
    for reply in ("So Sam should spend $450 or $1,000.", "So he pays 450 dollars, or 4.5 cents."):
        assert not read_answer(reply, question).ok


def test_an_amount_for_a_question_about_a_difference_is_an_intermediate_step() -> None:
    question = "Ann read 12 books in May and 7 in June. How many more books did she read in May?"
    question += " Compare: how many more books did she read in May than in June?"
    stopped = "In May she read 12 books and in June 7 books.\n\nSo in May Ann read 12 books."
    reading = read_answer(stopped, question)
    assert reading.status == "unreadable" and "difference" in (reading.reason or "")
    for answered in ("So Ann read 5 more books in May.", "So Ann read 12 − 7 = 5 books more."):
        assert read_answer(answered, question).value == 5.0


def test_a_range_is_no_value() -> None:
    question = "A month has 4 to 5 weeks and Ben earns $100 a week. How much does he earn a month?"
    reading = read_answer("So Ben can expect roughly $400–$500 a month.", question)
    assert reading.status == "ambiguous"
    assert read_answer("So Ben earns 600 − 100 = 500 dollars a month.", question).value == 500.0


def test_what_is_owed_is_what_is_paid() -> None:
    question = "Tom owes $2,400 and pays 5% of it each month. How much does he pay per month?"
    reply = "Tom still owes $2,400. Paying 5% each month means $2,400 × 0.05 = $120 per month."
    assert read_answer(reply, question).value == 120.0  # the question asks what is paid
    owed = "Tom owes 5% of $2,400 each month, so he owes $120 per month."
    assert read_answer(owed, question).value == 120.0  # what he owes is what he pays
    balance = "Ann had $20 and spent $35. What is her balance?"
    assert read_answer("So Ann is overdrawn by $15.", balance).status == "ambiguous"


def test_remarks_after_the_last_number_do_not_hide_it() -> None:
    question = "Lori needs 3 egg halves for each of 8 guests. How many whole eggs does she need?"
    reply = "8 × 3 = 24 halves, so 24 ÷ 2 = 12 eggs.\n\nSo Lori needs 12 eggs. Enjoy the party!"
    assert read_answer(reply, question).value == 12.0
    doubting = reply.replace("Enjoy the party!", "But I am not sure about this.")
    assert not read_answer(doubting, question).ok
    cut = reply.replace("Enjoy the party!", "She could also buy a few extra in case")
    assert not read_answer(cut, question).ok  # cut off: nothing is read


def test_a_value_of_other_things_beside_the_asked_ones_is_no_answer() -> None:
    question = "Each shelf holds 30 books and Ann has 90 books. How many shelves does she need?"
    for reply in (
        "With 90 books she needs three shelves, each holding 30 books.",
        "So she fills 3 shelves, or 90 books.",
    ):
        assert not read_answer(reply, question).ok
    assert read_answer("So she needs 3 shelves for her 90 books.", question).value == 3.0


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        (  # a measure for things counted: it stopped at the time
            "Monday and Tuesday took 2 hours, so 1.5 hours are left for Wednesday.",
            "He watched 30-minute episodes for 3.5 hours in all, 2 of them on Monday and "
            "Tuesday. How many 30-minute episodes did he watch on Wednesday?",
        ),
        (  # things counted for money: it stopped before the price
            "He needs 36 hot dogs, so John needs to buy 6 packs of hot dogs.",
            "A pack of 6 hot dogs costs $2 and John needs 36. How much does he need to spend?",
        ),
        (  # "1 foot long" is a length, whatever follows the unit
            "Together the remoras are 1 foot long.",
            "A shark is 10 feet long; two 6-inch remoras cling to it. What percentage of the "
            "shark's length is the remoras' length?",
        ),
    ],
)
def test_a_quantity_of_another_sort_than_asked_is_no_answer(reply: str, question: str) -> None:
    assert read_answer(reply, question).status == "unreadable"


def test_the_asked_kind_reads_counted_things_in_their_own_words() -> None:
    assert asked_quantity("How many 30-minute episodes did he watch?") == Asked("episode")
    sentence = "He baked 50 cookies last year."
    assert quantity_kind(sentence, 9, 11) == "cooky"  # "last year" says when, not what
    assert read_answer("So Ann drew $92$ pictures.", "How many pictures did Ann draw?").ok
