"""The readers' tenth round, on our own phrasings (docs/classroom.md, "Reading answers"): the
remarks that close a chat reply ("Hope this helps! 😊", "Let me know if you have any other
questions!", "Would you like me to explain any step?", "Not bad for two glasses!") are read
past, never one that doubts, denies, conditions or states a number; emoji decorate; a length
of time restated in other units after the answer ("That's 7 hours 32 minutes.") is read past,
and a part of such a compound is never a value; a correction that opens a sentence ("Hmm,
no: …") hands the answer to the closing sentence after it; a chat template leaked after the
reply ends it; hedges in more languages; "one" counts only the asked thing; a fraction
restated as a percent in more languages; "short by" for "how much more does he need";
"Endergebnis"; ", leaving 30 elves" concludes; "As a sanity check" opens a check; inline
LaTeX math is no money; a horizontal rule states nothing."""

from __future__ import annotations

import pytest

from personasim.environments.classroom.numeric_answers import read_answer

APPLES = "Tom has 50 apples and sells 8. How many apples does he have left?"
ANSWERED = "He sold 8 of his 50 apples, so 50 − 8 = 42.\n\nTom has 42 apples left."


@pytest.mark.parametrize(
    "remark",
    [
        " 🍎",
        " Hope this helps! 😊",
        "\n\nLet me know if you have any other questions!",
        "\n\nIf you have more questions, feel free to ask.",
        "\n\nWould you like me to explain any step in more detail?",
        " Pretty simple, right?",
        " Not bad!",
        " No wonder he's happy!",
        " Enjoy your apples! 🍏🍎",
        " Quite a harvest 🍏",  # an emoji ends the remark's sentence
        "\n\n---\n*Tip: subtraction answers 'how many are left' questions.*",
    ],
)
def test_a_closing_remark_is_read_past(remark: str) -> None:
    reading = read_answer(ANSWERED + remark, APPLES)
    assert (reading.status, reading.value) == ("read", 42.0)


@pytest.mark.parametrize(
    "remark",
    [
        " That doesn't seem right.",
        " I don't think that's right.",
        " Or did he sell more?",
        " If he sells more, he'll have fewer.",
        " Hmm, let me recheck.",
        " Wait.",
    ],
)
def test_a_sentence_that_doubts_denies_conditions_or_counts_is_no_remark(remark: str) -> None:
    reading = read_answer(ANSWERED + remark, APPLES)
    assert reading.value != 42.0 or reading.status != "read"
    assert reading.status in ("unreadable", "ambiguous")


def test_a_number_word_the_question_gave_leaves_a_remark_a_remark() -> None:
    question = (
        "A glass holds 8 ounces. John drinks 2 glasses at 3 calories an ounce. How many calories?"
    )
    reply = "That's 2 × 8 = 16 ounces, and 16 × 3 = 48 calories. Not bad for two glasses!"
    assert read_answer(reply, question).value == 48.0
    other = read_answer(reply.replace("two glasses", "five glasses"), question)
    assert other.value != 48.0  # a number the question did not give: no remark


SLEEP = "She sleeps 8 hours but is awake 23 minutes and 5 minutes. How many minutes does she sleep?"


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("She slept 480 − 23 − 5 = 452 minutes. That's 7 hours 32 minutes.", 452.0),
        ("She slept 480 − 23 − 5 = 452 minutes. That's about 7.5 hours!", 452.0),
        ("She slept 7 hours 32 minutes. That's 452 minutes.", 452.0),  # the asked unit
    ],
)
def test_a_duration_restated_in_other_units_after_the_answer(reply: str, value: float) -> None:
    reading = read_answer(reply, SLEEP)
    assert (reading.status, reading.value) == ("read", value)


def test_a_part_of_a_compound_duration_is_no_value() -> None:
    """ "7 hours 32 minutes" for "how many minutes" is not 32 (it was read 32)."""
    assert read_answer("That's 7 hours 32 minutes.", SLEEP).status == "unreadable"
    restated = "She slept 400 minutes. That's 7 hours 32 minutes."  # not the value before
    assert read_answer(restated, SLEEP).value != 32.0


def test_a_time_asked_in_no_unit_is_read_where_it_is_first_stated() -> None:
    question = "Each crossword takes 10 minutes and each sudoku 5. How much time did she spend?"
    reply = "3 × 10 + 8 × 5 = 70. She spent 70 minutes, which is 1 hour and 10 minutes."
    assert read_answer(reply, question).value == 70.0


CDS = "Tom paid $48 for CDs at $4 each. How many more CDs could he buy without the headset?"


