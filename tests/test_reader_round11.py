"""The readers' eleventh round, on our own phrasings (docs/classroom.md, "Reading answers"): a
check after the answer in its own line is read past; a bold answer given first is read where the
breakdown under it computes it; "Final answer 594ft" without a colon; answer fields named in
other languages; a closing sentence whose earlier parts are steps toward its last value (taken
away, totalled, or intermediate results the question did not give); an answer line that copies
a step after a "So …" conclusion that says otherwise is ambiguous; confidence talk after the
answer is no doubt; the decimal mark of a language our word lists do not know (py3langid, CLDR);
a Chinese numeral naming the group whose total follows; a box computed by dividing the box
before it; "cash or card" is no other case, "decide which one" is no remark; a number the closing
sentence negates ("not the $500") is no statement."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.numeric_answers import read_answer

A, U = "ambiguous", "unreadable"
NO = (A, U)


def _read(reply: str, question: str | None = None) -> float | str:
    reading = read_answer(reply, question)
    return reading.value if reading.ok else reading.status


PAINT = "A painter uses 3 cans a day for 5 days. How many cans does he use?"


@pytest.mark.parametrize(
    "reply",
    [
        "He uses 3 cans for 5 days: 3 × 5 = 15. So he uses 15 cans. Check: 15 ÷ 5 = 3 ✓",
        "So the painter needs 15 cans. Quick check: 5 × 3 = 15, and 15 − 15 = 0 ✓",
    ],
)
def test_a_check_after_the_answer_in_its_line_is_read_past(reply: str) -> None:
    assert _read(reply, PAINT) == 15  # the whole line was dropped before, the answer with it


def test_a_bold_answer_first_is_read_where_the_breakdown_computes_it() -> None:
    breakdown = "- Per day: 3 cans\n- Days: 5\n- Cans: 3 × 5 = 15"
    assert _read(f"**The painter uses 15 cans.**\n\n{breakdown}", PAINT) == 15
    checked = f"{breakdown}\n\nSanity check: 15 ÷ 3 = 5 ✔️"
    assert _read(f"**The painter uses 15 cans.**\n\n{checked}", PAINT) == 15
    # the breakdown computes something else, or nothing: the bold line stays unread
    assert _read("**The painter uses 15 cans.**\n\n- Per day: 3 × 2 = 6", PAINT) in NO
    assert _read("**The painter uses 15 cans.**\n\n- Per day: 3 cans\n- Days: 5", PAINT) in NO


@pytest.mark.parametrize(
    ("reply", "expect"),
    [
        ("3 × 5 = 15 cans.\nFinal answer 15 cans", 15),
        ("3 × 5 = 15.\n**Answer 15**", 15),
        ("Antwort 15 Dosen", 15),
        ("Let me answer 5 questions about painting first.", NO),  # "answer" in prose
    ],
)
def test_an_answer_line_without_a_colon(reply: str, expect: float | tuple[str, ...]) -> None:
    read = _read(reply, PAINT)
    assert read in expect if isinstance(expect, tuple) else read == expect


@pytest.mark.parametrize(
    "reply",
    [
        '{"razonamiento": "3 × 5 = 15", "respuesta": 15}',
        '{"raisonnement": "3 × 5 = 15", "réponse": "15"}',
        '{"rechenweg": "3 × 5 = 15", "antwort": 15}',
        '{"解题": "3 × 5 = 15", "答案": 15}',
    ],
)
def test_answer_fields_named_in_other_languages(reply: str) -> None:
    assert _read(reply, PAINT) == 15


FAMILY = "Tom has 5 marbles. Jerry has twice as many. How many marbles do they have together?"
SWEETS = "There are 20 sweets. Ann takes a quarter and Ben a fifth. How many sweets are left?"


@pytest.mark.parametrize(
    ("reply", "question", "expect"),
    [
        # what the last equation takes away
        ("Ann takes 5 and Ben 4, so 9 are gone, and 20 − 9 = 11 sweets are left.", SWEETS, 11),
        # parts whose results the last part names as their total
        ("Ann's share is 5 × 1 = 5 sweets, plus 4 × 1 = 4 sweets for Ben, for 9 sweets taken "
         "altogether.", SWEETS, 9),
        # an intermediate result (not given by the question) the last equation uses
        ("Together they eat 13 sweets a week, and in 4 weeks that is 13 × 4 = 52 sweets.",
         SWEETS, 52),
        # without the question, no part is known to be an intermediate result
        ("Tom has 5 marbles, and Jerry has 5 × 2 = 10 marbles.", None, A),
        # a total word whose value is not the parts' sum
        ("Tom has 5 marbles, Jerry 10 marbles, for 12 marbles altogether.", FAMILY, A),
    ],
)  # fmt: skip
def test_a_closing_sentence_whose_parts_lead_to_its_last_value(
    reply: str, question: str | None, expect: float | str
) -> None:
    assert _read(reply, question) == expect


PENCILS = "A box holds 20 pencils and 4 are missing. How many pairs of pencils are in the box?"


def test_an_answer_line_that_copies_a_step_after_a_conclusion_is_ambiguous() -> None:
    working = "20 − 4 = 16 pencils are in the box, and 16 ÷ 2 = 8."
    assert _read(f"{working}\n\nSo there are 8 pairs.\n\nFinal Answer: 16", PENCILS) == A
    assert _read(f"{working}\n\nSo there are 8 pairs.\n\nFinal Answer: 8", PENCILS) == 8
    # the conclusion states the line's value too: no contradiction
    both = "So there are 16 pencils, 8 pairs.\n\nFinal Answer: 8"
    assert _read(f"{working}\n\n{both}", PENCILS) == 8
    # an answer line that computes further than the prose is no copy of a step
    assert _read("He works 40 hours for $400 and 5 more for $60.\n\n**Answer: $460**") == 460


@pytest.mark.parametrize(
    ("closing", "expect"),
    [
        (" I hope I did it right, math isn't really my strong suit 😅", 15),
        (" I think that's right!", 15),
        (" Hopefully that's correct.", 15),
        (" I think that's right, but it could be 16.", U),  # another value: no remark
        (" I hope that's wrong.", U),
    ],
)
def test_confidence_talk_after_the_answer_is_no_doubt(closing: str, expect: float | str) -> None:
    assert _read("3 × 5 = 15. So the painter uses 15 cans." + closing, PAINT) == expect


@pytest.mark.parametrize(
    ("reply", "expect"),
    [
        ("Firma a vândut 1.250 de bucăți în total.", 1250),  # Romanian
        ("Şirket toplam 1.250 adet sattı. Bu çok iyi bir sonuç.", 1250),  # Turkish
        ("Cửa hàng bán được 1.250 chiếc bánh.", 1250),  # Vietnamese
        ("답: 1,250개", 1250),  # Korean
        ("Společnost prodala celkem 1 250 kusů.", 1250),  # Czech
        ("Firma sprzedała łącznie 1.250 sztuk.", 1250),  # Polish
    ],
)
def test_the_decimal_mark_of_a_language_our_word_lists_do_not_know(
    reply: str, expect: float
) -> None:
    assert _read(reply) == expect  # each was "its number's grouping can be read two ways"


def test_a_chinese_numeral_naming_the_group_whose_total_follows() -> None:
    assert _read("答：三个孩子一共吃了12个苹果。") == 12
    assert _read("答案：两家店合计卖出40本书。") == 40
    assert _read("答：他买了三个苹果和12个梨。") == A  # two quantities, no total named


def test_a_box_computed_by_dividing_the_box_before_it() -> None:
    reply = (
        "Total points: \\[ 20 + 30 + 50 = \\boxed{100} \\]\n\nAverage over 4 games:\n"
        "\\[ \\frac{100}{4} = \\boxed{25} \\]"
    )
    assert _read(reply) == 25
    assert _read("First \\boxed{100}. Then \\[ \\frac{80}{4} = \\boxed{20} \\]") == A


@pytest.mark.parametrize(
    ("remark", "expect"),
    [
        (" We take cash or card at the counter.", 15),
        (" Or did he paint twice a day?", U),
        (" Decide with your partner which one the question means!", U),
    ],
)
def test_or_between_nouns_is_no_other_case(remark: str, expect: float | str) -> None:
    assert _read("3 × 5 = 15. The painter uses 15 cans." + remark, PAINT) == expect


def test_a_number_the_closing_sentence_negates_is_no_statement() -> None:
    reply = "Profit per jar: $50 − $44 = $6. For 10 jars: $60.\n\nRemember — not the $500 he takes!"
    assert _read(reply, "Tim sells 10 jars for $50 each; each costs $44. What is his profit?") == U
    assert _read("The profit is $60 — not the $500 he collects.") == 60


BAKER = "A baker sells 6 boxes of muffins at $6 a box. How much money does he make?"
MORE = "A baker sells 6 boxes at $6 a box, and 4 boxes last week. How much more does he make now?"


def test_a_comparison_after_the_value_is_an_aside_unless_asked_for() -> None:
    reply = "So for 6 boxes he makes $36, which is $12 more than the $24 he made last week."
    assert _read(reply, BAKER) == 36  # it was read 12, the difference
    # asked for the difference, the comparison is no aside: 36 is not taken for the answer
    assert _read("So he makes $36 now, which is $12 more than last week's $24.", MORE) in (12, *NO)
