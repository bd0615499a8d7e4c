"""Reading the amount a Trust Game answer gives, as a careful person would (seed 001, App. E).

The role-play prompts (Appendix B.1, B.2) end "Finally, I will give ___ dollars" and the
forecast prompt (C.3.1) "Finally, I will send ___ dollars". Every trust scenario and the
journeys' trust place read those answers here, and only here. The written rules are in
docs/trust-population.md, "Reading the amount"; in brief:

- **The decision sentence** starts with "Finally" and a first-person decision to give ("I
  will / I'll / I would like to / I'd like to / I choose to / I decide to / I ... give | send |
  transfer | offer | pass | invest", negated or not) and runs to the end of its sentence; a
  following sentence (or a part after ";") that opens with a correction marker and gives again
  belongs to it. Text before it is reasoning, text after it is not the decision. The prompt's
  instruction echoed back ("End with 'Finally, I will give ...'") is not a decision.
- **The amount** is the quantity of money the sentence gives: a number with a money unit, a
  share of the endowment ("half", "two-thirds", "60% of my money"), "all" ("all but 2
  dollars"), nothing ("not a single dollar"), or the sentence's only quantity. Asides (in
  brackets, after an em dash, or a clause opened by "which", "keeping", "out of my"...), labels
  ("Player 2") and ordinals are not the amount. A calculation gives its result ("10 * 0.6 = 6").
- **Asked again, never guessed**: several different amounts without a correction marker between
  them (the shared rule, `corrected`), ranges, hedges and bounds anywhere in the clause ("about",
  "-ish", "or so", "up to", "or more"), "1,000" / "1.000" (a thousand, or one with a decimal
  comma), another currency, a share of something else than the endowment, a correction after
  the decision sentence that names another amount.

A second, independent reader (`library_reading`: text2num for number words, price-parser for
money) reads the same clause; the two must agree (`agree`). The sentence and markup rules live
in `decision_text`, the quantities and number formats in `amounts`; this module combines them.
Whether the game allows the amount (whole dollars from 0 to the endowment) is
`TrustGame.check_transfer`'s rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from price_parser import Price
from text_to_num import alpha2digit

from personasim.environments.trust_game.amounts import Quantity, quantities
from personasim.environments.trust_game.decision_text import (
    ASIDE_OPENER,
    BLANK,
    BOUND,
    BRACKETS,
    HEDGE,
    NOT,
    SEGMENT_END,
    Clause,
    decision_clauses,
    dollars,
    later_clauses,
    plain,
    quoted,
)
from personasim.simulation import CORRECTION, Reading, agree, corrected, register_reader

__all__ = [
    "CLOSING_SENTENCE",
    "library_reading",
    "main_spans",
    "own_reading",
    "read_clause",
    "read_transfer",
]

CLOSING_SENTENCE = "Finally, I will give N dollars"
"""How the re-ask names the sentence the prompt asks for."""

OWN = "closing-sentence"
LIBRARY = "text2num+price-parser"


# --- the grammar's reading --------------------------------------------------------------------


def main_spans(body: str, taken: list[Quantity]) -> list[tuple[int, int]]:
    """The spans of `body` that are its decision (not asides): bracketed asides, what follows
    an em dash, and clauses opened by 'which', 'keeping', 'out of my'... up to the next comma
    are left out; an opener inside a quantity ('half of my money') opens nothing."""
    cut = [(m.start(), m.end()) for m in BRACKETS.finditer(body)]
    first = min((q.start for q in taken if not any(a <= q.start < b for a, b in cut)), default=0)
    for opener in ASIDE_OPENER.finditer(body):
        at = opener.start()
        if any(q.start <= at < q.end for q in taken) or any(a <= at < b for a, b in cut):
            continue
        if any(m.start() <= at < m.end() for m in CORRECTION.finditer(body)):
            continue  # "make that 4": the marker opens no aside
        closing = SEGMENT_END.search(body, opener.end())
        if closing is None and at < first:
            continue  # 'give that player 5 dollars': it opens no aside before the amount
        dash = opener[0].strip() in ("—", "-", "--")
        cut.append((at, len(body) if dash or closing is None else closing.start()))
    return _complement(cut, len(body))


def _complement(cut: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    spans, position = [], 0
    for start, end in sorted(cut):
        if start > position:
            spans.append((position, start))
        position = max(position, end)
    if position < length:
        spans.append((position, length))
    return spans


def _inside(quantity: Quantity, spans: list[tuple[int, int]]) -> bool:
    return any(start <= quantity.start < end for start, end in spans)


def read_clause(clause: Clause, endowment: int) -> Reading:
    """The amount one decision sentence gives, by the module's grammar."""
    body = clause.body
    if BLANK.search(body) and not re.search(r"\d", body):
        return Reading.unreadable(
            "its closing sentence names no amount, only a blank; write the number of dollars", OWN
        )
    if HEDGE.search(clause.head):
        return Reading.ambiguous(f"it hedges its decision ({quoted(clause.head)})", OWN)
    found = quantities(body, endowment, clause.negated)
    spans = main_spans(body, found)
    main = [q for q in found if _inside(q, spans) and q.kind != "operands"]
    main, spans = _undescribed(body, main, spans)
    if problem := next((q.problem for q in main if q.problem), None):
        return Reading.ambiguous(problem, OWN)
    if clause.negated:
        return _negated(main, body)
    if not main:
        return Reading.unreadable(f"its closing sentence names no amount ({quoted(body)})", OWN)
    statements = [(q.start, q.value) for q in main]
    reading = corrected(statements, body)
    if reading is None or not reading.ok:
        shown = " and ".join(dollars(v) for v in dict.fromkeys(v for _, v in statements))
        return Reading.ambiguous(f"it names different amounts ({shown})", OWN, reading.candidates)
    after = _last_correction(body, statements) if reading.by == "corrected" else 0
    if problem := _hedged(body, spans, after, main, found):
        return Reading.ambiguous(problem, OWN)
    if problem := _doubted_aside(body, found, spans, reading.value):
        return Reading.ambiguous(problem, OWN)
    if (held := _HELD_BACK.search(body, spans[0][0] if spans else 0)) is not None:
        why = f"it qualifies its decision ({held[0]!r}): a condition, a doubt or a second decision"
        return Reading.ambiguous(why, OWN)
    restated = [v for v in _appositions(body, found, after) if v != reading.value]
    if restated:
        shown = " and ".join(dollars(v) for v in dict.fromkeys([reading.value, *restated]))
        return Reading.ambiguous(f"it names different amounts ({shown})", OWN)
    kinds = "+".join(dict.fromkeys(q.kind for q in main))
    rule = f"{OWN}:{kinds}" + (" corrected" if reading.by == "corrected" else "")
    return Reading.of(reading.value, rule)


