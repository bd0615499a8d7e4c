"""The scripted backend: a seeded behaviour model that answers offline.

It is *not* a language model. For each kind of request (its `task`) a registered behaviour
function reads the request's hints (persona attributes, game settings) and writes an answer in
the same text format a real model is asked for. It exists so every scenario runs end to end with
no network and no key, and it is the test double. Its rules are documented in docs/scripted.md;
metrics computed from it describe these rules, not any model.

Randomness: each answer draws from a generator seeded by the request's content address, which
includes the backend seed. Answers therefore do not depend on call order or concurrency. The
response format is left out of the seed (not out of the cache key): it constrains the form of
an answer, not the decision, so a rule decides the same in a text and in a JSON run. A request
with the `common_draws` hint is seeded by that hint, its task, sample index and turn instead of
its content (common random numbers for counterfactual twins).

Drift (`scripted:drift=D`): a seeded share D of the answers is then rewritten with a real chat
model's habits (`drift.py`). The drift rate is part of the backend's identity, hence of the cache
key, but not of the seed the rules draw from: a drifting backend gives the same answers as a
plain one, except the rewritten ones.

Rules are registered with `@scripted_behaviour(task)`: ours when their scenario package is
imported, an outside package's from the entry-point group `personasim.scripted_rules` (each entry
names a module whose import registers its rules). That group is read from package metadata only
when the backend meets a task with no rule, so start-up imports nothing it does not need.

The cache key (not the seed) also holds a hash of the source of the rule registered for the
request's task, so an edited rule is never answered from the cache, while an edit that does not
change its draws (a comment) still decides alike.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import marshal
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from personasim.simulation.base.registry import Registry
from personasim.simulation.llm.chat import (
    Backend,
    ChatRequest,
    ChatResponse,
    Message,
    PermanentLLMError,
    Usage,
)
from personasim.simulation.llm.drift import drift_response

__all__ = [
    "BEHAVIOUR_VERSION",
    "COMMON_DRAWS_HINT",
    "RULES",
    "RULES_ENTRY_POINT_GROUP",
    "ScriptedBackend",
    "ScriptedBehaviour",
    "answer_schema",
    "scripted_behaviour",
    "scripted_rule",
]

BEHAVIOUR_VERSION = 4
"""Bumped when any behaviour changes, so cached scripted answers are not reused across rules."""

ScriptedBehaviour = Callable[[ChatRequest, np.random.Generator], str | ChatResponse]

COMMON_DRAWS_HINT = "common_draws"
"""A request hint that names a stream of draws: requests with the same value (and the same
task, sample index and number of messages) draw the same numbers, whatever else they say. A
counterfactual twin's requests carry one (`agents/counterfactual.py`), so the scripted model's
noise is held fixed across the twins and only its rules can tell their levels apart."""

RULES_ENTRY_POINT_GROUP = "personasim.scripted_rules"
"""Entry-point group of outside packages' scripted rules (docs/scripted.md)."""

RULES: Registry[ScriptedBehaviour] = Registry("scripted rule", RULES_ENTRY_POINT_GROUP)
"""Every rule by task. An entry point of the group names a package of rules (its name need not
be a task), so a task with no rule loads the whole group (each entry point once)."""


def scripted_behaviour(task: str) -> Callable[[ScriptedBehaviour], ScriptedBehaviour]:
    """Register the scripted answer for requests whose `task` is `task`; another rule for a
    task that has one is refused (the same rule loaded again replaces it)."""

    def register(behaviour: ScriptedBehaviour) -> ScriptedBehaviour:
        return RULES.register(task, behaviour)

    return register


def scripted_rule(task: str) -> ScriptedBehaviour | None:
    """The rule registered for `task`; when there is none, the packages of the entry-point
    group are loaded first (each once), so an installed package's rules are found."""
    return RULES.get(task)


def answer_schema(request: ChatRequest) -> dict[str, Any] | None:
    """The JSON schema a structured request constrains its answer to (None: a text answer).

    A rule answers in JSON exactly when this is not None, as a constrained model would.
    """
    response_format = request.response_format or {}
    if response_format.get("type") == "json_object":
        return response_format.get("schema") or {}
    if response_format.get("type") == "json_schema":
        return response_format["json_schema"]["schema"]
    return None


