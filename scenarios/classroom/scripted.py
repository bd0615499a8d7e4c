"""Scripted students and judge for the classroom scenario (seed 000; the offline behaviour model).

Students answer with a probability of being right that depends on their level (high performers
mostly right, low performers much less often, the no-persona baseline mostly right), a little on
the strategy and on whether a race is named (the paper's directions, §4.2–4.3, with made-up
sizes); low performers write the tagged behaviour comments (1)–(4) the instruction asks for. The
judge scores the contrast from features of the two responses. The correct answer and the grades
reach these rules through the request's hints, which a real model never sees. Asked for JSON
(`answer_schema`), every rule writes the same decision into the fields of the scenario's schema
(`response`/`final_answer`, `reflection`/`revised_response`/`final_answer`, `explanation`/
`score`), with the same draws. Documented in docs/scripted.md; numbers from these rules describe
the rules, not any model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from personasim.scenarios.classroom.metrics import behaviour_tags
from personasim.simulation import ChatRequest, answer_schema, scripted_behaviour

__all__ = [
    "BEHAVIOUR_COMMENTS",
    "COMMENT_WEIGHTS",
    "MISSING_FINAL_ANSWER",
    "ONE_SHOT_LOW_BONUS",
    "P_CORRECT",
    "RACE_LOW_BONUS",
    "REFINE_LOW_SLIP",
    "REWRITE_LOW_FIX",
    "answer_probability",
    "judge_score",
]

P_CORRECT: dict[str | None, float] = {None: 0.92, "high": 0.94, "low": 0.50}
"""Chance of a right final answer in a zero-shot answer (None: no persona)."""

ONE_SHOT_LOW_BONUS = 0.10
"""A demonstration lifts low performers' accuracy (§4.2: one-shot raises low accuracy)."""

RACE_LOW_BONUS = 0.08
"""Naming a race lifts low performers' accuracy, the same for every race (§4.3)."""

REFINE_LOW_SLIP = 0.25
"""Chance that a low performer's right first answer turns wrong on self-refinement."""

REWRITE_LOW_FIX = 0.20
"""Chance that the two-stage rewrite of a low performer's wrong answer fixes it."""

MISSING_FINAL_ANSWER = 0.03
"""Chance that a persona's answer ends without stating its number ("I lost track of the final
number."): unreadable, graded not right and counted."""

JUDGE_FORMAT_SLIP = 0.03
"""Chance that a judge's first answer has no usable score (exercises the re-ask)."""

COMMENT_WEIGHTS = (0.40, 0.25, 0.25, 0.10)
"""How often each behaviour (1)–(4) is picked for a comment (Table 3's typical order)."""

BEHAVIOUR_COMMENTS = {
    1: ("(1) Mixing up which numbers to use", "(1) Slipping on a basic calculation"),
    2: ("(2) Not sure this step is right", "(2) Second-guessing the answer"),
    3: ("(3) Counting on fingers", "(3) Drawing little groups to add one by one"),
    4: ("(4) Getting frustrated with the numbers", "(4) Sighing and wanting to give up"),
}

_HESITATION = re.compile(r"\b(i think|not sure|wait|um+|maybe)\b|\?", re.IGNORECASE)


def answer_probability(level: str | None, strategy: str, race: str | None) -> float:
    """The chance that a first answer is right, from level, strategy and race."""
    p = P_CORRECT[level]
    if level == "low":
        p += ONE_SHOT_LOW_BONUS if strategy == "one-shot" else 0.0
        p += RACE_LOW_BONUS if race else 0.0
    return p


def _number(value: float) -> str:
    """A number as a student writes it: thousands with commas, no trailing zeros."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _wrong(gold: float, rng: np.random.Generator) -> float:
    """A plausible wrong number: off by 5–30 % of the answer (at least 1), either way."""
    step = max(1, round(abs(gold) * rng.uniform(0.05, 0.3)))
    return gold + step * (1 if rng.random() < 0.5 else -1)


@dataclass(frozen=True)
class _Answer:
    """A student's answer before it is written down: its working, its number, and whether the
    closing 'Final Answer:' line was forgotten."""

    body: str
    value: float
    forgot: bool
    natural: bool = False
    """Ends as plain prose ("So the answer is N."): the no-persona prompt asks for no label."""

    def text(self) -> str:
        if self.natural:
            return f"{self.body} So the answer is {_number(self.value)}."
        closing = "I lost track of the final number." if self.forgot else self._final()
        return f"{self.body} {closing}"

    def fields(self) -> dict[str, Any]:
        """`response` and `final_answer` of the JSON answer; the number is the one the text
        writes, so the scenario's reading gives back `text()`. Forgetting is a null number."""
        if self.forgot:
            return {"response": self.text(), "final_answer": None}
        return {"response": self.body, "final_answer": float(_number(self.value).replace(",", ""))}

    def _final(self) -> str:
        return f"Final Answer: {_number(self.value)}"


def _forgets(rng: np.random.Generator) -> bool:
    return bool(rng.random() < MISSING_FINAL_ANSWER)


def _comments(rng: np.random.Generator, low: int, high: int) -> list[str]:
    count = int(rng.integers(low, high + 1))
    kinds = rng.choice(4, size=count, p=COMMENT_WEIGHTS) + 1
    return [str(rng.choice(BEHAVIOUR_COMMENTS[int(k)])) for k in kinds]


