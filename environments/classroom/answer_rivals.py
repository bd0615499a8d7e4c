"""A second answer beside the one a reply concludes on, which makes the reply ambiguous rather
than read (docs/classroom.md, "Reading answers").

A grader who finds two answers hesitates, so the reader does too: an answer given first
("She needs to add 60 miles a day.") and a working that ends on another quantity (250, a step
of it); a sentence or labelled line that names the asked thing with another value ("The
change is $20 − $12 = $8." then "… and have $2 left."); a closing sentence that states the
asked quantity before its "so" and another after it ("… = 9 hours in total, so 6 more hours"),
or a new quantity before a ";" and only a given after it ("42 apples left; she sold 8"); a
result marked in bold or on a total line and a closing "That's …" that restates it as a rate, a
share or a comparison ("**Total: 48 legs** … That's an average of 2.8 legs per animal."). A
first step of the working is no rival answer: it is computed with later ("Half of the 90 rooms
is 45 rooms. … 45 × 20 = 900"), derived from a given ("One fifth of $100 is $20."), or not the
kind of quantity the question asks for ("From 5 PM to 9 PM is 4 hours." for a price).
"""

from __future__ import annotations

import re

from personasim.environments.classroom.answer_chains import question_givens
from personasim.environments.classroom.answer_clauses import (
    CONCLUDING_BREAK,
    WORKED,
    Context,
    Statement,
    prepared,
    without_asides,
)
from personasim.environments.classroom.answer_closings import PROCEDURE, sentences
from personasim.environments.classroom.answer_conclusion import (
    THEN,
    TOLERANCE,
    computes_with,
    new_quantities,
)
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.environments.classroom.answer_units import asking_sentence, names_the_asked
from personasim.simulation import same_value

__all__ = ["against_rivals"]

_OPENING_WORDS = 16
"""An answer given first is one short sentence ("Mia needs 9 more chairs.")."""
_LISTING = re.compile(r"[,、，]")
"""A list in the opening ("10 robots, 20 helmets"): parts, not one answer (after a colon the
parts may break down the answer before it)."""


def against_rivals(statement: Statement, context: Context) -> Statement:
    """The reply's closing statement, or an ambiguous one with both values where the reply
    gives a second answer: first, or before the closing sentence's "so"."""
    if statement.value is None:
        return statement
    if (first := _answer_first(statement, context)) is not None:
        reason = "its opening sentence and its closing sentence state different values"
        return Statement(statement.position, statement.rule, None, (first, statement.value), reason)
    if (named := _named_before(statement, context)) is not None:
        other, thing = named
        reason = f"a sentence before its closing one states the asked {thing} as {other:g}"
        return Statement(statement.position, statement.rule, None, (other, statement.value), reason)
    if (marked := _remark_on_marked(statement, context)) is not None:
        reason = f"it marks {marked:g} as its result before a closing remark with another value"
        return Statement(
            statement.position, statement.rule, None, (marked, statement.value), reason
        )
    if (before := _new_before_given(statement, context)) is not None:
        reason = f"its closing sentence states {before:g} before a number the question gave"
        candidates = (before, statement.value)
        return Statement(statement.position, statement.rule, None, candidates, reason)
    other = _answer_before_break(statement, context) if statement.rule == "concluding" else None
    if other is not None:
        reason = f"its concluding sentence states two values of the asked kind ({other:g}, "
        reason += f"{statement.value:g})"
        return Statement(statement.position, statement.rule, None, (other, statement.value), reason)
    return statement


def _answer_first(statement: Statement, context: Context) -> float | None:
    """A different answer stated first: a first paragraph of one plain sentence with one new
    quantity ("26 guests did not get a second hot dog." before a working that ends on 14), or
    such a sentence opening a paragraph, where it names the asked kind and the working after
    it does not compute with it."""
    text = context.text
    first = text.lstrip().split("\n\n", 1)[0].strip()
    leads = "\n" not in first and len(sentences(first)) > 1
    if leads:
        first = sentences(first)[0][1].strip()
    plain = len(sentences(first)) == 1 and "\n" not in first
    plain = plain and not _LISTING.search(first.partition(":")[0])
    plain = plain and first.rstrip(" *_").endswith((".", "!", "。", "！"))
    main = without_asides(first)  # "It takes 4 weeks (84 ÷ 3 = 28 days).": the aside works
    if not plain or len(main.split()) > _OPENING_WORDS or WORKED.search(main):
        return None
    if PROCEDURE.match(first.strip(" *_#>")):
        return None  # "Convert the bag to grams: 2.4 kg = 2,400 g.": a step of the working
    end = text.find(first) + len(first)
    if end > statement.position:
        return None  # the opening sentence is the closing one
    values = new_quantities(main.strip(" *_#>"), question_givens(context), context, whole=True)
    if len(values) != 1 or abs(values[0][0] - statement.value) <= TOLERANCE:
        return None
    asked = names_the_asked(first, context) or _totals(first, context)
    step = _computed_with(values[0][0], text[end:], context) or not asked
    if leads and (step or _from_givens(first.partition(":")[0], values[0][0], context)):
        return None  # a first step of the working, not an answer given first
    return values[0][0]


