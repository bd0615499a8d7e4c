"""The remarks that close a chat reply after its answer, which a grader reads past (docs/
classroom.md, "Reading answers").

Chat models close on a courtesy or a comment: "Hope this helps!", "Let me know if you have any
other questions!", "Would you like me to explain any step?", "Not bad for two glasses!",
"Pretty simple, right?". None of them states a quantity or speaks of the answer, so the answer
is the sentence before them. A sentence is passed over as a remark only where it states no
number the question did not give, doubts nothing, conditions nothing but the reader's own
questions, and says nothing of the answer, its rightness or a mistake ("I lost track of the
final number.", "That doesn't seem right.", "Or did you mean 45?" are never remarks); at most
two are passed over. So is a value restated in other units ("… = 452 minutes. That's 7 hours
32 minutes.", "… $2 per watermelon. In cents, that's 200¢."), unless it is in the asked unit.
"""

from __future__ import annotations

import re

from personasim.environments.classroom.answer_chains import question_givens
from personasim.environments.classroom.answer_clauses import UNSURE, Context, prepared
from personasim.environments.classroom.answer_closings import CONCLUDING_LABEL, sentences
from personasim.environments.classroom.answer_durations import RESTATING, restates_duration
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.environments.classroom.answer_units import (
    asked_kind,
    conversions,
    quantity_kind,
)

__all__ = [
    "DOUBT",
    "LABELLED",
    "ONE",
    "QUESTION_END",
    "counts_the_asked",
    "ended",
    "has_number",
    "without_remarks",
]

TOLERANCE = 1e-6

DOUBT = re.compile(
    r"\b(?:probably|maybe|perhaps|possibly|likely|I\s+(?:think|guess|believe|suppose)|"
    r"not\s+(?:sure|certain)|wahrscheinlich|vielleicht|peut-être|probablement|quizás?|"
    rf"tal\s+vez|probablemente|talvez|provavelmente)\b|可能|{UNSURE}",
    re.IGNORECASE,
)
"""Doubt about a value: a sentence that holds it states nothing a grader takes."""
ONE = re.compile(r"(?<!-)\b(?:one|a\s+single)\s+(?!of\b|another\b|more\b)[^\W\d_]+", re.IGNORECASE)
"""The English word "one" before a noun, which text2num leaves as a word ("one dollar")."""
LABELLED = re.compile(r"^[\s*_#>-]*(?P<label>[^\d:：=\n]{1,40}?)\s*[:：=]\s*\S")
QUESTION_END = re.compile(r"[?？]\s*[*_]*\s*$")
_ENDED = re.compile(r"[.!。！)\]*_`]\s*$")

_ABOUT_THE_ANSWER = re.compile(
    r"\b(?:lost|unsure|unclear|wrong|mistake|error|incorrect|wait|hmm|sorry|however|but|"
    r"check|recheck|verify|assume|assuming|unless|otherwise|instead|actually|rather|"
    r"answer|result|solution|final|approximately|about|roughly|twice|half|double|triple|"
    r"dozens?|decide|which\s+one|the\s+question)\b|^\W*or\b|\bor\s+(?:did|was|were|is|are|"
    r"should|would|could|maybe|perhaps|so|more|less|fewer)\b",
    re.IGNORECASE,
)
"""What a remark never holds: a word about the answer, its rightness or a mistake, another
case ("otherwise", "Or did he …?", "or more"), a choice left to the reader ("decide which one
the question means"), or a multiple in words ("That's half of it!"); "cash or card" is no
other case."""
_ORDINAL = re.compile(r"\b\d+(?:st|nd|rd|th|º|ª|o|a|ème|e|er|re|te|de)\b", re.IGNORECASE)
"""An ordinal ("your 3rd grade homework", "4º grado", "devoir de 6e"): it orders, it counts
nothing."""
_META = re.compile(
    r"\b\d+\s+(?:steps|tips)\b|\(\d+/\d+\)|(?:problem|question|exercise)\s+#?\d+\b|#\d+\b|"
    r"\bv\d+(?:\.\d+)*\b",
    re.IGNORECASE,
)
"""A number about the explanation or the chat ("I hope these 5 steps make it clear!", "(5/5)",
"Happy to help with problem #2 too!", "Answered by MathBot v2.")."""
_SMALL_WORDS = dict(
    zip(
        ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
         "twelve"),
        range(2, 13),
        strict=True,
    )
)  # fmt: skip
"""Number words text2num leaves as words in English ("two pies"): a number all the same."""
_SMALL_WORD = re.compile(rf"\b(?:{'|'.join(_SMALL_WORDS)})\b", re.IGNORECASE)
_DENIED = re.compile(
    r"\b(?:that|this|it|which|I|my|the\s+(?:answer|math|calculation|number|total|result|"
    r"question|problem))\b(?:['’]s|['’]m)?[^.!?]{0,30}?(?:\b(?:not|no|never|cannot)\b|n['’]t\b)",
    re.IGNORECASE,
)
"""A denial of the answer or the working ("That's not right.", "I don't think so.", "it
doesn't add up"), not one in a courtesy or the story ("Not bad!", "Don't forget to ...",
"No wonder he's happy")."""
_CONDITION = re.compile(
    r"\b(?:if|wenn|falls|si|se)\b(?!\s+(?:you|anything|any|needed|necessary|there(?:['’]s|\s+is|"
    r"\s+are)\s+any))",
    re.IGNORECASE,
)
"""A condition ("If he sells more, ..."): another case. Not the reader's own ("If you have
any questions, ...", "if anything is unclear")."""
_CONFIDENCE = re.compile(
    r"\b(?:I\s+(?:think|hope|believe)\s+(?:that['’]?s|thats|this\s+is|it['’]?s|it\s+is|"
    r"I\s+(?:did|got)\s+(?:it|this|that))\s+(?:right|correct|it)|"
    r"hopefully\s+(?:that['’]?s|this\s+is|it['’]?s|I\s+(?:did|got)\s+it)\s+(?:right|correct)?|"
    r"(?:I['’]?m\s+)?not\s+(?:100\s*%\s+|totally\s+|completely\s+)?sure\s+if\s+I\s+did\s+"
    r"(?:it|this|that)\s+right|I['’]?m\s+pretty\s+sure)\b",
    re.IGNORECASE,
)
"""Confidence talk about the speaker's own work ("I hope I did it right", "I think that's
right"): it qualifies the speaker's certainty, not the number (the held-out sets' labelling
calls), so the rest of the sentence decides whether it is a remark."""
_STEP_TO_DO = re.compile(
    r"(?:(?:now|next|then|finally),?\s+)?(?:add|multiply|subtract|divide|calculate|compute|"
    r"convert|sum)\b",
    re.IGNORECASE,
)
"""An instruction for a step of the working ("Add them up to find the total."): not done yet."""
_TO_THE_READER = re.compile(r"\b(?:you|your|right|ok(?:ay)?)\b", re.IGNORECASE)
"""A question to the reader ("Would you like ...?", "Pretty simple, right?")."""


