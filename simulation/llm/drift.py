"""Drift: real chat models' habits, put into a seeded share of the scripted backend's answers.

The scripted rules answer exactly in the format each prompt asks for; real models do not. With
`--model scripted:drift=D` a share of answers is rewritten with one habit seen in real output —
markdown emphasis, code fences, a preamble or a trailing sentence, `\\boxed{}`, "The final answer
is N", refusals, empty replies, round numbers (ties) — so parsers, re-asks and failure counts
meet them offline, and a test double no longer agrees with the code it tests by construction.
Documented in docs/scripted.md ("Drift").

Which answer drifts, and how, is drawn from generators the backend seeds from the request's
content address, so it never depends on call order; the draws do not depend on D either, so a
higher rate rewrites a superset of the answers a lower one does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from personasim.simulation.llm.chat import ChatRequest, ChatResponse, TokenLogprob

__all__ = [
    "HABITS",
    "PERSISTENT_REFUSAL_SHARE",
    "REASK_FACTOR",
    "REFUSAL",
    "applicable_habits",
    "apply_habit",
    "drift_response",
    "is_reask",
    "round_number",
]

REASK_FACTOR = 0.25
"""A re-ask (a request with more than one user turn) drifts at this fraction of the rate, so
repairs can succeed."""

PERSISTENT_REFUSAL_SHARE = 0.2
"""A conversation refuses at every attempt, re-asks included, with probability D × this share:
a real model that will not play a role does not change its mind when reminded of the format."""

ROUND_WEIGHT = 3.0
"""Weight of the round-numbers habit against 1 for each other habit: ties must be common."""

REFUSAL = "I'm sorry, but I can't role-play as this person or make this decision on their behalf."
PREAMBLE = "Sure! Here is my answer.\n\n"
TRAILING = "\n\nI hope this helps! Let me know if you would like me to explain my reasoning."

# A number as written in prose: `5`, `4.95`, `1,450`; not inside a word or a label (`M3`,
# `score_1`, the comment tag `(2)`, the age group `45-64` or `65+`), never the tail of a longer
# number.
_NUMBER = re.compile(r"(?<![\w.,(\\+-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w)+-]|[.,]\d)")
# Where a sentence or line ends: the closing sentence starts after the last one.
_BOUNDARY = re.compile(r"[.!?](?:\*\*)?[ \t]+|\n")


def is_reask(request: ChatRequest) -> bool:
    """More than one user turn: a repair after an unusable answer (or a multi-turn request)."""
    return sum(m.role == "user" for m in request.messages) > 1


def round_number(value: float) -> float:
    """The nearest number of the 1-2-5 series (…, 1, 2, 5, 10, 20, 50, …); 0 stays 0."""
    if value <= 0:
        return 0.0
    scale = 10.0 ** math.floor(math.log10(value))
    candidates = [m * scale for m in (1, 2, 5, 10)]
    return round(min(candidates, key=lambda c: (abs(c - value), c)), 10)


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


def _closing_start(text: str, position: int) -> int:
    """Where the sentence (or line) holding `position` starts."""
    starts = [m.end() for m in _BOUNDARY.finditer(text) if m.end() <= position]
    return starts[-1] if starts else 0


def _last_number(text: str) -> re.Match[str] | None:
    matches = list(_NUMBER.finditer(text))
    return matches[-1] if matches else None


# --- habits -----------------------------------------------------------------------------------
# A wrap adds text around the answer (its logprobs stay valid); a rewrite changes the answer.
# Either returns None when it does not apply to this answer.


def _fence(text: str) -> tuple[str, str] | None:
    """JSON inside a ```json fence."""
    return ("```json\n", "\n```") if _is_json(text) else None


def _preamble(text: str) -> tuple[str, str] | None:
    return (PREAMBLE, "") if text.strip() else None


def _trailing(text: str) -> tuple[str, str] | None:
    """Text after the closing sentence (or after the JSON)."""
    return ("", TRAILING) if text.strip() else None


def _bold(text: str) -> str | None:
    """The closing sentence in markdown bold: `**Finally, I will give 5 dollars**`."""
    body = text.rstrip()
    if not body or _is_json(body):
        return None
    start = _closing_start(body, len(body) - 1)
    return f"{body[:start]}**{body[start:].strip()}**"


def _boxed(text: str) -> str | None:
    """The last number as LaTeX `\\boxed{N}`."""
    number = _last_number(text)
    if number is None or _is_json(text):
        return None
    return f"{text[: number.start()]}\\boxed{{{number.group(0)}}}{text[number.end() :]}"


def _final_answer_is(text: str) -> str | None:
    """The closing sentence replaced by 'The final answer is N.' (N: its last number)."""
    number = _last_number(text)
    if number is None or _is_json(text):
        return None
    start = _closing_start(text, number.start())
    return f"{text[:start]}The final answer is {number.group(0)}."


def _round_numbers(text: str) -> str | None:
    """Every number snapped to the 1-2-5 series, as real models at low temperature favour a
    few round amounts: many answers tie. In JSON, the numeric values (not numbers in strings,
    such as the level `45-64`)."""
    if _is_json(text):
        data = json.loads(text)
        if not _has_number(data):
            return None
        indent = 2 if "\n" in text.strip() else None
        return json.dumps(_rounded_values(data), indent=indent, ensure_ascii=False)
    if _NUMBER.search(text) is None:
        return None
    return _NUMBER.sub(_rounded, text)


def _has_number(data: Any) -> bool:
    if isinstance(data, dict):
        return any(_has_number(v) for v in data.values())
    if isinstance(data, list):
        return any(_has_number(v) for v in data)
    return isinstance(data, int | float) and not isinstance(data, bool)


def _rounded_values(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _rounded_values(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_rounded_values(v) for v in data]
    if isinstance(data, bool) or not isinstance(data, int | float):
        return data
    snapped = math.copysign(round_number(abs(data)), data)
    return int(snapped) if isinstance(data, int) else snapped


def _rounded(match: re.Match[str]) -> str:
    whole, fraction = match.group(1), match.group(2) or ""
    snapped = round_number(float(whole.replace(",", "") + fraction))
    if not snapped.is_integer():
        return f"{snapped:g}"
    return f"{int(snapped):,}" if "," in whole else str(int(snapped))


def _refusal(text: str) -> str | None:
    return REFUSAL


def _empty(text: str) -> str | None:
    return ""


WRAPS: dict[str, Callable[[str], tuple[str, str] | None]] = {
    "fence": _fence,
    "preamble": _preamble,
    "trailing": _trailing,
}
REWRITES: dict[str, Callable[[str], str | None]] = {
    "bold": _bold,
    "boxed": _boxed,
    "final_answer_is": _final_answer_is,
    "round": _round_numbers,
    "refusal": _refusal,
    "empty": _empty,
}
HABITS = (*WRAPS, *REWRITES)
"""Every habit's name, as `apply_habit` takes it."""

_KEEP_LOGPROBS = (*WRAPS, "refusal", "empty")
"""Habits an answer with logprobs can take: its own tokens stay as they were, or go."""

_CONSTRAINED = ("round", "empty")
"""Habits an answer under a structured response format can take: constrained decoding keeps
the JSON valid, but not the values round-free, and a refusal arrives as empty content."""


def applicable_habits(response: ChatResponse, structured: bool = False) -> list[str]:
    """The habits that change this answer (a rewrite of the numbers needs numbers...);
    `structured`: the request asked for a JSON response format."""
    if structured:
        names: tuple[str, ...] = _CONSTRAINED
    else:
        names = _KEEP_LOGPROBS if response.logprobs is not None else HABITS
    text = response.text
    return [
        name
        for name in names
        if (WRAPS[name](text) if name in WRAPS else REWRITES[name](text)) is not None
    ]


def apply_habit(name: str, response: ChatResponse) -> ChatResponse:
    """`response` with habit `name`; added text has certain (0.0) logprobs, as the rules'
    own non-answer tokens do, so the answer's own tokens keep what they had."""
    if name in WRAPS:
        wrap = WRAPS[name](response.text)
        if wrap is None:
            raise ValueError(f"habit {name!r} does not apply to this answer")
        prefix, suffix = wrap
        logprobs = response.logprobs
        if logprobs is not None:
            logprobs = [*_certain(prefix), *logprobs, *_certain(suffix)]
        return response.model_copy(
            update={"text": prefix + response.text + suffix, "logprobs": logprobs}
        )
    text = REWRITES[name](response.text)
    if text is None:
        raise ValueError(f"habit {name!r} does not apply to this answer")
    logprobs = None if response.logprobs is None else _certain(text)
    return response.model_copy(update={"text": text, "logprobs": logprobs})


def _certain(text: str) -> list[TokenLogprob]:
    return [TokenLogprob(token=piece, logprob=0.0) for piece in re.findall(r"\s*\S+|\s+", text)]


def drift_response(
    response: ChatResponse,
    request: ChatRequest,
    rate: float,
    conversation: np.random.Generator,
    draw: np.random.Generator,
) -> tuple[ChatResponse, str | None]:
    """The answer as a drifting model gives it, and the habit applied (None: unchanged).

    `conversation` is seeded by the conversation's first request (persistent refusals), `draw`
    by this request (whether it drifts, and which habit).
    """
    structured = request.response_format is not None
    if conversation.random() < rate * PERSISTENT_REFUSAL_SHARE:
        refusal = "empty" if structured else "refusal"
        return apply_habit(refusal, response), refusal
    if draw.random() >= rate * (REASK_FACTOR if is_reask(request) else 1.0):
        return response, None
    names = applicable_habits(response, structured)
    if not names:
        return response, None
    weights = np.array([ROUND_WEIGHT if n == "round" else 1.0 for n in names])
    name = str(draw.choice(names, p=weights / weights.sum()))
    return apply_habit(name, response), name
