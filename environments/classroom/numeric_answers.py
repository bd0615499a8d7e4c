"""Reading the number a free-text answer gives, as a careful grader reads it (seed 000).

One reader for every answer (the no-persona baseline and every persona), with a written rule
(docs/classroom.md, "Reading answers"), measured on a labelled corpus of real replies
(tests/data/gsm8k_replies):

1. **Explicit final statements** are found: "final answer" followed by ":", "=", "is", "would
   be", "will be", "should be" (or, as a heading or bold label, directly by the number:
   "### Final Answer\\n18"); "answer" followed by ":", "=", "is", ... ("the answer is 42",
   "Answer:42", "ANSWER : 42", "the answer (arabic numerals) is 70", "the answer to the
   question is 26", "the actual answer in the given format: 31", "the answer of 48 days");
   a conclusion introduced as one ("so, to answer the original question, you'll need 928
   oz", "to answer your question: 12"); `\\boxed{}` / `\\fbox{}`; GSM8K's "#### N".
   Markdown (`**`, `__`, `#`) may surround any of them. An answer that is not the reply's own
   present one is not a statement: past tense ("my answer was 18") and "the original /
   previous / earlier / first / initial / old / wrong / your answer is"; nor is "the answer"
   as a step's goal ("divide by 2 to get the answer: 2 * 7 = 14"; "to get the final
   answer: 14" stays one).
2. A statement's number is the first number of its clause (to the end of its sentence or
   line), at most `MAX_LEAD_WORDS` words after the marker ("The answer is that she makes 18
   dollars"); an equation written right after the marker is read by its result ("4 x 5 = 20"
   is 20); a fraction "3/4" is 0.75; number words are read right after a marker only
   ("Final Answer: forty-two"; in running text "one" is too often not a number), and only
   when the clause has no number in digits ("Two car prices of $10 each" is 10). A relation
   is no value ("the answer is 3 more than 50%" states nothing). Units may
   stand in the equation ("20 hours + 20 hours = 40 hours" is 40), and its result may follow
   "which equals" ("10 + 1 * 6, which equals 8" is 8); a number followed by an
   operator and a bracketed variable ("2 × (a + b)") is algebra, no number. "18 or 20" right after a
   marker is two answers.
3. If every statement gives the same number, that is the answer ("explicit"); anything after
   it (an aside, a check: "I checked step 2 twice (it was 12)") never overrides it.
4. Statements that give **different** numbers make the reply "ambiguous": no number is read.
5. Without any statement, the reply's last number is read ("last_number"; a number in a
   hyphenated modifier, "two 4-week months", is not a quantity and is skipped; a number after
   "for" right after a result in its own sentence says whom the result is for, "18 days for 5
   people" is 18); with no number at all, nothing ("none").

Typography never makes a right answer wrong: Unicode minus signs and dashes are "-"; "$-5",
"-$5", "~18", "≈18" are -5, -5, 18, 18; a comma followed by exactly three digits groups
thousands ("1,500" is 1500, "$1,234" is 1234), a single comma followed by one or two digits is a
decimal comma ("1,5" is 1.5, which no thousands grouping can write), "1, 5" is two numbers.

`follows_format` says whether a reply closes in the exact format the paper's persona prompts ask
for, `Final Answer: {number}`: format compliance is reported beside accuracy, not mixed into it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MAX_LEAD_WORDS",
    "NOT_OWN",
    "TOLERANCE",
    "AnswerReading",
    "Reading",
    "follows_format",
    "read_answer",
    "read_number",
    "words_to_number",
]

MAX_LEAD_WORDS = 4
"""Words allowed between a marker and its number ("the answer is that she makes 18")."""
TOLERANCE = 1e-6
"""Two statements within this distance state the same number ("18" and "18.00")."""

Reading = Literal["explicit", "last_number", "ambiguous", "none"]
"""How an answer was read: from its explicit final statements, from its last number (no
statement), not at all because its statements disagree, or not at all (no number)."""

_DASHES = str.maketrans(dict.fromkeys("\u2212\u2012\u2013\u2014\ufe63\uff0d", "-"))

_NUMBER = re.compile(
    r"(?:(?<![\w)\]])(?P<sign>-)\s*)?(?:\\?\$\s*)?(?:(?P<sign2>-)\s*)?"
    r"(?P<body>\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])"  # 1,234.50: thousands commas
    r"|\d+,\d{1,2}(?![\d,])"  # 1,5: a decimal comma
    r"|\d+(?:\.\d+)?|\.\d+)"
    r"(?:/(?P<denominator>\d+)(?![\d.,]))?"  # 3/4: a fraction
)

_SEPARATOR = (
    r"(?:\s*\([^()\n]{0,40}\))?[\s*_]*"  # "the answer (arabic numerals) is", "**Answer**:"
    r"(?P<sep>:|=|\bis\b|\bwould\s+be\b|\bwill\s+be\b|\bshould\s+be\b)"
)
_FINAL = re.compile(rf"\bfinal\s+answer\b(?:{_SEPARATOR})?", re.IGNORECASE)
NOT_OWN = ("original", "previous", "earlier", "first", "initial", "old", "wrong", "your")
"""Words before "answer" that name an answer other than the reply's own present one."""
_NOT_OWN = "".join(rf"(?<!{word} )" for word in NOT_OWN)
_ANSWER = re.compile(
    rf"{_NOT_OWN}\banswer\b(?:\s+(?:to|in)\s+(?:[A-Za-z]+\s+){{0,2}}[A-Za-z]+)?{_SEPARATOR}",
    re.IGNORECASE,
)
_ANSWER_OF = re.compile(r"\bthe\s+answer\s+of\b", re.IGNORECASE)  # "the answer of 48 days"
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
# "so, to answer the (original) question, you'll need 928 oz": a conclusion, stated as such
_TO_ANSWER = re.compile(
    r"\bto\s+answer\s+(?:the|this|your)\s+(?:[A-Za-z]+\s+)?question\s*[,:]", re.IGNORECASE
)
# "we divide by 2 to get the answer: 2 * 7 = 14": the answer as a step's goal, working
# ("to get the final answer: 14" stays a statement)
_GOAL = re.compile(
    r"\bto\s+(?:get|find|reach|obtain|calculate|compute|determine|work\s+out)\s+"
    r"(?:the|an|our|my)\s+$",
    re.IGNORECASE,
)
_HASHES = re.compile(r"^[ \t]*####[ \t]*", re.MULTILINE)