def test_a_correction_opening_a_sentence_hands_the_answer_to_the_closing_sentence() -> None:
    reply = (
        "He could buy 48 ÷ 4 = 12 CDs, so the answer is 12. Hmm, no: one of those 12 is the "
        "CD he already bought. Tom could have bought 11 more CDs."
    )
    reading = read_answer(reply, CDS)
    assert (reading.status, reading.value) == ("read", 11.0)
    inside = "The answer is 12. This is actually a classic problem. He could buy 11 more CDs."
    assert read_answer(inside, CDS).value != 11.0  # "actually" inside a sentence corrects nothing


def test_a_leaked_chat_template_ends_the_reply() -> None:
    question = (
        "80 students voted and the winner got 3/4 of the votes. How many votes did the loser get?"
    )
    reply = (
        "The loser got 80 − 60 = 20 votes.<|eot_id|><|start_header_id|>user<|end_header_id|>"
        "\n\nAnd with 5/8?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        "Then the loser would get 80 − 50 = 30 votes."
    )
    assert read_answer(reply, question).value == 20.0
    assert (
        read_answer("<|im_start|>assistant\nThe loser got 20 votes.<|im_end|>", question).value
        == 20.0
    )


@pytest.mark.parametrize(
    "hedged",
    [
        "За 40 секунд черепаха проползёт примерно 120 футов.",
        "In 40 seconden kruipt de schildpad ongeveer 120 voet.",
        "Kaplumbağa 40 saniyede yaklaşık 120 fit yol alır.",
        "カメは40秒でおよそ120フィート進みます。",
        "It crawls about 3 × 40 = 120 feet.",  # a hedge before the working qualifies its result
    ],
)
def test_hedges_in_more_languages(hedged: str) -> None:
    question = "A turtle crawls 3 feet a second. How many feet does it crawl in 40 seconds?"
    assert read_answer(hedged, question).status != "read"


def test_one_counts_only_the_asked_thing() -> None:
    question = "Frank has 300 shoes and gives away 180. How many shoes will he have?"
    reply = "He'll have 300 − 180 = 120 shoes. That's still a lot of shoes for one firefighter! 👟"
    assert read_answer(reply, question).value == 120.0
    assert read_answer("So the pen costs one dollar.", "How much does the pen cost?").value == 1.0


@pytest.mark.parametrize(
    "reply",
    [
        "7 ÷ 20 = 0,35, es decir, el 35 % de todos los cachorros tiene manchas.",
        "7 ÷ 20 = 0.35, that is, 35% of all the puppies have spots.",
    ],
)
def test_a_fraction_restated_as_a_percent(reply: str) -> None:
    question = "7 of 20 puppies have spots. What percentage of the puppies have spots?"
    assert read_answer(reply, question).value == 35.0


def test_short_by_answers_how_much_more_is_needed() -> None:
    question = "Jayden has $115 and the camera costs $200. How much more does Jayden need?"
    reply = "He is still short by $200 - $115 = $85. Jayden needs $85 more to buy the camera."
    assert read_answer(reply, question).value == 85.0
    loss = "How much money does Jayden have after buying the camera?"
    assert read_answer("He is short by $200 - $115 = $85.", loss).status != "read"


def test_endergebnis_is_a_final_answer_line() -> None:
    question = "She earns $1,150 a week for 50 weeks. What is her annual salary?"
    reply = (
        "Zusammen 1.150 $ pro Woche, mal 50 Wochen:\n1.150 × 50 = 57.500\n\nEndergebnis: 57.500 $"
    )
    assert read_answer(reply, question).value == 57500.0


def test_a_leaving_clause_concludes_and_a_remark_after_it_is_read_past() -> None:
    question = "60 elves: a third quit, then 10 more quit. How many elves are left?"
    reply = (
        "A third of 60 is 20, so 40 are left. Then 10 more walk out, leaving Nissa with 30 "
        "elves. Rough season at the North Pole 🎄"
    )
    assert read_answer(reply, question).value == 30.0


def test_a_sanity_check_after_the_answer_does_not_change_it() -> None:
    question = "Blueberry cubes are 5 times the strawberry ones less 4; 116 in all. How many?"
    reply = (
        "s + (5s − 4) = 116, so s = 20.\n\nSo Mary makes 5 × 20 − 4 = 96 blueberry cubes."
        "\n\nAs a sanity check, 96 blueberry plus 20 strawberry brings us back to the 116 total."
    )
    assert read_answer(reply, question).value == 96.0


