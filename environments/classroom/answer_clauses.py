"""Clauses of the classroom's answer reader: what one statement's clause states.

A clause (the words after "Final Answer:", a `\\boxed{}`'s content, a JSON answer field, a
closing sentence) is read without its asides in brackets, with number words in digits: a value
stated first is the value unless another quantity joins it ("4 and 6": two answers); an
equation states its result; a sentence with several numbers states the one after a result word
("is", "makes", "has", "=") or before "left", "in total". A negation, a relation ("5 more
than"), algebra or an expression cut short states no value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from personasim.environments.classroom.answer_numbers import (
    DASHES,
    NUMBER,
    SIGN_WORD,
    Number,
    number_of,
    numbers_in,
    read_number,
    with_digits,
)
from personasim.environments.classroom.answer_words import without_years

__all__ = [
    "ACCOUNTING",
    "ASIDE",
    "BECAUSE",
    "CLAUSE_END",
    "CONCLUDING_BREAK",
    "FRACTION_WORDS",
    "HEDGED",
    "LISTED",
    "NEGATED",
    "NO_ANSWER",
    "NO_NUMBER",
    "RANGE",
    "SENTENCE_RULES",
    "SEVERAL",
    "UNSURE",
    "WORKED",
    "ClauseValue",
    "Context",
    "Statement",
    "below_zero_signed",
    "clause_of",
    "clause_value",
    "prepared",
    "without_asides",
]

NO_NUMBER = "its statement gives no number"
"""The problem of a statement with no number ("Final Answer: cannot be determined")."""
NEGATED = "it says what the answer is not"
"""The problem of a negated statement ("Answer: not possible")."""
LISTED = "its closing sentence lists quantities"
SEVERAL = "its closing sentence states several quantities"
SENTENCE_RULES = ("closing", "concluding")
"""The rules that read a reply's closing sentence as a whole; their value is checked against the
question."""
"""The problems of a closing sentence the question may still settle (answer_conclusion.py)."""
NO_ANSWER = "it says there is no answer"
"""The problem of a statement that names no answer ("Final Answer: N/A", "cannot be determined")."""
_NO_ANSWER = re.compile(
    r"\b(?:N/?A|none|unknown|undetermined|indeterminate|undefined|impossible|insufficient|"
    r"cannot|can't|can\s+not|unable|not\s+(?:possible|enough|determinable|solvable))\b|"
    r"^[\s_*.]*_{2,}[\s_*.]*$|无法|不能|不可能|impossible|imposible|unmöglich|impossível",
    re.IGNORECASE,
)
ClauseValue = tuple[float | None, tuple[float, ...], str | None]
"""What a clause states: (value, candidates where it is ambiguous, why it states no value)."""

# --- clauses: what one statement says -----------------------------------------------------------

_DIGIT = re.compile(r"\d")
_DANGLING = re.compile(r"(?:[+×*÷/^=−-]|\bx|\b(?:plus|minus|times))\s*[.!]?\s*$")
"""An expression cut short ("35 x ((age - 10))" without its bracket): no number."""
ASIDE = re.compile(r"\s*\([^()]*\)|\s\[[^\[\]\n]*\]")
_NUMBER_ASIDE = re.compile(r"\s*\([^()]*\d[^()]*\)|\s\[[^\[\]\n]*\d[^\[\]\n]*\]")
"""An aside that states numbers (a breakdown): its hedges are its own; an aside of words alone
("(approximately)") hedges the value before it."""
_PRODUCT = re.compile(r"\s*(?:[+×*÷/^]|\b(?:plus|times|divided\s+by)\b)\s*[$€£]?\d")
"""A value followed by an operation and another number ("6 × 7"): an expression."""
_TIME = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?![\d:])")
"""A time of day ("12:30 PM"): no quantity."""
_DASH_SIGN = re.compile(rf"(?<![\d\s])\s*[{DASHES}](?=[$€£]?\d)|^\s*[{DASHES}](?=[$€£]?\d)")
"""A dash written against a number after words ("is –7"): a minus sign or punctuation, which
the reply does not say."""
_OPENING = re.compile(
    rf"^(?:[\s*_#>\"'`“”«»{DASHES}:|]|-(?=\s)|\\\[|\\\(|\$(?!\s?\d)|"
    r"\b(?:exactly|just|only|precisely|exactement|exactamente|genau)\b)*",
    re.IGNORECASE,
)
CLAUSE_END = re.compile(r"\n|(?<!\d)\.(?!\d)|\.(?=\s|$)|[!?;。！？|]|\s[–—]\s(?=\D)")
_NEXT_CLAUSE = re.compile(r",\s+(?!which\b)|;|\s(?:and|so|then|but)\s", re.IGNORECASE)
"""Where an equation's clause ends and another begins ("6+6=12 games, 5 = 10")."""
_EQUALS = re.compile(r"=|≈|\b(?:equals|is\s+equal\s+to|égale?|gleich|igual\s+a)\b")
_OPERATOR = re.compile(r"[+×*÷/^]|(?<=\d)\s*[x-]\s*(?=\$?\d)|\b(?:plus|minus|times|divided\s+by)\b")
_NEGATION = re.compile(r"^\s*(?:not|n't|no|nicht|pas|no\s+es)\b", re.IGNORECASE)
_RELATION = re.compile(
    r"^\s*%?\s*(?:more|less|fewer|greater|smaller)\s+than\b|^\s*times\s+(?:as|more)\b",
    re.IGNORECASE,
)
_ALGEBRA = re.compile(
    r"\d\s*[×*x]?\s*\(?\s*[a-z]\s*(?:[+\-×*)=]|/(?![a-z]))|\b[a-z]\s*=\s*-?\d", re.IGNORECASE
)
"""A variable beside a number ("3x + 2", "x = 4"); a unit of a rate ("55 m/s") is none."""
_CONJUNCTION = re.compile(
    r"^[\s*_$€£¥%]*(?:[^\W\d_]+[\s$€£¥%]*){0,4}?(?:(?:\b(?:and|or|y|o|et|ou|und|oder|e|oppure)|,|&)"
    r"(?![^\W\d_])|或|和|，|、)\s*"
    r"(?:[^\W\d_]+\s+){0,2}$",
    re.IGNORECASE,
)
_EXPLAINING = re.compile(
    r"\b(?:because|since|as|from|which|that|so|per|each|for|after|by|with|since|in|on|at|of|"
    r"to|when|if|car|porque|weil|da|pois|perché)\b|[:—–]",
    re.IGNORECASE,
)
_RESULT_BEFORE = re.compile(
    r"(?:=|\b(?:is|are|was|be|makes?|made|earns?|earned|has|have|had|gets?|got|needs?|needed|"
    r"costs?|pays?|paid|spends?|spent|saves?|saved|totals?|total\s+of|comes?\s+to|equals|"
    r"earning|making|getting|leaving|totall?ing|costing|paying|spending|saving|"
    r"left\s+with|ends?\s+up\s+with|remains?|owes?|will\s+(?:be|have|"
    r"need|make|pay|get)|est|sont|fait|gagne|es|son|tiene|gana|ist|sind|hat|verdient|"
    r"é|são|tem|têm|ganha|è|sono|ha)\b)"
    r"[\s*_]*(?:(?:a\s+total\s+of|in\s+total|about|exactly|only|just|now|still|then|de|von)\s+)?"
    r"[\s*_]*$",
    re.IGNORECASE,
)
_RESULT_AFTER = re.compile(
    r"^[\s*_]*(?:[^\W\d_]+\s+){0,2}?(?:left|remaining|in\s+total|total|altogether|in\s+all|"
    r"overall|restants?|en\s+total|au\s+total|insgesamt|übrig|en\s+total|restantes)\b",
    re.IGNORECASE,
)
_VALUE_ALONE = re.compile(r"^(?:[\s*_]*(?:[^\W\d_]+\.?|[$€£¥₹%])){0,3}[\s*_.!]*$")
RANGE = re.compile(r"^\s*(?:-|–|—|~|to|à|a|bis|até|hasta|au|到|至)\s*[$€£]?\s*$", re.IGNORECASE)
"""Between two numbers, a range: "12 - 13", "12 to 13", "12 到 13" (or "12-13", which is
read as a number and a signed one)."""
UNSURE = (
    r"\b(?:не\s+уверен[аы]?|кажется|наверное|возможно|vermutlich|creo\s+que|forse|acho\s+que|"
    r"olabilir|sanırım|mungkin|chyba|waarschijnlijk|misschien|có\s+lẽ|nicht\s+sicher|pas\s+sûr|"
    r"no\s+estoy\s+segur[oa]|não\s+tenho\s+certeza|non\s+sono\s+sicur[oa]|niet\s+zeker|"
    r"nie\s+jestem\s+pew(?:ien|na)|emin\s+değilim|tidak\s+yakin|không\s+chắc)\b|것\s*같|아마|शायद|ربما|"
    r"たぶん|多分|大概|也许"
)
"""Uncertainty in the languages the readers know beyond the first six ("Я не уверен",
"vermutlich", "forse", "mungkin", "것 같아요", "शायद", "ربما")."""
HEDGED = re.compile(
    r"[~≈]|\b(?:about|around|approx(?:imately|\.)?|nearly|almost|circa|estimated|environ|"
    r"presque|quelque|aproximadamente|alrededor\s+de|cerca\s+de|casi|unos|unas|uns|umas|"
    r"quase|etwa|rund|knapp|roughly|give\s+or\s+take|somewhere|more\s+or\s+less|or\s+so|"
    r"depending|depends|or\s+thereabouts|something\s+like|at\s+(?:a\s+|the\s+)?(?:minimum|maximum)|"
    r"(?:more|less|fewer|greater|plus|moins|más|menos|mais|mehr|weniger)\s+(?:than|de|als)"
    r"(?=\s+[$€£]?\d)|(?:under|over|above|below|beyond|über|unter)(?=\s+[$€£]?\d)|"
    r"at\s+(?:most|least)|(?<!\badds\s)(?<!\badd\s)(?<!\badded\s)up\s+to|"
    r"no\s+(?:more|fewer|less)\s+than|not\s+more\s+than|"
    r"a\s+(?:maximum|minimum)\s+of|höchstens|mindestens|bis\s+zu|au\s+plus|au\s+moins|"
    r"jusqu'à|como\s+máximo|como\s+mínimo|al\s+menos|no\s+máximo|pelo\s+menos|"
    r"à\s+peu\s+près|ungefähr|mais\s+ou\s+menos|probably|maybe|perhaps|possibly|likely|"
    r"or\s+(?:more|less|fewer)|"
    r"I\s+(?:guess|think|believe|suppose)|je\s+pense|creo|ich\s+glaube|acho|peut-être|probablement|vielleicht|wahrscheinlich|quizás?|tal\s+vez|talvez)\b|"
    r"最多|至少|不超过|大约|约|約|左右|差不多|大概|将近|接近|上下|可能|\d\s*-?\s*ish\b|"
    rf"{UNSURE}|"
    r"\b(?:примерно|около|приблизительно|почти|quasi|ongeveer|bijna|około|prawie|yaklaşık|"
    r"civarında|khoảng|xấp\s+xỉ|ungefär|nästan|cirka|sekitar|kira-kira|hampir)\b|"
    r"およそ|大体|\d\s*(?:くらい|ぐらい|ほど|정도|쯤)|약\s*\d|대략|लगभग|करीब|حوالي|تقريب",
    re.IGNORECASE,
)
"""A hedge or a bound ("about", "~", "roughly", "give or take", "at most", "probably", and
their like in the languages the readers know: "примерно", "ongeveer", "yaklaşık", "約",
"120くらい", "약 120", "लगभग", "حوالي"): not one exact answer, as the labelling rule of the
held-out sets says ("about 5" is ambiguous)."""
FRACTION_WORDS = re.compile(
    r"\d\s*(?:ths|rds|nds)\b|\d\s*[\u1d2c-\u1d6a\u02b0-\u02ff]|\d\s+\d+(?:st|nd|rd|th)\b|(?:\d|\bone|\ba)\s+(?:half|halves|"
    r"thirds?|fifths?|sixths?|eighths?|tenths?|demis?|tiers|medios?|tercios?|Hälften?|Drittel|"
    r"Viertel)\b|(?:\b[1-3]|\bone|\ba)\s+(?:quarters?|quarts?|cuartos?)\b|"
    r"\d\s+(?:quarters?|quarts?|cuartos?)\s+(?:of|de|d['’]|du|des|del)\b",
    re.IGNORECASE,
)
"""Fractions in words ("three eighths", text2num's "3 8ths"): no value is read from them.
"Quarter" and "quart" name coins and a measure too: a fraction only below four or before
"of" ("16 quarters" are coins, "5 quarts" a volume; "3 quarters of the pie" a fraction)."""
"""What may follow a value alone on its line or in a correction: up to three unit words."""


