"""What the question asks for, and whether a sentence's quantity is that (docs/classroom.md,
"Reading answers", rule 6, "What the question asks for").

A grader knows from the question what kind of quantity it asks for: money ("How much did he
earn?"), a percent, a unit ("in minutes"), or things it counts ("How many insects ...?"). Uses:

- **A sentence with several quantities** ("Sandy walked 12 hours, which is 720 minutes.") is
  read by the one quantity of the asked kind, where exactly one is; likewise the one stated
  *per item* where the question asks per item ("$34 together, which is $17 each").
- **A sentence whose quantity is of another kind** than the question asks ("so he tutored 13
  hours" for "How much did he earn?"; "1.5 hours" for "how many episodes"; "6 packs" for "How
  much does he spend?"), or that names the asked things with another number ("two bookcases,
  each holding 55 books"), stopped at an intermediate step: no reading. Two counted nouns are
  never compared ("17 fruits" may answer "pieces of fruit").

Only English questions are read for their asked kind (the corpora's questions are GSM8K's); a
kind is compared only where both sides name one, so a bare "42." is never refused by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from text_to_num import alpha2digit

from personasim.environments.classroom.answer_clauses import (
    SENTENCE_RULES,
    Context,
    Statement,
    prepared,
)
from personasim.environments.classroom.answer_numbers import Number, numbers_in

__all__ = [
    "Asked",
    "asked_bound",
    "asked_kind",
    "asked_quantity",
    "asking_sentence",
    "by_asked_kind",
    "conversions",
    "difference_missing",
    "kind_mismatch",
    "names_the_asked",
    "per_item",
    "quantity_kind",
    "restated_in_asked_unit",
    "sentence_at",
]

TOLERANCE = 1e-6
Candidate = tuple[float, Number, str]
"""A sentence's quantity: its value, the number, and the prepared sentence it is in."""


@dataclass(frozen=True)
class Asked:
    """The kind of quantity a question asks for ("money", "percent", a unit or a counted noun
    as its singular stem; None where it names none), whether it asks per item, and per what."""

    kind: str | None
    per_item: bool = False
    items: frozenset[str] = frozenset()
    """What it asks per, as noun stems ("per school", "each painter", "in a week")."""


_MONEY_WORDS = r"(?:dollars?|cents?|bucks|euros?|pounds\s+sterling|usd|eur)"
_MONEY_WORD = re.compile(  # a reply's word for money, in its language ("5달러입니다", "5 долларов")
    r"dollars?|d[oó]lar(?:es|ów|y)?|dollari|bucks|euros?|usd|eur|yuan|yen|pesos?|rupees?|"
    r"доллар(?:ов|а|ы)?|евро|рубл(?:ей|я|ь)|달러\w*|ドル|美元|डॉलर|रुपये|دولار(?:ات)?"
)
_UNITS = (
    r"cents?|seconds?|minutes?|hours?|days?|weeks?|months?|years?|miles?|feet|foot|inch(?:es)?|"
    r"yards?|met(?:er|re)s?|kilomet(?:er|re)s?|centimet(?:er|re)s?|kilograms?|grams?|kg|km|"
    r"ounces?|pounds?|liters?|litres?|gallons?|quarts?|cups?"
)
_IN_UNIT = re.compile(rf"\b(?:in|into|to)\s+(?P<unit>{_UNITS}|dollars?)\b", re.IGNORECASE)
_PERCENT_ASKED = re.compile(
    r"\b(?:what|which)\s+percent(?:age)?\b|\bhow\s+many\s+percent|\bas\s+a\s+percent(?:age)?\b|"
    r"\bin\s+percent\b|\bby\s+what\s+percent",
    re.IGNORECASE,
)
_MONEY_ASKED = re.compile(
    rf"\bhow\s+much\s+(?:money|change|profit|revenue|income|cash)\b|\bdollar\s+amount\b|"
    rf"\bhow\s+many\s+{_MONEY_WORDS}\b|\bhow\s+much\s+(?:more\s+|less\s+)?(?:did|does|do|will|would|is|was|are|were|has|"
    r"have|had|can|could|should|must|might)\b[^?]*?\b(?:costs?|pay|paid|pays|earns?|earned|"
    r"spends?|spent|makes?|made|saves?|saved|charges?|charged|owes?|owed|profit|worth|change|tips?|raised?|donated?|"
    r"collects?|collected|sells?\s+for|sold\s+for)\b",
    re.IGNORECASE,
)
_HOW_MANY = re.compile(
    r"\b(?:how\s+many|(?:total\s+)?number\s+of)\s+(?:\d+-[a-z]+\s+)?(?P<phrase>[a-z][a-z\s-]{0,60})",
    re.IGNORECASE,
)
_PHRASE_END = re.compile(
    r"\b(?:do|does|did|is|are|was|were|will|would|can|could|should|has|have|had|must|might|"
    r"of|in|on|at|for|to|from|that|than|per|each|a|an|the|he|she|they|it|we|you|i|there|"
    r"his|her|their|its|if|when|after|before|with|by|left|remain|remaining|every|and|or|last|"
    r"next|this|these|those)\b",
    re.IGNORECASE,
)
_PER_ITEM_ASKED = re.compile(
    r"\beach\b|\bper\b|\bevery\b|\bapiece\b|\ba\s+(?:day|week|month|year|hour|minute|person)\b",
    re.IGNORECASE,
)
_NOT_A_NOUN = {
    "more", "fewer", "less", "additional", "extra", "total", "whole", "full", "other", "all",
    "different", "remaining", "left", "in", "altogether", "so", "and", "or", "times",
    "of", "is", "are", "was", "were", "each", "per", "which", "that", "this", "these", "those",
    "now", "today", "then", "already", "still", "overall", "combined", "together", "too",
    "also", "here", "there", "ago", "daily", "weekly", "monthly", "yearly", "annually",
}  # fmt: skip
_PERCENT = re.compile(r"%|percent(?:age\s+points?)?\b|per\s*cent\b", re.IGNORECASE)
_FOLLOWING = re.compile(r"\s*((?:[^\W\d_][\w-]*\s+){0,2}[^\W\d_][\w-]*)")
"""Up to three words right after a number, with nothing but spaces between them."""
_ENGLISH = re.compile(r"\b(?:how|what|the|is|are|does|did)\b", re.IGNORECASE)


