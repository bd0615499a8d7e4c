"""Statements of the classroom's answer reader: where a reply states its final answer.

Explicit statements (`explicit_statements`): final-answer markers in several languages ("Final
Answer: N", "the answer is N", "La réponse est N", "最终答案：N", a table row "| Answer | N |"),
`\\boxed{}`, GSM8K's `#### N` and "A: N", "N is the answer", and a JSON object's answer field —
parsed as JSON, or, where the object is not valid JSON (unescaped newlines, prose around it, a
fence not closed, the object cut at its start), matched leniently: each `"answer": ...`
field outside the objects that parse. Where there is none, an answer given first and followed
by its breakdown, or one bold value (`emphasis_statements`). After the first statement,
corrections ("Wait, it is actually 42") are statements too (`correction_statements`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from personasim.environments.classroom.answer_afterwords import before_afterwords
from personasim.environments.classroom.answer_clauses import (
    CLAUSE_END,
    WORKED,
    Context,
    Statement,
    clause_of,
    clause_value,
    prepared,
)
from personasim.environments.classroom.answer_closings import closing_statement
from personasim.environments.classroom.answer_numbers import GSM8K_HASHES, numbers_in
from personasim.simulation import CORRECTION, same_value

__all__ = [
    "ANSWER_FIELDS",
    "correction_statements",
    "emphasis_statements",
    "explicit_statements",
    "mentions_a_final_statement",
]

ANSWER_FIELDS = frozenset(
    {"answer", "final_answer", "finalanswer", "answer_value", "amount", "result", "final_result",
     "respuesta", "respuesta_final", "réponse", "reponse", "réponse_finale", "antwort",
     "resposta", "resposta_final", "risposta", "risposta_finale", "antwoord", "ответ",
     "відповідь", "odpowiedź", "cevap", "jawaban", "đáp_án", "svar", "答案", "最终答案",
     "答え", "정답", "उत्तर"}
)  # fmt: skip
"""A JSON object's fields that hold the answer (lower case, spaces and dashes as "_"), in
English and the languages of the answer markers."""

# --- statements ---------------------------------------------------------------------------------

_LABEL = (
    r"(?:\b(?:final\s+answer|final\s+result|answer|réponse(?:\s+finale)?|respuesta(?:\s+final)?|"
    r"endergebnis|résultat\s+final|resultado\s+final|risultato\s+finale|"
    r"(?:endgültige\s+)?antwort|resposta(?:\s+final)?|risposta(?:\s+finale)?|antwoord|ответ|"
    r"відповідь|odpowiedź|odpověď|cevap|yanıt|jawaban|đáp\s+án|svar)\b"
    r"|最终答案|最終答案|最终结果|最終結果|答案|答え|答|최종\s*답|정답|답|उत्तर|الإجابة|الجواب)"
)
_TOPIC = r"(?:\s+(?:to|for|of|in)\s+(?:the|this|your|our|that)\s+(?:[^\W\d_]+\s+){0,2}?[^\W\d_]+)?"
_SEPARATOR = (
    r"(?P<paren>\s*\([^()\n]{0,40}\))?[\s*_#]*(?:(?P<sep>[:：=|]|[\u2012-\u2015]|-(?=[ \t])|"
    r"\b(?:is|would\s+be|will\s+be|should\s+be|est|serait|sera|es|sería|será|ist|lautet|wäre|"
    r"é|seria|será|è|sarebbe|is\s+dus)\b|是|为|為|は)|(?P<heading>[ \t*_#]*(?=\n)))"
)
_MARKER = re.compile(rf"{_LABEL}{_TOPIC}{_SEPARATOR}", re.IGNORECASE)
_NOT_OWN = re.compile(
    r"\b(?:original|previous|earlier|first|initial|old|wrong|your|incorrect|student's|"
    r"expected|sample|example)\s+(?:final\s+)?$",
    re.IGNORECASE,
)
_GOAL = re.compile(
    r"\b(?:(?:to|we|I|let's|let\s+us|can|will)\s+(?:get|find|reach|obtain|calculate|compute|"
    r"determine|work\s+out|check|verify|confirm|double-check)|breakdown\s+of|explanation\s+of|"
    r"steps?\s+(?:to|for)|reasoning\s+(?:for|behind)|check(?:ing)?\s+of|verification\s+of)\s+"
    r"(?:the|an|our|my|a|this)\s+(?:final\s+)?$"
    r"|\b(?:would|will|to|can|could|should|must|please|I|we|you|they)\s+$",
    re.IGNORECASE,
)
""""To find the answer:", "a breakdown of the answer:", "would answer:" — not a statement."""
_HEDGE_BEFORE = re.compile(
    r"\b(?:estimate[ds]?|guess|probably|maybe|perhaps|possibly|likely|approximate(?:ly)?|"
    r"rough(?:ly)?|not\s+(?:sure|certain)|peut-être|probablement|quizás?|tal\s+vez|"
    r"probablemente|vielleicht|wahrscheinlich|wohl|talvez|provavelmente|pas\s+sûr|"
    r"nicht\s+sicher|no\s+estoy\s+segur[oa]|não\s+tenho\s+certeza|non\s+sono\s+sicur[oa]|"
    r"niet\s+zeker|nie\s+jestem\s+pew(?:ien|na)|emin\s+değilim|tidak\s+yakin|không\s+chắc)\b|"
    r"大概|可能|也许|估计|不确定|자신이\s*없|확실하지\s*않|यकीन\s+नहीं",
    re.IGNORECASE,
)
"""A hedge before the marker, in its sentence ("I'd estimate the answer is 40", "The answer
is probably" is the clause's own hedge): no exact answer."""
_SENTENCE_END = re.compile(r"[.!?;。！？][\"'”’»)*_]*\s")
"""Where a sentence ends before a marker: its punctuation, a closing quote or markup, a space
('… not sure if I did it right..." **Final Answer: 85**' is a new sentence)."""
_INSTRUCTION = re.compile(r"\{number\}|\bformat\b|\bfollowing\b", re.IGNORECASE)
_A_LINE = re.compile(r"^[ \t*_]*A[ \t]*:[ \t]*", re.MULTILINE)
"""GSM8K fine-tuning's closing line "A: 600" (question-answer format), a value alone."""
_BARE_LINE = re.compile(
    rf"^[ \t*_#>]*{_LABEL}[ \t]+(?P<value>[$€£]?[ \t]?-?\d[\d,.]*[ \t]*[^\W\d_]{{0,8}})[ \t*_.]*$",
    re.MULTILINE | re.IGNORECASE,
)
"""A closing line that labels its value without a colon ("Final answer 594ft")."""
_IS_THE_ANSWER = re.compile(
    r"(?P<clause>[^\n.!?;:]{1,60}?)\s+(?:is|would\s+be|will\s+be)\s+(?:the|my|our)\s+"
    r"(?:final\s+|correct\s+)?answer\b",
    re.IGNORECASE,
)
"""The statement the other way round: "$1,234 is the answer"."""
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
_RE_STATED = re.compile(
    r"^[\s,.:;!—–-]*(?:(?:no|non|nein)[,.!]?\s*)?(?:(?:it|that|this|the\s+(?:final\s+)?answer|"
    r"the\s+total|the\s+result)(?:'s|’s|\s+is|\s+should\s+be|\s+would\s+be|\s+must\s+be)\s+"
    r"|(?:c'est|c’est|ce\s+sont|es\s+sind|es|son|est|ist|sind|é|são|sono|è)\s+|(?:是|为|為)\s*)?"
    r"(?:(?:actually|really|in\s+fact)\s+)?",
    re.IGNORECASE,
)


def _marker_statements(context: Context) -> Iterator[Statement]:
    """Marker statements: "Final Answer: N", "the answer is N", "La réponse est N",
    "最终答案：N", a table row "| Answer | N |"."""
    text = context.text
    for match in _MARKER.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = text[line_start : match.start()]
        if _NOT_OWN.search(before) or _GOAL.search(before):
            continue
        clause, next_line = clause_of(text[match.end() :])
        if _INSTRUCTION.search(clause[:40]):
            continue
        end = text.find(clause, match.end()) + len(clause) if clause else match.end()
        statement = context.statement(match.start(), "marker", clause, strict=next_line, end=end)
        hedge = _HEDGE_BEFORE.search(_SENTENCE_END.split(before)[-1])
        if hedge is not None and statement.value is not None:
            reason = f"it hedges its answer ({hedge[0]!r})"
            statement = Statement(match.start(), "marker", None, (statement.value,), reason, end)
        yield statement


def _label_line_statements(context: Context) -> Iterator[Statement]:
    """GSM8K's "A: 600" on its own line; "Final answer 594ft"; "$1,234 is the answer"."""
    for match in _A_LINE.finditer(context.text):
        clause = context.text[match.end() :].split("\n", 1)[0]
        end = match.end() + len(clause)
        yield context.statement(match.start(), "A:", clause, strict=True, end=end)
    for match in _BARE_LINE.finditer(context.text):
        yield context.statement(
            match.start(), "marker", match["value"], strict=True, end=match.end()
        )
    for match in _IS_THE_ANSWER.finditer(context.text):
        clause = re.split(r",\s", match["clause"])[-1]
        yield context.statement(match.start(), "is-the-answer", clause, end=match.end())


def _boxed_statements(context: Context) -> Iterator[Statement]:
    for match in _BOXED.finditer(context.text):
        content = _braced(context.text[match.end() :])
        end = match.end() + len(content) + 1
        yield context.statement(match.start(), "boxed", content.replace("\n", " "), end=end)


def _braced(text: str) -> str:
    """The text inside a `\\boxed{` whose opening brace has been consumed."""
    depth = 1
    for index, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return text[:index]
    return text


def _hash_statements(context: Context) -> Iterator[Statement]:
    for match in GSM8K_HASHES.finditer(context.text):
        clause = context.text[match.end() :].split("\n", 1)[0]
        yield context.statement(match.start(), "####", clause, end=match.end() + len(clause))


def _json_statements(context: Context) -> Iterator[Statement]:
    """Every JSON object's answer field (`"answer": "18"`, a key given twice too), in a ```json
    fence or in the text; outside the objects that parse, each answer field matched leniently."""
    parsed: list[tuple[int, int]] = []
    for position, end, obj in _json_objects(context.text):
        parsed.append((position, end))
        for value in _answer_fields(obj):
            if (statement := _field_statement(context, position, end, value)) is not None:
                yield statement
    for field in _FIELD.finditer(context.text):
        if _field_name(field["key"]) not in ANSWER_FIELDS or any(
            start <= field.start() < end for start, end in parsed
        ):
            continue
        if _EXAMPLE.search(context.text, max(0, field.start() - 30), field.start()):
            continue
        value = field["number"] or _unescaped(field["text"] or "")
        statement = _field_statement(context, field.start(), field.end(), value)
        if statement is not None:
            yield statement


_FIELD = re.compile(
    r'(?<![\\\w])"(?P<key>[A-Za-z][A-Za-z _-]{0,20})"\s*:\s*'
    r'(?:"(?P<text>(?:[^"\\\n]|\\.|\n(?![ \t]*"))*)"'
    r"|(?P<number>-?\d+(?:\.\d+)?)(?=\s*[,}\n]))",
    re.DOTALL,
)
"""A JSON field written by hand: `"answer": "40.00"`, `"answer": 40`, even in an object that
does not parse (unescaped newlines, a missing comma, its start cut off); a string that reaches a
line opening with a quote lost its closing quote there (the next field starts)."""
_EXAMPLE = re.compile(r"(?:e\.g\.|for\s+example|such\s+as|like|例如)[\s,:`']*$", re.IGNORECASE)
"""An example of the asked format echoed from the prompt (`e.g., "answer": "42"`)."""
_BRACKETED = re.compile(r"^\(\s*[$€£]?\s*\d[\d,.]*\s*\)$")


def _field_statement(context: Context, position: int, end: int, value: Any) -> Statement | None:
    """The statement of an answer field's value: a number; a string's one clause, or its
    closing sentence (or last equation) where it is a paragraph or chain of working; a value
    in brackets (an accounting negative, or an aside) is ambiguous."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return Statement(position, "json", float(value), end=end, passage=str(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _BRACKETED.match(text):
        number = clause_value(text.strip("()"), context.decimal_mark, context.language)[0]
        candidates = () if number is None else (number, -number)
        return Statement(position, "json", None, candidates, "its value is in brackets", end)
    if len(_sentences_with_digits(text)) > 1 or ";" in text or text.count("=") > 1:
        closing = closing_statement(context, text, position, complete=True)
        if closing is None:
            return Statement(position, "json", None, (), "its field states no one result", end)
        return Statement(position, "json", closing.value, closing.candidates, closing.problem,
                         end, closing.passage)  # fmt: skip
    return context.statement(position, "json", text, end=end, passage=text)


def _sentences_with_digits(text: str) -> list[str]:
    parts = re.split(r"\n|(?<=[.!?])\s+", text)
    return [p for p in parts if re.search(r"\d", p)]


def _unescaped(text: str) -> str:
    try:
        decoded = json.loads(f'"{text}"', strict=False)
    except ValueError:
        return text
    return decoded if isinstance(decoded, str) else text


def _field_name(key: str) -> str:
    return re.sub(r"[\s-]+", "_", str(key).strip().lower())


def _json_objects(text: str) -> Iterator[tuple[int, int, Any]]:
    """(start, end, object) of each JSON object that parses (control characters inside its
    strings allowed)."""
    fenced = [(m.start(1), m[1]) for m in _FENCE.finditer(text)]
    spans = fenced or [(i, text[i:]) for i, char in enumerate(text) if char == "{"]
    decoder = json.JSONDecoder(strict=False, object_pairs_hook=_Pairs)
    end = -1
    for position, candidate in spans:
        if position < end:
            continue
        stripped = candidate.lstrip()
        try:
            obj, length = decoder.raw_decode(stripped)
        except ValueError:
            continue
        if isinstance(obj, dict):
            end = position + len(candidate) - len(stripped) + length
            yield position, end, obj


class _Pairs(dict[str, Any]):
    """A parsed JSON object that keeps every field, a key given twice ("answer": "20",
    "answer": "24") too, in `pairs`."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def _answer_fields(obj: Mapping[str, Any], depth: int = 0) -> Iterator[Any]:
    for key, value in obj.pairs if isinstance(obj, _Pairs) else obj.items():
        if _field_name(key) in ANSWER_FIELDS:
            yield value
        elif isinstance(value, dict) and depth < 1:
            yield from _answer_fields(value, depth + 1)


def correction_statements(
    context: Context, after: int, stated: tuple[float, ...] = ()
) -> Iterator[Statement]:
    """Corrections after a statement ("Wait, it is actually 42."): a marker, a value alone;
    where the last correction that opens a sentence gives no new value in its own clause (none,
    or one already `stated`), the reply's closing sentence after it ("… so the answer is 12.
    Hmm, no: one of those 12 is the CD he bought. Tom could have bought 11 more CDs.")."""
    opened: int | None = None  # the end of the last correction opening a sentence, unanswered
    for match in CORRECTION.finditer(context.text, after):
        rest = context.text[match.end() :]
        lead = _RE_STATED.match(rest)
        clause, _ = clause_of(rest[lead.end() if lead else 0 :])
        clause = clause.rstrip(" )]")  # "Answer: 41 (wait, 42).": the bracket closes the aside
        end = context.text.find(clause, match.end()) + len(clause) if clause else match.end()
        statement = context.statement(match.end(), "correction", clause, strict=True, end=end)
        if statement.value is None and (concluded := _CONCLUDED.search(clause)) is not None:
            conclusion = clause[concluded.end() :]
            restated = _RE_STATED.match(conclusion)
            conclusion = conclusion[restated.end() if restated else 0 :]
            statement = context.statement(match.end(), "correction", conclusion, True, end=end)
        missed = _WORK_COUNTED.match(clause)  # "Wait, I missed one step.": a withdrawal
        value = None if missed else statement.value
        if value is not None and value not in stated:
            opened = None
            yield statement
        elif _OPENS.search(context.text[: match.start()]):
            opened = match.end()
        elif value is not None:
            yield statement
    if opened is not None:
        closing = closing_statement(context, context.text[opened:], opened)
        if closing is not None and closing.value is not None:
            yield Statement(closing.position, "correction", closing.value, (), None, closing.end)


_WORK_COUNTED = re.compile(
    r"^[\s,:;—–-]*(?:one|two|three|a|an|\d+)\s+(?:more\s+|other\s+|extra\s+)?(?:steps?|things?|"
    r"details?|parts?|rounds?|lines?|terms?|items?|cases?)\b",
    re.IGNORECASE,
)
"""What a correction says it missed ("I missed one step"): the working, not a value."""
_OPENS = re.compile(
    r"(?:^|[.!?:;\n]|\b(?:hmm+|oh|ah|um+|uh|well|ok(?:ay)?))[\s,*_]*$", re.IGNORECASE
)
"""Where a correction opens a sentence ("… is 12. Hmm, no: …"), not a word inside one ("the
CD he actually bought")."""
_CONCLUDED = re.compile(
    r"(?:(?:,|\s)\s*(?:so|therefore|thus|hence|which\s+(?:makes|gives)|making|donc|also|daher|"
    r"entonces|así\s+que|então|portanto)\b|所以|因此|[:：]\s*)"
    r"(?!.*(?:\b(?:so|therefore|thus|hence)\b|[:：]))",
    re.IGNORECASE,
)
"""The last conclusion of a correction's clause ("wait, I forgot the tax, so it's 43", "me
equivoqué: son 18 $")."""
_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")
_BREAKDOWN = re.compile(
    r"^[\s#*_>]*(?:here(?:'s|’s|\s+is|\s+are)|breakdown|explanation|reasoning|working|"
    r"solution|steps?\b|how\b|let(?:'s|’s|\s+me|\s+us)\b|to\s+(?:find|get|see|solve|work)|"
    r"calculation|why\b|because\b|since\b)",
    re.IGNORECASE,
)
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*|__([^_\n]+)__")
_BOLD_SENTENCE = re.compile(r"[#\s]*\*\*[^*\n]+[.!]?\*\*[.!]?")
"""A first paragraph that is one bold sentence: an answer given first."""


def emphasis_statements(context: Context) -> list[Statement]:
    """Without an explicit statement: an answer given first, in a one-sentence paragraph
    followed by its breakdown ("Janet makes $18 a day.\n\nHere's how: ..."), or one bold
    value alone (`**$18**`) in the first or last paragraph."""
    paragraphs = [(m.start(), m[0]) for m in _PARAGRAPH.finditer(context.text) if m[0].strip()]
    found: list[Statement] = []
    if len(paragraphs) >= 2 and _BREAKDOWN.match(paragraphs[1][1]):
        position, first = paragraphs[0]
        working = WORKED.search(first) is not None  # "… is 9,300 × 2/3 = 6,200": a step
        if len(CLAUSE_END.findall(first.strip().rstrip(".!"))) == 0 and not working:
            statement = context.statement(
                position, "answer-first", first, end=position + len(first)
            )
            if statement.value is not None or statement.candidates:
                found.append(statement)
    elif len(paragraphs) >= 2 and _one_sentence(paragraphs[0][1]):
        position, first = paragraphs[0]
        statement = context.statement(position, "answer-first", first, end=position + len(first))
        rest = context.text[paragraphs[1][0] :]
        if statement.value is not None and _last_result(context, rest) == statement.value:
            found.append(statement)  # "**Jenny eats 9 cookies.**" over "- Jenny: 36 − 27 = 9"
    ends = {paragraphs[0], paragraphs[-1]} if paragraphs else set()
    bold = [
        context.statement(position + m.start(), "bold", m[1] or m[2], True, end=position + m.end())
        for position, paragraph in ends
        for m in _BOLD.finditer(paragraph)
    ]
    values = {s.value for s in bold if s.value is not None}
    if len(values) == 1 and not _bold_elsewhere(context, paragraphs[1:-1], values.pop()):
        found.extend(s for s in bold if s.value is not None)
    return found


def _bold_elsewhere(context: Context, middle: list[tuple[int, str]], value: float) -> bool:
    """A bold value in a middle paragraph other than the ends' one ("Weekly need: **35
    pounds**" … "Daily: 35 ÷ 7 = **5 pounds**"): the reply emphasises its steps, not one
    answer. Bold labels ("**Step 2:**") are not values."""
    for position, paragraph in middle:
        for m in _BOLD.finditer(paragraph):
            if (m[1] or m[2]).rstrip().endswith((":", "：")) or paragraph[m.end() :].startswith(
                (":", "：")
            ):
                continue
            statement = context.statement(position + m.start(), "bold", m[1] or m[2], True)
            if statement.value is not None and not same_value(statement.value, value):
                return True
    return False


def _one_sentence(paragraph: str) -> bool:
    """A first paragraph that is one sentence stating a result, bold or not ("23 hours.",
    "**Jenny eats 9 cookies.**"), not a step of the working."""
    text = paragraph.strip()
    if _BOLD_SENTENCE.fullmatch(text):
        return True
    one = len(CLAUSE_END.findall(text.rstrip(".!"))) == 0 and text.endswith((".", "!"))
    return one and "\n" not in text and WORKED.search(text) is None


def _last_result(context: Context, text: str) -> float | None:
    """The result of the last equation of `text` before its checks and notes."""
    working = before_afterwords(text)
    equals = working.rfind("=")
    if equals < 0:
        return None
    result = working[equals + 1 :].split("\n", 1)[0]
    numbers = numbers_in(
        prepared(result, context.language, context.decimal_mark), context.decimal_mark
    )
    return numbers[0].value if len(numbers) == 1 else None


def explicit_statements(context: Context) -> list[Statement]:
    """The reply's explicit statements (markers, boxes, `####`, JSON fields, "A:" lines, "N is
    the answer"), in order; those without a value too (they say why)."""
    found = [
        *_marker_statements(context),
        *_boxed_statements(context),
        *_hash_statements(context),
        *_json_statements(context),
        *_label_line_statements(context),
    ]
    return sorted(found, key=lambda s: s.position)


def mentions_a_final_statement(context: Context) -> bool:
    """The reply uses the words of a final statement ("answer", a box, a JSON field), read or
    not: its last sentence is then no closing statement of its own."""
    text = context.text
    return bool(_MARKER.search(text) or _BOXED.search(text) or _FIELD.search(text))
