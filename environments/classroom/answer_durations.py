"""One duration said twice, in two units ("Royce takes 280 minutes, or 4 hours 40 minutes").

A closing sentence that gives a length of time and then the same length in other units
states one quantity, not two: a grader reads the one in the unit the question asks for. It is
read only where the two agree exactly, one of them is a single number in the asked unit and
the sentence's concluding part holds no other number; "280 minutes, or 4 hours 30 minutes"
(which disagree) and "280 minutes, or 4 hours 40 minutes" for "how many hours" (no single
number in hours) stay a list, which no rule reads.
"""

from __future__ import annotations

import re
from itertools import pairwise

from personasim.environments.classroom.answer_clauses import Context, prepared
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.environments.classroom.answer_units import (
    asked_kind,
    asked_quantity,
    asking_sentence,
    quantity_kind,
)

__all__ = [
    "RESTATING",
    "in_compound",
    "restated_duration",
    "restates_duration",
    "without_approximate_restatement",
]

SECONDS = {
    **dict.fromkeys(("second", "sec", "s", "sekunde", "seconde", "segundo", "secondo"), 1),
    **dict.fromkeys(("minute", "min", "minuto", "minuti", "minuten"), 60),
    **dict.fromkeys(("hour", "hr", "h", "stunde", "stunden", "heure", "hora", "ora", "ore"), 3600),
    **dict.fromkeys(("day", "tag", "tage", "jour", "día", "dia", "giorno", "giorni"), 86_400),
    **dict.fromkeys(("week", "woche", "wochen", "semaine", "semana", "settimana"), 604_800),
    **dict.fromkeys(("秒",), 1),
    **dict.fromkeys(("分", "分钟", "分鐘", "분"), 60),
    **dict.fromkeys(("時間", "小时", "小時", "시간"), 3600),
}  # fmt: skip
"""Seconds in each unit of time a reply may name (singular stems; plurals end in -s/-es)."""

