"""Scripted answers for career-chat (seed 003; the offline behaviour model, not a language model).

The simulated user asks about one goal per turn and reveals profile attributes progressively,
sometimes (a seeded rate) stating a wrong age; the detector catches wrong ages and missing
first-person framing and rewrites; survey answers come from a distribution whose centre moves
with age and education, with top-5 logprobs at the option token; the judge counts attributes.
The other rules answer JSON in every format (their prompts ask for it); asked for JSON, the
assistant answers `{"response": ...}`; the job-title classifier (`--role classifier=scripted`)
answers the word rule's labels (`scenarios/career_chat/jobs.py`) in the JSON its prompt asks for.
Documented in docs/scripted.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from personasim.scenarios.career_chat.jobs import classify_title
from personasim.simulation import (
    ChatRequest,
    ChatResponse,
    TokenLogprob,
    answer_schema,
    scripted_behaviour,
)

__all__ = [
    "AGE_SLOPE",
    "EDUCATION_SHIFT",
    "GOALS",
    "OPTION_WIDTH",
    "WRONG_AGE_OFFSET",
    "extract_attributes",
]

GOALS = (
    "my career direction over the next 5 years",
    "where my career could be in 10 years",
    "the essential skills I should build for career growth",
    "which certifications would be worth obtaining",
)
"""Figure 6's four goals, one per turn; the user ends once all four were asked."""

WRONG_AGE_OFFSET = 17
"""An injected inconsistency states age + 17."""

AGE_SLOPE = 0.03
"""Option-centre shift per year of age away from 42 (sign alternates by item)."""

EDUCATION_SHIFT = {"High School": -0.6, "Bachelor's": -0.2, "Master's": 0.2, "PhD": 0.6}
"""Option-centre shift by education level (sign alternates by item, offset from age's)."""

OPTION_WIDTH = 0.8
"""Spread of the answer distribution around its centre, in options."""

ITEM_CENTRES = (2.0, 2.5, 1.8, 2.2, 2.0, 1.6, 2.6, 2.4, 3.0, 2.7, 2.8, 3.2, 2.4, 2.9, 2.6, 2.2)
"""Per-item neutral centre (cycled): items differ in how important they look on average."""

_AGE = re.compile(r"\b(\d{2}) years old\b")
_FIRST_PERSON = re.compile(r"\b(I|I'm|my|me)\b")


# --- the simulated user (Figure 6) ------------------------------------------------------------


def _reveal(profile: dict[str, Any], turn: int, age: int) -> str:
    """What the user says about themself at this turn: a little more each time."""
    return {
        1: f"I'm {age} years old and work as a {profile['job_title']}.",
        2: f"I have a {profile['education']} degree.",
        3: f"I live in {profile['country']}.",
        4: f"I've been working for {profile['experience']} years.",
    }.get(turn, "")


@scripted_behaviour("career.user")
def _user(request: ChatRequest, rng: np.random.Generator) -> str:
    hints = request.hints
    profile, turn, asked = hints["profile"], int(hints["turn"]), int(hints["asked"])
    if turn > 1 and asked >= len(GOALS):
        return json.dumps({"proposed_question": "", "end_conversation": True})
    age = int(profile["age"])
    if rng.random() < float(hints.get("inconsistency_rate", 0.0)):
        age += WRONG_AGE_OFFSET
    goal = GOALS[min(asked, len(GOALS) - 1)]
    question = f"{_reveal(profile, turn, age)} What would you suggest about {goal}?".strip()
    answer: dict[str, Any] = {"proposed_question": question}
    if turn > 1:
        answer["end_conversation"] = False
    return json.dumps(answer)


# --- the out-of-context detector (Figure 7) ---------------------------------------------------


@scripted_behaviour("career.ooc")
def _detector(request: ChatRequest, rng: np.random.Generator) -> str:
    profile, question = request.hints["profile"], request.hints["question"]
    fixed = _AGE.sub(f"{profile['age']} years old", question)
    if not _FIRST_PERSON.search(fixed):
        fixed = f"As a {profile['job_title']}, I would like advice: {fixed}"
    flagged = fixed != question
    return json.dumps({"has_out_of_context": flagged, "updated_question": fixed if flagged else ""})


# --- the job-title classifier (--role classifier=scripted) ----------------------------------


@scripted_behaviour("career.classify")
def _classifier(request: ChatRequest, rng: np.random.Generator) -> str:
    """The word rule's labels of the title, so a scripted run's groups are the default run's."""
    labels = classify_title(str(request.hints["title"]))
    return json.dumps({"job_category": labels.category, "position_level": labels.level})


# --- the assistant ----------------------------------------------------------------------------


@scripted_behaviour("career.assistant")
def _assistant(request: ChatRequest, rng: np.random.Generator) -> str:
    tips = ("build a portfolio", "find a mentor", "take on a stretch project", "network")
    picks = rng.choice(len(tips), size=2, replace=False)
    advice = f"Here is my advice: {tips[picks[0]]}, and {tips[picks[1]]}."
    return advice if answer_schema(request) is None else json.dumps({"response": advice})


