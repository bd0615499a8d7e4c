"""The concluding sentence of a reply that has no final statement, read with the question
beside it, as a grader who has the question in front of them reads it (docs/classroom.md,
"Reading answers").

Most chat replies end on a plain sentence: "15 litres of petrol cost $28.35.", "3 hours later
the trains are 270 miles apart.", "There will be $600 remaining after 2 years." A grader reads
the one quantity in it that is new: not a number the question gave (15 litres, 3 hours, 2
years), not an operand of the sentence's own arithmetic ("4 × $5 = $20": 20). Checks, notes and
verifications after it ("Check: 600 + 2,400 = 3,000 ✓", "(Note: ignoring interest ...)") do
not change it. The rule reads a value only where exactly one new quantity is left; two ("64
emails a day, which is 320 a week") or none is no reading, and so is a reply cut off
mid-sentence, a question, or a sentence that hedges its value ("probably", "about 40").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from itertools import pairwise

from personasim.environments.classroom.answer_afterwords import before_afterwords
from personasim.environments.classroom.answer_chains import question_givens, restated_operand
from personasim.environments.classroom.answer_clauses import (
    BECAUSE,
    CONCLUDING_BREAK,
    FRACTION_WORDS,
    HEDGED,
    RANGE,
    Context,
    Statement,
    prepared,
    without_asides,
)
from personasim.environments.classroom.answer_closings import (
    BACKGROUND,
    CHECK,
    CONCLUDING_LABEL,
    PROCEDURE,
    REFERENCE,
    sentences,
)
from personasim.environments.classroom.answer_durations import in_compound
from personasim.environments.classroom.answer_numbers import Number, numbers_in, with_digits
from personasim.environments.classroom.answer_remarks import (
    DOUBT,
    LABELLED,
    ONE,
    QUESTION_END,
    counts_the_asked,
    ended,
    has_number,
    without_remarks,
)
from personasim.environments.classroom.answer_subjects import by_asked_subject
from personasim.environments.classroom.answer_units import (
    Candidate,
    asked_bound,
    by_asked_kind,
    conversions,
    names_the_asked,
)

__all__ = [
    "THEN",
    "TOLERANCE",
    "computes_with",
    "concluding_statement",
    "is_operand",
    "new_quantities",
    "restates_question",
]

TOLERANCE = 1e-6

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPERATOR_AFTER = re.compile(
    r"^\s*(?:[+×*÷/^]|[x−-](?=\s*[$€£(]?\s*\d)|(?:plus|minus|times|divided\s+by|mal|fois|por|"
    r"vezes)\s+[$€£]?\.?\d)",
    re.IGNORECASE,
)
_OPERATOR_BEFORE = re.compile(
    r"(?:[+×*÷/^]|(?<=\d)\s*[x−-]|\bplus|\bminus|\btimes|\bdivided\s+by|\bmal|\bfois|"
    r"\bvezes)\s*[$€£]?\s*$",
    re.IGNORECASE,
)
_EQUALS_AFTER = re.compile(r"^\s*[$€£%]?\s*(?:[^\W\d_]+\s*)?=")
_EQUALS_BEFORE = re.compile(r"=\s*[$€£]?\s*$")
_ORDINAL_AFTER = re.compile(r"^(?:st|nd|rd|th|er|e|ème|º|ª|°)\b", re.IGNORECASE)
_UNSETTLED = re.compile(
    r"\d:\d|\(\s*[$€£]?\s*\d[\d.,\s]*[$€£]?\s*\)|\beither\b|\bdepend|\bvar(?:y|ies)\b|或",
    re.IGNORECASE,
)
_OR_NUMBER = re.compile(r"\b(?:or|ou|oder|o)\s+[$€£]?\d", re.IGNORECASE)
"""A second value offered with "or": an alternative, unless it is the first in another unit."""
"""What leaves the value unsettled: a clock time ("2:00 pm"), an amount in accounting
parentheses ("(47,50 $)"), alternatives ("either $450 or $1,000", "depending on")."""
_WORD = re.compile(r"\w+")
_RESTATED = 0.8
_COPIED_RUN = 3
"""A sentence copies the question out when 80 % of its words stand in it in runs of 3 or
more words, in the question's order."""
_ARTICLE_BEFORE = re.compile(
    r"\b(?:the|all|both|os|as|les|die|der|den|los|las|el|gli|todos\s+os|todas\s+as)\s+$",
    re.IGNORECASE,
)
"""A number right after a definite article refers to a group ("the three", "os três")."""
_PLAN = re.compile(
    r"\b(?:to\s+(?:solve|find|work\s+out|figure\s+out|calculate|compute)|work\s+out|"
    r"figure\s+out|divide|multiply|subtract|we\s+(?:need|can|will|must|should|have\s+to)|"
    r"let(?:'s|’s|\s+us|\s+me)|you\s+(?:need|can|should|must|have\s+to))\b",
    re.IGNORECASE,
)
"""A sentence that plans the working ("first work out ..., then divide by 12"): no result."""
_PURPOSE = re.compile(r"^to\s", re.IGNORECASE)
"""A purpose first ("To cover 480 miles it needs 480 ÷ 30 = 16 hours."): a step where it plans,
a conclusion where it computes a result."""
THEN = re.compile(r",\s*(?:then|alors|dann|entonces|então|allora)\s+", re.IGNORECASE)
"""Where a condition's consequence begins: "If 1 bean is 3 small ones, then 150 ... = 450"."""
_LEADING_CONDITION = re.compile(r"^\s*(?:if|wenn|falls|si|se)\b[^,，]*[,，]\s*", re.IGNORECASE)
_HYPOTHETICAL = re.compile(
    r"\b(?:would|could|might|würde|könnte|serait|pourrait|sería|podría|seria|poderia)\b|\w['’]d\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(r"\b(?:if|unless|si|wenn|falls|se)\b|如果|假如|もし", re.IGNORECASE)
_EXPLAINED = re.compile(rf",?\s+(?:{BECAUSE})(?:\s+|(?<=['’]))", re.IGNORECASE)
"""What explains the value before it ("She made $5 because 20 times .25 equals 5")."""
_LEADING_REASON = re.compile(
    r"(?:^|\band\s+)(?:since|as|because)\s+[^,]+,\s*(?P<main>[^,]+)$", re.IGNORECASE
)
"""A reason that leads its main clause ("since he has 6 feet, that leaves 594 feet")."""
_ABBREVIATION = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|vs|etc|approx|No|Nr|ca|bzw|z\.B|e\.g|i\.e|Mme|Hr|Fr|Sra?)\.$",
    re.IGNORECASE,
)
_RESULT = re.compile(r"=\s*[$€£]?\s*-?\d")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]\s|\d+[.)]\s)")
_STEP = re.compile(
    r"^(?:first(?:ly)?|second(?:ly)?|third|next|then|after\s+that|step\s*\d|now|"
    r"d'abord|ensuite|puis|zuerst|dann|danach|primero|luego|después|depois|"
    r"首先|然后|接着|まず|次に)\b",
    re.IGNORECASE,
)
_VALUE_ALONE = re.compile(
    r"\s*[*_]*(?:(?:(?:[$€£]?\s*\d[\d,.]*\s*(?:[+×*÷/x−-]|\s)\s*)*[$€£]?\s*\d[\d,.]*\s*)?=\s*)?"
    r"(?P<value>[$€£]?\s*-?\d[\d,.]*(?:[kKM]\b)?\s*[$€£%]?)"
    r"(?:[ \t]+[^\W\d_]+(?:/[^\W\d_]+)?){0,3}[*_.!]*\s*"
)
"""A reply that is one number, or one equation and its result, and at most three words ("20",
"**$18.50**", "$720 a year.", "$17.5k", "150 birds/day", "61 − 9 + 18 = 70")."""
_COUNTING_WORDS = re.compile(
    r"\b(?:dozens?|half|halves|quarters?|thirds?|pairs?|couples?|scores?|first|second|third)\b",
    re.IGNORECASE,
)
"""Words that count in another unit or rank ("two dozen", "half an hour"): the word's number
alone is not the value."""
_LABEL_BEFORE = re.compile(
    r"(?:\b(?:No|Nr|Nº|n°|Nummer|number|núm|num)\.?|#|\b(?:week|day|month|year|round|level|"
    r"step|page|chapter|grade|room|floor|lap|stage|phase|semaine|jour|semana|día|dia|Woche|"
    r"Tag|settimana|giorno|dag|tydzień|dzień|hafta|gün))\s*$",
    re.IGNORECASE,
)
"""A number that names something ("horse No. 12", "Pferd Nr. 12", "#3", "in week 4", "on day
3"), not a quantity."""
_EMPHASIS = re.compile(r"\*\*|__")
"""Bold markers: not multiplication signs ("He left **105 questions** incomplete")."""
_RESTATED_AS_PARTS = re.compile(
    r"^\W*(?:that's|that\s+is|this\s+is|which\s+is|i\.e\.)\s+\d[\d.,]*\s+[^\W\d_]+\s+"
    r"(?:and|plus)\s+\d[\d.,]*\s+[^\W\d_]+",
    re.IGNORECASE,
)
_COMPUTED = re.compile(
    r"\s{0,3}(?:[$€£]?\s*\d[\d.,]*\s*[+×*÷/x−-]\s*)+[$€£]?\s*\d[\d.,]*\s*=\s*"
    r"(?P<result>[$€£]?\s*-?\d[\d.,]*)"
)
"""An expression right after a hedge: the hedge qualifies its result."""
_HEDGE_REACH = 3
"""A hedge right before a number (within 3 characters: "about $40") qualifies that number."""
_WORD_OF_TEXT = re.compile(r"[^\W\d_]{2,}")
_COMPARISON = re.compile(
    r",\s+(?:which|that)(?:\s+is|['’]s|\s+was)\s+[$€£]?\d[\d,.]*\s*(?:[^\W\d_]+\s+){0,2}?"
    r"(?:more|less|fewer|higher|lower|cheaper|greater|smaller)\s+than\b.*$",
    re.IGNORECASE | re.DOTALL,
)
"""A comparison after the value (", which is $12 more than last week"): a difference, no answer
unless the question asks for one."""
_ASKS_A_COMPARISON = re.compile(r"\b(?:more|less|fewer|than|difference|compared?)\b", re.I)
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def _value_alone(text: str, context: Context) -> Statement | None:
    """The whole reply as one value (`_VALUE_ALONE`), its number in words too ("fifty
    dollars", "nine") where no word counts in another unit."""
    if not re.search(r"\d", text) and len(text.split()) <= 4 and not _COUNTING_WORDS.search(text):
        text = with_digits(text, context.language)
    alone = _VALUE_ALONE.fullmatch(text)
    if alone is None:
        return None
    value = text[alone.start("value") : alone.end()].strip(" \t\n*_.!")
    numbers = numbers_in(value, context.decimal_mark)  # with a multiplier: "2.8 thousand"
    if len(numbers) != 1 or numbers[0].value is None:
        return None
    return Statement(
        alone.start("value"), "concluding", numbers[0].value, (), None, len(text), text
    )


