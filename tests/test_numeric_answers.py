"""The classroom grader reads the number an answer gives however a model typesets it."""

from __future__ import annotations

import pytest

from personasim.environments import extract_final_answer, extract_last_number
from personasim.environments.numeric_answers import read_number, words_to_number

CASES = [
    # (response, number for every strategy, number for the no-persona baseline)
    ("Final Answer: \\boxed{85}", 85, 85),
    ("So $\\boxed{-5}$ it is.", -5, -5),
    ("The final answer is 42.", 42, 42),
    ("The final answer is $\\boxed{12}$.", 12, 12),
    ("Final Answer: \u22125", -5, -5),  # Unicode minus
    ("It fell 3 degrees, to \u22127.", None, -7),
    ("Final Answer: $-5", -5, -5),
    ("Final Answer: -$5", -5, -5),
    ("**Final Answer:** ~18", 18, 18),
    ("Final Answer: \u224818 cookies", 18, 18),
    ("Final Answer: twelve", 12, 12),
    ("Final Answer: forty-two apples", 42, 42),
    ("The final answer is one hundred and five.", 105, 105),
    ("Final Answer: minus three", -3, -3),
    ("Final Answer: 4 x 5 = 20", 20, 20),  # the result, not the first factor
    ("Final Answer: 4 \u00d7 5 = 20 apples.", 20, 20),
    ("Final Answer: 1,5", 1.5, 1.5),  # a decimal comma: no thousands grouping writes 1,5
    ("Final Answer: 1,500", 1500, 1500),  # thousands
    ("Final Answer: 1,234,567.5", 1234567.5, 1234567.5),
    ("Final Answer: 3, I hope that's right", 3, 3),
    ("Final Answer: The total is 12", 12, 12),
    ("Numbers from 5\u20137 then 9. So the answer is 42.", None, 42),  # en dash: a range
    ("So the answer is 42. That was a fun one.", None, 42),  # words only after a marker
    ("I cannot tell.", None, None),
]


@pytest.mark.parametrize(("response", "persona", "baseline"), CASES)
def test_every_strategy_reads_the_answer_as_written(
    response: str, persona: float | None, baseline: float | None
) -> None:
    assert extract_final_answer(response) == persona
    assert extract_last_number(response) == baseline


def test_numbers_and_words() -> None:
    assert read_number("about $1,450.25 total") == 1450.25
    assert read_number("10-3") == 10  # an expression, not a negative 3
    assert read_number("no digits") is None
    assert words_to_number("twenty one") == 21
    assert words_to_number("three thousand two hundred") == 3200
    assert words_to_number("someone") is None
