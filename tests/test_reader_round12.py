"""The readers' twelfth round, on our own phrasings (docs/classroom.md, "Reading answers"): a
closing sentence whose clause naming the asked quantity states a number the question gave, beside
one new quantity, is ambiguous; a rate is not read across "and"; a value under a condition
followed by another value is ambiguous; a last sentence about another of the question's names
than the asked one is an intermediate step; numeral units in Chinese, Japanese and Korean
compounds ("4千4百", "1만 2천") and multipliers ("14만", "1千"); "mil" as miles outside Spanish
and Portuguese; a money word in a script whose vowel signs cut a word."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.answer_numbers import normalized, numbers_in
from personasim.environments.classroom.numeric_answers import read_answer

A, U = "ambiguous", "unreadable"
NO = (A, U)


def _read(reply: str, question: str | None = None) -> float | str:
    reading = read_answer(reply, question)
    return reading.value if reading.ok else reading.status


SHARE = (
    "A coach has 36 oranges. Each of the 3 coaches keeps 4 and the rest go to the 8 players "
    "equally. How many oranges does each player get?"
)
SHARE_WORK = "The coaches keep 3 × 4 = 12, so 36 − 12 = 24 are left; 24 ÷ 8 = 3.\n\n"


@pytest.mark.parametrize(
    "closing",
    [
        "Each player gets 3 oranges, and the coaches keep 12 of them.",
        "The coaches keep 12, while every player gets 3 oranges.",
    ],
)
def test_a_clause_naming_the_asked_with_a_given_number_beside_a_new_one_is_ambiguous(
    closing: str,
) -> None:
    # 3 is also a number the question gives (3 coaches), so the concluding rule took 12, the
    # one new quantity, and read it; the clause that names the asked says 3
    assert _read(f"{SHARE_WORK}{closing}", SHARE) == A


def test_a_rate_is_not_read_across_and() -> None:
    question = SHARE.replace("36", "60")
    work = "The coaches keep 3 × 4 = 12, so 60 − 12 = 48 are left; 48 ÷ 8 = 6.\n\n"
    # "12 and every player" was read as 12 per player, the rate the question asks for
    assert _read(f"{work}The coaches end up with 12 and every player gets 6.", question) in NO


@pytest.mark.parametrize(
    ("closing", "expect"),
    [
        ("So the answer is 1,200 sticks if it means the cheaper board, or 1,600 sticks if not.", A),
        ("So the answer is 1,200 sticks when the boards are 2 x 4s, or 1,600 otherwise.", A),
        # a case after a break is the other rules' to read: the answer stands
        ("The answer is 1,200 sticks, but if he bought 2 x 8s it would be 1,600.", 1200),
    ],
)
def test_a_value_under_a_condition_then_another_value(closing: str, expect: float | str) -> None:
    question = "He has $24; a 2 x 4 costs $4 and gives 200 sticks. How many sticks can he make?"
    assert _read(f"24 ÷ 4 = 6 boards, 6 × 200 = 1,200.\n\n{closing}", question) == expect


LILY = (
    "Bodhi, David and Lily found 43 insects. Lily found 7 more than David, and David found half "
    "of what Bodhi found. How many insects did Lily find?"
)


@pytest.mark.parametrize(
    ("closing", "expect"),
    [
        ("David found **9 insects**.", U),  # was read 9: the step before Lily's count
        ("So David found 9 insects.", U),
        ("So Lily found 16 insects.", 16),
        ("Lily found 9 + 7 = 16, twice what David found.", 16),
        ("That gives Lily 16 insects.", 16),
    ],
)
def test_a_last_sentence_about_another_name_is_an_intermediate_step(
    closing: str, expect: float | str
) -> None:
    work = "Let David find d: d + 2d + d + 7 = 43, so 4d = 36 and d = 9.\n\n"
    assert _read(f"{work}{closing}", LILY) == expect


def test_a_sentence_about_the_asked_one_through_another_name_is_read() -> None:
    question = (
        "Mazie has 52 marbles and gives them to Dallas and Darla. How many did Mazie give to Darla?"
    )
    reply = "Mazie gave Dallas 21 + 4 = 25 marbles.\nDarla has 52 - 25 = 27 marbles."
    assert _read(reply, question) == 27  # "Darla" is in the asking sentence


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("4千4百美元", 4400),
        ("1万2千美元", 12000),
        ("1万1千5百瓶", 11500),
        ("1千美元", 1000),
        ("14만 달러", 140000),
        ("1만 2천 원", 12000),
        ("2천만 원", 20_000_000),
        ("1억 2천만", 120_000_000),
        ("7万2000", 72000),
    ],
)
def test_numeral_units_in_cjk_and_korean(written: str, value: float) -> None:
    numbers = numbers_in(normalized(written), ".")
    assert [n.value for n in numbers] == [value]  # "4千4百" was 4 and 4, "1万2千" 10002


def test_numeral_units_that_make_no_one_number_stay_as_written() -> None:
    assert normalized("7万2000万") == "7万2000万"
    assert normalized("4千4") == "4千4"  # 4,004 or 4,400: left to the readers, unread


@pytest.mark.parametrize(
    ("reply", "expect"),
    [
        ("Prędkość: 60 / 6 = 10 mil na godzinę.\n\nOdpowiedź: 10 mil na godzinę.", 10),
        ("Respuesta: 240 mil dólares.", 240_000),
        ("Resposta: 15 mil reais.", 15_000),
    ],
)
def test_mil_is_a_mile_outside_spanish_and_portuguese(reply: str, expect: float) -> None:
    assert _read(reply) == expect  # the Polish replies were read 10,000


def test_a_money_word_in_devanagari_names_money() -> None:
    question = "John's house is worth $250,000. How much money does he have left?"
    reply = "बचा हुआ: 1,00,000 − 60,000 = 40,000 डॉलर\n\nकर्ज़ चुकाने के बाद जॉन के पास 40 हज़ार डॉलर बचे।"
    assert _read(reply, question) == 40000  # "डॉलर" was cut at its vowel sign: not money


@pytest.mark.parametrize(
    ("closing", "expect"),
    [
        ("Insieme hanno percorso 79 miglia, cioè circa 127 chilometri.", 79),
        ("Together they went 79 miles, which is about 127 kilometres.", 79),
        ("Together they went 79 miles — that's roughly 127 km.", 79),
        # the hedged restatement is in the asked unit: it may be the answer
        ("Together they went 79 miles, which is about 127 kilometers.", "in kilometers"),
        # a hedge on the value itself
        ("Together they went about 79 miles, or 127 kilometres.", A),
    ],
)
def test_an_approximate_restatement_in_another_unit_does_not_hedge_the_value(
    closing: str, expect: float | str
) -> None:
    question = "Alisa rode 54 miles and Stanley 25 miles. How far did they go together?"
    if expect == "in kilometers":
        question, expect = question.replace("?", ", in kilometers?"), A
    assert _read(f"54 + 25 = 79.\n\n{closing}", question) == expect


NEPHEW = (
    "Shiloh is 44. In 7 years he will be three times as old as his nephew. How old is the "
    "nephew now?"
)


@pytest.mark.parametrize(
    "correction",
    [
        "Ой, нет — это через 7 лет. Сейчас ему 10 лет.",
        "あ、違いました。今は10歳です。",
        "Hayır, bekle — bu yanlış. Bugün 10 yaşında.",
        "Khoan đã, sai rồi. Bây giờ cháu 10 tuổi.",
        "Moment, das ist sein Alter in 7 Jahren. Heute ist er 10.",
        "Chwila, to jego wiek za 7 lat. Teraz ma 10 lat.",
        "Tunggu, itu salah. Sekarang umurnya 10 tahun.",
        "रुकिए, यह गलत है। अभी उसकी उम्र 10 साल है।",
    ],
)
def test_a_correction_after_the_answer_in_more_languages(correction: str) -> None:
    assert _read(f"51 ÷ 3 = 17.\nAnswer: 17\n{correction}", NEPHEW) == 10  # was read 17


@pytest.mark.parametrize(
    "withdrawal",
    [
        "Moment, das passt nicht – ich muss das noch einmal prüfen.",
        "Chwila, coś tu nie gra. Muszę to przeliczyć.",
        "Tunggu, saya perlu menghitung ulang.",
        "Bir dakika, bunu yeniden hesaplamam gerek.",
    ],
)
def test_a_withdrawal_after_the_answer_in_more_languages(withdrawal: str) -> None:
    assert _read(f"51 ÷ 3 = 17.\nAnswer: 17\n{withdrawal}", NEPHEW) in NO  # was read 17


@pytest.mark.parametrize(
    "reply",
    [
        "Odpowiedź: 40 (a może 38).",
        "Cevap: 40 (belki 38).",
        "답: 40명 (아니면 38명)",
        "Trả lời: 40 (có thể là 38).",
        "Risposta: 40 (forse 38).",
        "Ich bin mir nicht sicher, aber die Antwort ist wohl 40.",
        "No estoy segura, pero la respuesta es 40.",
        "Nie jestem pewien, ale odpowiedź to 40.",
    ],
)
def test_an_alternative_or_a_doubt_in_more_languages(reply: str) -> None:
    assert _read(f"48 ÷ 1,2 = 40.\n\n{reply}") in NO  # was read 40


BALLOONS = (
    "Tina and her 2 friends each had 3 balloons, and their mom gave each girl 2 more. How many "
    "balloons did the girls have in total?"
)


@pytest.mark.parametrize(
    ("closing", "expect"),
    [
        ("Each girl ended up with 5 balloons.", U),  # was read 5
        ("On average, each girl has 5 balloons.", U),
        ("The girls had 5 balloons each.", U),
        ("The girls had 15 balloons altogether.", 15),
        ("Each girl had 5, so the girls had 15 balloons in total.", 15),
        ("So the girls had 15 balloons.", 15),
    ],
)
def test_a_value_per_item_where_the_question_asks_a_total(
    closing: str, expect: float | str
) -> None:
    assert _read(f"3 × 3 = 9 and 3 × 2 = 6, so 9 + 6 = 15.\n\n{closing}", BALLOONS) == expect


@pytest.mark.parametrize(
    "remark",
    [
        "Happy to help with problem #2 too! 😊",
        "Answered by MathBot v2.",
        "Ready for question 3 whenever you are!",
    ],
)
def test_a_remark_about_the_chat_with_a_number_is_read_past(remark: str) -> None:
    question = "Charlie had 54 stickers, gave away 9 and used 28. How many stickers are left?"
    reply = f"54 − 9 − 28 = 17.\nCharlie has 17 stickers left. {remark}"
    assert _read(reply, question) == 17  # the number in the remark was read (2, 3)


PENGUINS = (
    "There are 36 penguins sunbathing. A third go swimming and a third go into the cave. How "
    "many penguins are still sunbathing?"
)


@pytest.mark.parametrize(
    ("closing", "expect"),
    [
        ("So 12 + 12 = 24 penguins are no longer sunbathing.", U),  # was read 24
        ("That means 24 penguins aren't sunbathing anymore.", 24),  # "anymore" after: left
        ("So 36 − 24 = 12 penguins are still sunbathing.", 12),
    ],
)
def test_a_last_sentence_that_counts_the_others(closing: str, expect: float | str) -> None:
    assert _read(f"36 ÷ 3 = 12 swim and 12 go inside.\n{closing}", PENGUINS) == expect


@pytest.mark.parametrize(
    ("closing", "expect"),
    [
        ("Add them up and you get 110 miles for the day.", 110),  # no value before
        ("Put the two together and that's 110 miles.", 110),
        ("Add them up to find the total.", U),  # an instruction alone states nothing
    ],
)
def test_a_step_said_as_an_instruction_then_its_result(closing: str, expect: float | str) -> None:
    question = "Dijana rowed 50 miles and Anis rowed 1/5 more. How many miles did they row?"
    assert _read(f"Anis rowed 50 + 10 = 60. {closing}", question) == expect
