"""The readers' ninth round, on our own phrasings (docs/classroom.md, "Reading answers"): a
duration said twice in two units is one quantity, read in the unit the question asks for; a
concluding "so" in more languages; no sentence ends at "i.e."; "the number of tickets Omar
sold" asks for tickets; money in more languages' words; a reason after the answer in more
languages ("ya que", "потому что"); a first sentence that derives its value from a given is a
step, not an answer given first; a closing figure over another period than the one asked
("That's $126 a week!", "Cela fait 126 $ par semaine." for the day) or a hypothetical
("she'd make $27") is no answer; a
remark after the named answer ("The change is … = $8", a line "Sale price: $30") that gives
another value leaves the reply ambiguous; "how much change" asks for money; a count is no
answer to "what percent"; "together" is no comparative; "That's 2 boxes and 2 pencils." after
the answer restates it in parts; a given restated after a ";" is no answer; nor the amount at
the start ("He started with 24."); a total given first in another language is an answer given
first. Each rule has its
refusals: two durations that differ, or none in the asked unit, stay unread; a named value
corrected after is no rival."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.answer_durations import restated_duration
from personasim.environments.classroom.answer_units import asked_quantity
from personasim.environments.classroom.numeric_answers import read_answer

BAKE = (
    "A loaf rises for 90 minutes and bakes for 2 hours less 25 minutes. How many minutes does "
    "one loaf take from rising to baked?"
)
BAKE_HOURS = BAKE.replace("How many minutes", "How many hours")
WORKING = "It rises for 90 minutes and bakes for 120 − 25 = 95 minutes, 90 + 95 = 185 minutes. "


@pytest.mark.parametrize(
    ("closing", "question", "value"),
    [
        ("One loaf takes 185 minutes, or 3 hours 5 minutes.", BAKE, 185.0),
        ("One loaf takes 3 hours and 5 minutes, or 185 minutes.", BAKE, 185.0),
        ("One loaf takes 185 min, that is 3 h 5 min.", BAKE, 185.0),
        ("One loaf takes 185 minutes, i.e. 3 hours 5 minutes.", BAKE, 185.0),  # no sentence end
        ("One loaf takes 11,100 seconds, or 3 hours 5 minutes.", BAKE_HOURS, None),
    ],
)
def test_a_duration_restated_is_read_in_the_asked_unit(
    closing: str, question: str, value: float | None
) -> None:
    reading = read_answer(WORKING + closing, question)
    assert (reading.value if reading.ok else None) == value


@pytest.mark.parametrize(
    "closing",
    [
        "One loaf takes 185 minutes, or 3 hours 15 minutes.",  # the two disagree
        "One loaf takes 185 minutes, or 3 hours 5 minutes, and 2 loaves 370 minutes.",
    ],
)
def test_durations_that_are_not_one_quantity_stay_unread(closing: str) -> None:
    reading = read_answer(WORKING + closing, BAKE)
    assert not reading.ok and reading.status == "ambiguous"


def test_a_restated_duration_needs_a_single_number_in_the_asked_unit() -> None:
    part = "One loaf takes 185 minutes, or 3 hours 5 minutes"
    assert restated_duration(part, BAKE) == "185 minutes"
    assert restated_duration(part, BAKE_HOURS) is None  # 3 h 5 min is no single number
    assert restated_duration(part, "How many loaves are baked?") is None
    assert restated_duration("In all, 11,100 seconds, or 185 minutes", BAKE) == "185 minutes"
    assert restated_duration("In all, 11,100 seconds, or 18 minutes", BAKE) is None
    assert restated_duration("Es dauert 185 Minuten, also 3 Stunden 5 Minuten", BAKE) == (
        "185 Minuten"
    )


SHOP = (
    "A shop had a budget of $70. It bought 5 crates for $12 each and a sign for $5. How much "
    "money, in dollars, does it have left?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "5 × 12 = 60 ドル、看板 5 ドル。\n\n"
        "合計は 60 + 5 = 65 ドルなので、予算70ドルから残るのは5ドルです。",
        "5 × 12 = 60 달러, 간판 5 달러.\n\n"
        "합계는 60 + 5 = 65달러이므로, 예산 70달러에서 5달러가 남습니다.",
    ],
)
def test_a_concluding_so_in_japanese_and_korean_ends_the_working(reply: str) -> None:
    """The total before "なので" / "이므로" is working, not the answer (never read as 65)."""
    reading = read_answer(reply, SHOP)
    assert not (reading.ok and reading.value == 65.0)


def test_a_clause_after_the_counted_noun_does_not_name_the_kind() -> None:
    asked = asked_quantity("If 4 were returned, find the total number of tickets Omar sold.")
    assert asked.kind == "ticket"
    assert asked_quantity("How many New York residents did Omar call?").kind == "resident"


def test_an_answer_first_for_a_number_of_items_asked_is_a_rival() -> None:
    """'the total number of tickets Omar sold' asks for tickets, so an opening sentence that
    gives them is an answer, and a working that ends on a part makes the reply ambiguous."""
    question = (
        "Omar sold half as many adult tickets as child tickets, and 6 child tickets. Find the "
        "total number of tickets Omar sold."
    )
    reply = (
        "Omar sold 9 tickets: 6 child and 3 adult. Adult tickets are half of the child "
        "tickets, so adult = 6 ÷ 2 = 3."
    )
    reading = read_answer(reply, question)
    assert reading.status == "ambiguous" and set(reading.candidates) == {9.0, 3.0}


@pytest.mark.parametrize(
    "closing",
    [
        "따라서 남은 돈은 5달러입니다.",
        "Поэтому у неё осталось 5 долларов.",
        "Zostało jej 5 dolarów.",
    ],
)
def test_money_in_the_replys_language_answers_a_money_question(closing: str) -> None:
    reading = read_answer("70 − 65 = 5.\n\n" + closing, SHOP)
    assert reading.ok and reading.value == 5.0


def test_a_first_sentence_derived_from_a_given_is_a_step() -> None:
    question = "Jo had $80. Ana gave her 1/4 of her own $80. How many dollars does Jo have now?"
    step_first = "One quarter of Ana's $80 is $20. Jo had $80, so she now has $100."
    assert read_answer(step_first, question).value == 100.0
    answer_first = "Jo now has $100. One quarter of Ana's money is $20, so the gift is $20."
    assert read_answer(answer_first, question).status == "ambiguous"


SCREWS = (
    "James has 50 screws. Each table needs 8 screws and he builds 4 tables. How many screws "
    "will he have left over?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "Il fait 4 tables : 4 × 8 = 32 vis.\n\nIl lui restera 18 vis, puisqu'il n'en utilise "
        "que 32 sur 50.",
        "Costruisce 4 tavoli: 4 × 8 = 32 viti.\n\nGli avanzano 18 viti, perché ne usa solo 32 "
        "su 50.",
        "Он делает 4 стола: 4 × 8 = 32 шурупа.\n\nУ него останется 18 шурупов, потому что он "
        "использует 32 из 50.",
        "Hace 4 mesas: 4 × 8 = 32 tornillos.\n\nLe sobrarán 18 tornillos, ya que solo usará 32 "
        "de los 50.",
        "Ele faz 4 mesas: 4 × 8 = 32 parafusos.\n\nSobrarão 18 parafusos, já que ele usa só 32 "
        "dos 50.",
    ],
)
def test_a_reason_after_the_answer_is_no_second_quantity(reply: str) -> None:
    reading = read_answer(reply, SCREWS)
    assert reading.ok and reading.value == 18.0


EGGS = (
    "Janet's ducks lay 16 eggs a day. She eats 3 and bakes with 4, and sells the rest for $2 "
    "each. How much in dollars does she make every day at the farmers' market?"
)
EGGS_WEEK = "Janet sells 9 eggs a day at $2 each. How much does she make in a week?"


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("She sells 16 − 3 − 4 = 9 eggs at $2, so she makes $18.\n\nThat's $126 a week!", EGGS),
        ("She sells 9 eggs at $2 each and makes $18 daily. Over a week, that comes to $126.", EGGS),
        ("9 × 2 = 18, so she makes $18 a day.", EGGS_WEEK),  # a step short of the week
        ("Janet makes $18 every day. If the price rose to $3, she'd make $27.", EGGS),
        ("She earns 9 × 2 = $18 per day. Over 30 days, $540.", EGGS),
        ("Janet earns 18 dollars daily. Annually, that's 18 × 365 = 6,570 dollars.", EGGS),
        ("Elle gagne 18 $ par jour. Cela fait 126 $ par semaine.", EGGS),
        ("Sie verdient 18 $ pro Tag. In einer Woche sind das 126 $.", EGGS),
        ("Она зарабатывает 18 долларов в день. За неделю это 126 долларов.", EGGS),
        ("她每天赚 18 美元。一周就是 126 美元。", EGGS),
    ],
)
def test_another_period_or_a_hypothetical_is_no_answer(reply: str, question: str) -> None:
    reading = read_answer(reply, question)
    assert not reading.ok


@pytest.mark.parametrize(
    ("reply", "question", "value"),
    [
        ("She has 9 eggs to sell, and at $2 apiece she earns $18 — about $540 a month.", EGGS, 18),
        ("She makes $18 a day.", EGGS, 18),
        ("9 × 2 = 18 a day, and 18 × 7 = 126. She makes $126 a week.", EGGS_WEEK, 126),
        ("She sells 9 eggs a day for 7 days, so she makes 9 × 7 × 2 = $126.", EGGS_WEEK, 126),
        (
            "It lays 70 eggs, 10 a day for 7 days.",
            "A hen lays 10 eggs a day. How many eggs does it lay in a week?",
            70,
        ),
    ],
)
def test_the_asked_period_or_none_around_the_value_is_read(
    reply: str, question: str, value: float
) -> None:
    reading = read_answer(reply, question)
    assert reading.ok and reading.value == value


CHANGE = (
    "A store sells pencils at $3 a pack. Tom buys 4 packs and pays with a $20 bill. How much "
    "change does he get?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "The change is $20 - $12 = $8. Tom can buy 2 more packs with it and have $2 left.",
        "4 packs cost 4 × $3 = $12. His change is $20 − $12 = $8.\n\nThat buys 2 more packs!",
        "Tom gets $8 in change. He spent $12 on pencils.",
    ],
)
def test_a_remark_after_the_named_answer_is_not_read(reply: str) -> None:
    reading = read_answer(reply, CHANGE)
    assert not reading.ok


SALE = "A shirt costs $40 and is on sale for 25% off. What is the sale price?"


@pytest.mark.parametrize(
    "reply",
    [
        "25% of $40 is $10, so the sale price is $30. You save $10!",
        "Sale price: $30.\nOriginal price: $40.\nDiscount: $10.",
        "**Sale price: $30**\n\n- Original: $40\n- Discount: 25% ($10)",
    ],
)
def test_a_line_after_the_named_price_is_not_read(reply: str) -> None:
    assert not read_answer(reply, SALE).ok


def test_a_named_value_corrected_after_is_no_rival() -> None:
    question = "Andrea has 96 apples and 72 bananas. How many fruits are there?"
    reply = (
        "Total fruits: 96 + 72 = 158\n\nHmm, let me re-add that: 96 + 72 = 168, not 158.\n\n"
        "There are 168 fruits in total."
    )
    assert read_answer(reply, question).value == 168


@pytest.mark.parametrize(
    "reply",
    [
        "4 × 3 = 12. 20 − 12 = 8. Tom gets $8 in change.",
        "The packs cost $12, so his change is $20 − $12. That leaves Tom $8 in change.",
        "The change is 20 − 4 × 3 = 8, so Tom gets 8 dollars, and 8 − 0 = 8 left to spend.",
    ],
)
def test_a_named_expression_or_the_same_value_is_no_rival(reply: str) -> None:
    reading = read_answer(reply, CHANGE)
    assert reading.ok and reading.value == 8.0


def test_a_count_does_not_answer_what_percent() -> None:
    question = "A class has 30 students. 12 of them are boys. What percent of the class are girls?"
    reply = "Girls: 30 − 12 = 18. 18/30 = 0.6, so 60% are girls. That's 18 girls in total."
    assert not read_answer(reply, question).ok
    assert (
        read_answer("There are 18 girls, which is 18 ÷ 30 = 60% of the class.", question).value
        == 60
    )


def test_together_is_no_word_of_comparison() -> None:
    question = "Sam has 15 marbles and Ana has 23. How many more marbles does Ana have than Sam?"
    reply = "Ana has 23 − 15 = 8 more marbles than Sam. Together they have 38."
    assert not read_answer(reply, question).ok
    assert read_answer("So Ana has 8 marbles more than Sam.", question).value == 8


PENCILS = (
    "Janet has 3 boxes with 12 pencils each. She gives away 10 pencils. How many pencils does "
    "she have left?"
)


@pytest.mark.parametrize("parts", ["2 boxes and 2 pencils", "2 boxes and 4 pencils"])
def test_a_restatement_in_parts_is_not_read(parts: str) -> None:
    reply = f"Janet now has 26 pencils, since 3 × 12 = 36 and 36 − 10 = 26. That's {parts}."
    assert not read_answer(reply, PENCILS).ok
    assert not read_answer(f"3 × 12 − 10 = 26.\nFinal Answer: {parts} (26)", PENCILS).ok
    assert read_answer("36 − 10 = 26.\n\nThat's 26 pencils.", PENCILS).value == 26


APPLES = "Anna had 50 apples and sold 8. How many apples does she have left?"


def test_a_given_restated_after_a_semicolon_is_no_answer() -> None:
    assert not read_answer("Anna has 42 apples left; she sold 8.", APPLES).ok
    assert read_answer("She sold 8; so she has 50 − 8 = 42 apples left.", APPLES).value == 42


MARBLES = (
    "Tom has 4 bags with 6 marbles each. He loses 5 marbles. How many marbles does he have now?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "Tom has 19 marbles now; originally 24.",
        "Tom has \\(19\\) marbles now. He started with \\(24\\).",
        "The number of marbles Tom has now is 19. Before losing any, he had 24.",
    ],
)
def test_the_amount_at_the_start_is_no_answer(reply: str) -> None:
    assert not read_answer(reply, MARBLES).ok


def test_a_start_the_question_asks_for_or_that_follows_the_value_is_read() -> None:
    began = "Tom lost 5 marbles and now has 19. How many marbles did he have when he began?"
    assert read_answer("19 + 5 = 24, so he had 24 marbles to begin with.", began).value == 24
    started = "He started with 4 × 6 = 24 marbles, so after losing 5 he has 24 − 5 = 19."
    assert read_answer(started, MARBLES).value == 19


FARM = (
    "A farmer has 12 cows and buys 3 times as many sheep. How many animals does he have in total?"
)


@pytest.mark.parametrize(
    "reply",
    [
        "Tiene 48 animales en total. Compró 3 × 12 = 36 ovejas.",
        "Er hat insgesamt 48 Tiere. Er kauft 3 × 12 = 36 Schafe.",
        "Il a 48 animaux au total. Il achète 3 × 12 = 36 moutons.",
    ],
)
def test_a_total_given_first_in_another_language_is_a_rival(reply: str) -> None:
    reading = read_answer(reply, FARM)
    assert reading.status == "ambiguous" and set(reading.candidates) == {48.0, 36.0}
