"""Reading the amount a Trust Game answer sends, as a careful person would (seed 001, App. E).

The role-play prompts (Appendix B.1, B.2) end "Finally, I will give ___ dollars" and the
forecast prompt (C.3.1) "Finally, I will send ___ dollars". Every trust scenario and the
journeys' trust place read those answers here, and only here. The grammar (also in
docs/trust-population.md, "Reading the amount"):

- **Closing sentence.** "Finally, I will give|send|transfer" (case, comma and markup ignored)
  up to the end of its sentence (a line break, or ".", "!", "?", ";" not inside a number).
  Text before it is reasoning; text after its sentence is not read. Several closing sentences
  must name the same amount, else the answer is ambiguous.
- **Markup is ignored**: markdown (`**`, `*`, `__`, `_`, backticks, headings, bullets) and
  LaTeX (`\\boxed{}`, `\\text{}`, `$...$`, `\\(...\\)`, `\\$`).
- **The amount** is the first amount expression in the sentence: a number ("7", "7.00", "$7",
  "7$", "1,000" with thousands commas, "-1" and Unicode minus), number words ("seven", "one
  thousand"), "a dollar" (1), "nothing"/"none"/"no money" (0), "all of it"/"everything"/"the
  full amount" (the endowment; "all of my N dollars" must name the endowment), "half of it"
  (half the endowment). A unit may follow ("dollars", "$", "USD"), and cents ("5 dollars and
  50 cents" is 5.50; "50 cents" is 0.50).
- **The instruction echoed is not an answer**: a closing sentence right after "End with"
  (the prompt's own words, repeated, as small models do: "END WITH 'Finally, I will give you
  2 dollars'") is not read.
- **Asides after the amount are not read**: parentheses, brackets, and what follows an em dash
  or a comma ("4 dollars (tripled to 12)", "5 dollars, keeping 5" are 4 and 5).
- **Asked again, never guessed** (the reason says which): no closing sentence; a closing
  sentence with no amount or a blank ("___"); a range ("3-5", "3 to 5", "between 3 and 5");
  two different amounts ("4 or 5", "5, or maybe 6", "5, actually 3"; an alternative naming the
  same amount is fine); an approximate amount ("about", "around", "~"); a bound ("up to",
  "at least"); a percentage; "all" naming another amount than the endowment.

What the reader returns is the amount stated; whether the game allows it (whole dollars from 0
to the endowment) is `TrustGame.check_transfer`'s rule, so "1,000 dollars" is read as 1000 and
then refused as out of range instead of being read as 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from personasim.environments.classroom.numeric_answers import words_to_number

__all__ = ["CLOSING_SENTENCE", "TransferReading", "read_transfer"]

CLOSING_SENTENCE = "Finally, I will give N dollars"
"""How the re-ask names the sentence the prompt asks for."""

_DASHES = str.maketrans(dict.fromkeys("\u2212\u2012\u2013\ufe63\uff0d", "-"))
_LATEX = re.compile(r"\\(?:boxed|text|textbf|mathrm|mathbf|emph)\s*\{|\\[()\[\]]|\\left|\\right")
_MARKER = re.compile(r"finally\s*,?\s*i\s+will\s+(?:give|send|transfer)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"\n|[!?;]|\.(?!\d)")
_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|hundred|thousand|million)"
)
_OF_IT = r"(?:\s+of)?(?:\s+(?:it|my|the|this|our|money|endowment|amount|sum|available|total))*"
_AMOUNT = re.compile(
    rf"""(?P<all>\b(?:all|everything|the\s+(?:full|entire|whole)(?:\s+(?:amount|endowment|sum))?)
             \b{_OF_IT})
       |(?P<half>\bhalf\b{_OF_IT})
       |(?P<nothing>\b(?:nothing|none|no\s+money)\b)
       |(?P<a_dollar>\ba\s+(?:single\s+)?dollar\b)
       |(?P<number>(?:(?P<sign>-)\s*)?(?:\$\s*)*(?:(?P<sign2>-)\s*)?
           (?:\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+))
       |(?P<words>\b{_WORD}\b(?:[\s-]+(?:and[\s-]+)?{_WORD}\b)*)""",
    re.IGNORECASE | re.VERBOSE,
)
_UNIT = re.compile(r"(?:\s*(?:\$|dollars?\b|bucks\b|usd\b|us\s+dollars\b))*", re.IGNORECASE)
_CENTS = re.compile(rf"\s*(?:and\s+)?(?P<cents>\d{{1,2}}|{_WORD})\s*cents?\b", re.IGNORECASE)
_ONLY_CENTS = re.compile(r"\s*cents?\b", re.IGNORECASE)
_PERCENT = re.compile(r"\s*(?:%|percent\b)", re.IGNORECASE)
_RANGE_TAIL = re.compile(r"^\s*(?:-|to\b|through\b)\s*(?:\$\s*)?(?:\d|\.\d|" + _WORD + r"\b)", re.I)
_ALTERNATIVE = re.compile(
    r"\b(?:or|maybe|perhaps|actually|rather|instead|make\s+it|no)\b[\s,:]*"
    r"(?:(?:maybe|perhaps|even|just|only)\s+)?",
    re.IGNORECASE,
)
_HEDGE = re.compile(r"~|≈|\b(?:about|around|approximately|roughly|nearly|almost)\b", re.I)
_BOUND = re.compile(
    r"\b(?:up\s+to|at\s+(?:most|least)|no\s+(?:more|less)\s+than|(?:more|less|fewer)\s+than"
    r"|a\s+(?:maximum|minimum)\s+of)\b",
    re.IGNORECASE,
)
_BETWEEN = re.compile(r"\bbetween\b", re.IGNORECASE)
_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_ECHO = re.compile(r"\bend\s+with\s*[:'\"\u2018\u201c]*\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class TransferReading:
    """The amount an answer states, or why none can be read (said to the model on re-ask)."""

    amount: float | None
    problem: str | None = None


def read_transfer(reply: str, endowment: int, closing: str = CLOSING_SENTENCE) -> TransferReading:
    """The amount of `reply`'s closing sentence(s) under the module's grammar; `closing` is
    how a missing closing sentence is named in the re-ask (the forecast says "send")."""
    text = _plain(reply)
    readings = [
        _read_sentence(_sentence(text, m.end()), endowment)
        for m in _MARKER.finditer(text)
        if not _ECHO.search(text, 0, m.start())
    ]
    if not readings:
        return TransferReading(None, f"it does not end with '{closing}'")
    problems = [r for r in readings if r.problem]
    if problems:
        return problems[0]
    amounts = sorted({r.amount for r in readings if r.amount is not None})
    if len(amounts) > 1:
        named = " and ".join(_shown(a) for a in amounts)
        return TransferReading(None, f"its closing sentences name different amounts ({named})")
    return readings[0]


def _plain(reply: str) -> str:
    """`reply` without markdown and LaTeX markup, with every minus sign and en dash as '-'."""
    text = _LATEX.sub(" ", reply.translate(_DASHES)).replace("\\$", "$")
    text = re.sub(r"\\[,;! ]", " ", text).replace("{", "").replace("}", "")
    text = re.sub(r"__(\S(?:.*?\S)?)__", r"\1", text)  # __bold__; a bare ___ is a blank
    text = re.sub(r"(?<![\w_])_(?!_)(\S(?:.*?\S)?)(?<!_)_(?![\w_])", r"\1", text)
    return text.replace("*", "").replace("`", "")


def _sentence(text: str, start: int) -> str:
    """The rest of the closing sentence that starts before `start`."""
    end = _SENTENCE_END.search(text, start)
    return text[start : end.start() if end else len(text)]


def _read_sentence(sentence: str, endowment: int) -> TransferReading:
    """The amount one closing sentence names (the text after 'Finally, I will give')."""
    if "___" in sentence:
        return TransferReading(None, "the amount is left blank ('___'); write the number")
    match = _AMOUNT.search(sentence)
    if match is None:
        return TransferReading(None, f"its closing sentence names no amount ({_quote(sentence)})")
    before = sentence[: match.start()]
    if problem := _prefix_problem(before, sentence):
        return TransferReading(None, problem)
    amount, end = _value(match, sentence, endowment)
    if isinstance(amount, str):
        return TransferReading(None, amount)
    rest = sentence[end:]
    if _PERCENT.match(rest):
        return TransferReading(None, "it gives a percent, not an amount of dollars")
    if _RANGE_TAIL.match(rest):
        return TransferReading(None, f"it gives a range ({_quote(sentence)}), not one amount")
    if problem := _alternatives(amount, rest, endowment):
        return TransferReading(None, problem)
    return TransferReading(amount)


def _prefix_problem(before: str, sentence: str) -> str | None:
    """Why the words between the verb and the amount make it no decision, if they do."""
    if _BETWEEN.search(before):
        return f"it gives a range ({_quote(sentence)}), not one amount"
    if _HEDGE.search(before):
        return f"it gives an approximate amount ({_quote(sentence)}), not the amount"
    if _BOUND.search(before):
        return f"it gives a bound ({_quote(sentence)}), not the amount"
    return None


def _value(match: re.Match[str], sentence: str, endowment: int) -> tuple[float | str, int]:
    """The amount `match` names (with its unit and cents) and where it ends; a str: a problem."""
    end = match.end()
    if match["nothing"]:
        return 0.0, end
    if match["a_dollar"]:
        return 1.0, end
    if match["half"]:
        return endowment / 2, end
    if match["all"]:
        named = _AMOUNT.match(sentence, _skip_sign(sentence, end))
        if named and (named["number"] or named["words"]):
            value, end = _value(named, sentence, endowment)
            if value != endowment:
                return f"it says all of it but names {_shown(value)} of the ${endowment}", end
        return float(endowment), end
    if match["number"]:
        digits = re.sub(r"[^\d.]", "", match["number"])
        value = float(digits) * (-1 if (match["sign"] or match["sign2"]) else 1)
    else:
        words = words_to_number(match["words"])
        if words is None:  # pragma: no cover - the pattern only matches number words
            return f"its closing sentence names no amount ({_quote(sentence)})", end
        value = words
    if cents := _ONLY_CENTS.match(sentence, end):
        return value / 100, cents.end()
    end = _UNIT.match(sentence, end).end()
    if cents := _CENTS.match(sentence, end):
        said = cents["cents"]
        amount = float(said) if said.isdigit() else words_to_number(said)
        return value + (amount or 0.0) / 100, _UNIT.match(sentence, cents.end()).end()
    return value, end


def _skip_sign(sentence: str, end: int) -> int:
    """Where a number after "all (of my)" starts: past spaces."""
    return end + len(sentence[end:]) - len(sentence[end:].lstrip())


def _alternatives(amount: float, rest: str, endowment: int) -> str | None:
    """A second, different amount offered after the first ("or 6", "actually 3"), outside
    asides in brackets or after an em dash."""
    rest = _ASIDE.sub(" ", rest).split("\u2014", 1)[0]
    for marker in _ALTERNATIVE.finditer(rest):
        other = _AMOUNT.match(rest, marker.end())
        if other is None:
            continue
        value, _ = _value(other, rest, endowment)
        if isinstance(value, str) or value != amount:
            shown = value if isinstance(value, str) else _shown(value)
            return f"it names two different amounts ({_shown(amount)} and {shown})"
    return None


def _shown(amount: float) -> str:
    return f"${amount:g}" if amount >= 0 else f"-${-amount:g}"


def _quote(sentence: str) -> str:
    said = " ".join(sentence.split())
    return f"'...{said[:60]}'" if said else "nothing after 'I will give'"