def without_remarks(text: str, context: Context) -> str:
    """The reply without the remarks that close it after its last sentence with a number, up
    to two (module docstring); the reply itself where its last sentence is none."""
    for _ in range(2):
        found = sentences(text)
        if len(found) < 2:
            return text
        position, last = found[-1]
        restated = ended(text) and (
            restates_duration(last, found[-2][1], context.question)
            or _restates_in_units(last, found[-2][1], context)
        )
        if not (restated or _is_remark(last, context, text)):
            return text
        before = text[:position].rstrip()
        if not has_number(found[-2][1], context) or not ended(before):
            return text
        text = before
    return text


def _restates_in_units(sentence: str, before: str, context: Context) -> bool:
    """`sentence` only gives the value before it in another unit, not the asked one ("… $2
    per watermelon." then "In cents, that's 200¢ apiece."; "That's 2.6 kg.")."""
    if not RESTATING.match(sentence):
        return False
    body = prepared(sentence, context.language, context.decimal_mark)
    stated = numbers_in(body, context.decimal_mark)
    if len(stated) != 1 or stated[0].value is None:
        return False
    asked = asked_kind(context.question)
    if asked is not None and quantity_kind(body, stated[0].start, stated[0].end) == asked:
        return False  # "That's 120 minutes." for "how many minutes": the answer in its unit
    restated = (stated[0].value, stated[0], body)
    prior = prepared(before, context.language, context.decimal_mark)
    return any(
        conversions([(n.value, n, prior), restated])
        for n in numbers_in(prior, context.decimal_mark)
        if n.value is not None
    )


def _is_remark(sentence: str, context: Context, text: str) -> bool:
    """`sentence`, the last of `text`, is a courtesy or a comment (module docstring)."""
    sentence = _CONFIDENCE.sub(" ", sentence)
    asks_the_reader = bool(QUESTION_END.search(text) and _TO_THE_READER.search(sentence))
    if not (ended(text) or asks_the_reader):
        return False  # cut off, or a question about the problem
    one = ONE.search(sentence)
    if one is not None and counts_the_asked(
        sentence, one.start(), one.start() + 3, context.question
    ):
        return False  # it states a number of the asked kind ("one hour left")
    if _new_number(sentence, context):
        return False  # "enough for 3 more"
    return not (
        _STEP_TO_DO.match(sentence.strip(" *_"))  # "Add them up to find the total.": unfinished
        or DOUBT.search(sentence)
        or _ABOUT_THE_ANSWER.search(sentence)
        or _DENIED.search(sentence)
        or _CONDITION.search(sentence)
    )


def _new_number(sentence: str, context: Context) -> bool:
    """The sentence states a number: any in digits or in words text2num reads ("cinco
    pañales"), or an English word for one the question did not give ("Not bad for two
    glasses!" restates the question's 2 glasses)."""
    if has_number(_META.sub(" ", _ORDINAL.sub(" ", sentence)), context):
        return True
    givens = question_givens(context)
    words = [float(_SMALL_WORDS[word.lower()]) for word in _SMALL_WORD.findall(sentence)]
    return any(not any(abs(v - g) <= TOLERANCE for g in givens) for v in words)


def counts_the_asked(body: str, start: int, end: int, question: str | None) -> bool:
    """The number at `start:end` of `body` counts what the `question` asks for, where it names
    a kind ("one dollar" for "how much"; not "for one firefighter" for "how many shoes")."""
    asked = asked_kind(question)
    return asked is None or quantity_kind(body, start, end) == asked


def ended(text: str) -> bool:
    """The reply ends on a complete sentence or a concluding labelled line, not mid-sentence."""
    last = text.rstrip().rsplit("\n", 1)[-1]
    if not last.strip() or QUESTION_END.search(last):
        return False
    labelled = LABELLED.match(last)
    return bool(_ENDED.search(last) or (labelled and CONCLUDING_LABEL.search(labelled["label"])))


def has_number(text: str, context: Context) -> bool:
    body = prepared(text, context.language, context.decimal_mark)
    return bool(numbers_in(body, context.decimal_mark))
