"""Signs in words in the classroom's answers (docs/classroom.md, "Reading answers"): a value a
reply calls a loss, a debt or a shortfall ("overdrawn by $47.50", "a loss of $15,500") may be
read as negative, so a grader hesitates unless the question asks in those words.
"""

from __future__ import annotations

import re

from personasim.environments.classroom.answer_clauses import Context, Statement
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.environments.classroom.answer_units import asking_sentence
from personasim.simulation import same_value

__all__ = ["sign_in_words"]


def sign_in_words(context: Context, final: Statement, value: float | None) -> str | None:
    """Why a positive value is not settled: its sentence says it is a loss, a debt or a
    shortfall ("overdrawn by $47.50", "a loss of $15,500"), which a grader may read as
    negative, and the question does not ask in those words ("How much did it lose?")."""
    if value is None or value <= 0:
        return None
    end = final.end if final.end is not None else len(context.text)
    start = max(context.text.rfind("\n", 0, final.position), 0)
    words = _SIGN_WORDS.search(context.text[start:end])
    asking = asking_sentence(context.question or "")
    if words is None or _SIGN_WORDS.search(asking) or _LOSE.search(asking):
        return None  # "an average loss of $3.50" for "How much did he lose on average?"
    if _another_number_between(context.text[start:end], words, value, context.decimal_mark):
        return None  # "$3,900 short, which at $15/hour means 260 hours": the sign is 3,900's
    if _OWED.fullmatch(words[0]) and _PAYING.search(asking):
        return None  # "she owes $6" for "How much does she have to pay?": what she pays
    if words[0].lower().startswith("short") and _STILL_NEEDED.search(asking):
        return None  # "short by $85" for "How much more does he need?": what he needs
    return f"its sentence gives the sign in words ({words[0]!r})"


def _another_number_between(
    line: str, words: re.Match[str], value: float, decimal_mark: str | None
) -> bool:
    """Another number, in another clause, stands between the sign words and every place the
    value is written."""
    numbers = numbers_in(line, decimal_mark)
    places = [n for n in numbers if same_value(n.value, value)]
    if not places:
        return False
    for place in places:
        if place.start < words.start():
            low, high = place.end, words.start()
        else:
            low, high = words.end(), place.start
        other = any(low <= n.start and n.end <= high for n in numbers if n is not place)
        if not (other and _CLAUSE_BREAK.search(line[low:high])):
            return False  # "short by $200 - $115 = $85": one quantity worked out
    return True


_CLAUSE_BREAK = re.compile(r"[,;:]\s|\b(?:which|so|then|means)\b")


_LOSE = re.compile(r"\b(?:lose|loses|lost|losing)\b", re.IGNORECASE)
"""The question asks in those words as a verb ("How much did the shop lose?")."""
_OWED = re.compile(r"owes?|owed", re.IGNORECASE)
_PAYING = re.compile(r"\b(?:pay|pays|paid|owe|owes|cost|costs|spend|spends|charged?|fee)\b", re.I)
_SIGN_WORDS = re.compile(
    r"\b(?:overdrawn|overdraft|short(?:fall)?|in\s+debt|in\s+the\s+red|deficit|loss|"
    r"owes?|owed|découvert|perte|déficit|Verlust|Defizit|im\s+Minus|pérdida|prejuízo|"
    r"perdita)\b|亏损|赤字",
    re.IGNORECASE,
)
"""Words that say a value is below zero (a loss, a debt, a shortfall)."""
_STILL_NEEDED = re.compile(r"\bmore\b.*\bneeds?\b|\bneeds?\b.*\bmore\b", re.IGNORECASE)