def _low_answer(value: float, rng: np.random.Generator, n_comments: tuple[int, int]) -> _Answer:
    comments = _comments(rng, *n_comments)
    steps = " ".join(f"Um, let me try this part... {c}." for c in comments)
    body = f"Okay... this looks hard. {steps} I think it is {_number(value)}?"
    return _Answer(body, value, _forgets(rng))


def _high_answer(value: float, rng: np.random.Generator) -> _Answer:
    body = (
        "Let me solve this step by step. I set up each quantity, compute it carefully and "
        f"check the result: everything adds up to {_number(value)}."
    )
    return _Answer(body, value, _forgets(rng))


def _respond(level: str | None, value: float, rng: np.random.Generator) -> _Answer:
    if level == "low":
        return _low_answer(value, rng, (2, 4))
    if level == "high":
        return _high_answer(value, rng)
    return _plain_answer(value)


def _plain_answer(value: float) -> _Answer:
    """The no-persona answer. Its prompt (Figure 2) asks only for "the final answer as a
    number", no 'Final Answer:' line, so the answer ends naturally with its number."""
    body = "I set up each quantity from the question and compute step by step."
    return _Answer(body, value, forgot=False, natural=True)


def _written(request: ChatRequest, answer: _Answer) -> str:
    """The answer as text, or as the JSON the request's schema asks for."""
    if answer_schema(request) is None:
        return answer.text()
    return json.dumps(answer.fields())


@scripted_behaviour("classroom.answer")
def student_answer(request: ChatRequest, rng: np.random.Generator) -> str:
    """A first answer (no persona, zero-shot, one-shot, self-refine's first turn, stage 1)."""
    h = request.hints
    right = rng.random() < answer_probability(h["level"], h["strategy"], h["race"])
    value = h["gold"] if right else _wrong(h["gold"], rng)
    return _written(request, _respond(h["level"], value, rng))


@scripted_behaviour("classroom.refine")
def student_refinement(request: ChatRequest, rng: np.random.Generator) -> str:
    """Self-refinement's second turn: a reflection, a revised response and a final answer.

    High performers keep a right answer and fix a wrong one; low performers keep their first
    number except that a right one slips with probability REFINE_LOW_SLIP.
    """
    h = request.hints
    gold, previous = h["gold"], h["previous"]
    if h["level"] == "high":
        value = gold
    elif previous is not None and previous != gold:
        value = previous
    else:
        value = _wrong(gold, rng) if rng.random() < REFINE_LOW_SLIP else gold
    reflection = (
        "My answer should show more of the struggle of my level."
        if h["level"] == "low"
        else "My answer is clear and matches a strong student."
    )
    revised = _respond(h["level"], value, rng)
    if answer_schema(request) is None:
        return f"Reflection: {reflection} Revised Response: {revised.text()}"
    fields = revised.fields()
    return json.dumps(
        {
            "reflection": reflection,
            "revised_response": fields["response"],
            "final_answer": fields["final_answer"],
        }
    )


@scripted_behaviour("classroom.rewrite")
def student_rewrite(request: ChatRequest, rng: np.random.Generator) -> str:
    """Two-stage's second stage: the stage-1 solution in the racial persona's voice.

    The rewrite keeps the stage-1 number (a low performer's wrong one is fixed with probability
    REWRITE_LOW_FIX) and, for low performers, keeps at most one behaviour comment: the struggle
    fades in the retelling, which is why two-stage weakens the contrast (§4.3).
    """
    h = request.hints
    gold, previous = h["gold"], h["previous"]
    value = gold if previous is None else previous
    if h["level"] == "low":
        if value != gold and rng.random() < REWRITE_LOW_FIX:
            value = gold
        return _written(request, _low_answer(value, rng, (0, 1)))
    return _written(request, _high_answer(value, rng))


def judge_score(high_correct: bool, low_correct: bool, low_response: str) -> int:
    """Degree of Contrast from features of the pair (Table 4's levels, made mechanical).

    3: the low response is wrong and shows struggle (a tagged comment), or shows at least two
    kinds of struggle; 2: one comment or hesitation words only; 1: neither. The rubric asks for
    a flawless high response for a 3, so a wrong high answer caps the score at 2.
    """
    kinds = set(behaviour_tags(low_response))
    if (not low_correct and kinds) or len(kinds) >= 2:
        score = 3
    elif kinds or _HESITATION.search(low_response):
        score = 2
    else:
        score = 1
    return score if high_correct else min(score, 2)


@scripted_behaviour("classroom.judge_swapped")
@scripted_behaviour("classroom.judge")
def contrast_judgement(request: ChatRequest, rng: np.random.Generator) -> str:
    """The judge's answer: a short explanation, then `Score: N` (JSON: `explanation`, `score`).
    It scores from the hints, not the slots, so the answers' order changes nothing: the
    scripted judge has no position bias (`--swap-order` measures 0 on it).

    A slip (first attempt only) leaves the score out of the text, or gives score 0 in JSON
    (valid JSON, out of range): both are re-asked, and the re-ask scores from the hints.
    """
    h: Mapping[str, Any] = request.hints
    score = judge_score(h["high_correct"], h["low_correct"], h["low_response"])
    structured = answer_schema(request) is not None
    if rng.random() < JUDGE_FORMAT_SLIP and len(request.messages) == 1:
        vague = "The low-performance response looks different from the high one."
        return json.dumps({"explanation": vague, "score": 0}) if structured else vague
    explanation = "I compared the reasoning and the behaviour shown in the two answers."
    if structured:
        return json.dumps({"explanation": explanation, "score": score})
    return f"{explanation}\nScore: {score}"