# what may stand between a marker and its number: markdown, quotes, a currency sign, "about"
_OPENING = re.compile(
    r"^[\s*_:{(\[$~≈\"'`]*(?:(?:about|around|approximately|roughly)\b[\s$~]*)?", re.IGNORECASE
)
# where a statement's clause ends: a line break, or a full stop that is not a decimal point
_CLAUSE_END = re.compile(r"\n|(?<!\d)\.(?!\d)|\.(?=\s)|[!?;]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# a term of an equation: "20 hours", "(3)", "$5", "10 (total)"
_TERM = r"\(?\s*\\?\$?\s*\d[\d,]*(?:\.\d+)?\s*\)?(?:\s*[A-Za-z]+)?(?:\s*\([^()\n]{0,20}\))?"
_OP = r"\s*(?:[+\-*/x×÷·^]|\\times|\\cdot|\\div)\s*"
_RESULT = r"\s*(?:=|,?\s*(?:which\s+)?(?:equals|is\s+equal\s+to)\b)\s*"
_EXPRESSION = re.compile(rf"^{_TERM}(?:{_OP}{_TERM})+{_RESULT}")
_ALGEBRA = re.compile(r"^\s*(?:[+*/x×÷·^]|\\times|\\cdot)\s*\(+\s*[A-Za-z]")
_ALONE = re.compile(r"^[\s*_$\\~≈{]*-?\s*[\d.,/]+[\s*_}]*(?:[A-Za-z]+[\s*_]*)?\.?\s*$")
_DIGIT = re.compile(r"\d")
_RELATION = re.compile(r"^\s*(?:more|less|fewer)\s+than\b|^\s*times\s+(?:as|more)\b", re.I)
_COMPOUND = re.compile(
    r"-[A-Za-z]+\s+(?!(?:of|to|in|for|and|or)\b)[A-Za-z]"
)  # "4-week months": a modifier, not a quantity
_QUALIFIER = re.compile(r"\bfor\s+$")  # "18 days for 5 people": whom the result is for
_ALTERNATIVE = re.compile(r"^\s*,?\s*or\s+", re.IGNORECASE)

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_WORDS_ALTERNATION = "|".join([*_UNITS, *_TENS, *_SCALES])
_WORDS = re.compile(
    rf"^(?P<neg>(?:minus|negative)\s+)?(?P<words>(?:{_WORDS_ALTERNATION})\b"
    rf"(?:[\s-]+(?:and[\s-]+)?(?:{_WORDS_ALTERNATION})\b)*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AnswerReading:
    """What a careful grader reads in a reply: the number (None when ambiguous or absent),
    how it was read, and the distinct numbers of its explicit statements."""

    value: float | None
    reading: Reading
    stated: tuple[float, ...] = ()

    @property
    def explicit(self) -> bool:
        """The reply states its final answer explicitly (and unambiguously)."""
        return self.reading == "explicit"


def read_number(token: str) -> float | None:
    """The first number in `token` (see the module's typography rules), or None."""
    match = _NUMBER.search(token.translate(_DASHES))
    return None if match is None else _value(match)


def _value(match: re.Match[str]) -> float:
    body = match["body"]
    if re.fullmatch(r"\d+,\d{1,2}", body):
        body = body.replace(",", ".")
    number = float(body.replace(",", ""))
    if match["denominator"] is not None and int(match["denominator"]) != 0:
        number /= int(match["denominator"])
    return -number if (match["sign"] or match["sign2"]) else number


def words_to_number(text: str) -> float | None:
    """Number words at the start of `text` ("forty-two", "one hundred and five"), or None."""
    match = _WORDS.match(text.strip())
    if match is None:
        return None
    total, current = 0, 0
    for word in re.split(r"[\s-]+", match["words"].lower()):
        if word in _UNITS:
            current += _UNITS.index(word)
        elif word in _TENS:
            current += 20 + 10 * _TENS.index(word)
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total, current = total + max(current, 1) * _SCALES[word], 0
    value = float(total + current)
    return -value if match["neg"] else value


def _clause(text: str) -> tuple[str, bool]:
    """The text a marker introduces: to the end of its sentence or line; and whether it is
    the next line (after a bare label, "Answer:\\n42")."""
    body = text.lstrip(" \t*_#:")
    next_line = body.startswith("\n")
    if next_line:
        body = body.lstrip()
        return body.split("\n", 1)[0], True
    end = _CLAUSE_END.search(body)
    return (body if end is None else body[: end.start()]), next_line


def _stated(text: str, directly: bool = False) -> list[float] | None:
    """The number(s) a marker's following `text` states: one, two ("18 or 20"), or None.
    `directly`: the number must come first (a bare heading, "####"). A bare label's next line
    states a number only when it is that number alone (a unit word at most): "Here is my
    answer:" followed by working states nothing."""
    clause, next_line = _clause(text)
    clause = clause.translate(_DASHES)
    if next_line and not _ALONE.match(clause):
        return None
    lead = _OPENING.match(clause)
    rest = clause[lead.end() :] if lead else clause
    written = rest[:1].isalpha() and not _DIGIT.search(rest)
    if written and (words := words_to_number(rest)) is not None:
        return [words]
    match = _NUMBER.search(rest)
    if match is None:
        return None
    before = rest[: match.start()]
    if (directly and before.strip(" *_$\\")) or len(_WORD.findall(before)) > MAX_LEAD_WORDS:
        return None
    tail = rest[match.start() :]
    equation = _EXPRESSION.match(tail)
    if equation:
        result = read_number(tail[equation.end() :][:40])
        if result is not None:
            return [result]
    value = _value(match)
    after = rest[match.end() :]
    if _ALGEBRA.match(after) or _RELATION.match(after):
        return None
    alternative = _ALTERNATIVE.match(after)
    if alternative:
        other = _NUMBER.match(after[alternative.end() :].lstrip("$~ "))
        if other is not None:
            return [value, _value(other)]
    return [value]


def _boxed_content(text: str) -> str:
    """The text inside a `\\boxed{` whose opening brace has been consumed."""
    depth = 1
    for index, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return text[:index]
    return text


def _goal(text: str, match: re.Match[str]) -> bool:
    """The marker names the answer as what a step is for ("to get the answer:")."""
    return _GOAL.search(text[max(0, match.start() - 40) : match.start()]) is not None


def _statements(text: str) -> list[float]:
    """Every number an explicit final statement of `text` gives, in order."""
    found: list[tuple[int, list[float]]] = []
    for match in _FINAL.finditer(text):
        numbers = _stated(text[match.end() :], directly=match["sep"] is None)
        if numbers is not None:
            found.append((match.start(), numbers))
    for pattern in (_ANSWER, _ANSWER_OF, _TO_ANSWER):
        for match in pattern.finditer(text):
            if _goal(text, match):
                continue
            numbers = _stated(text[match.end() :])
            if numbers is not None:
                found.append((match.start(), numbers))
    for match in _BOXED.finditer(text):
        numbers = _stated(_boxed_content(text[match.end() :]))
        if numbers is not None:
            found.append((match.start(), numbers))
    for match in _HASHES.finditer(text):
        numbers = _stated(text[match.end() :], directly=True)
        if numbers is not None:
            found.append((match.start(), numbers))
    return [value for _, numbers in sorted(found, key=lambda item: item[0]) for value in numbers]


def _distinct(values: list[float]) -> tuple[float, ...]:
    kept: list[float] = []
    for value in values:
        if not any(math.isclose(value, seen, abs_tol=TOLERANCE) for seen in kept):
            kept.append(value)
    return tuple(kept)


def read_answer(text: str) -> AnswerReading:
    """The answer a careful grader reads in `text` (the module's rule, steps 1–5)."""
    stated = _distinct(_statements(text))
    if len(stated) == 1:
        return AnswerReading(stated[0], "explicit", stated)
    if len(stated) > 1:
        return AnswerReading(None, "ambiguous", stated)
    last = _last_number(text.translate(_DASHES))
    return AnswerReading(None, "none") if last is None else AnswerReading(last, "last_number")


def _last_number(text: str) -> float | None:
    """Without a statement: the reply's last number (not one in a hyphenated modifier, nor a
    qualifier "for 5 people" after a result in its own sentence: "18 days for 5 people")."""
    numbers = [m for m in _NUMBER.finditer(text) if not _COMPOUND.match(text, m.end())]
    if not numbers:
        return None
    last = numbers[-1]
    if len(numbers) > 1 and _QUALIFIER.search(text, 0, last.start()):
        result = numbers[-2]
        if not _CLAUSE_END.search(text, result.end(), last.start()):
            return _value(result)
    return _value(last)


_ASKED_FORMAT = re.compile(
    r"(?:^|[\s.!?])Final Answer: (?:-?\d{1,3}(?:,\d{3})+|-?\d+)(?:\.\d+)?\.?\s*$"
)


def follows_format(text: str) -> bool:
    """The reply ends with the paper's asked closing, `Final Answer: {number}` exactly: those
    words and a plain number (no markdown, currency, units or words), at most a full stop."""
    return _ASKED_FORMAT.search(text) is not None
