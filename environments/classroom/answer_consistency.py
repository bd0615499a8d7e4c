"""Whether a reply's final statement is said otherwise elsewhere in it (docs/classroom.md,
"Reading answers", rules 2, 6 and 8): a grader who sees the same conclusion twice with two
values and nothing correcting either takes neither — an earlier sentence said the same with
another value, the prose before a box or a closing answer line concludes otherwise, or the reply
goes on after its box to a closing sentence with another value."""

from __future__ import annotations

import re
from dataclasses import replace

from personasim.environments.classroom.answer_chains import question_givens
from personasim.environments.classroom.answer_clauses import WORKED, Context, Statement
from personasim.environments.classroom.answer_closings import closing_statement, sentences
from personasim.environments.classroom.answer_conclusion import concluding_statement
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.simulation import CORRECTION, Reading

__all__ = ["prose_after", "prose_before", "said_otherwise_before"]

TOLERANCE = 1e-6
_SO = re.compile(r"(?:^|(?<=[.!?]\s)|(?<=\n))[\s*_#>]*(?:so|therefore|thus|hence)\b", re.IGNORECASE)


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


def prose_before(context: Context, final: Statement, reading: Reading) -> str | None:
    """Why a box on its own, or a closing answer line ("Final Answer: 16"), is not the
    answer: the sentence that concludes the prose before it states another value ("His nephew
    is 10 years old today." then `\\boxed{17}`; "So there are 8 pairs." then "Final Answer:
    16"), and nothing corrects either."""
    if final.rule not in ("boxed", "marker") or reading.value is None:
        return None
    before = context.text[: final.position].rstrip(" \t$\\[(")
    if final.rule == "marker" and not (_closing_line(context.text, final) and _SO.search(before)):
        return None  # (the cheap checks first: the concluding rule reads the whole reply)
    prose = concluding_statement(replace(context, text=before))
    if prose is None or prose.value is None or abs(prose.value - reading.value) <= TOLERANCE:
        return None
    if CORRECTION.search(context.text, prose.position, final.position):
        return None
    if final.rule == "marker" and not _copies_a_step(context, before, prose, reading.value):
        return None
    return f"the sentence before its {final.rule} states another value ({prose.value:g})"


def _copies_a_step(context: Context, before: str, prose: Statement, value: float) -> bool:
    """An answer line after a concluding "So …" sentence gives a value of the working before
    it, not that sentence's ("… 20 − 4 = 16 pencils. … So there are 8 pairs." then "Final
    Answer: 16"): the two contradict each other."""
    sentence = before[prose.position :].lstrip(" \t*_#>")
    if not _SO.match(sentence) or _states(context, sentence, value):
        return False  # "So Carly made 2 cupcakes and 4 brownies." then "Final Answer: 2"
    return _states(context, before[: prose.position], value, operands=True)


def _states(context: Context, text: str, value: float, operands: bool = False) -> bool:
    """`text` states `value`: as a quantity, or also as an operand of its arithmetic."""
    for number in numbers_in(text, context.decimal_mark):
        if number.value is None or abs(number.value - value) > TOLERANCE:
            continue
        around = text[number.start - 2 : number.start] + text[number.end : number.end + 2]
        if operands or not re.search(r"[+×*÷/=−-]", around):
            return True
    return False


def _closing_line(text: str, statement: Statement) -> bool:
    """The statement is a line of its own that ends the reply."""
    line_start = text.rfind("\n", 0, statement.position) + 1
    opened = not text[line_start : statement.position].strip(" \t*_#>")
    return opened and "\n" not in text[statement.position :].strip()


def prose_after(context: Context, final: Statement, reading: Reading) -> str | None:
    """Why a box is not the answer: the reply goes on after it to a closing sentence with
    another value, not one the question gave ("Jake ate 10 − 3 = \\boxed{7} slices. … All
    together they ate 31 slices.")."""
    if final.rule != "boxed" or reading.value is None or final.end is None:
        return None
    after = context.text[final.end :]
    closing = closing_statement(context, after, final.end) if after.strip() else None
    if closing is None or closing.value is None or abs(closing.value - reading.value) <= TOLERANCE:
        return None
    if any(abs(closing.value - given) <= TOLERANCE for given in question_givens(context)):
        return None  # "He'll need one tune-up at each 1,000-mile mark.": a given restated
    return f"its closing sentence after its box gives another value ({closing.value:g})"


def line_goes_on(context: Context, final: Statement, reading: Reading) -> str | None:
    """Why an answer line is not settled: its value is a step it works out, and it goes on, on
    its own line, to working that ends on another value ("Answer: In three weeks he walks 3 *
    4 = 12 days. 240 / 12 = 20. He has to walk 20 minutes each day." was read 12)."""
    if final.rule != "marker" or reading.value is None or final.end is None:
        return None
    if not WORKED.search(context.text[final.position : final.end]):
        return None  # "The answer is $8. She spends $12 and earns $20.": the answer, then why
    line_end = context.text.find("\n", final.end)
    rest = context.text[final.end : len(context.text) if line_end < 0 else line_end]
    if not _NUMBERS.search(rest) or not sentences(rest):
        return None
    closing = closing_statement(context, rest, final.end)
    if closing is None or closing.value is None or abs(closing.value - reading.value) <= TOLERANCE:
        return None
    return f"its answer line goes on to another value ({closing.value:g})"


def hypothetical_after(context: Context, final: Statement, reading: Reading) -> str | None:
    """Why a closing sentence is not the answer: a conclusion before it ("So, 60 students are
    enrolled this year.") states another value and it only supposes ("At that rate, next year
    would see 72.")."""
    if final.rule not in ("closing", "concluding") or reading.value is None:
        return None
    if not _SUPPOSED.search(context.text[final.position : final.end or None]):
        return None
    found = sentences(context.text[: final.position])
    if not found:
        return None
    before = found[-1][1].strip(" *_")
    if not _SO.match(before):
        return None
    values = [n.value for n in numbers_in(before, context.decimal_mark) if n.value is not None]
    if len(values) != 1 or abs(values[0] - reading.value) <= TOLERANCE:
        return None
    return f"its closing sentence only supposes; the conclusion before it states {values[0]:g}"


_SUPPOSED = re.compile(
    r"\b(?:would|could|might)\b|['’]d\s+be\b|\bnext\s+(?:year|month|week)\b", re.I
)
"""A sentence that supposes ("next year would see 72", "it'd be 30 miles")."""