_DESCRIBED = ("share", "all", "all-but")


def _undescribed(
    body: str, main: list[Quantity], spans: list[tuple[int, int]]
) -> tuple[list[Quantity], list[tuple[int, int]]]:
    """`main` and `spans` without the hedged shares that describe an exact amount ('9 dollars,
    almost all of it', 'roughly half, 5 dollars'): a hedged share beside an unhedged amount
    is a description, not a second amount; alone it stays, and is a hedge."""
    described = []
    for quantity in main:
        before = body[max(0, quantity.start - 24) : quantity.start]
        hedge = re.search(rf"(?:{HEDGE.pattern})\s*$", before, re.IGNORECASE)
        if quantity.kind in _DESCRIBED and hedge:
            described.append((quantity, quantity.start - len(before) + hedge.start()))
    rest = [q for q in main if all(q is not d for d, _ in described)]
    if not described or not rest:
        return main, spans
    cut = [(at, quantity.end) for quantity, at in described]
    gaps = zip([0] + [e for _, e in spans], [s for s, _ in spans] + [len(body)], strict=True)
    cut += list(gaps)
    return rest, _complement(cut, len(body))


_APPOSITION_LEAD = re.compile(
    r"\s*(?:(?:i\.e\.?|that\s+is|that['’]s|which\s+is|or|so|=)\s*,?\s*)?", re.IGNORECASE
)
_RESTATING = re.compile(
    r"\b(?:i\.e\.?|that\s+is|that['’]s|which\s+is|which\s+would\s+be|meaning|so)\s*,?",
    re.IGNORECASE,
)
_LABEL_END = re.compile(r"(?:player|participant|round|option|step|no\.|#)\s*$", re.IGNORECASE)


