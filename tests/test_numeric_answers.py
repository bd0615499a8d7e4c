"""The classroom's answer reader reads only explicit final statements, and says when it cannot.

Each closing below is read as a careful grader reads it: a value where one is stated without
doubt, "unreadable" where nothing is stated (or the result is withdrawn), "ambiguous" where two
answers are. The labelled corpus (tests/data/gsm8k_replies, split "dev": it was used to tune
the reader, so its figures are development figures) is printed with its counts.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from personasim.environments import follows_format, read_answer
from personasim.environments.classroom.numeric_answers import (
    READER_NAME,
    grammar_reading,
    math_verify_reading,
    read_number,
)
from personasim.scenarios.classroom.answers import parse_refinement
from personasim.simulation import independent_reader

CORPUS = Path(__file__).parent / "data" / "gsm8k_replies" / "replies.jsonl"
MAX_DEV_WRONG = 0.01
"""At most 1 % of the dev replies read as a value other than the label."""

READ = [
    # explicit statements, typography
    ("Final Answer: 42", 42),
    ("Answer:42", 42),
    ("**Answer** \u2014 42", 42),  # an em dash is punctuation, not a minus
    ("The answer is \u2013 as computed \u2013 42.", 42),
    ("Final Answer: \u22125", -5),  # a minus sign attached to the number
    ("Final Answer: $-5", -5),
    ("Final Answer: -$5", -5),
    ("The answer is minus 8 degrees.", -8),
    ("The final answer is **18**.", 18),
    ("**Final Answer: 42**", 42),
    ("### Final Answer\n18", 18),
    ("| Step | Value |\n|---|---|\n| **Answer** | 42 |", 42),
    ("So the total is $\\boxed{42}$.", 42),
    ("\\boxed{\\frac{3}{4}}", 0.75),
    ("She sells 9 eggs: 9 * 2 = 18.\n#### 18", 18),
    ("The answer is $1,234.", 1234),
    ("$1,234 is the answer.", 1234),
    ("Final Answer: 1,234,567.5", 1234567.5),
    ("Final Answer: 1 1/2 cups", 1.5),
    ("Final Answer: 3/4", 0.75),
    ("Final answer: $1.5 million", 1_500_000),
    ("Answer: 25%", 25),  # a percentage reads its number, as GSM8K writes its golds
    ("Final Answer: forty-two apples", 42),
    ("Final Answer: two", 2),
    # a statement's whole clause
    ("Answer: 6 \u00d7 7 = 42", 42),
    ("Final Answer: 20 hours + 20 hours = 40 hours", 40),
    ("Final Answer: After selling 9 eggs at $2 each, Janet makes $18.", 18),
    ("Final Answer: 18 eggs, since 9 \u00d7 2 = 18", 18),
    ("The answer to the question is 26 because after 3 years it grows.", 26),
    ("Therefore, the answer (arabic numerals) is 70.", 70),
    # asides, checks and breakdowns after the answer never override it
    ("**Final Answer:** 42\n\nI checked step 2 twice (it was 12).", 42),
    ("So the answer is 42 apples left (50 \u2212 8).", 42),
    ("The answer is 42 apples left. Check: 42 + 8 = 50 \u2713", 42),
    ('```json\n{"reasoning": "16 - 3 - 4 = 9", "answer": "$2,400"}\n```\n'
     "The key steps are: 1 \u2026 4.", 2400),
    ('{"reasoning": "9 eggs at $2", "final_answer": 18}', 18),
    ("Janet makes **$18** per day.\n\nHere's the breakdown:\n1. 16 - 3 - 4 = 9\n"
     "2. 9 \u00d7 $2 = $18", 18),
    ("My first answer was 16. The answer is 18.", 18),
    # self-corrections (the shared rule: a correction marker between)
    ("Final Answer: 41\n\nWait, it is actually 42.", 42),
    ("Final Answer: 10 ... wait, no. Final Answer: 12", 12),
    # other languages, locale separators
    ("La r\u00e9ponse est 18.\n\nV\u00e9rification : 16 \u2212 3 \u2212 4 = 9, "
     "9 \u00d7 2 = 18.", 18),
    ("\u6700\u7ec8\u7b54\u6848\uff1a18\n\n\u9a8c\u8bc1\uff1a16 \u2212 3 \u2212 4 = 9", 18),
    ("La respuesta es dieciocho.", 18),
    ("Die Antwort ist 18 Euro.", 18),
    ("Resposta final: 18", 18),
    ("R\u00e9ponse finale : 1 234,50 $", 1234.5),
    ("La r\u00e9ponse est 24 500 \u20ac.", 24500),
    ("Die Antwort ist 1.234,50 Euro.", 1234.5),
    ("Final Answer: 1,234.50", 1234.5),
    ("Final Answer: 1,500", 1500),  # an English reply groups thousands with commas
    ("Respuesta: 1.500 euros", 1500),  # a Spanish one with points
    ("Final Answer: 1,5", 1.5),  # no thousands grouping writes 1,5
    ("**Jahresgehalt: 57.500 $**", 57500),  # money has cents, never three decimals
    ("Final Answer: 7万美元", 70000),  # 万: ten thousand
    # a JSON object the json module refuses: unescaped newlines, a missing comma, a fence
    # not closed, its start cut off; the value of its answer field
    ('```json\n{"reasoning": "5 hours\n* 2 = 10\n80 slices * $0.50 = $40.00",\n'
     '"answer": "40.00"\n}\n```', 40),
    ('{"reasoning": "m + m = 20, so 40."\n    "answer": "40"\n}\n```', 40),
    ('easoning": "Ronnie has $5 - $3 = $2 left.",\n    "answer": "$5.00"\n}', 5),
    ('{"reasoning": "40% of the 20% is 0.08", "answer": "0.40 * 0.20 = 0.08, or 8%"}', 8),
    ('{"reasoning": "40% × 20% = 8% of the river", "answer": "8"}', 8),  # not 0.08
    ('{"reasoning": "...", "answer": "Retirement: $1200.00\nCar: $480.00\n'
     'So, Greta has $720.00 left to spend."}', 720),  # a paragraph: its closing sentence
    ('```json\n{"reasoning": "3 * 1800 = 5400", "answer": "1100"}\n```\n\n\nQuestion:\n\n'
     'Emily buys 5 boxes.\n```json\n{"reasoning": "...", "answer": "27750"}\n```', 1100),
    # the closing sentence: a reply with no final statement, whose last sentence states one
    # quantity after its working (asides removed; an equation by its result)
    ("So she has 42 left (50 − 8).", 42),
    ("Janet makes 9 * 2 = $18 every day.", 18),
    ("After breakfast and baking she has 9 eggs left, so she earns $18 per day (that works "
     "out to $126 over a full week, if you were curious).", 18),
    ("It takes two bolts of blue fiber and one bolt of white fiber, so three bolts in total.", 3),
    ("James runs a total of 540 m (0.54 km) every week.", 540),
    ("5 × 8 = 40 pieces; 40 − 14 = 26.\n\nThe guests took 26 pieces.", 26),
    ("Regular: $400\nOvertime: $60\n\n$400 + $60 = $460. **Her earnings this week are $460.**",
     460),
    ("Teaching: $35,000\nCoaching: $22,500\n\n**Annual salary: $57,500**", 57500),
    ("It was -7 degrees Celsius at midnight.", -7),
    ("**5. Solve:** 2x/3 − 2 = 10 → x = 18.\n\n**Therefore, Melanie started with 18 "
     "vacuum cleaners.**", 18),
    ("Juntas, as três cidades têm 260 ovelhas.", 260),  # "as três": the cities
    ("Seattle : 20, Toulouse : 160. Au total, ils ont deux cent soixante moutons.", 260),
    ("Korrektur: 240 / 3 = 80. Die durchschnittliche Schätzung ist 80.", 80),
    ("总成本 13 万美元，所以利润为 7万"
     "美元。", 70000),
    ("16 - 3 - 4 = 9 eggs. At $2 each, she makes $18 per day.", 18),
    # self-corrections in other languages; a concluding box built on the earlier ones
    ("答案：24 块。\n\n等一下，5 × 8 = 40，"
     "40 − 14 = 26，所以正确答案是 26 块。", 26),
    ("Réponse : 8 ans. En fait, non, 12 ans.", 12),
    ("Respuesta: 5. Espera, es 6.", 6),
    ("Antwort: 20 Tassen. Warte, es sind 22 Tassen.", 22),
    ("He paid $400 * 0.2 = \\boxed{$80}. Then 3 * $50 = \\boxed{$150}.\n\n"
     "Therefore, Mark paid a total of $80 + $150 = \\boxed{$230}.", 230),
    ("Answer: 18. Sorry for the long explanation!", 18),  # a courtesy takes nothing back
    ("It was 7 degrees below zero at midnight.", -7),
    ('{"reasoning": "...", "answer": "16 - 3 - 4 = 9 eggs; 9 * 2 = $18"}', 18),
]  # fmt: skip

UNREADABLE = [
    "I cannot tell.",
    "Answer:\nHere's the breakdown: 1. 16 eggs",
    "Give the final answer as a number, following 'Final Answer: {number}'. I got 7",
    "The answer is 2 \u00d7 (a + b) = 4(b), then add 6",  # algebra, not a number
    "The answer is -2. But this doesn't make sense, since she cannot have negative eggs. "
    "Please provide corrected data.",  # a withdrawn result
    "Your answer: 25",  # someone else's answer
    # no closing sentence: cut off, a step of the working, a restated operand, a condition,
    # doubt, code never run, a number alone
    "Total driven back: 15 + 120 = 135 miles.\nDistance from home: 180 \u2212",
    "A velocidade pulando \u00e9 3 mph, ent\u00e3o correndo \u00e9 6 mph e caminhando",
    "She makes $18 per day",  # no full stop: perhaps cut off
    "To solve this, first work out 3 eggs a day for 28 days, then divide by 12.",
    "20 \u00f7 4 = 5. 5 \u00d7 12 = 60 eggs. Each box holds 12 eggs.",
    "I think she makes $18 per day.",
    "The last meal is 20 cups... Hmm, hold on. I'd rather not commit to a number.",
    "```python\neggs = 16 - 3 - 4\nprint(eggs * 2)\n```",
    "(1) (2).\n(3). 4.\n(5). 6.",
    "\u9898\u76ee\u4e2d\u201c\u591a 2/5 \u500d\u201d\u7684\u8bf4\u6cd5\u4e0d\u591f\u6e05"
    "\u695a\uff0c\u65e0\u6cd5\u7ed9\u51fa\u786e\u5b9a\u7684\u7b54\u6848\u3002",
    # an answer taken back: a correction with no value, doubt after it
    "Answer: 694. Actually, scratch that \u2014 I misread a price. Let me recompute it.",
    "Answer: 20. I'm not sure whether the 3 cups count the morning meal.",
    "Answer: 20. I may have misread the question, though.",
]

AMBIGUOUS = [
    "The answer is 4 blue shoe boxes and 6 red shoe boxes.",
    "The answer is 18 or 20.",
    "#### 1500\nThe final answer is 1,600",  # two statements, no correction
    "$\\boxed{1.000}$",  # no number or word of the reply says which mark is decimal
    # alternatives and hedges after the final statement
    "He breaks even after 12 years, so the answer is 12 years (or 13, if you count the first "
    "year in which he makes a profit).",
    "R\u00e9ponse : 8 ans. Ou bien 12 ans, si \u00ab deux fois \u00bb veut dire trois fois.",
    "Antwort: 20 Tassen.\n\nWenn man die 3 Tassen pro Mahlzeit rechnet, sind es 140 Tassen. "
    "Beide Antworten sind m\u00f6glich.",
    "Answer: 20. However, if you count breakfast, it's 26.",
    "Boots = 99 \u2212 5 = 94.\n\n**Answer: $94**\n\nSo the boots are $104 and the heels are $99.",
    # ranges, bounds and approximations; several quantities; a value in brackets
    "Answer: 12-13 years",
    "The answer is 12 to 13 years.",
    "Final Answer: at most 2 boxes",
    "The answer is probably 18.",
    "Answer: 8 years \u2014 or 12, depending on the reading.",
    "Answer: 12 years. Some would say 13.",
    "He will need to pay roughly $64, give or take a little depending on the discount.",
    "The average guess comes out somewhere around 80.",
    "So the house is now worth $325,000 and the profit is $195,000.",
    "Therefore she makes $18 each day, which is $126 per week.",
    "Seattle has 20 sheep, Charleston has 80, and Toulouse has 160.",
    '```json\n{"reasoning": "(11/8) * $72 - $72", "answer": "($79.50)"}\n```',
]


@pytest.mark.parametrize(("reply", "value"), READ)
def test_a_stated_answer_is_read(reply: str, value: float) -> None:
    reading = read_answer(reply)
    assert reading.status == "read", reading
    assert reading.value == pytest.approx(value)
    assert reading.by.startswith("grammar:")  # every reading names its rule


@pytest.mark.parametrize("reply", UNREADABLE)
def test_no_statement_is_unreadable(reply: str) -> None:
    reading = read_answer(reply)
    assert (reading.status, reading.value) == ("unreadable", None), reading
    assert reading.reason


@pytest.mark.parametrize("reply", AMBIGUOUS)
def test_two_answers_are_ambiguous(reply: str) -> None:
    reading = read_answer(reply)
    assert (reading.status, reading.value) == ("ambiguous", None), reading
    assert reading.reason


def test_a_withdrawal_names_itself_and_a_closing_courtesy_is_none() -> None:
    reading = grammar_reading("The answer is -2. This doesn't make sense, so I can't be sure.")
    assert reading.by == "grammar:withdrawn" and "make sense" in (reading.reason or "")
    assert read_answer("Final Answer: 42. Please check my work if you like!").value == 42


def test_math_verify_reads_only_what_it_anchors() -> None:
    """The second reader abstains without an anchor (its default reads the last number), and
    where the reply writes numbers it misreads (decimal commas, multiplier words)."""
    assert not math_verify_reading("So she has 42 left (50 \u2212 8).").ok
    assert math_verify_reading("Final Answer: 42").value == 42
    assert math_verify_reading("The answer is $\\boxed{\\frac{3}{4}}$").value == 0.75
    assert not math_verify_reading("R\u00e9ponse finale : 1 234,50 $").ok
    assert not math_verify_reading("Final answer: $1.5 million").ok
    assert independent_reader(READER_NAME) is math_verify_reading


def test_the_readers_disagreeing_is_ambiguous() -> None:
    """The grammar reads the equation's result, math-verify the sum's first term."""
    reply = "The final answer will be 10 (total) + 1 * 6 (two people), which equals 8."
    reading = read_answer(reply)
    assert reading.status == "ambiguous" and "disagree" in (reading.reason or "")
    assert set(reading.candidates) == {8.0, 10.0}


def test_math_verify_runs_off_the_main_thread() -> None:
    """No signal-based timeout: readers may run in a worker thread."""
    found: list[Any] = []
    worker = threading.Thread(target=lambda: found.append(read_answer("Final Answer: 42")))
    worker.start()
    worker.join(30)
    assert found and found[0].value == 42 and "math-verify" in found[0].by


def test_numbers() -> None:
    assert read_number("about $1,450.25 total") == 1450.25
    assert read_number("10-3") == 10  # an expression, not a negative 3
    assert read_number("1,000", decimal_mark=None) is None  # grouping or decimals: unknown
    assert read_number("no digits") is None


@pytest.mark.parametrize(
    ("reply", "compliant"),
    [
        ("So 18.\nFinal Answer: 18", True),
        ("So 18. Final Answer: 1,234.5.", True),
        ("Final Answer: -7", True),
        ("**Final Answer:** 18", False),  # markdown is not the asked format
        ("Final Answer: $18", False),
        ("Final Answer: 18 eggs", False),
        ("The answer is 18.", False),
        ("Final Answer: 18\nI hope this helps!", False),  # not the last sentence
        ("final answer: 18", False),
    ],
)
def test_format_compliance_is_the_papers_exact_closing(reply: str, compliant: bool) -> None:
    assert follows_format(reply) is compliant


def corpus() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def replied(row: dict[str, Any]) -> str:
    """The graded text: a self-refinement reply through its revised response."""
    text = row["reply"]
    return parse_refinement(text)["revised_response"] if row["prompt"] == "refine" else text


def outcome(label: float | str, text: str) -> str:
    """right / wrong / unreadable / ambiguous of the reader against a person's label ("none":
    nothing stated, "ambiguous": two answers, else the number stated)."""
    reading = read_answer(text)
    if not reading.ok:
        return reading.status
    if isinstance(label, str):
        return "wrong"
    return "right" if reading.value == pytest.approx(label, abs=1e-6) else "wrong"


def test_reader_on_the_dev_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    """Dev figures (tuned on: not a measurement of unseen replies): right, wrong, unreadable,
    ambiguous over all rows, and over the rows whose label is a number; how often the two
    readers disagree. Wrong reads stay at most 1 %."""
    rows = corpus()
    assert len(rows) >= 200 and all(r["split"] == "dev" for r in rows)
    outcomes = {r["id"]: outcome(r["label"], replied(r)) for r in rows}
    counts = Counter(outcomes.values())
    stated = Counter(outcomes[r["id"]] for r in rows if not isinstance(r["label"], str))
    disagree = sum(_readers_disagree(replied(r)) for r in rows)
    expected = {
        r["id"]: "unreadable" if r["label"] == "none" else "ambiguous"
        for r in rows
        if isinstance(r["label"], str)
    }
    misread_status = [i for i, status in expected.items() if outcomes[i] != status]
    with capsys.disabled():
        print(f"\ndev corpus ({len(rows)} replies): {dict(counts)}")
        print(f"  rows labelled with a number ({sum(stated.values())}): {dict(stated)}")
        print(f"  grammar and math-verify read different values: {disagree}")
        print(f"  unreadable/ambiguous labels read otherwise: {misread_status}")
    assert counts["wrong"] <= MAX_DEV_WRONG * len(rows)
    assert stated["right"] >= 0.9 * sum(stated.values())


def _readers_disagree(text: str) -> bool:
    own, library = grammar_reading(text), math_verify_reading(text)
    return own.ok and library.ok and own.value != pytest.approx(library.value)