@dataclass(frozen=True)
class Statement:
    """One statement: where it is (and where its clause ends: `end`, None where unknown), the
    rule that found it, and its value, or the candidates that make it ambiguous, or why it
    states no value (`problem`); `passage`: the text the second reader reads for it, where the
    whole reply would mislead that reader (a JSON field, a closing sentence)."""

    position: int
    rule: str
    value: float | None = None
    candidates: tuple[float, ...] = ()
    problem: str | None = None
    end: int | None = None
    passage: str | None = None


@dataclass(frozen=True)
class Context:
    """What every statement of one reply is read with: its text, language and decimal mark,
    and the question it answers where the caller has it (a grader reads with it)."""

    text: str
    language: str | None
    decimal_mark: str | None
    question: str | None = None

    def statement(
        self, position: int, rule: str, clause: str, strict: bool = False, **where: Any
    ) -> Statement:
        """The statement of `clause`, found at `position` by `rule`; `where`: its `end` and
        `passage`."""
        value, candidates, problem = clause_value(clause, self.decimal_mark, self.language, strict)
        return Statement(position, rule, value, candidates, problem, **where)


BECAUSE = (
    r"because|since|as|car|parce\s+que|puisque|parce\s+qu['’]|puisqu['’]|porque|ya\s+que|"
    r"puesto\s+que|dado\s+que|já\s+que|visto\s+que|pois|weil|denn|poiché|perché|siccome|omdat|"
    r"ponieważ|потому\s+что|так\s+как|поскольку|çünkü"
)
"""Words that open a reason for the value before them, in the corpora's languages."""
CONCLUDING_BREAK = re.compile(
    r";\s*|；|,?\s+(?:so|therefore|thus|hence|donc|alors|daher|somit|então|portanto|logo|entonces|"
    r"así\s+que|por\s+lo\s+tanto|por\s+tanto|por\s+eso|quindi)\s+|"
    r",\s+(?=(?:making|giving|bringing|leaving|for\s+a\s+total\s+of|which\s+(?:makes|gives|leaves)|"
    r"that\s+leaves|for\s+[$€£]?\d)\b)|"
    r",?\s+(?:dus|więc|zatem|поэтому|значит|следовательно|так\s+что|bu\s+yüzden|dolayısıyla|"
    r"jadi|sehingga|vì\s+vậy|do\s+đó|nên|därför|derfor|इसलिए|तो|لذلك|وبالتالي)\s+|"
    r"，?(?:所以|因此|因而|于是)|(?:なので|ので|だから|したがって|よって)、?|"
    r"(?:이므로|므로|따라서|그래서|그러므로)\s*,?\s*",
    re.IGNORECASE,
)
"""Where a closing sentence's conclusion begins: "..., so she earns $18", "...; 120 + 67 = 187",
"..., leaving Nissa with 30 elves", "..., for 70 holes altogether"."""


