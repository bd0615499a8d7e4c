"""Reading the number a free-text answer gives (seed 000's grader).

Models close an answer in many ways: "Final Answer: 12", "The final answer is $\\boxed{-5}$",
"**Final Answer:** ~18", "Final Answer: twelve", "Final Answer: 4 x 5 = 20". An answer is read
from its last explicit marker ("final answer", `\\boxed{}`; for the no-persona baseline also
"the answer is", then the last number), so a correct answer is never graded wrong for its
typography. Choices (docs/classroom.md, "Grading"):

- Unicode minus signs and dashes count as "-"; "$-5", "-$5", "~18", "≈18" are -5, -5, 18, 18.
- After a marker, an equation is read by its result: "4 x 5 = 20" is 20, not 4.
- Number words are read after a marker only ("Final Answer: forty-two"); in running text
  "one" is too often not a number ("a fun one").
- A comma followed by exactly three digits groups thousands ("1,500" is 1500, as GSM8K writes);
  a single comma followed by one or two digits is a decimal comma ("1,5" is 1.5): no thousands
  grouping can produce it, and lists are written with spaces ("1, 5" is two numbers).
"""

from __future__ import annotations

import re

__all__ = ["read_final_answer", "read_last_number", "read_number", "words_to_number"]

_DASHES = str.maketrans(dict.fromkeys("\u2212\u2012\u2013\u2014\ufe63\uff0d", "-"))

_NUMBER = re.compile(
    r"(?:(?<![\w)\]])(?P<sign>-)\s*)?(?:\\?\$\s*)?(?:(?P<sign2>-)\s*)?"
    r"(?P<body>\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])"  # 1,234.50: thousands commas
    r"|\d+,\d{1,2}(?![\d,])"  # 1,5: a decimal comma
    r"|\d+(?:\.\d+)?|\.\d+)"
)

_FINAL = re.compile(
    r"final\s+answer\**\s*(?:is|was|would\s+be|will\s+be|[:=\-])?\**\s*:?", re.IGNORECASE
)
_BOXED = re.compile(r"\\boxed\s*\{")
_ANSWER_IS = re.compile(r"\banswer\s+(?:is|=|:)\s*:?", re.IGNORECASE)

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_WORD = "|".join([*_UNITS, *_TENS, *_SCALES])
_WORDS = re.compile(
    rf"^(?P<neg>(?:minus|negative)\s+)?(?P<words>(?:{_WORD})\b(?:[\s-]+(?:and[\s-]+)?(?:{_WORD})\b)*)",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^[\s*_:{(\[$~≈]*(?:about|around|approximately|roughly)?\s*", re.IGNORECASE)


def read_number(token: str) -> float | None:
    """The first number in `token` (see the module's choices), or None."""
    match = _NUMBER.search(token.translate(_DASHES))
    return None if match is None else _value(match)


def _value(match: re.Match[str]) -> float:
    body = match["body"]
    if re.fullmatch(r"\d+,\d{1,2}", body):
        body = body.replace(",", ".")
    number = float(body.replace(",", ""))
    return -number if (match["sign"] or match["sign2"]) else number


def words_to_number(text: str) -> float | None:
    """Number words at the start of `text` ("forty-two", "one hundred and five"), or None."""
    match = _WORDS.match(text.strip())
    if match is None:
        return None
    total, current = 0, 0
    for word in re.split(r"[\s-]+", match["words"].lower()):
        if word in _UNITS:
            current += _UNITS.index(word)
        elif word in _TENS:
            current += 20 + 10 * _TENS.index(word)
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total, current = total + max(current, 1) * _SCALES[word], 0
    value = float(total + current)
    return -value if match["neg"] else value


def _segment_number(segment: str) -> float | None:
    """The number a marker introduces: an equation's result, a number, or number words."""
    clause = re.split(r"\n|(?<!\d)\.(?!\d)|\.\s", segment, maxsplit=1)[0]
    if "=" in clause:
        result = read_number(clause.rsplit("=", 1)[1])
        if result is not None:
            return result
    lead = _LEAD.sub("", segment.translate(_DASHES))
    if lead[:1].isalpha() and (words := words_to_number(lead)) is not None:
        return words
    return read_number(segment[:80])


def _marked(response: str, markers: tuple[re.Pattern[str], ...]) -> float | None:
    """The number of the last marker (of `markers`) that introduces one."""
    found = sorted((m.end(), m) for pattern in markers for m in pattern.finditer(response))
    for end, _ in reversed(found):
        number = _segment_number(response[end:])
        if number is not None:
            return number
    return None


def read_final_answer(response: str) -> float | None:
    """The number of the last "Final Answer" (":", "is", "=") or `\\boxed{}`, or None."""
    return _marked(response, (_FINAL, _BOXED))


def read_last_number(response: str) -> float | None:
    """An answer asked only for "the final answer as a number" (no-persona, Figure 2): its
    explicit final answer, else its last "the answer is", else its last number."""
    marked = read_final_answer(response)
    if marked is None:
        marked = _marked(response, (_ANSWER_IS,))
    if marked is not None:
        return marked
    numbers = list(_NUMBER.finditer(response.translate(_DASHES)))
    return _value(numbers[-1]) if numbers else None