def _totals(sentence: str, context: Context) -> bool:
    """The sentence gives a total where the question asks one ("Tiene 48 animales en total."
    for "How many animals … in total?"), in the reply's language."""
    asks = context.question is not None and _TOTAL.search(asking_sentence(context.question))
    return bool(asks and _TOTAL.search(sentence))


_TOTAL = re.compile(
    r"\b(?:in\s+total|altogether|in\s+all|en\s+total|au\s+total|insgesamt|in\s+totale|"
    r"no\s+total|ao\s+todo|всего|итого)\b|总共|一共|合計|全部で",
    re.IGNORECASE,
)


def _from_givens(sentence: str, value: float, context: Context) -> bool:
    """The sentence derives its value from a number the question gave ("One fifth of Sophia's
    $100 is $20."): a step of the working, not an answer given first."""
    body = prepared(sentence, context.language, context.decimal_mark)
    givens = question_givens(context)
    numbers = [n.value for n in numbers_in(body, context.decimal_mark) if n.value is not None]
    others = [v for v in numbers if abs(v - value) > TOLERANCE]
    return any(abs(v - g) <= TOLERANCE for v in others for g in givens)


def _named_before(statement: Statement, context: Context) -> tuple[float, str] | None:
    """Another value the reply gives, before its closing sentence, to the very thing the
    question asks for ("The change is $20 − $12 = $8." then "Tom can buy 2 more packs with it
    and have $2 left."), stated nowhere after (not computed with, not corrected): (the value,
    the thing)."""
    asked = _ASKED_NOUN.search(asking_sentence(context.question)) if context.question else None
    if asked is None or (noun := (asked["noun"] or asked["what"]).lower()) in _NOT_ASKED_NOUNS:
        return None
    naming = re.compile(
        rf"\b{_OWNER}\s+(?:\w+\s+){{0,2}}?{noun}\s+{_IS}|^[\W_]*(?:\w+\s+){{0,2}}?{noun}\s*:\s*",
        re.IGNORECASE | re.MULTILINE,
    )  # "The change is $8", a line "Sale price: $30"
    text = context.text[: statement.position]
    for found in naming.finditer(text):
        clause = _CLAUSE.match(text, found.end())
        body = prepared(clause[0] if clause else "", context.language, context.decimal_mark)
        numbers = [n.value for n in numbers_in(body, context.decimal_mark) if n.value is not None]
        if not numbers or abs(numbers[-1] - statement.value) <= TOLERANCE:
            continue
        if _OPERATION.search(body) and "=" not in body:
            continue  # "her change is $10 − $9.15": an expression, no value yet
        later = context.text[found.end() + len(clause[0] if clause else "") :]
        if not _times_stated(numbers[-1], later, context):  # not computed with nor corrected
            return numbers[-1], noun
    return None


def _remark_on_marked(statement: Statement, context: Context) -> float | None:
    """A value the reply marks as its result — bold and of the asked kind ("= **72,000
    jellyfish**"), or on a total line ("**Total: 48 legs**") — before a closing sentence that
    restates it as a rate, a share or a comparison ("That's 18,000 jellyfish per hour.",
    "That's an average of 2.8 legs per animal.", "That's 25% more!"): that sentence remarks on
    the result, so the reply gives two values."""
    sentence = context.text[statement.position : statement.end]
    if not (_RESTATES.match(sentence) and _DERIVED.search(sentence)):
        return None
    text = context.text[: statement.position]
    marks = [
        (m.end(), m["bold"]) for m in _BOLD.finditer(text) if names_the_asked(m["bold"], context)
    ]
    marks += [(m.end(), m["value"]) for m in _TOTAL_LINE.finditer(text)]
    if not marks:
        return None
    body = prepared(max(marks)[1], context.language, context.decimal_mark)
    values = [n.value for n in numbers_in(body, context.decimal_mark) if n.value is not None]
    if not values or abs(values[-1] - statement.value) <= TOLERANCE:
        return None
    return values[-1]