_LIST_MARK = re.compile(r"^(?:\d{1,2}[.)]|[-*•])[ \t]+(?=\S)")
"""A list item's mark at the start of the line after a label: not its value."""


def clause_of(text: str) -> tuple[str, bool]:
    """The clause after a marker: to the end of its sentence or line; and whether it is the
    next non-empty line (after a heading or a bare label, where only a value alone counts)."""
    head = text.lstrip(" \t*_#:：=")
    next_line = head.startswith("\n")
    if next_line:
        head = _LIST_MARK.sub("", head.lstrip(), count=1)  # "Answer:\n1. 50 shells"
    end = CLAUSE_END.search(head)
    return (head if end is None else head[: end.start()]), next_line


@lru_cache(maxsize=8192)
def prepared(clause: str, language: str | None, decimal_mark: str | None) -> str:
    """The clause without asides in brackets, multiplied numbers and number words in digits,
    sign words as signs, and without what may open it (markdown, quotes, "exactly"). Cached:
    many rules prepare the same sentence."""
    clause = _RESTATED_PERCENT.sub(
        _as_percent, _ONE_PERIOD.sub(r"\g<period>", without_years(clause))
    )
    clause = below_zero_signed(clause)
    stripped = without_asides(clause)
    clause = stripped if _DIGIT.search(stripped) else re.sub(r"[()]", " ", clause)  # "is (4)"
    clause = NUMBER.sub(lambda match: _expanded(match, decimal_mark), clause)
    clause = below_zero_signed(with_digits(clause, language))  # "four under par"
    clause = SIGN_WORD.sub("-", clause)
    clause = re.sub(r"[\s*_]+$", "", clause)  # markdown closing it: "**Answer: 42**"
    return clause[_OPENING.match(clause).end() :]  # type: ignore[union-attr]


