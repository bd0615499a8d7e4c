"""The scripted backend: a seeded behaviour model that answers offline.

It is *not* a language model. For each kind of request (its `task`) a registered behaviour
function reads the request's hints (persona attributes, game settings) and writes an answer in
the same text format a real model is asked for. It exists so every scenario runs end to end with
no network and no key, and it is the test double. Its rules are documented in docs/scripted.md;
metrics computed from it describe these rules, not any model.

Randomness: each answer draws from a generator seeded by the request's cache key, which already
includes the backend seed. Answers therefore do not depend on call order or concurrency. The
seed leaves out the request's `response_format`: a rule makes the same draws whether it writes
its answer as text or as JSON, so a text run and a structured run of the same seed decide alike.

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

from .llm import Backend, ChatRequest, ChatResponse, PermanentLLMError, Usage

__all__ = [
    "BEHAVIOUR_VERSION",
    "ScriptedBackend",
    "ScriptedBehaviour",
    "answer_schema",
    "scripted_behaviour",
]

BEHAVIOUR_VERSION = 4
"""Bumped when any behaviour changes, so cached scripted answers are not reused across rules."""

ScriptedBehaviour = Callable[[ChatRequest, np.random.Generator], str | ChatResponse]

_BEHAVIOURS: dict[str, ScriptedBehaviour] = {}


def scripted_behaviour(task: str) -> Callable[[ScriptedBehaviour], ScriptedBehaviour]:
    """Register the scripted answer for requests whose `task` is `task`."""

    def register(behaviour: ScriptedBehaviour) -> ScriptedBehaviour:
        _BEHAVIOURS[task] = behaviour
        return behaviour

    return register


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

    def __init__(self, seed: int = 0, latency: float = 0.0) -> None:
        self.seed = seed
        self.latency = latency

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted", "behaviour_version": BEHAVIOUR_VERSION, "seed": self.seed}

    def describe(self) -> dict[str, Any]:
        return {**self.identity(), "note": "scripted behaviour model, not a language model"}

    def _key_extras(self, request: ChatRequest) -> dict[str, Any]:
        return {"task": request.task, "hints": request.hints}

    def cache_key(self, request: ChatRequest) -> str:
        """The request's content address, extended by its rule's source hash."""
        base = super().cache_key(request)
        rule = _BEHAVIOURS.get(request.task)
        return base if rule is None else _sha256(f"{base}:{rule_fingerprint(rule)}")

    def _seed_key(self, request: ChatRequest) -> str:
        """The request's key as a text request, without the rule's hash: the format is how an
        answer is written, not what is decided, and the rule's text is not its randomness."""
        return super().cache_key(request.model_copy(update={"response_format": None}))

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        behaviour = _BEHAVIOURS.get(request.task)
        if behaviour is None:
            known = ", ".join(sorted(_BEHAVIOURS)) or "none"
            raise PermanentLLMError(
                f"the scripted backend has no behaviour for task {request.task!r} (known: {known});"
                " register one with @scripted_behaviour or use a real model"
            )
        if self.latency:
            await asyncio.sleep(self.latency)
        rng = np.random.default_rng(int(self._seed_key(request)[:16], 16))
        answer = behaviour(request, rng)
        response = answer if isinstance(answer, ChatResponse) else ChatResponse(text=answer)
        return _complete_response(response, request)


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