def concluding_statement(context: Context) -> Statement | None:
    """The reply's concluding sentence as a statement: its one new quantity (a value), or None
    where the rule reads none (cut off, a question, hedged, no new quantity or several)."""
    text = before_afterwords(_THINK.sub(lambda match: " " * len(match[0]), context.text))
    text = without_remarks(text, context)
    if (alone := _value_alone(text, context)) is not None:  # the whole reply: "20", "$18.50"
        return alone
    start = text.rfind("```") + 3 if "```" in text else 0  # never inside code: it never ran
    if not ended(text):
        return None
    found = _last_sentence(text, start)
    if found is None:
        return None
    position, raw, sentence = found
    if _UNSETTLED.search(sentence) or DOUBT.search(sentence):
        return None
    offered = _OR_NUMBER.search(sentence) is not None
    worded = len(_WORD_OF_TEXT.findall(sentence)) >= 2 or _CJK.search(sentence)
    if not worded and "=" not in sentence:
        return None  # a number alone ("(5). 6.") is no sentence; an equation is
    working = text[:position]
    if restates_question(sentence, context) or _PLAN.search(sentence):
        return None
    values = new_quantities(sentence, question_givens(context), context)
    restated = not values or not context.question
    if not values:  # one quantity, which the question gave too: "Lauren works 40 more years"
        values = new_quantities(sentence, [], context)
    if offered and not conversions(values):
        return None  # "$450 or $1,000": alternatives; "$62, or 6,200 cents": one amount
    if _RESTATED_AS_PARTS.search(sentence):
        return None  # "That's 2 boxes and 2 pencils.": the value before it, in parts
    if (other := _named_otherwise(sentence, values, context)) is not None:
        reason = "its concluding sentence names the asked quantity as another value"
        return Statement(position, "concluding", None, (values[0][0], other), reason)
    chosen = by_asked_kind(values, context) if len(values) > 1 else None
    if chosen is not None and not in_compound(chosen[2], chosen[1].start):
        values = [chosen]  # "12 hours, which is 720 minutes" for "... in minutes"
    if len(values) != 1:
        return None
    value, number, body = values[0]
    result = _EQUALS_BEFORE.search(body[: number.start]) is not None
    if restated and not result and restated_operand(context, working, value):
        return None  # an operand of the working restated ("Each box holds 12 eggs.")
    hedge = _hedge(body, value, context)
    if hedge is not None:
        reason = f"its concluding sentence hedges its value ({hedge!r})"
        return Statement(position, "concluding", None, (value,), reason)
    end = position + len(raw)
    before = [n.end for n in numbers_in(body, context.decimal_mark) if n.end <= number.start]
    passage = body[max(before, default=0) : number.end]  # the value with the words before it
    return Statement(position, "concluding", value, (), None, end, passage)