_ONE_PERIOD = re.compile(
    r"(?<![\d.,])1\s*(?P<period>(?:週間|週|日|か月|ヶ月|カ月|年|時間|주일|주|일|개월|달|년|시간)\s*"
    r"(?:に|あたり|当たり|で(?![すし])|에|동안|당)|回\s*(?:の|に|で(?![すし])|あたり|当たり)|번\s*에|"
    r"(?:箱|個|人|本|枚|袋|パック|杯|台|冊|匹|개|명|상자|병|권|장|마리)\s*(?:あたり|当たり|당|"
    r"(?=[$€£¥₩]?\s*\d)))"
)
""""One week" naming a period in Japanese and Korean ("1週間に30マイル", "1년에 12번"), "one
time" a rate's unit ("1回のスプリントで60メートル") and "one box" the item a price is per
("1箱32ドル", "1개당 2달러"): a rate's period or item, not a quantity beside the answer; left as
its word."""
_RESTATED_PERCENT = re.compile(
    r"(?<![\d.,])(?P<fraction>[01]?[.,]\d+)(?![\d.,]\d)\s*,?\s*(?:(?:or|i\.e\.|that\s+is|=|soit|"
    r"oder|ou|o|es\s+decir|c['’]est-à-dire|das\s+heißt|d\.\s?h\.|cioè|ou\s+seja|то\s+есть|即|"
    r"つまり)\s*,?\s*(?:el|la|le|il|lo|o|a|der|die|das)?)?\s*(?P<open>\()?\s*"
    r"(?P<percent>\d+(?:[.,]\d+)?)\s?%\s*(?(open)\))",
    re.IGNORECASE,
)
"""A fraction restated as a percentage ("0.08, or 8%", "0.25 (25%)", "0,35, es decir, el 35
%"): one quantity, read as the percentage, as every percentage is read."""


