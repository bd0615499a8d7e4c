"""A last sentence that gives a quantity over another period than the question asks for
("That's $126 a week!" after "$18 a day", for "How much does she make every day?"), or at
another moment: the amount at the start ("Tom has 19 marbles now; originally 24.").

Chat replies often add the weekly or yearly figure after the daily answer. A grader asked for
the day does not take the week's; nor the day's where the week is asked ("She makes $18 a
day." for "How much does she make in a week?": it stopped a step short). Where the question's
asking part names one period (a day, week, month, year, hour or minute) and the stretch that
states the reply's value names only others ("That's $126 a week!", "Over a week, that comes to
$126.", "Over 30 days, $540." for the day), the value is no answer: unreadable, with the
reason. English questions; a reply in another language is read by its words for the periods
("par semaine", "一周"). A value whose stretch names the asked period too, or none ("70 eggs,
10 a day for 7 days" for a week), is left to the other rules.
"""

from __future__ import annotations

import re

from personasim.environments.classroom.answer_clauses import (
    CONCLUDING_BREAK,
    SENTENCE_RULES,
    Context,
    Statement,
    prepared,
)
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.environments.classroom.answer_units import (
    asked_quantity,
    asking_sentence,
    sentence_at,
)
from personasim.simulation import same_value

__all__ = ["other_period", "other_scope", "starting_amount"]

_ADVERBS = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month"}
_ADVERBS |= {"yearly": "year", "annually": "year", "annual": "year"}
_PERIOD = r"(?:minute|hour|day|week|month|year)"
_NAMED = re.compile(
    r"\b(?:(?:a|an|per|each|every|one|the|that|this|over\s+a|in\s+a|for\s+a|in\s+one)\s+"
    rf"(?P<period>{_PERIOD})s?\b|(?P<adverb>{'|'.join(_ADVERBS)})\b|"
    rf"(?:over|in|for|during|across|within)\s+(?P<count>\d+)[-\s](?P<span>{_PERIOD})s?\b)",
    re.IGNORECASE,
)
"""A period named as one ("a week", "per day", "daily") or as a span of several ("over 30
days"; "4 years old" is an age, not a span)."""
_FOREIGN = {
    **dict.fromkeys(("semaine", "woche", "semana", "settimana", "неделю", "неделя"), "week"),
    **dict.fromkeys(("周", "週"), "week"),
    **dict.fromkeys(("jour", "tag", "día", "dia", "giorno", "день", "天", "日"), "day"),
    **dict.fromkeys(("mois", "monat", "mes", "mês", "mese", "месяц"), "month"),
    **dict.fromkeys(("个月", "ヶ月", "か月"), "month"),
    **dict.fromkeys(("année", "jahr", "año", "ano", "anno", "год", "年"), "year"),
    **dict.fromkeys(("heure", "stunde", "hora", "ora", "час", "小时", "時間"), "hour"),
}  # fmt: skip
"""The periods' words in the corpora's other languages (singular; Japanese 日 after a number)."""
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_FOREIGN_WORD = re.compile(
    rf"(?<![^\W\d_])(?:{'|'.join(w for w in _FOREIGN if not _CJK.search(w))})(?![^\W\d_])|"
    + "|".join("(?<=\\d)日" if w == "日" else w for w in _FOREIGN if _CJK.search(w)),
    re.IGNORECASE,
)  # whole words in alphabets; CJK words anywhere, 日 only after a number ("1日")
_NON_LATIN = re.compile(r"[\u0400-\u04ff\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")
_AT_START = re.compile(
    r"\b(?:start(?:ed|s)?\s+(?:with|out\s+with)|originally|initially|at\s+first|beg[ai]n|"
    r"to\s+begin\s+with|"
    r"at\s+the\s+(?:start|beginning)|before\s+(?:losing|giving|selling|spending|eating|using))\b",
    re.IGNORECASE,
)
_OPERATION = re.compile(r"\s*[-+×*/÷x=−–]\s*[$€£]?\s*")
_SPAN_OPENS = re.compile(r"\b(?:over|in|for|during|across|within)\s+\d+$", re.IGNORECASE)
_ASKING = re.compile(r"\b(?:how|what|calculate|find|compute|determine)\b.*", re.IGNORECASE)
"""Where the asking sentence asks: "If he earns $10 an hour, how much … in a week?"."""


def other_period(context: Context, final: Statement, value: float | None) -> str | None:
    """Why the value is no answer: the stretch of its sentence around it names a period, and
    only periods, other than the one the question asks about (None where the question names
    no one period, or the stretch names it or none)."""
    if value is None or final.rule not in SENTENCE_RULES or not context.question:
        return None
    asking = _ASKING.search(asking_sentence(context.question))
    asked = {p for p in _periods(asking[0]) if " " not in p} if asking else set()
    if len(asked) != 1:
        return None
    (wanted,) = asked
    stretch = _around(sentence_at(context.text, final), value, context)
    if context.language in (None, "en") and not _NON_LATIN.search(stretch):
        named = _periods(stretch)
        named = {p for p in named if " " not in p or p.endswith(f" {wanted}s")}  # "5 days"
    else:  # a reply in another language: its words for the periods ("par semaine", "一周")
        named = {_FOREIGN[m[0].lower()] for m in _FOREIGN_WORD.finditer(stretch) if _one(m)}
    if not named or named & asked:
        return None
    given = "/".join(sorted(named))
    return f"its last sentence gives a quantity per {given}, where the question asks per {wanted}"


