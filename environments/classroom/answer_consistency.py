"""Whether a reply's final statement is said otherwise elsewhere in it (docs/classroom.md,
"Reading answers", rule 6): a grader who sees the same conclusion twice with two values and
nothing correcting either takes neither."""

from __future__ import annotations

import re

from personasim.environments.classroom.answer_clauses import Context, Statement
from personasim.environments.classroom.answer_closings import sentences
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.simulation import CORRECTION

__all__ = ["said_otherwise_before"]

TOLERANCE = 1e-6


def said_otherwise_before(context: Context, final: Statement, value: float | None) -> str | None:
    """Why the final statement is not settled: an earlier sentence says the same but for its
    numbers and gives another value, with no correction between ("So Adam had to contribute
    $12." ... "So Adam had to contribute $18."; "Tommy caught 14 fish." then "Answer: Tommy
    caught 20 fish.")."""
    if value is None:
        return None
    text = context.text
    line = text.rfind("\n", 0, final.position) + 1
    start = line if _ANSWER_LABEL.fullmatch(text[line : final.position]) else final.position
    end = final.end if final.end is not None else len(text)
    said = _masked(re.split(r"(?<=[.!?。！？])\s+|\n", text[start:end])[0])
    if len(said.split()) < _SAME_SENTENCE_WORDS:
        return None
    for position, sentence in sentences(text[:start]):
        if _masked(sentence) != said or CORRECTION.search(text[position:start]):
            continue
        values = [n.value for n in numbers_in(sentence, context.decimal_mark) if n.value]
        if values and all(abs(v - value) > TOLERANCE for v in values):
            return f"an earlier sentence says the same with another value ({sentence.strip()!r})"
    return None


_SAME_SENTENCE_WORDS = 4
_NUMBERS = re.compile(r"[$€£]?\s*-?\d[\d,.]*\s*%?")
_ANSWER_LABEL = re.compile(
    r"^[\s*_#>]*(?:final\s+)?(?:answer|result|total|réponse|respuesta|antwort)[\s*_]*[:：]?[\s*_]*",
    re.IGNORECASE,
)


def _masked(sentence: str) -> str:
    """A sentence with its answer label, numbers, markup and spacing out: what two statements
    of the same conclusion share."""
    sentence = _ANSWER_LABEL.sub("", sentence.strip())
    return " ".join(_NUMBERS.sub(" # ", sentence.strip(" *_#>.!。！")).split()).lower()