_RESTATES = re.compile(
    r"^[\s*_]*(?:so\s+)?(?:in\s+\w+,\s+)?(?:that(?:['’]s|\s+is|\s+means)|this\s+is|which\s+is)\b",
    re.IGNORECASE,
)
"""A closing sentence that says again what came before ("That's …", "So that means …")."""
_DERIVED = re.compile(
    r"\b(?:per|an?\s+average|each|every|a\s+(?:day|week|month|year|rate)|more|less|fewer|"
    r"times|twice|half|percent)\b|%",
    re.IGNORECASE,
)
"""A rate, a share or a comparison: what a remark on a result gives."""
_BOLD = re.compile(r"\*\*(?P<bold>[^*\n]*\d[^*\n]*)\*\*")
_TOTAL_LINE = re.compile(
    r"^[\s*_#>-]*(?:total|in\s+total|altogether|result)\b[^:\n]{0,30}:[\s*_]*"
    r"(?P<value>[^\n]*\d[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)


_ASKED_NOUN = re.compile(
    r"\bhow\s+(?:much|many)\s+(?P<noun>[a-z]+)|"
    r"\bwhat\s+(?:is|was|will\s+be)\s+(?:the|his|her|their|its)\s+(?:\w+\s+)?(?P<what>[a-z]+)\?",
    re.IGNORECASE,
)
_NOT_ASKED_NOUNS = {
    "more", "less", "fewer", "of", "in", "do", "does", "did", "is", "are", "was", "were", "will",
    "would", "can", "could", "should", "has", "have", "had", "must", "time", "times", "total",
}  # fmt: skip
"""Words after "how much/many" that name no thing (an auxiliary, "more", "time")."""
_OWNER = r"(?:the|his|her|their|its|your)"
_OPERATION = re.compile(r"[+×÷*/−–]|\s-\s")
_IS = r"(?:is|are|was|were|will\s+be|comes\s+to|totals?|equals?|=)\s+"
_CLAUSE = re.compile(r"(?:[^.!?\n;]|\.(?=\d))*")  # to the end of the clause ("$4.00" is one number)


def _new_before_given(statement: Statement, context: Context) -> float | None:
    """A new quantity before the closing sentence's last ";", where the part after it only
    restates a number the question gave ("Anna has 42 apples left; she sold 8.")."""
    if statement.end is None or statement.value is None:
        return None
    givens = question_givens(context)
    if not any(abs(statement.value - g) <= TOLERANCE for g in givens):
        return None
    *before, last = re.split(r"[;；]", context.text[statement.position : statement.end])
    if not before or not last.strip():  # after a ";", not a "so": a remark, not a conclusion
        return None
    new = new_quantities(before[-1], givens, context, whole=True)
    return new[-1][0] if new else None


def _answer_before_break(statement: Statement, context: Context) -> float | None:
    """A second answer before the closing sentence's last "so": a new quantity of the asked
    kind that the reply states nowhere else and the rest does not compute with."""
    if statement.end is None or statement.value is None:
        return None
    sentence = context.text[statement.position : statement.end]
    parts = CONCLUDING_BREAK.split(THEN.split(sentence)[-1])
    if len(parts) < 2 or not names_the_asked(parts[-2], context):
        return None
    for other, *_ in new_quantities(parts[-2], question_givens(context), context, whole=True):
        once = _times_stated(other, context.text, context) == 1
        rival = once and abs(other - statement.value) > TOLERANCE
        if rival and not _computed_with(other, parts[-1], context):
            return other
    return None


def _times_stated(value: float, text: str, context: Context) -> int:
    """How often `text` states `value` ("… = 168, not 158" states 158 once)."""
    body = prepared(text, context.language, context.decimal_mark)
    return sum(same_value(n.value, value) for n in numbers_in(body, context.decimal_mark))


def _computed_with(value: float, later: str, context: Context) -> bool:
    """Whether `later` computes with `value` (an operand of a sum after it)."""
    body = prepared(later, context.language, context.decimal_mark)
    return computes_with(body, value, context.decimal_mark)