def _appositions(body: str, found: list[Quantity], after: int) -> list[float]:
    """The amounts an aside restates on its own: a bracket ('half of it (6 dollars)', '7
    dollars ($7)', '(i.e. 6 dollars)') or a part opened by 'i.e.', 'that is', 'which is',
    'meaning', 'so' ('30 percent, i.e. 4 dollars') up to the next comma, that holds one
    quantity and nothing else. A hedged one ('(roughly two thirds)') and labels ('Player
    (2)') restate nothing."""
    parts = [
        (b.start() + 1, b.end() - 1)
        for b in BRACKETS.finditer(body, after)
        if not ASIDE_OPENER.search(body, _previous_end(found, b.start()), b.start())
    ]  # '4 dollars and keep the rest ($6)': the bracket restates the aside, not the amount
    for opener in _RESTATING.finditer(body, after):
        closing = SEGMENT_END.search(body, opener.end())
        parts.append((opener.end(), closing.start() if closing else len(body)))
    values = []
    for start, end in parts:
        inside = [q for q in found if start <= q.start and q.end <= end]
        lead = _APPOSITION_LEAD.match(body, start)
        if len(inside) != 1 or lead is None or inside[0].start != lead.end():
            continue
        quantity = inside[0]
        if quantity.value is None or quantity.problem or quantity.kind == "operands":
            continue
        if body[quantity.end : end].strip(" .,;:!)") or HEDGE.search(body, start, end):
            continue
        if _LABEL_END.search(body[: start - 1]):
            continue
        values.append(quantity.value)
    return values


def _previous_end(found: list[Quantity], position: int) -> int:
    return max((q.end for q in found if q.end <= position), default=0)


_HELD_BACK = re.compile(
    r"(?<!\beven\s)(?<!\bas\s)\b(?:if|unless|provided|as\s+long\s+as|on\s+(?:the\s+)?condition)\b"
    r"|[,(]\s*I\s+(?:think|guess|suppose|believe|reckon)\s*[.!)]?\s*$|\btentative(?:ly)?\b"
    r"|\bhypothetical(?:ly)?\b"
    r"|\bbut\s+(?:I\s+will|I['’]ll|I\s+am\s+going\s+to|will)\s+(?:only\s+|actually\s+)?(?:give"
    r"|send|transfer|offer)\b",
    re.IGNORECASE,
)
"""A condition on the decision ('5 dollars if they agree to send back 8', '400 dollars, but
only if …'), a doubt closing it ('6 dollars, I think.'), a decision made in play only, or a
wish before a second decision ('I'd like to give 8 dollars, but I will give 5')."""
_ALTERNATIVE_WORDS = re.compile(
    r"\b(?:or|might|could|maybe|perhaps|possibly|if\s+not|otherwise|(?:which|that)\s+case|else"
    r"|unless)\b",
    re.IGNORECASE,
)


def _doubted_aside(
    body: str, found: list[Quantity], spans: list[tuple[int, int]], value: float
) -> str:
    """An aside that offers another amount with a doubt ('5 dollars, but maybe 3', '6
    dollars, though I might give 4'): no decision ('' when none)."""
    for quantity in found:
        if _inside(quantity, spans) or quantity.value in (None, value):
            continue
        if quantity.kind not in ("money", "number"):
            continue
        closing = SEGMENT_END.search(body, quantity.end)
        start = max((end for _, end in spans if end <= quantity.start), default=0)
        aside = body[start : closing.start() if closing else len(body)]
        if HEDGE.search(aside) or _ALTERNATIVE_WORDS.search(aside):
            return f"it offers another amount ({quoted(aside)})"
    return ""


def _negated(main: list[Quantity], body: str) -> Reading:
    """'I will not give any money' is 0; a negated decision naming an amount is no decision."""
    if all(q.kind == "nothing" for q in main):
        return Reading.of(0.0, f"{OWN}:negated")
    return Reading.ambiguous(
        f"it says what it will not give ({quoted(body)}), not the amount it gives", OWN
    )