def kind_mismatch(context: Context, final: Statement, value: float | None) -> str | None:
    """Why a closing or concluding sentence's value is not the answer: it is a quantity of
    another kind than the question asks ("13 hours" for "How much did he earn?"), or the
    sentence names the asked things with another number while the value names something else
    ("she'll need two bookcases, each holding 55 books" read as 55 for "how many bookcases")."""
    if value is None or final.rule not in SENTENCE_RULES or not context.question:
        return None
    asked = asked_kind(context.question)
    if asked is None:
        return None
    body = prepared(sentence_at(context.text, final), context.language, context.decimal_mark)
    same = [n for n in numbers_in(body, context.decimal_mark) if _equal(n.value, value)]
    kind = quantity_kind(body, same[-1].start, same[-1].end) if same else None
    english = context.language in (None, "en")
    if kind is not None and not _same_kind(kind, asked, english):
        given, wanted = _named(kind), _named(asked)
        return f"its last sentence gives a quantity in {given} where the question asks for {wanted}"
    if kind is None or kind == asked or asked in _DIMENSIONS:
        return None
    if english:  # small numbers in words too: "she'll need two bookcases, each holding 55 books"
        body = alpha2digit(body, "en", threshold=0)
    numbers = numbers_in(body, context.decimal_mark)
    for index, n in enumerate(numbers):
        other = n.value is not None and not _equal(n.value, value)
        if (
            other
            and not _operand(body, numbers, index)
            and quantity_kind(body, n.start, n.end) == asked
        ):
            given = f"{value:g} {kind}s"
            return f"its last sentence gives {_named(asked)} as {n.value:g}, and {given}"
    return None


_OPERATOR = re.compile(r"[+×÷*/=−–]|\s-\s")


def _operand(body: str, numbers: list[Number], index: int) -> bool:
    """Whether the number is an operand or result of arithmetic: an operator between it and a
    neighbouring number ("60 total jellybeans – 51 …")."""
    start = numbers[index - 1].end if index > 0 else max(0, numbers[index].start - 3)
    end = numbers[index + 1].start if index + 1 < len(numbers) else len(body)
    return bool(
        _OPERATOR.search(body[start : numbers[index].start] + " " + body[numbers[index].end : end])
    )


