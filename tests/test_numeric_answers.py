"""The classroom's one answer reader reads what a careful grader reads, however a model closes.

Measured on a labelled corpus of real replies (tests/data/gsm8k_replies, labels written by a
person before the reader was changed) and on the closing formats one by one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from personasim.environments import follows_format, read_answer
from personasim.environments.classroom.numeric_answers import read_number, words_to_number
from personasim.scenarios.classroom.answers import parse_refinement

CORPUS = Path(__file__).parent / "data" / "gsm8k_replies" / "replies.jsonl"
TARGET_ACCURACY = 0.99
"""Issue 24's target, met (294 of 296, a development figure: docs/classroom.md)."""
KNOWN_DISAGREEMENTS = {"smollm2-111", "smollm2-149"}
"""SmolLM2 replies the reader misreads, each listed with its reason in docs/classroom.md."""

CASES = [
    # (response, number read, how it was read)
    ("Final Answer: \\boxed{85}", 85, "explicit"),
    ("So $\\boxed{-5}$ it is.", -5, "explicit"),
    ("The final answer is 42.", 42, "explicit"),
    ("The final answer is $\\boxed{12}$.", 12, "explicit"),
    ("Final Answer: \u22125", -5, "explicit"),  # Unicode minus
    ("It fell 3 degrees, to \u22127.", -7, "last_number"),
    ("Final Answer: $-5", -5, "explicit"),
    ("Final Answer: -$5", -5, "explicit"),
    ("**Final Answer:** ~18", 18, "explicit"),
    ("Final Answer: \u224818 cookies", 18, "explicit"),
    ("Final Answer: twelve", 12, "explicit"),
    ("Final Answer: forty-two apples", 42, "explicit"),
    ("The final answer is one hundred and five.", 105, "explicit"),
    ("Final Answer: minus three", -3, "explicit"),
    ("Final Answer: 4 x 5 = 20", 20, "explicit"),  # the result, not the first factor
    ("Final Answer: 4 \u00d7 5 = 20 apples.", 20, "explicit"),
    ("Final Answer: 1,5", 1.5, "explicit"),  # a decimal comma: no thousands grouping writes 1,5
    ("Final Answer: 1,500", 1500, "explicit"),  # thousands
    ("Final Answer: 1,234,567.5", 1234567.5, "explicit"),
    ("Final Answer: 3, I hope that's right", 3, "explicit"),
    ("Final Answer: The total is 12", 12, "explicit"),
    ("Final Answer: 3/4", 0.75, "explicit"),
    ("Numbers from 5\u20137 then 9. So the answer is 42.", 42, "explicit"),  # en dash: a range
    ("So the answer is 42. That was a fun one.", 42, "explicit"),  # words only after a marker
    # the closings of issue 24, each read by the same rule for baseline and personas
    ("Answer:42", 42, "explicit"),
    ("Answer : 42", 42, "explicit"),
    ("Answer: 42. Check: 6*7", 42, "explicit"),  # the check does not override it
    ("**Final Answer:** 42\n\nI checked step 2 twice (it was 12).", 42, "explicit"),
    ("So it is $\\boxed{42}$", 42, "explicit"),
    ("6 * 7 = 42\n#### 42", 42, "explicit"),
    ("The answer is 1,234 dollars.", 1234, "explicit"),
    ("The answer is $1,234.", 1234, "explicit"),
    ("### Final Answer\n18", 18, "explicit"),
    ("**Final Answer**: 42", 42, "explicit"),
    ("Therefore, the answer (arabic numerals) is 70.", 70, "explicit"),
    ("Final Answer: 18\nFinal Answer: 18.00", 18, "explicit"),  # the same number twice
    ("My first answer was 16. The answer is 18.", 18, "explicit"),  # past tense: not a statement
    # rules the labelled corpus asked for (tests/data/gsm8k_replies)
    ("Your answer is 26. So the final answer would be 14/2 - 2 = 5", 5, "explicit"),
    ("The original answer is 10 hours. That is 18 days.", 18, "last_number"),
    ("Here's my answer:\n1. 3 x 2 = 6 games\nSo answer: 6+6=12 games", 12, "explicit"),
    ("The answer to the question is 26 because after 3 years it grows.", 26, "explicit"),
    ("We need the answer of 48 days (since she draws 150 a day).", 48, "explicit"),
    ("Final Answer: 20 hours + 20 hours = 40 hours", 40, "explicit"),
    ("The final answer will be 10 (total) + 1 * 6 (two people), which equals 8.", 8, "explicit"),
    ("The answer is 2 × (a + b) = 4(b), then add 6", 6, "last_number"),  # algebra
    ("The answer is actually 3 more than 50% of it, so 95", 95, "last_number"),  # a relation
    ('The answer would be "Two car prices that are $10 each"', 10, "last_number"),
    ("So we have 1987 chairs in two 4-week months.", 1987, "last_number"),  # a modifier
    ("So, to answer the original question, you'll need 928 oz in 5 days.", 928, "explicit"),
    ("To answer your question: 12 cakes, after 3 trips.", 12, "explicit"),
    ("2. Divide by 2 to get the answer: 2 * 7 = 14\n3. Add 3", 3, "last_number"),  # a step's goal
    ("Add them to get the final answer: 14. Check: 7 * 2", 14, "explicit"),  # a statement
    ("That is 18, which means it would take 18 days for 5 people.", 18, "last_number"),
    ("It would take 4 hours for 2 people. So 8 hours for 1 person.", 8, "last_number"),
    ("Each of the 3 boxes costs $4.", 4, "last_number"),  # no "for": the last number
    # two different explicit answers: ambiguous, no number
    ("Final Answer: 10 ... wait, no. Final Answer: 12", None, "ambiguous"),
    ("The answer is 18 or 20.", None, "ambiguous"),
    ("#### 1500\nThe final answer is 1,600", None, "ambiguous"),
    # no statement: the last number; none at all: nothing
    ("3 + 4 = 7, and 7 x 2 = 14.", 14, "last_number"),
    ("Janet makes 9 * 2 = $18 every day.", 18, "last_number"),
    ("Give the final answer as a number, following 'Final Answer: {number}'. I got 7", 7,
     "last_number"),  # an echoed instruction is not a statement
    ("I cannot tell.", None, "none"),
]  # fmt: skip


