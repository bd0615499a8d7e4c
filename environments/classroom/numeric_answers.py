"""Reading the number a free-text math answer states, as a careful grader reads it (seed 000).

Two independent readers, combined by the shared rule (`personasim.simulation.agree`):

- **the grammar** (`grammar_reading`) reads the reply's final statement: explicit ones first —
  final-answer markers in several languages, `\\boxed{}`, GSM8K's `#### N`, a JSON object's
  answer field (leniently where the object is not valid JSON), a table row labelled answer, and
  a correction ("Wait, it is actually 42") after one of those; without one, an answer given
  first and then broken down, or one bold value; and in a reply with no final statement at all,
  its closing sentence where it states exactly one quantity, or, with the question beside it,
  exactly one quantity the question did not give (`answer_conclusion`). Something after the final
  statement can take it back: an alternative, a condition with another value, a correction
  with none (docs/classroom.md, "Reading answers", lists each rule);
- **math-verify** (`math_verify_reading`), on its anchored extraction only: it abstains where
  it has no anchored reading instead of falling back to the last number it sees. Where the
  grammar read a passage the whole reply would mislead it on (a JSON field, a closing
  sentence, a concluding box), math-verify reads that passage.

`read_answer` is their agreement: a value both read (or one reads and the other abstains on),
*ambiguous* where they read different values, *unreadable* where neither reads one — or where
the reply withdraws its result ("this doesn't make sense", "please check the data"). No rule
reads "the last number" or "the first number of the sentence".

The rules live beside this module: number formats (`answer_numbers`), clauses (`answer_clauses`),
statements (`answer_statements`), closings (`answer_closings`), the concluding sentence read
with the question (`answer_conclusion`) and a second answer beside it (`answer_rivals`).

`follows_format` says whether a reply closes in the exact format the paper's persona prompts ask
for, `Final Answer: {number}`: format compliance is reported beside accuracy, not mixed into it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from personasim.environments.classroom.answer_clauses import (
    LISTED,
    NEGATED,
    NO_ANSWER,
    SEVERAL,
    Context,
    Statement,
    below_zero_signed,
)
from personasim.environments.classroom.answer_closings import (
    closing_statement,
    concluding_box,
    hedge_after,
)
from personasim.environments.classroom.answer_conclusion import (
    concluding_statement,
    restates_question,
)
from personasim.environments.classroom.answer_consistency import (
    hypothetical_after,
    line_goes_on,
    prose_after,
    prose_before,
    said_otherwise_before,
)
from personasim.environments.classroom.answer_numbers import (
    NUMBER,
    SIGN_WORD,
    miles_named,
    normalized,
    read_number,
    reply_decimal_mark,
    reply_language,
)
from personasim.environments.classroom.answer_periods import (
    other_period,
    other_scope,
    starting_amount,
)
from personasim.environments.classroom.answer_remarks import without_remarks
from personasim.environments.classroom.answer_replies import (
    cut_off_loop,
    cut_off_result,
    reply_proper,
)
from personasim.environments.classroom.answer_rivals import against_rivals
from personasim.environments.classroom.answer_signs import sign_in_words
from personasim.environments.classroom.answer_statements import (
    ANSWER_FIELDS,
    correction_statements,
    emphasis_statements,
    explicit_statements,
    mentions_a_final_statement,
)
from personasim.environments.classroom.answer_subjects import (
    a_side_value,
    another_subject,
    asks_combined,
    listed_quantities,
    the_others,
    total_for_each,
)
from personasim.environments.classroom.answer_units import (
    difference_missing,
    kind_mismatch,
    restated_in_asked_unit,
    sentence_at,
)
from personasim.environments.classroom.answer_withdrawals import withdrawal_after
from personasim.simulation import CORRECTION, Reading, agree, corrected, register_reader

__all__ = [
    "ANSWER_FIELDS",
    "READER_NAME",
    "TOLERANCE",
    "follows_format",
    "grammar_reading",
    "math_verify_reading",
    "read_answer",
    "read_number",
]

READER_NAME = "math_answer"
"""The name the classroom's readings are logged and audited under (`reading.made`)."""
TOLERANCE = 1e-6
"""Two statements within this distance state the same number ("18" and "18.00")."""