def sentence_at(text: str, statement: Statement) -> str:
    """The sentence a statement starts."""
    end = statement.end if statement.end is not None else len(text)
    return re.split(r"(?<=[.!?。！？])\s+|\n", text[statement.position : end])[0]


def difference_missing(context: Context, final: Statement, value: float | None) -> str | None:
    """Why a closing or concluding sentence's value is not the answer to a question that asks
    for a difference ("How many more boxes did she buy this week than last week?"): the
    sentence states an amount with no word of comparison ("this week she bought 8 boxes")."""
    if value is None or final.rule not in SENTENCE_RULES or not context.question:
        return None
    if context.language not in (None, "en"):
        return None
    if not _DIFFERENCE_ASKED.search(asking_sentence(context.question)):
        return None
    if _COMPARED.search(sentence_at(context.text, final)):
        return None
    return "the question asks for a difference; its last sentence states an amount"


_DIFFERENCE_ASKED = re.compile(
    r"\bhow\s+(?:many|much)\s+(?:more|fewer|less)\b[^?]*\bthan\b|"
    r"\bhow\s+much\s+(?:[a-z]+er|more\s+\w+|less\s+\w+)\s+[^?]*\bthan\b|"
    r"\b(?:what|how\s+(?:much|many|big|large))\b[^?]*\bdifference\b",
    re.IGNORECASE,
)
"""A question that asks for a difference: "how many more … than", "what is the difference
between …"."""
_COMPARED = re.compile(
    r"\b(?:more|fewer|less|than|difference|differ|(?!(?:together|other|another|number|after|over|"
    r"under|never|ever|either|neither|whether|rather|answer|per|her)\b)[a-z]{2,}er|extra|left|"
    r"additional|remaining|short|exceeds?|beat|won|wins|ahead|behind|apart|gap|margin)\b|"
    r"[−-]\s*[$€£]?\s*\d",
    re.IGNORECASE,
)  # a comparative ("taller"), not a word that ends in -er ("Together they have 38.")


def by_asked_kind(candidates: list[Candidate], context: Context) -> Candidate | None:
    """The one quantity of a sentence that is of the kind the question asks for, else, of
    quantities of one kind, the one stated per item where the question asks per item; None
    where not exactly one."""
    if not context.question:
        return None
    asked = asked_quantity(asking_sentence(context.question))
    kinds = [quantity_kind(body, n.start, n.end) for _, n, body in candidates]
    if (fitting := _one_of_kind(candidates, kinds, asked.kind)) is not None:
        return fitting
    if (by_rate := _by_rate(candidates, kinds, asked)) is not None:
        return by_rate
    if None in kinds:
        return None
    if not asked.per_item or len(set(kinds)) != 1:
        return None  # per item and total of one thing only: "$34 together, which is $17 each"
    each = [c for c in candidates if per_item(c[2], c[1].end)]
    return each[0] if len(each) == 1 else None


def _by_rate(
    candidates: list[Candidate], kinds: list[str | None], asked: Asked
) -> Candidate | None:
    """The one quantity stated per what the question asks per ("1,800 per school" for "How
    many books can he buy per school?"), else, where the sentence states rates of something
    the question does not ask per, the one quantity of the asked kind that is no such rate
    ("64 emails a day, which is 320 emails in a 5-day work week" for the week: 320; "9 hours
    a day for 21 days, 189 hours in all" for "each painter": 189). None where not exactly one."""
    rates = [rate_item(body, number.end) for _, number, body in candidates]
    if not any(rates):
        return None
    matching = [c for c, item in zip(candidates, rates, strict=True) if item in asked.items]
    if len(matching) == 1:
        return matching[0]
    if matching:
        return None
    kept = [(c, kind) for c, kind, item in zip(candidates, kinds, rates, strict=True) if not item]
    return _one_of_kind([c for c, _ in kept], [kind for _, kind in kept], asked.kind)


def _one_of_kind(
    candidates: list[Candidate], kinds: list[str | None], asked: str | None
) -> Candidate | None:
    """The one quantity of the asked kind, where every other names its kind or the asked kind
    is a unit (a noun may be left out: "42 left"); None where not exactly one."""
    fitting = [c for c, kind in zip(candidates, kinds, strict=True) if kind == asked]
    if len(fitting) == 1 and (asked in _DIMENSIONS or None not in kinds):
        return fitting[0]
    return None