def test_inline_latex_math_is_no_money() -> None:
    question = (
        "He learns a recipe every 1.5 hours over 48 hours of class. How many recipes does he learn?"
    )
    reply = "He is in class $8 \\times 6 = 48$ hours, so he learns $48 \\div 1.5 = 32$ recipes."
    assert read_answer(reply, question).value == 32.0
    money = "How much does he pay?"
    assert read_answer("He pays $5 and $10, so $15 in all.", money).value == 15.0


def test_a_unit_abbreviation_is_its_unit() -> None:
    """One quantity in two units ("2,600 g, or 2.6 kg"), read in the unit asked for."""
    question = "Each bar weighs 40 g. How much does the bag weigh, in grams?"
    reply = (
        "- Bars: 25 × 40 g = 1,000 g\n- Apples: 80 × 20 g = 1,600 g\n\n"
        "**Total: 2,600 g**, or 2.6 kg."
    )
    assert read_answer(reply, question).value == 2600.0
    in_kilograms = question.replace("in grams", "in kilograms")
    assert read_answer(reply, in_kilograms).value == 2.6


PENS = "Tom had 20 pens and bought 10 more. How many pens does he have?"


@pytest.mark.parametrize(
    "reply",
    [
        "He'll have **30 pens**. Wait, I missed one step.",  # was read 1
        "He'll have 30 pens. Wait, I missed two steps.",  # was read 2
        "That gives 30 pens. Let me reconsider the second step, though.",
        "He has 30 pens. Never mind, that's incomplete.",
        "He has 30 pens. I'm not 100% sure I set it up correctly.",  # was read 100
    ],
)
def test_a_withdrawal_that_counts_what_it_missed_is_no_value(reply: str) -> None:
    assert read_answer(reply, PENS).status == "unreadable"


def test_certainty_as_a_percentage_is_no_quantity() -> None:
    assert read_answer("He has 30 pens. I'm 100% sure!", PENS).value == 30.0


@pytest.mark.parametrize(
    "remark",
    [
        "Hope this helps with your 3rd grade homework!",
        "Have a great 1st day back at school! 🎒",
    ],
)
def test_an_ordinal_in_a_remark_counts_nothing(remark: str) -> None:
    reading = read_answer(f"Alyana is 6, so Anne is 8 years old. {remark}", "How old is Anne?")
    assert reading.value == 8.0  # was read 3 and 1


@pytest.mark.parametrize(
    "reply",
    ["Total legs = 20 + 8 + 20 = 4", "**Answer:** 1360 − 142 = 12", "Left: 200 − 93 − 39 + 6 = 7"],
)
def test_a_reply_cut_off_inside_its_last_result_is_unreadable(reply: str) -> None:
    reading = read_answer(reply, "How many?")
    assert reading.status == "unreadable" and "cut off" in (reading.reason or "")


def test_a_whole_result_or_a_floored_one_is_no_cut() -> None:
    assert read_answer("Left: 200 − 93 − 39 + 6 = 74", "How many?").value == 74.0
    assert "cut off" not in (read_answer("Boxes: 50 ÷ 3 = 16", "How many?").reason or "")


def test_a_number_after_week_or_day_names_it_and_an_unsettled_grouping_reads_nothing() -> None:
    """A Dutch reply (a language the readers do not know, so "14.000" has two readings) was
    read 4, the number of the week."""
    question = "Boris makes 8,000 bars in week 1 and 36,000 in weeks 1-3. How much in week 4?"
    reply = "Samen: 36.000 repen\n\nIn week 4 produceert Boris 50.000 − 36.000 = 14.000 repen."
    assert read_answer(reply, question).value != 4.0
    assert read_answer("In week 4 he makes 14,000 bars.", question).value == 14000.0