# --- the grammar's reading ----------------------------------------------------------------------


def _statements(context: Context) -> list[Statement]:
    """Explicit statements; without one that states something, emphasis (not where an answer
    field or box holds no number: the reply says it has none); in a reply with no final
    statement at all, its closing sentence; then corrections after the first."""
    found = explicit_statements(context)
    stating = [s for s in found if s.problem is None or s.candidates]
    if not stating and any(_names_no_number(s) for s in found):
        return sorted(found, key=lambda s: s.position)  # its final statement names none
    if not stating:
        found.extend(emphasis_statements(context))
        stating = [s for s in found if s.problem is None or s.candidates]
    if not stating and not mentions_a_final_statement(context):
        closing = closing_statement(context)
        if closing is None:  # its last sentences may be remarks ("Rough season at the Pole!")
            closing = closing_statement(context, without_remarks(context.text, context))
        if closing is not None and _restated(closing, context):
            closing = None  # it copies the question out: no answer
        concluding = concluding_statement(context)
        if closing is None or closing.value is None:
            if closing is None or _resolvable(closing, context):
                closing = concluding or closing
        elif concluding is not None and concluding.value is not None:
            closing = _both_rules(closing, concluding)
        if closing is not None:
            found.append(against_rivals(closing, context))
        stating = [s for s in found if s.problem is None or s.candidates]
    if stating:
        first = min(s.position for s in stating)
        stated = tuple(s.value for s in stating if s.value is not None)
        found.extend(correction_statements(context, first + 1, stated))
    return sorted(found, key=lambda s: s.position)


def _resolvable(closing: Statement, context: Context) -> bool:
    """Whether the question may settle what the closing sentence left open (the concluding
    rule then reads it, with its own, narrower hedge check): not quantities listed side by
    side ("45 goats in Farm X and 25 goats in Farm Y")."""
    if closing.problem not in (SEVERAL, LISTED):
        return True
    sentence = sentence_at(context.text, closing)
    if asks_combined(context.question, sentence):
        return False  # "Indras has 6 letters and her sister has 7" for both names' letters
    return not listed_quantities(sentence, context)


def _both_rules(closing: Statement, concluding: Statement) -> Statement:
    """The closing sentence as both rules read it: one value, or ambiguous where the
    closing-sentence rule and the concluding-sentence rule (with the question) differ on one
    sentence; where the closing rule read a sentence after the concluding one (a check or a
    note the concluding rule passes over), the concluding one."""
    assert closing.value is not None and concluding.value is not None
    if abs(closing.value - concluding.value) <= TOLERANCE:
        return closing
    if concluding.end is not None and closing.position >= concluding.end:
        return concluding  # the closing rule read a check or note the concluding rule passed over
    reason = "its closing sentence reads two ways (the closing and concluding rules differ)"
    return Statement(closing.position, "closing", None, (closing.value, concluding.value), reason)


def _restated(statement: Statement, context: Context) -> bool:
    """The statement's sentence repeats a sentence of the question."""
    end = statement.end if statement.end is not None else len(context.text)
    sentence = re.split(r"(?<=[.!?。！？])\s+|\n", context.text[statement.position : end])[0]
    return restates_question(sentence, context)


def _names_no_number(statement: Statement) -> bool:
    """An answer field or box without a number, or a marker that names none or negates
    ("Final Answer: N/A", "answer": "Not possible"): the reply says it has no answer."""
    if statement.value is not None or statement.candidates:
        return False
    if statement.rule in ("json", "boxed"):
        return True
    return statement.rule == "marker" and statement.problem in (NO_ANSWER, NEGATED)


@dataclass(frozen=True)
class _Grammar:
    """The grammar's reading of one reply, with its statements and the one it read."""

    reading: Reading
    text: str
    statements: list[Statement]
    final: Statement | None = None


def grammar_reading(text: str, question: str | None = None) -> Reading:
    """The answer the reply's final statements give (the module's grammar): one value, or
    *ambiguous* (a statement with two candidates, differing statements without a correction,
    an alternative after the answer), or *unreadable* (no statement, or the reply withdraws its
    result)."""
    return _grammar(text, question).reading