def _last_correction(body: str, statements: list[tuple[int, Any]]) -> int:
    previous = sorted(statements)[-2][0]
    markers = list(CORRECTION.finditer(body, previous))
    return markers[-1].end() if markers else 0


def _hedged(
    body: str, spans: list[tuple[int, int]], after: int, main: list[Quantity], found: list[Quantity]
) -> str:
    """Why the decision's own words make its amount no decision: a hedge, a bound or a
    negation beside a positive amount ('' when none)."""
    text = " ".join(body[max(start, after) : end] for start, end in spans if end > after)
    text += " " + " ".join(_short_asides(body, spans, after, found))
    if HEDGE.search(text):
        return f"it gives an approximate amount ({quoted(body)}), not the amount"
    if BOUND.search(text):
        return f"it gives a bound ({quoted(body)}), not the amount"
    if NOT.search(text) and any(q.value for q in main):
        return f"it says what it will not give ({quoted(body)}), not only the amount it gives"
    return ""


def _short_asides(
    body: str, spans: list[tuple[int, int]], after: int, found: list[Quantity]
) -> list[str]:
    """The asides of at most four words and no quantity ('if not more', 'maybe more'): they
    qualify the amount itself, so their hedges and bounds are the decision's."""
    gaps = [(max(s, after), e) for s, e in _complement(spans, len(body)) if e > after]
    return [
        body[start:end]
        for start, end in gaps
        if body[start:end].strip()
        and len(body[start:end].split()) <= 4
        and not any(start <= q.start < end for q in found)
    ]


def own_reading(text: str, endowment: int, closing: str = CLOSING_SENTENCE) -> Reading:
    """The grammar's reading of a plain text: its decision sentences, each read, combined by
    the shared self-correction rule."""
    clauses = decision_clauses(text)
    if not clauses:
        return Reading.unreadable(f"it does not end with '{closing}'", OWN)
    readings = [(clause, read_clause(clause, endowment)) for clause in clauses]
    blank = [c for c, r in readings if r.status == "unreadable" and "blank" in (r.reason or "")]
    readings = [(c, r) for c, r in readings if c not in blank] or readings
    if problem := next((r for _, r in readings if not r.ok), None):
        return problem
    if asked := next((c for c in clauses if text[c.end : c.end + 1] == "?"), None):
        return Reading.ambiguous(f"it asks rather than decides ({quoted(asked.body)}?)", OWN)
    statements = [(c.start, r.value) for c, r in readings]
    combined = corrected(statements, text)
    if combined is None or not combined.ok:
        shown = " and ".join(dollars(v) for v in dict.fromkeys(v for _, v in statements))
        return Reading.ambiguous(f"its closing sentences name different amounts ({shown})", OWN)
    reading = readings[-1][1]
    if other := _restated_elsewhere(text, clauses[-1], reading.value, endowment):
        return Reading.ambiguous(other, OWN)
    if (taken := _TAKEN_BACK.search(text, max(clauses[-1].end, clauses[-1].start + 1))) is not None:
        return Reading.unreadable(f"it takes its decision back ({quoted(taken[0])})", OWN)
    if other := _corrected_after(text, clauses[-1], reading.value, endowment):
        return Reading.ambiguous(other, OWN)
    if _cut_off(text, clauses[-1], endowment):
        return Reading.unreadable(f"it may be cut off ({quoted(clauses[-1].body)})", OWN)
    return reading


def _corrected_after(text: str, last: Clause, value: float, endowment: int) -> str | None:
    """A correction after the decision sentence that names another amount ("Correction: I
    wrote $8 above ... My final transfer is $3."): not a decision sentence the grammar reads,
    so the reply is asked again rather than read by its first amount."""
    marker = CORRECTION.search(text, last.end)
    if marker is None:
        return None
    others = [q.value for q in quantities(text[marker.end() :], endowment, False)]
    others = [v for v in others if v is not None and v != value]
    if not others:
        return None
    return f"a correction after its decision names another amount ({dollars(others[-1])})"