def _named_otherwise(sentence: str, values: list[Candidate], context: Context) -> float | None:
    """The quantity the clause naming the asked states, where the sentence's one new quantity
    is another ("Each player gets 3 oranges, and the coaches keep 12.", 3 given)."""
    if len(values) != 1 or not context.question or len(re.findall(r"\d+", sentence)) < 2:
        return None  # one number in digits: no other for a clause to name (and cheap to tell)
    named = by_asked_subject(new_quantities(sentence, [], context), context)
    differs = named is not None and abs(named[0] - values[0][0]) > TOLERANCE
    return named[0] if differs else None


def restates_question(sentence: str, context: Context) -> bool:
    """The sentence copies out the question (a small model that repeats it and stops): each of
    its numbers is one the question gave, and most of its words stand in the question in the
    same order."""
    question, givens = context.question, question_givens(context)
    if not question:
        return False
    body = prepared(sentence, context.language, context.decimal_mark)
    numbers = [n.value for n in numbers_in(body, context.decimal_mark) if n.value is not None]
    if not all(any(abs(v - g) <= TOLERANCE for g in givens) for v in numbers):
        return False
    words, asked = _WORD.findall(sentence.lower()), _WORD.findall(question.lower())
    blocks = SequenceMatcher(None, words, asked, autojunk=False).get_matching_blocks()
    copied = sum(block.size for block in blocks if block.size >= _COPIED_RUN)
    return bool(words) and copied >= _RESTATED * len(words)