_RATE_AFTER = re.compile(
    r"^\s*(?:[^\W\d_][\w'-]*\s+){0,5}?(?:(?:(?:in|for|on)\s+)?(?:each|per|every|a|an)\s+"
    r"(?P<item>[^\W\d_][\w-]*)|(?P<bare>apiece|each)\b)",
    re.IGNORECASE,
)
_RATE_ITEMS_A = frozenset(
    ("day", "week", "month", "year", "hour", "minute", "second", "person", "piece", "head")
)
"""After "a"/"an", only these name what a quantity is per ("3 hours a day"; not "a box")."""


def rate_item(text: str, end: int) -> str | None:
    """What the quantity ending at `end` is stated per, as a noun stem ("64 emails a day":
    day; "1,800 per school": school; "2 cups of tea in each row": row), "" where it is per
    item without naming one ("$17 each"); None for no rate, nor one across a conjunction
    ("12 and every player gets 6")."""
    found = _RATE_AFTER.match(text[end : end + 80])
    if found is None or re.search(r"\d|[,;:]|\b(?:and|or|but|while)\b", found[0]):
        return None
    if found["bare"]:
        return ""
    item = _kind_of_word(found["item"])
    article = re.search(r"\b(?:a|an)\s+\S+$", found[0], re.IGNORECASE)
    return None if article and item not in _RATE_ITEMS_A else item


def names_the_asked(text: str, context: Context) -> bool:
    """Whether a stretch of the reply states a quantity of the kind the question asks for."""
    if not context.question:
        return False
    asked = asked_kind(context.question)
    body = prepared(text, context.language, context.decimal_mark)
    numbers = numbers_in(body, context.decimal_mark)
    return asked is not None and any(quantity_kind(body, n.start, n.end) == asked for n in numbers)


def conversions(candidates: list[Candidate]) -> bool:
    """Whether a sentence's quantities are one quantity in two units ("$62.00, or 6,200
    cents", "7/20 of the class, or 35 percent", "12 hours, which is 720 minutes"): two, of
    different kinds, one a common conversion factor times the other."""
    if len(candidates) != 2:
        return False
    (first, one, body), (second, other, _) = candidates
    kinds = quantity_kind(body, one.start, one.end), quantity_kind(body, other.start, other.end)
    if kinds[0] == kinds[1] or not first or not second:
        return False
    ratio = max(abs(first), abs(second)) / min(abs(first), abs(second))
    return any(abs(ratio - factor) <= TOLERANCE * factor for factor in _FACTORS)


def restated_in_asked_unit(context: Context, final: Statement) -> tuple[float, str] | None:
    """The value an answer line restates in the asked unit, where it first gives another unit
    ("The answer is 300 minutes, which is 5 hours." or "… 300 minutes (5 hours)" for "how many
    hours" is 5), as the concluding rule reads "12 hours, which is 720 minutes" for "in
    minutes"; with the words that state it, for the second reader. None otherwise."""
    if final.rule not in ("marker", "A:", "is-the-answer") or final.end is None:
        return None
    if asked_kind(context.question) in (None, "money", "percent"):
        return None  # a unit the question names ("how many hours"), not "how much money"
    line_end = context.text.find("\n", final.end)  # "i.e." ends no restatement
    body = context.text[final.position : len(context.text) if line_end < 0 else line_end]
    candidates = [
        (n.value, n, body) for n in numbers_in(body, context.decimal_mark) if n.value is not None
    ]
    if not conversions(candidates) or (chosen := by_asked_kind(candidates, context)) is None:
        return None
    value, number, _ = chosen
    if final.value is None or abs(value - final.value) <= TOLERANCE:
        return None
    return value, body[number.start :].split(")")[0]


_FACTORS = (100, 60, 3600, 24, 7, 12, 3, 2, 1000)
"""Cents and percents, minutes and seconds, hours, days, weeks, months and inches, feet and
yards, pairs, metric prefixes (between quantities of different kinds only)."""


