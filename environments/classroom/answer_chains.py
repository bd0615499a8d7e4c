"""How the numbers of a reply's working relate to its result: the question's givens, operands
restated, and the parts of a closing sentence that feed its last value (docs/classroom.md,
"Reading answers", rule 7).

A closing sentence that states several quantities is a list, no one answer ("Tom has 5, and
Jerry has 5 × 2 = 10"), unless each earlier part is a step toward its last value: that part's
result is an operand of the last equation ("16 − 12 = 4, and 4 + 4 = 8"); its numbers are what
the last equation takes away ("7 kg are spoken for, and James is left with 12 − 7 = 5 kg"); they
are intermediate results the last equation uses, not quantities the question gave ("13 eggs a
day, and in a week that is 13 × 7 = 91 eggs"); or the last part names their total ("56 holes,
plus 14 holes, for 70 holes altogether").
"""

from __future__ import annotations

import re
from functools import lru_cache

from personasim.environments.classroom.answer_clauses import Context, prepared
from personasim.environments.classroom.answer_numbers import (
    normalized,
    numbers_in,
    reply_decimal_mark,
    reply_language,
)

__all__ = [
    "EQUATION",
    "TOTAL",
    "chained",
    "names_their_total",
    "question_givens",
    "restated_operand",
]

TOLERANCE = 1e-6

EQUATION = re.compile(r"=\s*(?:\*\*|__)?\s*[$€£]?\s*(-?\d[\d,. ]*\d|-?\d)")
"""An equation's result, bold or not ("= **2 trays**")."""
TOTAL = re.compile(
    r"\b(?:total|in\s+all|altogether|combined|sum|au\s+total|insgesamt|en\s+total)\b|总共|一共",
    re.IGNORECASE,
)
"""A word that names a total."""
_OPERAND = re.compile(r"^\s*(?:[+×*÷/x−-]|plus\b|minus\b|times\b|divided\b)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_TAKEN_AWAY = re.compile(r"[−÷/-]\s*[$€£]?\s*(\d+(?:\.\d+)?)")


def chained(parts: list[str], piece: str, givens: tuple[float, ...] = ()) -> list[str]:
    """The `parts` of a closing sentence that are quantities beside its last part `piece`, not
    steps toward it (module docstring)."""
    return [part for part in parts if not _feeds(part, piece, givens)]


def names_their_total(parts: list[str], piece: str) -> bool:
    """The piece names the total of the parts' results ("…, for 70 holes altogether"): its last
    number is the sum of each part's last number."""
    results = [_NUMBER.findall(part.replace(",", "")) for part in parts]
    stated = _NUMBER.findall(piece.replace(",", ""))
    if not (parts and stated and all(results) and TOTAL.search(piece)):
        return False
    return abs(sum(float(r[-1]) for r in results) - float(stated[-1])) <= TOLERANCE


def _feeds(part: str, piece: str, givens: tuple[float, ...]) -> bool:
    """The part is a step toward the piece's equation (module docstring), or its numbers are
    the operands of an equation a colon opens ("Finn sees 11, then 6 more: 11 + 6 = 17")."""
    if "=" not in piece:
        return False
    left = piece.rsplit("=", 1)[0]
    operands = set(_NUMBER.findall(left))
    numbers = _NUMBER.findall(part)
    if "=" in part:
        result = _NUMBER.findall(part.rsplit("=", 1)[1])
        return bool(result) and result[0] in operands
    if not numbers or not set(numbers) <= operands:
        return False
    summed = re.search(r"[:：]\s*[$€£]?\d[^=]*=", piece) is not None
    taken = set(numbers) <= set(_TAKEN_AWAY.findall(left))
    derived = bool(givens) and not any(  # without the question, no step is known derived
        abs(float(n) - g) <= TOLERANCE for n in numbers for g in givens
    )
    return summed or taken or bool(TOTAL.search(piece)) or derived


def restated_operand(context: Context, working: str, value: float) -> bool:
    """The value is an operand of the working (a restated intermediate step), and not the
    result of its last equation."""
    results = EQUATION.findall(working)
    last = numbers_in(results[-1], context.decimal_mark) if results else []
    if last and last[0].value is not None and abs(last[0].value - value) <= TOLERANCE:
        return False
    for number in numbers_in(working, context.decimal_mark):
        if number.value is None or abs(number.value - value) > TOLERANCE:
            continue
        before = re.sub(r"(?:\*\*|__)$", "", working[: number.start]).rstrip(" $€£")
        if _OPERAND.match(working[number.end :]) or (
            before.endswith(("+", "×", "*", "÷", "/", "−")) or re.search(r"\s[x-]$", before)
        ):
            return True
    return False


def question_givens(context: Context) -> tuple[float, ...]:
    """The values the question states (read in its own language and decimal mark)."""
    return _givens(context.question) if context.question else ()


@lru_cache(maxsize=4096)
def _givens(question: str) -> tuple[float, ...]:
    """Cached: every reply to a question is read against the same givens (text2num on the
    question once, not once per reply and rule)."""
    text = normalized(question)
    language = reply_language(text)
    mark = reply_decimal_mark(text, language)
    numbers = numbers_in(prepared(text, language, mark), mark)
    return tuple(n.value for n in numbers if n.value is not None)