_UNIT = "|".join(sorted((re.escape(unit) for unit in SECONDS), key=len, reverse=True))
_AMOUNT = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"  # "2,040 minutes"
_TIMED = rf"{_AMOUNT}\s*(?:{_UNIT})(?:e?s)?(?![^\W\d_])"
_GROUP = re.compile(rf"{_TIMED}(?:\s*(?:,|and|und|et|y|e|i)?\s*{_TIMED})*", re.IGNORECASE)
_PARTS = re.compile(rf"(?P<n>{_AMOUNT})\s*(?P<unit>{_UNIT})(?:e?s)?(?![^\W\d_])", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def restated_duration(part: str, question: str | None) -> str | None:
    """Where `part` gives one duration twice, the one of the two that is a single number in
    the unit the `question` asks for ("280 minutes"), or the first where it asks for a time in
    no unit ("how long", "how much time"); None where not exactly two durations,
    another number beside them, totals that differ, or no single number in the asked unit."""
    asking = asking_sentence(question) if question else ""
    asked_unit = asked_quantity(asking).kind if question else None
    if asked_unit not in SECONDS and not (asked_unit is None and _TIME_ASKED.search(asking)):
        return None
    groups = list(_GROUP.finditer(part))
    numbers_in_groups = sum(len(_NUMBER.findall(group[0])) for group in groups)
    if len(groups) != 2 or numbers_in_groups != len(_NUMBER.findall(part)):
        return None
    totals, single = [], None
    for group in groups:
        parts = _amounts(group[0])
        totals.append(sum(n * unit for n, unit in parts))
        unnamed = asked_unit not in SECONDS and group is groups[0]  # "how long": the first
        if len(parts) == 1 and (unnamed or parts[0][1] == SECONDS.get(asked_unit or "")):
            single = group[0]
    if single is None or abs(totals[0] - totals[1]) > 1e-6 * max(totals):
        return None
    return single


_TIME_ASKED = re.compile(r"\bhow\s+(?:long|much\s+time)\b", re.IGNORECASE)
RESTATING = re.compile(
    r"^[\s*_(]*(?:in\s+[^\W\d_]+,?\s+)?(?:that(?:['’]s|\s+is)|this\s+is|which\s+is|i\.e\.|"
    r"in\s+other\s+words|or|also|c['’]est|soit|das\s+sind|eso\s+es|isto\s+é|也就是)\b",
    re.IGNORECASE,
)
"""A sentence that says again what came before ("That's …", "In cents, that's …", "i.e.")."""
_APPROXIMATELY = re.compile(
    r"\b(?:about|roughly|approximately|nearly|almost|around|just\s+(?:over|under)|"
    r"environ|etwa|ungefähr|aproximadamente|cerca\s+de)\b|[~≈]",
    re.IGNORECASE,
)
_NEAR = 0.1
"""An approximate restatement ("… 452 minutes. That's about 7.5 hours!") is within 10 %."""


def restates_duration(sentence: str, before: str, question: str | None) -> bool:
    """`sentence` only gives a length of time `before` gave, in other units ("… = 452
    minutes." then "That's 7 hours 32 minutes.", or "That's about 7.5 hours!" within 10 %):
    a restatement a grader reads past, unless it
    is the single number in the unit the `question` asks for ("That's 120 minutes." for "how
    many minutes")."""
    groups = list(_GROUP.finditer(sentence))
    if not RESTATING.match(sentence) or len(groups) != 1:
        return False
    if len(_NUMBER.findall(groups[0][0])) != len(_NUMBER.findall(sentence)):
        return False
    parts = _amounts(groups[0][0])
    asked_unit = asked_kind(question)
    if len(parts) == 1 and asked_unit in SECONDS and parts[0][1] == SECONDS[asked_unit]:
        return False
    total = sum(n * unit for n, unit in parts)
    near = (_NEAR if _APPROXIMATELY.search(sentence) else 1e-6) * total
    return any(
        abs(sum(n * unit for n, unit in _amounts(group[0])) - total) <= near
        for group in _GROUP.finditer(before)
    )


def in_compound(text: str, position: int) -> bool:
    """The number at `position` is a part of a length of time in several units ("7 hours 32
    minutes"): no quantity on its own."""
    return any(
        group.start() <= position < group.end() and _compound(_amounts(group[0]))
        for group in _GROUP.finditer(text)
    )


def _compound(parts: list[tuple[float, int]]) -> bool:
    """Several parts, each in a smaller unit and less than one of the unit before it ("7
    hours 32 minutes"), not two lengths side by side ("21 days, 189 hours")."""
    return len(parts) > 1 and all(
        unit < larger and n * unit < larger for (_, larger), (n, unit) in pairwise(parts)
    )


def _amounts(group: str) -> list[tuple[float, int]]:
    """Each (number, seconds in its unit) of a group ("4 hours 40 minutes")."""
    return [
        (float(p["n"].replace(",", "")), SECONDS[p["unit"].lower()]) for p in _PARTS.finditer(group)
    ]


_APPROXIMATE_RESTATEMENT = re.compile(
    r",?\s*[—–(-]?\s*(?:that['’]s|that\s+is|which\s+is|which\s+works\s+out\s+to|i\.e\.|or|"
    r"cioè|ovvero|soit|c['’]est-à-dire|das\s+sind|also|es\s+decir|o\s+sea|ou\s+seja|isto\s+é|"
    r"то\s+есть)\s*,?\s*(?:about|around|roughly|approximately|almost|nearly|just\s+(?:over|"
    r"under)|circa|environ|etwa|ungefähr|cerca\s+de|aproximadamente|unos|unas|около|примерно)"
    r"\s+(?P<rest>\d.*)$",
    re.IGNORECASE,
)
"""An approximate restatement closing a sentence: "…, cioè circa 127 chilometri", "— that's
about 29 feet 2 inches, or roughly 9.7 yards"."""


def without_approximate_restatement(clause: str, context: Context) -> str:
    """The clause without an approximate restatement of its value in another unit (the
    labelling call: "350 inches of fabric, which is about 9.7 yards" gives 350; "79 miglia,
    cioè circa 127 chilometri" gives 79), where the value before it names its unit, the
    restatement names another, and that other is not the unit the question asks for (then the
    hedged number may be the answer)."""
    found = _APPROXIMATE_RESTATEMENT.search(clause)
    if found is None:
        return clause
    head = prepared(clause[: found.start()], context.language, context.decimal_mark)
    rest = prepared(found["rest"], context.language, context.decimal_mark)
    before, after = numbers_in(head, context.decimal_mark), numbers_in(rest, context.decimal_mark)
    if not before or not after:
        return clause
    unit = quantity_kind(head, before[-1].start, before[-1].end)
    other = quantity_kind(rest, after[0].start, after[0].end)
    if unit is None or other is None or unit == other or other == asked_kind(context.question):
        return clause
    return clause[: found.start()]