_CUT_UNIT = re.compile(r"\d\s+(?:d|do|dol|doll|dolla|b|bu|buc|u|us)$", re.IGNORECASE)
_CUT_NUMBER = re.compile(r"(?<![\d.,])(?P<digits>\d+)$")


def _cut_off(text: str, last: Clause, endowment: int) -> bool:
    """The reply stops inside its decision: mid-word after the amount ('5 dol'), or on a bare
    number that could be the start of another amount ('1' of '10')."""
    if text.rstrip() != text[: last.end].rstrip():
        return False  # something follows the decision sentence
    body = last.body.rstrip()
    if _CUT_UNIT.search(body):
        return True
    bare = _CUT_NUMBER.search(body)
    digits = bare["digits"] if bare else ""
    return bool(digits) and any(
        str(amount).startswith(digits) and str(amount) != digits for amount in range(endowment + 1)
    )


_TAKEN_BACK = re.compile(
    r"(?:^|(?<=[.!?;\n]))\s*(?:(?:hmm+|oh|um+|uh|ah|well)\b[\s,.!-]*)*(?:(?:actually|wait|no)"
    r"\b[\s,.!-]*(?:no\b|not\b|scratch|never\s*mind|let\s+me\s+(?:re)?(?:think|consider)|"
    r"hold\s+on|I\s+changed\s+my\s+mind)|scratch\s+that|never\s*mind|"
    r"I\s+take\s+(?:it|that)\s+back|I(?:['’]ve|\s+have)?\s+changed\s+my\s+mind|"
    r"let\s+me\s+reconsider|(?:then\s+again,?\s+)?maybe\s+not\b|(?:please\s+)?disregard\b|"
    r"I(?:['’]ll|\s+will)\s+decide\s+later|I\s+need\s+to\s+think\s+(?:again|more|it\s+over)|"
    r"I\s+can(?:not|['’]t)\s+(?:actually\s+)?make\s+real|as\s+an\s+AI\b)"
    r"|(?:不过|但是)?[，,]?\s*(?:我)?(?:其实)?还没(?:有)?想好|再想想",
    re.IGNORECASE,
)
"""A sentence after the decision that takes it back without giving another amount ("Actually,
no.", "Scratch that.", "Let me reconsider."): no decision."""


_LABELLED = re.compile(
    r"(?:^|[{,]|\n|(?<=[.!?])\s)[\s\-*>#]*\"?(?:(?:my|our)\s+)?(?:final[\s_]+)?(?:transfer|amount"
    r"|sent|send|give|giving|decision|answer|offer)(?:[\s_]+(?:amount|sent|given|to[\s_]+(?:send"
    r"|give)|decision))?\"?\s*[:=]\s*(?:(?:I\s+will\s+|I['’]ll\s+)?(?:give|send|transfer|offer)"
    r"\s+)?(?:US\s?\$|\$)?\s*(?P<value>\d+(?:\.\d+)?)(?![\d.,]*\s*(?:%|/|percent))",
    re.IGNORECASE,
)
"""A labelled amount elsewhere in the reply: 'Amount sent: $6', '{"transfer": 6}'."""


def _restated_elsewhere(text: str, last: Clause, value: float, endowment: int) -> str:
    """Why the reply's other statements make its amount no decision: a later decision to give
    another amount ('Finally, I will give 5 dollars. On reflection, I'd prefer to give 4.')
    or a labelled amount that differs ('Amount sent: 6'); '' when none."""
    for clause in later_clauses(text, max(last.end, last.start + 1)):
        later = read_clause(clause, endowment)
        if later.ok and later.value != value:
            shown = f"{dollars(value)} and {dollars(later.value)}"
            return f"it gives another amount after its closing sentence ({shown})"
    for match in _LABELLED.finditer(text):
        if float(match["value"]) != value:
            shown = f"{dollars(value)} and {dollars(float(match['value']))}"
            return f"its labelled amount differs from its closing sentence ({shown})"
    for match in _AMOUNT_ALONE.finditer(text, last.end):
        if float(match["value"]) != value:
            shown = f"{dollars(value)} and {dollars(float(match['value']))}"
            return f"a line after its closing sentence gives another amount ({shown})"
    return ""