_BELOW_ZERO = re.compile(
    r"(?<![\d.,-])(?P<number>\d+(?:[.,]\d+)?)(?P<unit>\s*(?:°\s*[CF]?|degrees?|degrés?|Grad|grados|"
    r"graus|m|metres?|meters?|mètres?|Metern?|metros|ft|feet)?(?:\s+(?:Celsius|Fahrenheit))?)\s+"
    r"(?:below\s+zero|sous\s+zéro|unter\s+null|bajo\s+cero|abaixo\s+de\s+zero|"
    r"below\s+sea\s+level|sous\s+le\s+niveau\s+de\s+la\s+mer|unter\s+dem\s+Meeresspiegel|"
    r"bajo\s+el\s+nivel\s+del\s+mar|abaixo\s+do\s+nível\s+do\s+mar)",
    re.IGNORECASE,
)
"""A temperature below zero or a depth below sea level in words: "7 degrees below zero" is
-7, "57 metres below sea level" -57 (and "零下 7", "海面下155メートル" by `_LING_XIA`)."""
_LING_XIA = re.compile(r"(?:零下|海面下|海拔下|海平面以下|海面より)\s*(?P<number>\d+(?:\.\d+)?)")
_UNDER_PAR = re.compile(r"(?<![\d.,-])(?P<number>\d+)(?P<words>\s+(?:strokes?\s+)?under\s+par)\b")
"""A golf score under par in words: "4 under par" is -4."""