def _grammar(text: str, question: str | None) -> _Grammar:
    """The reply proper's reading: up to a new question it goes on to write, where the part
    before it states an answer, else the whole reply."""
    whole, cut = reply_proper(text)
    if cut is not None:
        before = _grammar_of(cut, question)
        if before.reading.ok:
            return before
    return _grammar_of(whole, question)


def _grammar_of(text: str, question: str | None) -> _Grammar:
    normalized_text = normalized(text)
    language = reply_language(normalized_text)
    normalized_text = miles_named(normalized_text, language, question)
    mark = reply_decimal_mark(normalized_text, language)
    context = Context(normalized_text, language, mark, question)
    statements = _statements(context)
    reading, final = _reading_of(statements, context)
    return _Grammar(reading, text, statements, final)


def _reading_of(statements: list[Statement], context: Context) -> tuple[Reading, Statement | None]:
    normalized_text = context.text
    valued = [s for s in statements if s.value is not None]
    unclear = [s for s in statements if s.value is None and s.candidates]
    last = max((s.position for s in valued + unclear), default=None)
    withdrawn = withdrawal_after(normalized_text, last)
    if withdrawn is not None:
        return Reading.unreadable(
            f"it withdraws its result ({withdrawn!r})", "grammar:withdrawn"
        ), None
    if unclear:
        return _ambiguous_statement(unclear, valued, normalized_text)
    if not valued:
        return _no_statement(statements), None
    reading = corrected([(s.position, s.value) for s in valued], normalized_text)
    assert reading is not None  # there are statements
    if not reading.ok and (box := concluding_box(valued, context)) is not None:
        return _hedged(Reading.of(box.value, "grammar:boxed, concluding"), box, context)
    rules = "+".join(dict.fromkeys(s.rule for s in valued if s.value == reading.value))
    if reading.ok:
        suffix = ", corrected" if reading.by == "corrected" else ""
        final = [s for s in valued if s.value == reading.value][-1]
        return _hedged(Reading.of(reading.value, f"grammar:{rules}{suffix}"), final, context)
    return Reading.ambiguous(reading.reason or "", "grammar:statements", reading.candidates), None


def _hedged(
    reading: Reading, final: Statement, context: Context
) -> tuple[Reading, Statement | None]:
    """The reading (in the asked unit where its answer line restates it so), unless what
    follows its final statement takes it back, or its sentence gives the sign in words the
    question does not use, or its last sentence gives a quantity of another kind than the
    question asks (it stopped at an intermediate step)."""
    if (restated := restated_in_asked_unit(context, final)) is not None:
        reading = Reading.of(restated[0], f"{reading.by}, in the asked unit")
        final = replace(final, value=restated[0], passage=restated[1])
    checked = _as_sentence(final, context)
    other = kind_mismatch(context, checked, reading.value)
    other = other or difference_missing(context, checked, reading.value)
    other = other or other_period(context, checked, reading.value)
    other = other or starting_amount(context, checked, reading.value)
    other = other or other_scope(context, checked, reading.value)
    other = other or another_subject(context, checked, reading.value)
    other = other or the_others(context, checked, reading.value)
    other = other or total_for_each(context, checked, reading.value)
    if other is not None:
        return Reading.unreadable(other, "grammar:intermediate"), None
    hedge = (
        a_side_value(context, final, reading.value)
        or hedge_after(context, final, reading.value)
        or sign_in_words(context, final, reading.value)
        or said_otherwise_before(context, final, reading.value)
        or prose_before(context, final, reading)
        or prose_after(context, final, reading)
        or line_goes_on(context, final, reading)
        or hypothetical_after(context, final, reading)
    )
    if hedge is None:
        return reading, final
    if "correction" in hedge:
        return Reading.unreadable(hedge, "grammar:withdrawn"), None
    return Reading.ambiguous(hedge, "grammar:hedged", (reading.value,)), None


