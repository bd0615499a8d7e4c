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

from personasim.environments.classroom.answer_units import asked_quantity, asking_sentence

__all__ = ["restated_duration"]

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
    the unit the `question` asks for ("280 minutes"); None where not exactly two durations,
    another number beside them, totals that differ, or no single number in the asked unit."""
    asked_unit = asked_quantity(asking_sentence(question)).kind if question else None
    if asked_unit not in SECONDS:
        return None
    groups = list(_GROUP.finditer(part))
    numbers_in_groups = sum(len(_NUMBER.findall(group[0])) for group in groups)
    if len(groups) != 2 or numbers_in_groups != len(_NUMBER.findall(part)):
        return None
    totals, single = [], None
    for group in groups:
        parts = [
            (float(p["n"].replace(",", "")), p["unit"].lower()) for p in _PARTS.finditer(group[0])
        ]
        totals.append(sum(n * SECONDS[unit] for n, unit in parts))
        if len(parts) == 1 and SECONDS[parts[0][1]] == SECONDS[asked_unit]:
            single = group[0]
    if single is None or abs(totals[0] - totals[1]) > 1e-6 * max(totals):
        return None
    return single