def starting_amount(context: Context, final: Statement, value: float | None) -> str | None:
    """Why the value is no answer: the stretch that states it calls it the amount at the start
    ("Tom has 19 marbles now; originally 24.", "He started with 24."), and the question does
    not ask for that (English)."""
    if value is None or final.rule not in SENTENCE_RULES or not context.question:
        return None
    if context.language not in (None, "en") or _AT_START.search(context.question):
        return None
    stretch = _around(sentence_at(context.text, final), value, context, through_value=True)
    if (cue := _AT_START.search(stretch)) is None:
        return None
    return f"its last sentence gives the amount at the start ({cue[0]!r})"


_EACH_OPENS = re.compile(
    r"^[\W_]*(?!if\b|when\b|since\b|as\b)(?:[^\W\d_]+\s+){0,2}?(?:each|every|on\s+average|"
    r"average)\b",
    re.IGNORECASE,
)
"""A sentence about one item or the average ("Each friend ended up with …", "On average, …",
"The average sibling is …")."""
_EACH_AFTER = re.compile(
    r"\s*(?:[^\W\d_]+\s+){0,2}?(?:each|apiece|a\s+piece|per\s+[^\W\d_]+)\b", re.IGNORECASE
)
"""A value stated per item ("5 balloons each", "$5 per person")."""
_WHOLE = re.compile(
    r"\b(?:total|altogether|together|in\s+all|combined|overall|all\s+told)\b", re.IGNORECASE
)


def other_scope(context: Context, final: Statement, value: float | None) -> str | None:
    """Why the value is no answer: the question asks for a total, not per item, and the last
    sentence is about one item or the average, or states the value per item, with no total
    ("Each friend ended up with 5 balloons." for "How many total balloons did the girls
    have?"); English. (The converse, a total where the question asks per item, cost right
    readings: "each" in a question's conditions is no asked rate.)"""
    if value is None or final.rule not in SENTENCE_RULES or not context.question:
        return None
    asking = _ASKING.search(asking_sentence(context.question))
    if asking is None or context.language not in (None, "en"):
        return None
    if not _WHOLE.search(asking[0]) or asked_quantity(asking[0]).per_item:
        return None
    sentence = sentence_at(context.text, final)
    stretch = _around(sentence, value, context)
    body = prepared(sentence, context.language, context.decimal_mark)
    stated = [n for n in numbers_in(body, context.decimal_mark) if same_value(n.value, value)]
    opening = _EACH_OPENS.match(CONCLUDING_BREAK.split(sentence)[-1])  # not "Each …, so 44"
    each = opening or (stated and _EACH_AFTER.match(body, stated[-1].end))
    if not each or _WHOLE.search(stretch):
        return None
    return "its last sentence gives a value per item or an average; the question asks a total"


def _one(word: re.Match[str]) -> bool:
    """A period word not counted by a number above 1: "par semaine", "一周", "1日" name the
    period, "6小时" and "2 Wochen" a span of several."""
    count = re.search(r"(\d+)\s*$", word.string[: word.start()])
    return count is None or count[1] == "1"


def _around(sentence: str, value: float, context: Context, through_value: bool = False) -> str:
    """The stretch that states the value's last mention: from the number before it (before
    the equation it ends: "Annually, that's 18 × 365 = 6,570 dollars."; with the span that
    number opens: "Over 30 days, $540.") to the number after it."""
    body = prepared(sentence, context.language, context.decimal_mark)
    numbers = numbers_in(body, context.decimal_mark)
    at = [i for i, n in enumerate(numbers) if same_value(n.value, value)]
    if not at:
        return ""
    first = at[-1]
    while first > 0 and _OPERATION.fullmatch(body[numbers[first - 1].end : numbers[first].start]):
        first -= 1  # the equation's operands state the value too
    start = numbers[first - 1].start if first > 0 else 0  # with it: "6小时" is a span
    if first > 0 and (span := _SPAN_OPENS.search(body[: numbers[first - 1].end])) is not None:
        start = span.start()
    if through_value:  # what leads up to it ("originally 24"), not what follows it
        return body[start : numbers[at[-1]].end]
    after = at[-1] + 1
    return body[start : numbers[after].start if after < len(numbers) else len(body)]


def _periods(text: str) -> set[str]:
    """The periods a text names as a span or rate ("a week", "per day", "over a month", "daily")."""
    found = set()
    for match in _NAMED.finditer(text):
        if match["span"]:  # "30 days" is a span, not the day ("1 day" is)
            span = match["span"].lower()
            found.add(span if match["count"] == "1" else f"{match['count']} {span}s")
        elif match["period"]:
            found.add(match["period"].lower())
        else:
            found.add(_ADVERBS[match["adverb"].lower()])
    return found