def test_a_value_restated_in_other_units_after_the_answer_is_read_past() -> None:
    question = (
        "He bought 50 watermelons for $80 and sold them at 25% profit. How much was each sold?"
    )
    reply = (
        "Revenue: $80 × 1.25 = $100, so $100 ÷ 50 = $2 per watermelon.\n\nIn cents, that's 200¢."
    )
    assert read_answer(reply, question).value == 2.0  # was read 200
    in_unit = read_answer("The trip takes 2 hours. That's 120 minutes.", "How many minutes?")
    assert in_unit.value == 120.0  # the restatement is in the asked unit: the answer


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("The answer is 17 = 54 - 37.", 17.0),  # "Answer: 17 = 54 − 37" was read 54
        ("#### 17 = 54 - 37", 17.0),
        ("<think>8/16 = \\boxed{0.5}, so 15 gallons</think>\n\nShe drinks 15 gallons.", 15.0),
        ("<think>x = \\boxed{7}</think>\nDaisy bought 2 pounds of carrots.", 2.0),  # was 7
        ("Ответ: 16.\nПроверка: 16 × 6 = 96.", 16.0),  # was read 96
        ("**Cevap: 16**\n\nToplam 6 × 16 = 96", 16.0),
        ("उत्तर: 1000 डॉलर", 1000.0),
        ("Đáp án: 16", 16.0),
        ("答え：17\n訂正：甥は今10歳です。", 10.0),  # a correction: was read 17
        ("Он потратил 4 с половиной часа.", 4.5),  # halves in words: each was read 4
        ("她花了4个半小时。", 4.5),
        ("Ella pasó 4 horas y media.", 4.5),
        ("4시간 반 걸렸습니다.", 4.5),
        ("Antwort: 7’300 Flaschen", 7300.0),  # was read 7
        ("Antwort: 27 = 3³", 27.0),  # was read 33
        ("The area is 25 m².", 25.0),
        ("Прибыль составила 10 тысяч долларов.", 10000.0),  # was read 10
        ("Antwort: 10 Tausend", 10000.0),  # was read 10100
        ("Risposta: 10 mila dollari", 10000.0),
    ],
)
def test_more_languages_and_forms(reply: str, value: float) -> None:
    reading = read_answer(reply, "How many?")
    assert (reading.status, reading.value) == ("read", value)


@pytest.mark.parametrize(
    "reply",
    [
        "<think>Let me compute 3 + 4 = 7",  # cut off while thinking
        "Я не уверен, но, кажется, ответ 40",
        "Ответ: 40 (или 38)",
        "答え：40人（または38人）",
        "Jawaban: 40 (atau 38)",
        "The answer is 40 (maybe 38).",
        "Antwort: 17\nMoment, das ist falsch… Ich muss es neu berechnen.",
        "Final Answer: 17 18",  # two numbers side by side
        "Answer: 17 = 54 − 37",  # the grammar reads 17, math-verify 54: the readers disagree
    ],
)
def test_doubt_alternatives_and_withdrawals_in_more_languages_read_nothing(reply: str) -> None:
    assert read_answer(reply, "How many?").status != "read"


@pytest.mark.parametrize(
    "word",
    ["Tausend", "mille", "mila", "тысяч", "тысячи", "тыс", "tysięcy", "bin", "ribu", "duizend"],
)
def test_every_word_for_thousand_multiplies(word: str) -> None:
    """Each word the number pattern takes as a multiplier has a factor (none raises)."""
    assert read_answer(f"Answer: 10 {word}", "How many?").value == 10000.0


def test_a_remark_restating_a_marked_result_as_a_rate_leaves_two_values() -> None:
    question = "5 dogs and 4 birds and 8 other animals. How many legs are there in total?"
    reply = (
        "- Dogs: 5 × 4 = 20\n- Birds: 4 × 2 = 8\n\n**Total: 48 legs**\n\n"
        "That's an average of 2.8 legs per animal."
    )
    assert read_answer(reply, question).status == "ambiguous"  # was read 2.8
    plain = "**Sold:** 3 × 5 = 15\n\nThat's 9 muffins left."
    assert read_answer(plain, "How many muffins are left?").value == 9.0


def test_a_correction_in_brackets_and_a_list_mark_after_a_label() -> None:
    assert read_answer("Answer: 41 (wait, 42).", "How many?").value == 42.0  # was read 41
    assert read_answer("Answer:\n1. 50 shells", "How many?").value != 1.0  # was read 1


@pytest.mark.parametrize("reply", ["La respuesta es 90 centavos.", "La risposta è 90 centesimi."])
def test_a_cent_in_another_language_is_a_cent(reply: str) -> None:
    assert read_answer(reply, "How many cents?").value == 90.0  # was read 90.01 and 90,100


def test_a_remark_about_the_explanation_counts_nothing() -> None:
    reply = "Charlie has 17 stickers left.\n\nI hope these 5 steps make it clear!"
    assert read_answer(reply, "How many stickers?").value == 17.0  # was read 5


def test_a_box_followed_by_a_closing_sentence_with_another_value() -> None:
    question = "How many slices did they eat?"
    reply = "Jake ate 10 − 3 = \\boxed{7} slices.\nAll together they ate 10 + 7 + 14 = 31 slices."
    assert read_answer(reply, question).status == "ambiguous"  # was read 7
    given = "3000 ÷ 1000 = 3.\n\n$$\\boxed{3}$$\n\nHe'll need one tune-up at each 1,000-mile mark."
    assert read_answer(given, "He tunes up every 1000 miles. How many tune-ups?").value == 3.0
