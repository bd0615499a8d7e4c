"""The markup of a Trust Game answer removed before it is read: markdown, LaTeX, struck-through
text, odd dashes and spaces, vulgar fractions (docs/trust-population.md, "Reading the amount",
rule 1). `decision_text` finds the decision sentences in what this module leaves."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["plain"]

_FRACTION_CHARS = {"½": " 1/2 ", "⅓": " 1/3 ", "⅔": " 2/3 ", "¼": " 1/4 ", "¾": " 3/4 "}
_DASHES = str.maketrans(dict.fromkeys("\u2212\u2010\u2011\u2012\u2013\ufe63\uff0d", "-"))
_SPACES = str.maketrans(dict.fromkeys("\u00a0\u202f\u2009\u2007", " "))
_MATH = re.compile(r"(?<!\\)\$((?:[^$\n]*\\[^$\n]*|[\d\s.,+\-*/=×()^{}]*[\d}]))(?<!\\)\$")
"""A LaTeX math span ($7$, $\\boxed{2}$): its '$' are delimiters, not dollar signs."""
_LATEX = (
    (re.compile(r"\\d?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"\1/\2"),
    (re.compile(r"\\(?:times|cdot)\b"), " × "),
    (re.compile(r"\\(?:approx|sim)\b"), " ~ "),
    (re.compile(r"\\(?:boxed|text\w*|math\w*|emph|operatorname)\s*\{"), " "),
    (re.compile(r"\\(?:left|right|displaystyle)\b|\\[()\[\]]"), " "),
    (re.compile(r"\\([$%])"), r"\1"),
    (re.compile(r"\\,"), ""),
    (re.compile(r"\\[;! ]"), " "),
)


def plain(reply: str) -> str:
    """`reply` without markdown and LaTeX markup; dashes as '-', odd spaces as ' ', vulgar
    fractions as 'a/b', "U.S." as "US"; '*' between numbers as '×' (a product)."""
    text = reply
    for char, spelled in _FRACTION_CHARS.items():
        text = text.replace(char, spelled)
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_SPACES)
    text = _MATH.sub(r" \1 ", text)
    for pattern, replacement in _LATEX:
        text = pattern.sub(replacement, text)
    text = re.sub(r"~~[^~\n]+~~", " ", text)  # struck through: crossed out
    text = text.replace("{", "").replace("}", "").replace("`", "")
    text = re.sub(r"(?<=\d)\s*[*×x·]\s*(?=\$?\d)", " × ", text)  # a product: 10 * 0.6
    text = text.replace("*", "")
    text = re.sub(r"__(\S(?:.*?\S)?)__", r"\1", text)  # __bold__; a bare ___ is a blank
    text = re.sub(r"(?<![\w_])_(?!_)(\S(?:.*?\S)?)(?<!_)_(?![\w_])", r"\1", text)
    return re.sub(r"\bU\.S\.(?!\w)", "US", text, flags=re.IGNORECASE)