def _as_sentence(final: Statement, context: Context) -> Statement:
    """A bold value inside the reply's last sentence ("… which means **24 eggs**.") is that
    sentence's statement: the checks of what a closing sentence states apply to it."""
    if final.rule != "bold" or final.end is None:
        return final
    text = context.text.rstrip()
    if "\n" in text[final.end :]:
        return final  # not in the reply's last line
    line_start = text.rfind("\n", 0, final.position) + 1
    end = len(text)
    before = text[line_start : final.position]
    start = line_start + max((m.end() for m in re.finditer(r"[.!?]\s+", before)), default=0)
    around = text[start:end].replace(text[final.position : final.end], " ")
    if len(re.findall(r"[^\W\d_]{2,}", around)) < 3:
        return final  # a bold value alone or with a label ("**$18**", "Total: **48**")
    passage = text[start : final.end].replace("**", "").replace("__", "")
    return replace(final, position=start, rule="concluding", end=end, passage=passage)


def _ambiguous_statement(
    unclear: list[Statement], valued: list[Statement], text: str
) -> tuple[Reading, Statement | None]:
    """A statement with two candidates is ambiguous unless a correction after it replaced it."""
    last_unclear = max(s.position for s in unclear)
    later = [s for s in valued if s.position > last_unclear]
    if later and CORRECTION.search(text, last_unclear, later[0].position):
        reading = corrected([(s.position, s.value) for s in later], text)
        if reading is not None and reading.ok:
            return Reading.of(reading.value, f"grammar:{later[-1].rule}, corrected"), later[-1]
    statement = unclear[-1]
    return Reading.ambiguous(
        statement.problem or "ambiguous", f"grammar:{statement.rule}", statement.candidates
    ), None


def _no_statement(statements: list[Statement]) -> Reading:
    problems = [s.problem for s in statements if s.problem]
    if problems:
        return Reading.unreadable(problems[-1], f"grammar:{statements[-1].rule}")
    return Reading.unreadable("no explicit final answer", "grammar")


# --- the second reader: math-verify -------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?;])[ \t]+(?=\S)")


class _SilenceNoTimeout(logging.Filter):
    """math-verify warns once that its signal timeout is off; it is off on purpose (readers
    run off the main thread, where `signal.alarm` fails)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Timeout is disabled" not in record.getMessage()


logging.getLogger("math_verify.parser").addFilter(_SilenceNoTimeout())


def math_verify_reading(text: str, context: Mapping[str, Any] | None = None) -> Reading:
    """math-verify's reading of the whole reply, on its anchored extraction only (`\\boxed{}`
    first, then "final answer is", "answer:" patterns; no unanchored last-number fallback),
    one sentence per line so its "answer … =" pattern stays in the sentence that says
    answer; no signal timeout (it runs off the main thread). A percentage reads its number
    ("25%" is 25, as in the grammar); anything but one number is no reading."""
    return _math_verify(text, anchored=True)


def _math_verify(text: str, anchored: bool) -> Reading:
    """math-verify's reading of `text`; `anchored=False` (a passage the grammar read: a JSON
    field, a closing sentence) lets it read the passage's expression without an anchor."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    config = [
        LatexExtractionConfig(try_extract_without_anchor=not anchored, boxed_match_priority=0),
        ExprExtractionConfig(try_extract_without_anchor=not anchored),
    ]
    if _MYRIAD.search(text):
        reason = "it writes a numeral unit (万, 千, 만 …), which math-verify does not read"
        return Reading.unreadable(reason, "math-verify")
    if (limit := _beyond_math_verify(normalized(text))) is not None:
        return Reading.unreadable(limit, "math-verify")
    lines = _SENTENCE_END.sub("\n", SIGN_WORD.sub("-", below_zero_signed(text)))
    try:
        found = parse(lines, config, fallback_mode="no_fallback", parsing_timeout=None)
    except Exception as error:  # the library's own errors are an abstention
        return Reading.unreadable(f"math-verify failed ({type(error).__name__})", "math-verify")
    value = _sympy_number(found[0]) if found else None
    if value is None:
        reason = "no anchored answer" if not found else "its anchored answer is not one number"
        return Reading.unreadable(reason, "math-verify")
    return Reading.of(value, "math-verify")