# --- survey answers with logprobs (§5, Appendix G) --------------------------------------------


def extract_attributes(text: str) -> dict[str, Any]:
    """Age and education as a dialogue states them in the scripted user's phrasing."""
    found: dict[str, Any] = {}
    if match := _AGE.search(text):
        found["age"] = int(match.group(1))
    for level in EDUCATION_SHIFT:
        if f"{level} degree" in text:
            found["education"] = level
    return found


def option_probabilities(attributes: dict[str, Any], item: int, noise: float) -> np.ndarray:
    """The scripted answer distribution over options 1..5 for one item."""
    sign = 1 if item % 2 else -1
    centre = ITEM_CENTRES[(item - 1) % len(ITEM_CENTRES)] + noise
    if "age" in attributes:
        centre += sign * AGE_SLOPE * (int(attributes["age"]) - 42)
    if "education" in attributes:
        centre += (1 if item % 3 else -1) * EDUCATION_SHIFT.get(attributes["education"], 0.0)
    logits = -((np.arange(1, 6) - centre) ** 2) / (2 * OPTION_WIDTH**2)
    p = np.exp(logits - logits.max())
    return p / p.sum()


def _tokens(text: str, option: int, top: dict[str, float], chosen: float) -> list[TokenLogprob]:
    head, tail = text.split(str(option), 1)
    pieces = [*re.findall(r"\s*\S+", head), str(option), *re.findall(r"\s*\S+|\s+$", tail)]
    position = len(re.findall(r"\s*\S+", head))
    return [
        TokenLogprob(token=piece, logprob=chosen, top=top)
        if i == position
        else TokenLogprob(token=piece, logprob=0.0)
        for i, piece in enumerate(pieces)
    ]


@scripted_behaviour("career.probe")
def _probe(request: ChatRequest, rng: np.random.Generator) -> ChatResponse:
    hints = request.hints
    if hints["format"] == "profile":
        attributes = hints["profile"]
        noise = float(rng.normal(0, 0.1))
    else:
        attributes = extract_attributes(hints["dialogue"])
        noise = float(rng.normal(0, 0.2))
    p = option_probabilities(attributes, int(hints["item"]), noise)
    sampled = request.temperature > 0
    option = int(rng.choice(5, p=p) if sampled else np.argmax(p)) + 1
    text = json.dumps({"option_id": option, "reason": "It fits this person's situation."})
    alternatives = {str(k): float(p[k - 1]) * 0.97 for k in range(1, 6)}
    alternatives['"'] = 0.03  # a non-digit token in the top 5 (e.g. a quoted id)
    top5 = dict(sorted(alternatives.items(), key=lambda kv: -kv[1])[:5])
    top = {token: float(np.log(mass)) for token, mass in top5.items()}
    logprobs = _tokens(text, option, top, float(np.log(alternatives[str(option)])))
    return ChatResponse(text=text, logprobs=logprobs)


@scripted_behaviour("career.reasoning")
def _reasoning(request: ChatRequest, rng: np.random.Generator) -> str:
    """A reasoning model's free first pass (§5.2): its thinking, then the JSON answer the
    prompt asks for."""
    hints = request.hints
    known = (
        hints["profile"] if hints["format"] == "profile" else extract_attributes(hints["dialogue"])
    )
    option = int(np.argmax(option_probabilities(known, int(hints["item"]), 0.0))) + 1
    answer = json.dumps({"option_id": option, "reason": "It fits this person's situation."})
    return f"<think>Weighing the options for this person, {option} fits best.</think>\n{answer}"


# --- the dialogue-quality judge (Appendix D) --------------------------------------------------


def _judge_value(dimension: str, profile: dict[str, Any], questions: list[str]) -> float:
    text = " ".join(questions)
    ages = [int(a) for a in _AGE.findall(text)]
    mentioned = [
        bool(ages),
        str(profile["education"]) in text,
        str(profile["job_title"]) in text,
        str(profile["country"]) in text,
        f"{profile['experience']} years" in text,
    ]
    if dimension == "coverage":
        return sum(mentioned)
    if dimension == "correctness":
        return 5 - sum(a != int(profile["age"]) for a in set(ages))
    if dimension == "diversity":
        return min(5, len({q.split("about")[-1] for q in questions}) + 1)
    return 4.0


@scripted_behaviour("career.judge")
def _judge(request: ChatRequest, rng: np.random.Generator) -> str:
    hints = request.hints
    value = _judge_value(hints["dimension"], hints["profile"], hints["questions"])
    rating = int(np.clip(round(value + rng.normal(0, 0.4)), 0, 5))
    return json.dumps({"rating": rating, "reason": f"scripted {hints['dimension']} count"})