def _hedge(body: str, value: float, context: Context) -> str | None:
    """A hedge, bound or range in the sentence that qualifies its value ("$64, more or less",
    "about 40", "about 3 × 40 = 120", "13 boxes at minimum", "$480–$520"), not one that
    qualifies another number ("Over 5 days, ...")."""
    if (spread := _range_of(body, value, context)) is not None:
        return spread
    for match in HEDGED.finditer(body):
        after = numbers_in(body[match.end() :], context.decimal_mark)
        near = after[0].value if after and after[0].start <= _HEDGE_REACH else None
        computed = _COMPUTED.match(body[match.end() :])  # "примерно 3 × 40 = 120"
        if computed is not None:
            near = numbers_in(computed["result"], context.decimal_mark)[0].value
        if near is not None and abs(near - value) > TOLERANCE:
            continue  # it qualifies another number
        if asked_bound(match[0], context.question):
            continue  # "at least 9" for "the minimum number of points": the bound is asked
        return match[0]
    return None


def _range_of(body: str, value: float, context: Context) -> str | None:
    """A range the value is an end of ("$480–$520", "12 to 13 years", "3-4"), not a
    subtraction ("600 - 6 = 594")."""
    for low, high in pairwise(numbers_in(body, context.decimal_mark)):
        between = body[low.end : high.start]
        ranged = RANGE.match(between) or (not between and body[high.start] == "-")
        if not ranged or _EQUALS_AFTER.match(body[high.end :]):
            continue
        ends = [abs(n.value) for n in (low, high) if n.value is not None]
        if any(abs(end - abs(value)) <= TOLERANCE for end in ends):
            return body[low.start : high.end]
    return None


