"""Compounds of Chinese, Japanese and Korean numeral units written with digits ("7万2000",
"4千4百", "1만 2천"), read as one number (docs/classroom.md, "Numbers")."""

from __future__ import annotations

import re

__all__ = ["cjk_compounds"]

_CJK_UNITS = {
    **dict.fromkeys("亿億억", 1e8), **dict.fromkeys("万萬만", 1e4),
    **dict.fromkeys("千천", 1e3), **dict.fromkeys("百백", 1e2),
}  # fmt: skip
_CJK_PART = re.compile(rf"(\d+(?:\.\d+)?)?\s*([{''.join(_CJK_UNITS)}])\s*")
_CJK_COMPOUND = re.compile(
    rf"(?<![\d.,])(?:(?:\d+(?:\.\d+)?)?\s*[{''.join(_CJK_UNITS)}]\s*){{2,}}\d*(?![\d.,])|"
    rf"(?<![\d.,])\d+(?:\.\d+)?\s*[{''.join(_CJK_UNITS)}]\s*\d+(?![\d.,])"
)
"""A compound of CJK or Korean numeral units ("7万2000" is 72,000; "1亿2000万" 120,000,000;
"4千4百" 4,400; "1만 2천" 12,000; "2천만" 20,000,000): one number, not a multiplied one and
another. A single unit ("14만", "1千") is a multiplier of the number (`NUMBER`)."""


def _cjk_compound(match: re.Match[str]) -> str:
    """The compound in digits; as written where its units do not make one number ("7万2000万",
    "4千4": is it 4,004 or 4,400?)."""
    total = section = 0.0
    small = large = float("inf")
    parts = list(_CJK_PART.finditer(match[0]))
    for part in parts:
        number, unit = (float(part[1]) if part[1] else None), _CJK_UNITS[part[2]]
        if unit < 1e4:
            if number is None or unit >= small:
                return match[0]
            section, small = section + number * unit, unit
            continue
        section += number or 0
        if section == 0 or unit >= large:
            return match[0]
        total, section, small, large = total + section * unit, 0.0, float("inf"), unit
    trailing = match[0][parts[-1].end() :].strip()
    if trailing:
        if small < float("inf") or float(trailing) >= large:
            return match[0]
        section += float(trailing)
    return format(total + section, "f").rstrip("0").rstrip(".")


def cjk_compounds(text: str) -> str:
    """`text` with each compound of numeral units in digits."""
    return _CJK_COMPOUND.sub(_cjk_compound, text)
