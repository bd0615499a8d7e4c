"""Reading an effect size a model states (trust-beliefs, seed 001 Appendix C.2) as an η²
fraction, so elicited and simulated η² can be subtracted.

CTX+$ (Appendix C.2.2) states a mean and sd per level for 100 individuals per group (prompt
C.1.3); `analysis.stats.eta_squared_from_group_stats` recovers the one-way ANOVA η² from them,
which reproduces the sample output's "omnibus_effect_size": 0.2335.

NOCTX+TR / CTX+TR (Appendix C.2.1) may state a word. `effect_size_value` maps words to the
midpoint of Cohen's η² band, as the paper's sample output reads them:

======================================  ===========  ===============================
word (case/whitespace-insensitive)      η²           band
======================================  ===========  ===============================
"negligible", "none", "very small"      0.005        [0, .01)
"small"                                 0.035        [.01, .06) — C.2.1 "1% and 6%"
"medium", "moderate"                    0.10         [.06, .14) — C.2.1 "0.10"
"large"                                 0.20         [.14, .26)
======================================  ===========  ===============================

"large" is open-ended in Cohen's convention; we close it at .26 so that its band is as wide
as "medium"'s (.08) and take that band's midpoint. Numbers and numeric strings ("0.12",
"12%") pass through, percentages converted to fractions.
"""

from __future__ import annotations

import math
import re

import numpy as np

__all__ = ["QUALITATIVE_ETA_SQUARED", "effect_size_value"]

QUALITATIVE_ETA_SQUARED: dict[str, float] = {
    "negligible": 0.005,
    "none": 0.005,
    "very small": 0.005,
    "small": 0.035,
    "medium": 0.10,
    "moderate": 0.10,
    "large": 0.20,
}


def effect_size_value(value: str | float | int) -> float:
    """A stated effect size as an η² fraction, so elicited and simulated η² can be subtracted.

    Numbers and numeric strings pass through ("12%" → 0.12); Cohen's words map to their
    band's midpoint (see the module docstring); a number glossed by its word and a range of
    two numbers or adjacent words are read as `_read_effect_text` says. Anything else, or a
    number outside [0, 1], raises ValueError.
    """
    if isinstance(value, bool):
        raise ValueError(f"effect size must be a number or a word, got {value!r}")
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
    elif isinstance(value, str):
        number = _read_effect_text(value)
    else:
        raise ValueError(f"effect size must be a number or a word, got {value!r}")
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"effect size {value!r} is not a proportion of variance in [0, 1]")
    return number


# Cohen's η² bands of the words (see the module docstring), for checking a number against the
# word that glosses it ("0.10 (medium)") and for reading ranges of adjacent words.
_BANDS: dict[str, tuple[float, float]] = {
    "negligible": (0.0, 0.01),
    "small": (0.01, 0.06),
    "medium": (0.06, 0.14),
    "large": (0.14, 1.0),
}
_BAND_OF = {"none": "negligible", "very small": "negligible", "moderate": "medium"}
_TOKEN = re.compile(
    r"(?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*%?)|(?P<word>very[\s_-]+small|negligible|none|small|"
    r"medium|moderate|large)|(?P<range>\bto\b|[-–—])|(?P<filler>\ba\b|\ban\b|\beffects?\b|"
    r"\bsized?\b|\babout\b|\baround\b|\broughly\b|\bapproximately\b|\beta[- ]?squared\b|"
    r"η²|η\^2|[~≈=:,;.()\[\]\s])|(?P<other>\S)",
    re.IGNORECASE,
)


def _read_effect_text(value: str) -> float:
    """What a careful reader takes a stated effect size to be: a number ("0.12", "12%"), a
    word, a number glossed by its word ("0.10 (medium)"; they must agree), or a range of two
    numbers or of two adjacent words ("moderate to large": the mean of the two). Anything else
    ("small or large", "small to large", "0.5 (small)", prose) is ambiguous: ValueError."""
    numbers: list[float] = []
    words: list[str] = []
    ranged = False
    for token in _TOKEN.finditer(value):
        if token["other"]:
            raise _unreadable(value)
        if token["number"]:
            text = token["number"].replace(" ", "")
            numbers.append(float(text[:-1]) / 100.0 if text.endswith("%") else float(text))
        elif token["word"]:
            word = " ".join(re.split(r"[\s_-]+", token["word"].lower()))
            words.append(_BAND_OF.get(word, word))
        ranged = ranged or bool(token["range"])
    if ranged and len(numbers) + len(words) < 2:
        raise _unreadable(value)
    if len(numbers) == 2 and ranged:
        return _glossed((numbers[0] + numbers[1]) / 2.0, words, value)
    if len(numbers) == 1 and not ranged:
        return _glossed(numbers[0], words, value)
    if not numbers and len(words) == 1 and not ranged:
        return QUALITATIVE_ETA_SQUARED[words[0]]
    order = list(_BANDS)
    if not numbers and len(words) == 2 and ranged:
        first, second = sorted(order.index(w) for w in words)
        if second - first == 1:
            return (QUALITATIVE_ETA_SQUARED[words[0]] + QUALITATIVE_ETA_SQUARED[words[1]]) / 2
    raise _unreadable(value)


def _glossed(number: float, words: list[str], value: str) -> float:
    """A number, checked against any word said with it (both must describe the same band)."""
    for word in words:
        low, high = _BANDS[word]
        if not low <= number <= high:
            raise ValueError(f"effect size {value!r}: {number:g} is not {word!r} (η² {low}–{high})")
    return number


def _unreadable(value: str) -> ValueError:
    words = ", ".join(repr(w) for w in QUALITATIVE_ETA_SQUARED)
    return ValueError(
        f"unrecognised effect size {value!r}: expected a number in [0, 1], a percentage "
        f"such as '12%', one of {words}, a number with its word ('0.10 (medium)') or a "
        "range of two adjacent words ('moderate to large')"
    )