def _last_sentence(text: str, start: int) -> tuple[int, str, str] | None:
    """The last sentence after `start` (position, as written, plain), where it is no question
    and no check; None where it is. A full stop after a title or an abbreviation ("Mr.",
    "e.g.") ends no sentence."""
    found = sentences(text[start:])
    if not found:
        return None
    offset, sentence = found[-1]
    while len(found) > 1 and _ABBREVIATION.search(found[-2][1]):
        found.pop()
        offset = found[-1][0]
        sentence = text[start + offset :].rstrip()
    plain = sentence.strip(" \t*_#>`|-")
    if QUESTION_END.search(plain) or CHECK.search(plain) or _is_step(sentence, plain):
        return None
    return start + offset, sentence, plain


def _is_step(sentence: str, plain: str) -> bool:
    """A step of the working rather than its conclusion: a list item, a line labelled with
    something else than a total or result ("Week 3: 24,000 bars."), or a sentence that opens
    like a step ("Next, ...", "Step 3", "Let's ...")."""
    labelled = LABELLED.match(plain)
    procedure = PROCEDURE.match(plain)
    whole_word = (
        procedure is not None and not plain[procedure.end() : procedure.end() + 1].isalpha()
    )
    computes = _EQUALS_BEFORE.search(plain.rsplit("=", 1)[0] + "=") is not None and "=" in plain
    return bool(
        _LIST_ITEM.match(sentence)
        or (labelled and not CONCLUDING_LABEL.search(labelled["label"]))
        or (whole_word and not (computes and _PURPOSE.match(plain)))
        or _STEP.match(plain)
    )


def new_quantities(
    sentence: str, givens: Sequence[float], context: Context, whole: bool = False
) -> list[tuple[float, Number, str]]:
    """The sentence's quantities that are neither operands of its arithmetic nor numbers the
    question gave (a result of its arithmetic counts even where the question gave it), one
    per value; after a colon where that part computes a result or the part before is a label,
    else the part before it where it states one (what follows is its breakdown).
    An intermediate result the sentence goes on to use ("2 × 125 = 250 ..., 125 + 125 + 250 =
    500") is not a candidate."""
    unbracketed = without_asides(sentence)
    sentence = unbracketed if has_number(unbracketed, context) else sentence
    sentence = _without_dash_aside(sentence, context)
    head, colon, tail = sentence.partition(":")
    stated = sentence
    breakdown = len(_RESULT.findall(tail)) > 1 and not _is_label(head)
    if colon and breakdown and has_number(head, context):
        stated = head  # "480 people were inside: the buses 12 × 35 = 420 and the cars 20 × 3 = 60"
    elif colon and (_is_label(head) or _RESULT.search(tail)):
        stated = tail  # "Total: 29", "Elle en donne 5 : il lui reste 12 − 5 = 7"
    elif colon and has_number(head, context):
        stated = head  # "So you paid $35 in total: your $25 half plus the $10 tip"
    stated = stated if whole else CONCLUDING_BREAK.split(THEN.split(stated)[-1])[-1]
    if not _ASKS_A_COMPARISON.search(context.question or ""):
        stated = _COMPARISON.sub("", stated)  # "$36, which is $12 more than last week": an aside
    condition = _LEADING_CONDITION.match(stated)
    if condition is not None:  # "If she sells 9 eggs at $2, she makes $18": the consequence
        stated = stated[condition.end() :]
        if _HYPOTHETICAL.search(stated):
            return []  # "..., it would be 13": a case, not the answer
    if _CONDITION.search(stated):
        return []  # "..., or 13 if you count the guide": a case, not the answer
    if (reason := _LEADING_REASON.search(stated)) is not None:
        main = reason["main"]  # "..., and since he has 6 feet, that leaves 600 − 6 = 594"
        stated = main if has_number(main, context) else stated
    else:
        explained = _EXPLAINED.split(stated, maxsplit=1)[0]
        stated = explained if has_number(explained, context) else stated  # "$5 because 20 × .25"
    lead, comma, rest = stated.partition(", ")
    if comma and BACKGROUND.match(lead.strip(" *_")) and has_number(rest, context):
        stated = rest  # a leading phrase sets the scene: "With 110 books, Elly needs 2"
    body = prepared(_EMPHASIS.sub("", stated), context.language, context.decimal_mark)
    body = REFERENCE.sub(r"\g<article>", body)
    if FRACTION_WORDS.search(body):
        return []  # "a third of them": a fraction in words is no value
    every = numbers_in(body, context.decimal_mark)
    if any(n.value is None for n in every):
        return []  # a number with two readings ("14.000" in a reply of no known language)
    numbers = list(every)
    if not numbers and (alone := ONE.search(body)) is not None:  # "The pen costs one dollar."
        one = Number(1.0, alone.start(), alone.start() + 3, (1.0,))
        numbers = [one] if counts_the_asked(body, one.start, one.end, context.question) else []
    found: dict[float, tuple[float, Number, str]] = {}
    for number in numbers:
        before = body[: number.start]
        result = _EQUALS_BEFORE.search(before) is not None
        if is_operand(body, number) or _is_ordinal(body, number):
            continue
        if _ARTICLE_BEFORE.search(before) or _LABEL_BEFORE.search(before):
            continue  # "the three cities", "horse No. 12": a group or a label, no quantity
        if not result and any(abs(number.value - g) <= TOLERANCE for g in givens):
            continue
        if result and _used_later(body, number):
            continue  # an intermediate result the sentence computes on with
        found.setdefault(round(number.value, 9), (number.value, number, body))
    return list(found.values())