def below_zero_signed(text: str) -> str:
    """Values below zero in words written with a sign ("7 degrees below zero", "零下 7", "4
    under par")."""
    text = _UNDER_PAR.sub(r"-\g<number>\g<words>", text)
    return _LING_XIA.sub(r"-\g<number>", _BELOW_ZERO.sub(r"-\g<number>\g<unit>", text))


def _as_percent(match: re.Match[str]) -> str:
    fraction = float(match["fraction"].replace(",", "."))
    percent = float(match["percent"].replace(",", "."))
    return f"{match['percent']}%" if abs(fraction * 100 - percent) < 1e-6 else match[0]


def without_asides(clause: str) -> str:
    """The clause without its asides in brackets, nested ones too."""
    while (shorter := ASIDE.sub("", clause)) != clause:
        clause = shorter
    return clause


def _expanded(match: re.Match[str], decimal_mark: str | None) -> str:
    """A number with a multiplier word in digits ("1.5 million" is 1500000), before number
    words are read (text2num would read "million" alone)."""
    number = number_of(match, decimal_mark)
    if not match["multiplier"] or number.value is None:
        return match[0]
    return format(number.value, "f").rstrip("0").rstrip(".")


WORKED = re.compile(r"\d\s*%?\s*[=×*÷+/x−]\s*[$€£]?\d|\d\s*%?\s*=")
"""Arithmetic between numbers ("9,300 × 2/3 = 6,200"): a paragraph or sentence that holds it
is working, not an answer given first."""
_ACCOUNTING = re.compile(r"[\s*_|]*\(\s*(?P<amount>[$€£]?\s*\d[\d.,]*\s*[$€£]?)\s*\)[\s*_.|]*")
ACCOUNTING = "an amount in accounting parentheses: a grader cannot settle its sign"
"""A value written "($16.75)" alone: negative in accounting, or an aside."""


def clause_value(
    clause: str, decimal_mark: str | None, language: str | None, strict: bool = False
) -> ClauseValue:
    """What one statement's clause states: (value, candidates, problem). A value first is
    the value (unless another quantity follows it: two answers); an equation's result; else
    the one result-like number of the sentence. `strict`: only a value alone (a correction,
    a heading's next line)."""
    if _ALGEBRA.search(clause):
        return None, (), "its statement is algebra, not a number"
    if _TIME.search(clause):
        return None, (), "its statement gives a time of day"
    if _DASH_SIGN.search(clause):
        return None, (), "a dash stands against its number: a minus sign or punctuation"
    if (accounting := _ACCOUNTING.fullmatch(clause)) is not None:
        value = read_number(accounting["amount"], decimal_mark)
        return None, (() if value is None else (value,)), ACCOUNTING
    body = prepared(clause, language, decimal_mark)
    if _NEGATION.match(body):
        return None, (), NEGATED
    if FRACTION_WORDS.search(body):
        return None, (), "it writes a fraction in words"
    numbers = numbers_in(body, decimal_mark)
    if not numbers:
        return None, (), NO_ANSWER if _NO_ANSWER.search(body) else NO_NUMBER
    if (hedge := HEDGED.search(_NUMBER_ASIDE.sub("", clause))) is not None:
        values = tuple(n.value for n in numbers[:1] if n.value is not None)
        return None, values, f"it gives an approximation or a bound ({hedge[0]!r})"
    if _DANGLING.search(body):
        return None, (), "its statement is an expression, not a number"
    if _RELATION.match(body, numbers[0].end):
        return None, (), "its statement gives a relation, not a value"
    first = numbers[0]
    value_first = not body[: first.start].strip(" *_$€£")
    if strict and not (value_first and _VALUE_ALONE.match(body[first.end :])):
        return None, (), "not a value alone"
    if _EQUALS.search(body) and len(numbers) > 1:
        return _equation_value(body, decimal_mark)
    if value_first and len(numbers) > 1 and _PRODUCT.match(body, first.end):
        return None, (), "its statement is an expression without its result"
    if value_first:
        return _first_value(body, numbers)
    return _result_value(body, numbers)