class ScriptedBackend(Backend):
    """Answers from registered behaviours; see the module docstring."""

    name = "scripted"

    def __init__(self, seed: int = 0, latency: float = 0.0, drift: float = 0.0) -> None:
        if not 0.0 <= drift <= 1.0:
            raise ValueError(f"the drift rate must be between 0 and 1, got {drift}")
        self.seed = seed
        self.latency = latency
        self.drift = float(drift)

    def identity(self) -> dict[str, Any]:
        return {**self._rules_identity(), "drift": self.drift}

    def _rules_identity(self) -> dict[str, Any]:
        """What the rules' answers depend on: the identity less the drift rate."""
        return {"backend": "scripted", "behaviour_version": BEHAVIOUR_VERSION, "seed": self.seed}

    def describe(self) -> dict[str, Any]:
        note = "scripted behaviour model, not a language model"
        if self.drift:
            note += f"; {self.drift:g} of its answers drift with real models' habits"
        return {**self.identity(), "note": note}

    def _key_extras(self, request: ChatRequest) -> dict[str, Any]:
        return {"task": request.task, "hints": request.hints}

    def cache_key(self, request: ChatRequest) -> str:
        """The request's content address, extended by its rule's source hash."""
        base = super().cache_key(request)
        rule = scripted_rule(request.task)
        return base if rule is None else _sha256(f"{base}:{rule_fingerprint(rule)}")

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        behaviour = scripted_rule(request.task)
        if behaviour is None:
            known = ", ".join(sorted(RULES.registered())) or "none"
            failed = RULES.failure_note()
            raise PermanentLLMError(
                f"the scripted backend has no behaviour for task {request.task!r} (known: {known});"
                " register one with @scripted_behaviour (in an installed package: under the"
                f" entry-point group {RULES_ENTRY_POINT_GROUP!r}) or use a real model{failed}"
            )
        if self.latency:
            await asyncio.sleep(self.latency)
        address = self._seed_of(request)
        answer = behaviour(request, np.random.default_rng(address))
        response = answer if isinstance(answer, ChatResponse) else ChatResponse(text=answer)
        if self.drift:
            response, _ = drift_response(
                response,
                request,
                self.drift,
                conversation=np.random.default_rng([self._seed_of(_opening(request)), _DRIFT]),
                draw=np.random.default_rng([address, _DRIFT]),
            )
        return _complete_response(response, request)

    def _seed_of(self, request: ChatRequest) -> int:
        """The seed of a request's draws: its address under the rules' identity, without the
        response format."""
        unformatted = request.model_copy(update={"response_format": None})
        stream = request.hints.get(COMMON_DRAWS_HINT)
        if stream is not None:
            turn = (Message(role="user", content=f"turn {len(request.messages)}"),)
            hints = {COMMON_DRAWS_HINT: stream}
            unformatted = unformatted.model_copy(update={"messages": turn, "hints": hints})
        return int(self._address(self._rules_identity(), unformatted)[:16], 16)


_DRIFT = 1
"""Stream of the drift draws, apart from the rule's own draws from the same address."""


def _opening(request: ChatRequest) -> ChatRequest:
    """The conversation's first request: its messages through the first user turn."""
    users = [i for i, m in enumerate(request.messages) if m.role == "user"]
    first_user = users[0] if users else len(request.messages) - 1
    messages: tuple[Message, ...] = request.messages[: first_user + 1]
    return request.model_copy(update={"messages": messages})


@cache
def rule_fingerprint(rule: ScriptedBehaviour) -> str:
    """SHA-256 of a rule's source, computed once per function: the part of the cache key that
    changes when the rule is edited. Without readable source: its code object's bytes; a
    callable with neither gives its repr, which misses the cache rather than hit a stale one."""
    try:
        text = inspect.getsource(rule).encode()
    except (OSError, TypeError):
        code = getattr(rule, "__code__", None)
        text = marshal.dumps(code) if code is not None else repr(rule).encode()
    return hashlib.sha256(text).hexdigest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _complete_response(response: ChatResponse, request: ChatRequest) -> ChatResponse:
    """Fill in usage (word counts). Logprobs are only what the rule itself gives: a rule
    without them answers like an endpoint that has none, never with invented certainty."""
    prompt_words = sum(len(m.content.split()) for m in request.messages)
    words = response.text.split()
    update: dict[str, Any] = {
        "model": "scripted",
        "finish_reason": "stop",
        "usage": Usage(prompt_tokens=prompt_words, completion_tokens=len(words)),
    }
    return response.model_copy(update=update)