def _used_later(body: str, number: Number) -> bool:
    """The value reappears later in the sentence as an operand ("= 250 on Friday, which is
    125 + 125 + 250 = 500")."""
    value = number.value if number.value is not None else float("nan")
    return computes_with(body[number.end :], value, None)


def computes_with(body: str, value: float, decimal_mark: str | None) -> bool:
    """Whether `body` (prepared) computes with `value`: it stands there as an operand."""
    return any(
        number.value is not None
        and abs(number.value - value) <= TOLERANCE
        and is_operand(body, number)
        for number in numbers_in(body, decimal_mark)
    )


def _without_dash_aside(sentence: str, context: Context) -> str:
    """The sentence without a closing aside after a spaced dash that explains the value
    before it ("Together they picked 30 apples — Jenna 10 and her mom 20."), read as an aside
    in brackets is; not where the aside offers another value, corrects, hedges, doubts,
    computes, restates the value, states another clause of its own, or alone names the asked
    kind ("$4 — 16 quarters" for "how many quarters") ("— or $45 if ...", "—
    wait, 42", "— about 40", "— 52 − 51 = 1", "— that's 16 quarters", "— Jerry has 12")."""
    found = _DASH_ASIDE.search(sentence)
    if found is None:
        return sentence
    before, aside = sentence[: found.start()], found["aside"]
    explains = not (_NOT_AN_EXPLANATION.search(aside) or HEDGED.search(aside))
    stated = len(_WORD_OF_TEXT.findall(before)) >= 2 and has_number(before, context)
    if not (explains and stated) or DOUBT.search(aside):
        return sentence
    return (
        sentence
        if names_the_asked(aside, context) and not names_the_asked(before, context)
        else before
    )


_DASH_ASIDE = re.compile(r"\s[—–]\s(?P<aside>[^—–]+)$")
_NOT_AN_EXPLANATION = re.compile(
    r"\b(?:or|wait|actually|no|not|if|unless|rather|instead|correction|sorry|oops|mistake|"
    r"either|oder|ou|o|sinon|sonst|si|wenn|falls|so|thus|that(?:'s|’s|\s+is)|which|i\.e|"
    r"meaning|namely|making|giving|total|altogether|in\s+all|is|are|was|were|has|have|had|"
    r"gets?|got|makes?|made|costs?|pays?|paid|needs?|will|would|ist|sind|hat|haben|est|sont|"
    r"es|son|tiene|tienen)\b|=|\?",
    re.IGNORECASE,
)


def _is_label(head: str) -> bool:
    """A short label before a colon ("Total", "Answer", "Total raised"), not a clause."""
    return len(head.split()) <= 4 and not re.search(r"\d", head)


def is_operand(body: str, number: Number) -> bool:
    """A term of an equation: next to an operator, or right before its "="."""
    return bool(
        _OPERATOR_AFTER.match(body[number.end :])
        or _EQUALS_AFTER.match(body[number.end :])
        or _OPERATOR_BEFORE.search(body[: number.start])
    )


def _is_ordinal(body: str, number: Number) -> bool:
    return bool(_ORDINAL_AFTER.match(body[number.end :]))