def _single(number: Number) -> ClauseValue:
    if number.value is None:
        return None, number.readings, "its number's grouping can be read two ways"
    return number.value, (), None


_OPERATED = re.compile(
    r"\s*(?:[+×*÷/^·⋅x-]\s*[$€£]?\s*\(?\s*\d|\(\s*\d|(?:plus|minus|times|divided)\b)"
)
"""A number followed by an operation ("54 - 37", "5 · 47", "5(47)"): an expression."""


def _equation_value(body: str, decimal_mark: str | None) -> ClauseValue:
    """An equation's result: the number right after its last "=" ("6 × 7 = 42 apples, which
    ..."), or alone before its first ("$18 = 9 × $2")."""
    first_equals = _EQUALS.search(body)
    assert first_equals is not None
    cut = _NEXT_CLAUSE.search(body, first_equals.end())
    parts = _EQUALS.split(body if cut is None else body[: cut.start()])
    result = parts[-1]
    numbers = numbers_in(result, decimal_mark)
    stated_first = numbers and not result[: numbers[0].start].strip(" *_$€£")
    operated = _OPERATED.match(result[numbers[0].end :]) if numbers else None
    if stated_first and not operated:
        return _single(numbers[0])
    numbers = numbers_in(parts[0], decimal_mark)
    if len(numbers) == 1 and not _OPERATOR.search(parts[0]):
        return _single(numbers[0])
    return None, (), "its equation has no single result"


_JUXTAPOSED = re.compile(r"^[ \t]*[^\W\d_]{1,12}(?:[ \t]+[^\W\d_]{1,12})?[ \t]*$")
"""Two quantities side by side with only a unit between them ("1人20個", "3 hours 20 minutes")."""


_CONDITIONED = re.compile(
    r"^\s*(?:[^\W\d_]+\s+){0,2}?(?:if|when|assuming|provided|unless|si|wenn|falls|se|если)\b",
    re.IGNORECASE,
)
"""A condition right after a value and its unit ("1,200 sticks if the problem means the cheaper
board"), not one after a break ("18, but if she also sold the muffins it would be 26")."""


def _first_value(body: str, numbers: list[Number]) -> ClauseValue:
    """A value stated first: two quantities joined by "and"/"or" are two answers; anything
    else after it explains it."""
    first = numbers[0]
    if len(numbers) > 1:
        between = body[first.end : numbers[1].start]
        if RANGE.match(between) or (not between and body[numbers[1].start] == "-"):
            values = tuple(n.value for n in numbers[:2] if n.value is not None)
            return None, values, "it gives a range"
        if _CONDITIONED.match(between):  # "1,200 sticks if it means …, or 1,600 sticks if …"
            values = tuple(n.value for n in numbers[:2] if n.value is not None)
            return None, values, "it gives its value under a condition, then another value"
        side_by_side = not between.strip(" \t,;/")  # "Final Answer: 17 18"
        joined = _CONJUNCTION.match(between) or _JUXTAPOSED.match(between) or side_by_side
        if joined and not _EXPLAINING.search(between):
            values = tuple(n.value for n in numbers[:2] if n.value is not None)
            return None, values, "it states two quantities"  # "2 dozen and 2 pencils" too
    return _single(first)


def _result_value(body: str, numbers: list[Number]) -> ClauseValue:
    """A sentence after a marker: its one result-like number (after "is", "makes", "has",
    "=", or before "left", "in total"), or its only number."""
    if len(numbers) == 1:
        return _single(numbers[0])
    results = [
        n
        for n in numbers
        if _RESULT_BEFORE.search(body[: n.start]) or _RESULT_AFTER.match(body[n.end :])
    ]
    values = tuple(dict.fromkeys(n.value for n in results))
    if len(values) == 1:
        return _single(results[0])
    shown = tuple(n.value for n in numbers if n.value is not None)
    if not results:
        return None, shown, "its sentence has several numbers and states none as the result"
    return None, tuple(v for v in values if v is not None), "its sentence states several results"