def _same_kind(kind: str, asked: str, english: bool = True) -> bool:
    """Whether a quantity of `kind` may answer a question that asks for `asked`: not a measure
    in another unit than the asked one ("252 inches" for "how tall … in feet?": its number is
    not the asked one, and converting it would be our guess), except money, where dollars and
    cents are read as written (graders label "85 cents" for "How much …?" 85); a counted noun
    may be a synonym ("17 fruits" for "pieces of fruit"), a measure may not ("1.5 hours" for
    "how many episodes"); "13 hours" for "How much did he earn?", "18 girls" for "What
    percent …" and "25%" for "How many more scents …" are other quantities."""
    kind_dimension, asked_dimension = _DIMENSIONS.get(kind), _DIMENSIONS.get(asked)
    if asked_dimension is None:  # things counted: not a measure, any noun ("17 fruits")
        return kind_dimension is None
    if asked_dimension in ("money", "percent") and english:  # "6 packs" for "How much …?"
        return kind_dimension == asked_dimension
    return kind_dimension is None or kind == asked


_DIMENSIONS = {
    **dict.fromkeys(("money", "cent"), "money"),
    "percent": "percent",
    **dict.fromkeys(("second", "sec", "minute", "min", "hour", "hr", "day", "week", "month",
                     "year"), "time"),
    **dict.fromkeys(("mile", "mi", "foot", "ft", "inch", "inche", "yard", "meter", "metre",
                     "m", "kilometer", "kilometre", "km", "centimeter", "centimetre", "cm",
                     "millimeter"),
                    "length"),
    **dict.fromkeys(("kilogram", "kg", "gram", "g", "milligram", "ounce", "oz", "lb"), "mass"),
    **dict.fromkeys(("liter", "litre", "gallon", "quart", "ml", "milliliter"), "volume"),
}  # fmt: skip
"""The units a grader converts between, by dimension ("pound" is left out: money or mass)."""


def _named(kind: str) -> str:
    if kind in ("money", "percent"):
        return kind
    return {"foot": "feet", "inch": "inches", "century": "centuries"}.get(kind, f"{kind}s")


def _equal(number: float | None, value: float) -> bool:
    return number is not None and abs(number - value) <= TOLERANCE


_QUESTION_SENTENCE = re.compile(r"(?<=[.?!。？！])\s+(?=[^\W\d_a-z])")
"""A sentence break of the question: before a capital letter ("lbs. by" and "vs. calories"
do not end a sentence)."""


@lru_cache(maxsize=4096)
def asking_sentence(question: str) -> str:
    """The question's sentence that asks: up to its last question mark, else its last."""
    marks = [question.rfind(mark) for mark in "?？"]
    asking = question[: max(marks) + 1] if max(marks) >= 0 else question
    parts = [p for p in _QUESTION_SENTENCE.split(asking) if p.strip()]
    return parts[-1] if parts else ""


@lru_cache(maxsize=4096)
def asked_kind(question: str | None) -> str | None:
    """The kind of quantity the `question` asks for (`asked_quantity`), or None."""
    return asked_quantity(asking_sentence(question)).kind if question else None


def asked_quantity(asked_sentence: str) -> Asked:
    """The kind the question's asking sentence names, and whether it asks per item."""
    if not _ENGLISH.search(asked_sentence):
        return Asked(None)
    per_item = _PER_ITEM_ASKED.search(asked_sentence) is not None
    items = frozenset(_kind_of_word(m["item"]) for m in _PER_WHAT.finditer(asked_sentence))
    if _PERCENT_ASKED.search(asked_sentence):
        return Asked("percent", per_item, items)
    if (unit := _IN_UNIT.search(asked_sentence)) is not None:
        return Asked(_kind_of_word(unit["unit"]), per_item, items)
    if _MONEY_ASKED.search(asked_sentence):
        return Asked("money", per_item, items)
    counted = list(_HOW_MANY.finditer(asked_sentence))
    if len(counted) == 1:  # "how many ducks and how many goats": two things, no one kind
        return Asked(_noun_kind(counted[0]["phrase"]), per_item, items)
    return Asked(None, per_item, items)


_PER_WHAT = re.compile(
    r"\b(?:each|per|every|a|an)\s+(?:(?:single|individual|other)\s+)?(?P<item>[a-z][\w-]*)",
    re.IGNORECASE,
)
"""What a question asks per: "each painter", "per school", "a week" (any noun: a rate the
reply states per another one is left out only where it matches none of them)."""