_MYRIAD = re.compile(r"\d\s*[万萬亿億千百만천억백]")
_GROUPED_OR_DECIMAL = re.compile(r"\d,\d|\d \d{3}\b|\d\.\d{3}\b")
_BEYOND = re.compile(r"(?<![\d.,/])\d+\s+\d+/\d+(?![\d/])|\d'\d{3}\b|\d,\d{2},\d{3}\b")
"""A mixed number ("6 3/4", "6¾"; math-verify reads its whole part), a grouping by
apostrophes ("1'250"; it reads 1) or an Indian one ("6,50,000"; it reads 6.5)."""


def _beyond_math_verify(normalized_text: str) -> str | None:
    """Why math-verify cannot read this reply's numbers, if it cannot: decimal commas, or a
    grouping the reply does not say is one (it reads "1 234,50" as 1234, "57.500 $" as 57.5),
    or multiplier words (it reads "1.5 million" as 1.5)."""
    mark = reply_decimal_mark(normalized_text, reply_language(normalized_text))
    if mark != "." and _GROUPED_OR_DECIMAL.search(normalized_text):
        return "it writes decimal commas, which math-verify misreads"
    if any(match["multiplier"] for match in NUMBER.finditer(normalized_text)):
        return "it writes a multiplier (million...), which math-verify does not read"
    if (beyond := _BEYOND.search(normalized_text)) is not None:
        return f"it writes {beyond[0]!r}, which math-verify misreads"
    return None


def _sympy_number(expression: Any) -> float | None:
    """A sympy result as one number; a percentage (`25 * 1/100`) as its number."""
    import sympy

    if not isinstance(expression, sympy.Basic):
        return None
    if isinstance(expression, sympy.Mul) and sympy.Rational(1, 100) in expression.args:
        expression = sympy.Mul(*(a for a in expression.args if a != sympy.Rational(1, 100)))
    try:
        value = expression.evalf() if expression.is_number else None
        return float(value) if value is not None and value.is_real else None
    except (TypeError, ValueError):
        return None


# --- the two together ---------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def read_answer(text: str, question: str | None = None) -> Reading:
    """The answer a careful grader reads in `text`, with the `question` it answers beside it
    where the caller has it (a closing sentence's new quantity is the one the question did not
    give): the grammar and math-verify combined by `agree`. A withdrawn result stays
    unreadable whatever math-verify reads; where the grammar read a self-correction and
    math-verify the withdrawn value (it reads no corrections), math-verify counts as
    abstaining. Where the grammar read a passage (a JSON field, a closing sentence, a
    concluding box), math-verify reads that passage. Cached: a reply is read when graded and
    again where a later prompt needs its number, and math-verify costs a few milliseconds a
    reply (a `Reading` is immutable)."""
    grammar = _grammar(text, question)
    own, statements = grammar.reading, grammar.statements
    if own.status == "unreadable":
        return own
    if (loop := cut_off_loop(grammar.text)) is not None:
        return Reading.unreadable(
            f"it repeats itself and is cut off ({loop[:40]!r})", "grammar:loop"
        )
    if (cut := cut_off_result(grammar.text)) is not None:
        return Reading.unreadable(f"it is cut off inside its last result ({cut})", "grammar:cut")
    passage = grammar.final.passage if grammar.final is not None else None
    if passage is not None:
        library = _math_verify(passage, anchored=False)
    else:
        library = math_verify_reading(grammar.text)
    if own.ok and own.by.endswith(", corrected") and library.ok:
        stated = [s.value for s in statements if s.value is not None]
        withdrawn = [v for v in stated if abs(v - own.value) > TOLERANCE]
        if any(abs(library.value - value) <= TOLERANCE for value in withdrawn):
            library = Reading.unreadable("it read the value the reply corrected", "math-verify")
    return agree(own, library)


register_reader(READER_NAME, math_verify_reading)

# --- format compliance --------------------------------------------------------------------------

_ASKED_FORMAT = re.compile(
    r"(?:^|[\s.!?])Final Answer: (?:-?\d{1,3}(?:,\d{3})+|-?\d+)(?:\.\d+)?\.?\s*$"
)


def follows_format(text: str) -> bool:
    """The reply ends with the paper's asked closing, `Final Answer: {number}` exactly: those
    words and a plain number (no markdown, currency, units or words), at most a full stop."""
    return _ASKED_FORMAT.search(text) is not None