@pytest.mark.parametrize(("response", "value", "reading"), CASES)
def test_one_reader_reads_every_closing_as_a_careful_grader(
    response: str, value: float | None, reading: str
) -> None:
    read = read_answer(response)
    assert (read.value, read.reading) == (value, reading)


def test_numbers_and_words() -> None:
    assert read_number("about $1,450.25 total") == 1450.25
    assert read_number("10-3") == 10  # an expression, not a negative 3
    assert read_number("no digits") is None
    assert words_to_number("twenty one") == 21
    assert words_to_number("three thousand two hundred") == 3200
    assert words_to_number("someone") is None


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


def reader_label(row: dict[str, Any]) -> float | str:
    """What the reader reads in a corpus reply: a number, "ambiguous" or "none"; a
    self-refinement reply through its revised response, as the scenario grades it."""
    text = row["reply"]
    if row["prompt"] == "refine":
        text = parse_refinement(text)["revised_response"]
    read = read_answer(text)
    return read.value if read.value is not None else read.reading


def agrees(label: float | str, read: float | str) -> bool:
    if isinstance(label, str) or isinstance(read, str):
        return label == read
    return math.isclose(label, read, abs_tol=1e-6)


def test_reader_on_the_labelled_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    """The reader's agreement with the person's labels on the corpus (≥ 200 replies of real
    models and hand-written closings), printed with every disagreement (listed in
    docs/classroom.md): issue 24's 99 %, and no disagreement beyond the known ones."""
    rows = corpus()
    assert len(rows) >= 200
    assert all(r["label"] is not None for r in rows), "every reply must be labelled"
    disagreements = [(r, reader_label(r)) for r in rows if not agrees(r["label"], reader_label(r))]
    accuracy = 1 - len(disagreements) / len(rows)
    by_source: dict[str, list[int]] = {}
    for row in rows:
        kind = row["id"].split("-")[0]
        tally = by_source.setdefault(kind, [0, 0])
        tally[0] += agrees(row["label"], reader_label(row))
        tally[1] += 1
    with capsys.disabled():
        parts = ", ".join(f"{k} {a}/{n}" for k, (a, n) in by_source.items())
        print(
            f"\nreader on the corpus: {accuracy:.3f} ({len(rows) - len(disagreements)}/"
            f"{len(rows)}; {parts})"
        )
        for row, read in disagreements:
            print(f"  disagrees: {row['id']} label {row['label']!r}, read {read!r}")
    assert {row["id"] for row, _ in disagreements} <= KNOWN_DISAGREEMENTS
    assert accuracy >= TARGET_ACCURACY