def quantity_kind(text: str, start: int, end: int) -> str | None:
    """The kind of the quantity written at `text[start:end]`: money by a currency sign before
    it or a money word after, a percent, else the noun that follows it (its singular stem);
    None where nothing names it ("42 left.")."""
    before, after = text[max(0, start - 2) : end], text[end:]
    latex = "$" in before and after.lstrip().startswith("$")  # "$92$": inline math, no dollar
    if not latex and (re.search(r"[$€£¥]", before) or re.match(r"\s*[$€£¥]", after)):
        return "money"
    if _MONEY_WORD.match(after.lstrip()):  # "40 हज़ार डॉलर": a word \w would cut at its vowel sign
        return "money"
    if _PERCENT.search(text[start:end]) or _PERCENT.match(after.lstrip()):
        return "percent"
    phrase = _FOLLOWING.match(after)
    return _noun_kind(phrase[1]) if phrase else None


def _noun_kind(phrase: str) -> str | None:
    """The kind a noun phrase names: its last noun before a verb, preposition or article;
    None where it names two things ("candles and flashlights") or none."""
    head, *rest = _PHRASE_END.split(phrase, maxsplit=1)
    if rest and re.match(r"\s*(?:and|or)\s+[a-z]", phrase[len(head) :], re.IGNORECASE):
        return None
    if (name := re.search(r"\b[a-z][\w'-]*\s+(?=[A-Z])", head)) is not None:
        head = head[: name.end()]  # a name after the noun starts a clause: "items Dominick saw"
    kinds = [_kind_of_word(word) for word in head.split() if word.lower() not in _NOT_A_NOUN]
    if kinds and kinds[0] in _DIMENSIONS:
        return kinds[0]  # "1 foot long": a foot ("50 cookies last year": cookies)
    return kinds[-1] if kinds else None


def per_item(text: str, end: int) -> bool:
    """Whether the quantity ending at `end` is stated per item ("$17 each", "64 emails a day")."""
    return rate_item(text, end) is not None


_ABBREVIATED = {
    **dict.fromkeys(("g", "gr"), "gram"), "kg": "kilogram", "mg": "milligram", "oz": "ounce",
    **dict.fromkeys(("lb", "lbs"), "pound"), "km": "kilometer", "m": "meter", "cm": "centimeter",
    "mm": "millimeter", "mi": "mile", "ft": "foot", "yd": "yard", "ml": "milliliter",
    **dict.fromkeys(("min", "mins"), "minute"), **dict.fromkeys(("hr", "hrs", "h"), "hour"),
    **dict.fromkeys(("sec", "secs"), "second"), "gal": "gallon", "qt": "quart",
    **{f"{unit}re": f"{unit}er" for unit in ("met", "kilomet", "centimet", "millimet", "lit")},
    **{f"{unit}res": f"{unit}er" for unit in ("met", "kilomet", "centimet", "millimet", "lit")},
}  # fmt: skip
"""A unit's abbreviation or British spelling, as its word's stem ("2,600 g" is in grams)."""


def _kind_of_word(word: str) -> str:
    """A noun's singular stem, money words as "money" ("dollars" and "$" are one kind), a
    unit's abbreviation as its word's."""
    word = word.lower()
    if _MONEY_WORD.fullmatch(word):
        return "money"
    if re.fullmatch(r"cents?", word):
        return "cent"
    if word in ("people", "persons"):
        return "person"
    if word in ("feet", "foot"):
        return "foot"
    if word in _ABBREVIATED:
        return _ABBREVIATED[word]
    for suffix, replacement in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("xes", "x")):
        if word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


_LOWER_BOUND = re.compile(r"\b(?:at\s+least|a\s+minimum\s+of|at\s+(?:a\s+|the\s+)?minimum)\b", re.I)
_UPPER_BOUND = re.compile(r"\b(?:at\s+most|a\s+maximum\s+of|at\s+(?:a\s+|the\s+)?maximum)\b", re.I)
_ASKS_LOWER = re.compile(r"\b(?:minimum|least|fewest|smallest\s+number)\b", re.I)
_ASKS_UPPER = re.compile(r"\b(?:maximum|most|greatest\s+number|largest\s+number)\b", re.I)


def asked_bound(hedge: str, question: str | None) -> bool:
    """A bound the question asks for: the least or most a value can be is the answer."""
    asking = asking_sentence(question or "")
    lower = _LOWER_BOUND.fullmatch(hedge) and _ASKS_LOWER.search(asking)
    upper = _UPPER_BOUND.fullmatch(hedge) and _ASKS_UPPER.search(asking)
    return bool(lower or upper)
