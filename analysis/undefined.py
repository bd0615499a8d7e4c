"""The one convention for a statistic that has no value: `null` with the reason next to it.

A statistic computed over constant input, fewer than two values, a single level or an empty
group is not 0, 1 or NaN: the function that computes it returns `Undefined(reason)` instead of
a number, and a metrics record holds `{"rho": null, "rho_undefined": "constant input"}`
(`stat_fields`). Reading a record back (`read_stat`) restores the `Undefined`, so a statistic
computed from another one says why it is undefined too (`first_undefined`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONSTANT",
    "FEWER_THAN_2",
    "NO_VALUES",
    "SINGLE_LEVEL",
    "ZERO_BASELINE",
    "Statistic",
    "Undefined",
    "first_undefined",
    "in_words",
    "read_stat",
    "shown_stat",
    "stat_fields",
]

NO_VALUES = "no values"
FEWER_THAN_2 = "fewer than 2 values"
CONSTANT = "constant input"
SINGLE_LEVEL = "a single level"
ZERO_BASELINE = "zero baseline"

UNDEFINED_SUFFIX = "_undefined"

_IN_WORDS = {
    NO_VALUES: "there is no value to compute it from",
    FEWER_THAN_2: "it needs at least two values",
    CONSTANT: "every value is the same, so there is no variation to measure",
    SINGLE_LEVEL: "every value falls in one group, so there are no groups to compare",
    ZERO_BASELINE: "the baseline it is measured against is 0",
}
"""Each reason code said for a reader who does not know the statistic."""


@dataclass(frozen=True)
class Undefined:
    """A statistic without a value, and why ("constant input", "fewer than 2 values", ...)."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason:
            raise ValueError("an undefined statistic needs a reason")

    def within(self, label: str) -> Undefined:
        """The same reason, said of one input ("behaviour: constant input")."""
        return Undefined(f"{label}: {self.reason}")


Statistic = float | Undefined
"""What a statistic function returns: a number, or `Undefined` with its reason."""


def stat_fields(name: str, value: Any, digits: int | None = 6) -> dict[str, Any]:
    """`{name: value}` (floats rounded to `digits`, None: as they are; a list or dict, e.g.
    a table of rows, as it is) or `{name: None, name_undefined: reason}`.

    A NaN or None is a bug upstream (an undefined value that lost its reason) and raises.
    """
    if isinstance(value, Undefined):
        return {name: None, f"{name}{UNDEFINED_SUFFIX}": value.reason}
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise ValueError(f"{name} is {value!r}: return Undefined(reason) for an undefined value")
    if isinstance(value, bool | int | list | dict):
        return {name: value}
    return {name: float(value) if digits is None else round(float(value), digits)}


def read_stat(record: Mapping[str, Any], name: str) -> Any:
    """A record's statistic back: its value, or `Undefined` with the reason stored beside it.

    A null without a reason (a record written before this convention) reads as
    `Undefined("not recorded")`.
    """
    value = record.get(name)
    if value is not None:
        return value
    return Undefined(record.get(f"{name}{UNDEFINED_SUFFIX}") or "not recorded")


def first_undefined(**inputs: Any) -> Undefined | None:
    """The first undefined input, its reason labelled with the input's name; None if all are
    defined. For statistics made of others: `first_undefined(belief=a, behaviour=b) or a - b`."""
    for label, value in inputs.items():
        if isinstance(value, Undefined):
            return value.within(label)
    return None


def shown_stat(record: Mapping[str, Any], name: str, digits: int = 2) -> str:
    """A statistic of a record for a report line: fixed decimals, or "undefined (why)", the
    reason said in words (`in_words`)."""
    value = read_stat(record, name)
    if isinstance(value, Undefined):
        return f"undefined ({in_words(value.reason)})"
    return f"{value:.{digits}f}"


def in_words(reason: str) -> str:
    """A reason said for a newcomer: its code in plain words, its detail after them.

    "no values: no level of this trait in the test split" → "there is no value to compute it
    from (no level of this trait in the test split)"; a labelled reason ("behaviour: constant
    input") keeps its label; a reason without a known code is returned as it is.
    """
    label, colon, rest = reason.partition(": ")
    if colon and not any(label.startswith(code) for code in _IN_WORDS):
        return f"{label}: {in_words(rest)}"
    for code, words in _IN_WORDS.items():
        if reason.startswith(code):
            detail = reason[len(code) :].strip().removeprefix(":").strip()
            detail = (
                detail.removeprefix("(").removesuffix(")") if detail.startswith("(") else detail
            )
            return f"{words} ({detail})" if detail else words
    return reason