_AMOUNT_ALONE = re.compile(
    r"^[ \t>#-]*(?:US\s?\$|\$)?\s*(?P<value>\d+(?:\.\d+)?)\s*(?:dollars?|bucks?|USD)?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
"""A line holding only an amount ('\\boxed{7}' once plain): a second statement of the amount."""


# --- the library's reading --------------------------------------------------------------------

_LIBRARY_SCOPE = re.compile(
    r"%|/|\bper\s*cent|\b(?:half|halves|thirds?|quarters?|fourths?|fifths?|tenths?|all"
    r"|everything|entire|whole|full|max(?:imum)?|nothing|none|not|but|except|minus|plus|cents?"
    r"|euros?|pounds?)\b"
    r"|n['’]t\b|[€£¥]|(?<!\d)(?<!\d\s)-\$?\d",
    re.IGNORECASE,
)
_LIBRARY_DIGITS = r"(?<![\w.,])(?:\d{1,3}(?:[ ,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
_LIBRARY_NUMBER = re.compile(rf"{_LIBRARY_DIGITS}(?![\w.,]?\d)(?![^\W\d])")
_LIBRARY_MONEY = re.compile(
    rf"(?:US\s?\$|USD|\$)\s*{_LIBRARY_DIGITS}"
    rf"|{_LIBRARY_DIGITS}\s*(?:\$(?!\s*\d)|US\s*dollars?\b|dollars?\b|bucks?\b|USD\b)",
    re.IGNORECASE,
)


def library_reading(reply: str, context: Mapping[str, Any]) -> Reading:
    """The libraries' reading of the decision sentences: number words to digits by text2num
    (`alpha2digit`), each money amount by price-parser (`Price.fromstring`), else the clause's
    only number. It reads plain amounts and abstains (unreadable) on anything else: shares,
    negations, ranges, calculations, cents, several numbers it cannot tell apart."""
    text = plain(reply)
    values: list[tuple[int, float]] = []
    for clause in decision_clauses(text):
        value = _library_clause(clause)
        if isinstance(value, str):
            return Reading.unreadable(value, LIBRARY)
        values.append((clause.start, value))
    if not values:
        return Reading.unreadable("no decision sentence", LIBRARY)
    combined = corrected(values, text)
    if combined is None or not combined.ok:
        return Reading.unreadable("its decision sentences differ", LIBRARY)
    return Reading.of(combined.value, LIBRARY)


def _library_clause(clause: Clause) -> float | str:
    """One clause's amount by the libraries, or why they abstain."""
    body = BRACKETS.sub(" ", clause.body)
    markers = list(CORRECTION.finditer(body))
    if markers:
        body = body[markers[-1].end() :]
    if clause.negated or _LIBRARY_SCOPE.search(body):
        return "outside the libraries' scope"
    digits = alpha2digit(body, "en", threshold=0)
    first = re.search(r"\d", digits)
    openers = (
        m.start() for m in ASIDE_OPENER.finditer(digits) if first and m.start() > first.start()
    )
    digits = digits[: min(openers, default=len(digits))]
    money = [Price.fromstring(m[0]).amount_float for m in _LIBRARY_MONEY.finditer(digits)]
    found = [v for v in money if v is not None] or [
        Price.fromstring(m[0]).amount_float for m in _LIBRARY_NUMBER.finditer(digits)
    ]
    distinct = set(found)
    if len(distinct) != 1 or None in distinct:
        return "no single amount" if not distinct else "several numbers"
    return float(distinct.pop())  # type: ignore[arg-type]


# --- the reading ------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def read_transfer(reply: str, endowment: int, closing: str = CLOSING_SENTENCE) -> Reading:
    """The amount `reply`'s decision sentence(s) give, read by the grammar and confirmed by the
    libraries (`agree`); `closing` is how a missing decision sentence is named in the re-ask.
    The libraries never read alone what the grammar found no amount in. Cached: a reply is
    read when parsed and again when its reading is logged (a `Reading` is immutable)."""
    own = own_reading(plain(reply), endowment, closing)
    if not own.ok:
        return own
    return agree(own, library_reading(reply, {"endowment": endowment}))


register_reader("transfer", library_reading)
