"""What a run can record, checked where its input files are read.

The event log and its exports hold UTF-8 text and finite numbers. A persona file with `NaN`, a
prompt pack with a `"\\ud800"` escape (half of a UTF-16 pair, which no UTF-8 text can hold) or a
byte that is not UTF-8 would otherwise be found late: a crash while the log is written, or an
export that is not valid JSON. Loaders call these helpers so that the error names the file and
the place (line, column, field) before a run directory exists.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["csv_problem", "unstorable", "utf8_problem"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_problem(exc: UnicodeDecodeError) -> tuple[int, str]:
    """(line, what is wrong) for bytes that are not UTF-8: the byte, its column, the fix."""
    data = bytes(exc.object)
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return line, (
        f"byte 0x{data[exc.start]:02x} at column {column} is not UTF-8 ({exc.reason}); "
        "re-save the file as UTF-8"
    )


def csv_problem(exc: csv.Error) -> str:
    """A CSV reader's error in words; the caller adds the file and line."""
    if "field larger than field limit" in str(exc):
        limit = csv.field_size_limit()
        return f"a cell is longer than {limit:,} characters, the longest a CSV cell may be"
    return f"not readable as CSV ({exc})"


def unstorable(value: Any) -> str | None:
    """The first string or number in `value` (nested dicts and lists) a run cannot record, as
    `field: why`; None when all can be. Walked without recursion, as deep as the parser allowed."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if problem := _problem(item):
            return f"{where}: {problem}" if where else problem
        if isinstance(item, Mapping):
            for key, inner in reversed(list(item.items())):
                if isinstance(key, str) and (problem := _problem(key)):
                    return f"field name '{_SURROGATE.sub(_escaped, key)}': {problem}"
                stack.append((f"{where}.{key}" if where else str(key), inner))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", inner) for i, inner in reversed(list(enumerate(item))))
    return None


def _problem(item: Any) -> str | None:
    if isinstance(item, float) and not math.isfinite(item):
        return f"{item} is not a finite number; NaN and infinity cannot be recorded"
    if isinstance(item, str) and (found := _SURROGATE.search(item)):
        return (
            f"{_escaped(found)} at character {found.start() + 1} is not text (a lone surrogate: "
            "half of a UTF-16 pair, or a byte that was not UTF-8); remove it"
        )
    return None


def _escaped(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"
