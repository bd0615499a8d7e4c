"""The LLM interface every agent uses: requests, responses, backends and their errors.

A request carries what a model sees (messages and sampling parameters) and, apart from that, a
`task` name and `hints` (the persona's attributes, the game's endowment...) that only the
scripted behaviour model reads. Real backends never send the hints anywhere.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import cache
from typing import Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field

from personasim.simulation.log.events import dumps_payload

__all__ = [
    "Backend",
    "ChatRequest",
    "ChatResponse",
    "LLMError",
    "Message",
    "PermanentLLMError",
    "PromptTooLongError",
    "ResponseFormat",
    "Router",
    "TokenLogprob",
    "TransientLLMError",
    "Usage",
    "response_format_for",
]

ResponseFormat = Literal["text", "json_schema", "json_object"]
"""How a run asks for answers: free text read by each task's parser (the papers' prompts), or
JSON constrained by the answer's schema, in OpenAI's form (`json_schema`: OpenAI, vLLM) or the
form llama.cpp's server accepts (`json_object` with a `schema`)."""

RESPONSE_FORMATS: tuple[str, ...] = get_args(ResponseFormat)


@cache
def response_format_for(kind: ResponseFormat, schema: type[BaseModel]) -> dict[str, Any] | None:
    """The request's `response_format` that constrains an answer to `schema` (None for text)."""
    if kind == "text":
        return None
    json_schema = schema.model_json_schema()
    if kind == "json_schema":
        named = {"name": schema.__name__, "schema": json_schema}
        return {"type": "json_schema", "json_schema": named}
    if kind == "json_object":
        return {"type": "json_object", "schema": json_schema}
    known = ", ".join(RESPONSE_FORMATS)
    raise ValueError(f"unknown response format {kind!r}; use one of {known}")


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)
    role: Literal["system", "user", "assistant"]
    content: str


class ChatRequest(BaseModel):
    """One chat-completion request, backend-neutral."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    temperature: float = 0.7
    top_p: float | None = None
    max_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    response_format: dict[str, Any] | None = None
    sample_index: int = 0
    task: str = "chat"
    hints: dict[str, Any] = Field(default_factory=dict)

    def sampling(self) -> dict[str, Any]:
        """The parameters a model is called with (None means the endpoint's default)."""
        fields = ("temperature", "top_p", "max_tokens", "logprobs", "top_logprobs")
        return {name: getattr(self, name) for name in fields if getattr(self, name) is not None}

    def plain_messages(self) -> list[dict[str, str]]:
        """The messages as `model_dump` gives them, built directly (it is on every call's path)."""
        return [{"role": m.role, "content": m.content} for m in self.messages]

    def with_reply(self, reply: str, follow_up: str) -> ChatRequest:
        """The same conversation continued by the model's reply and a new user turn."""
        messages = (
            *self.messages,
            Message(role="assistant", content=reply),
            Message(role="user", content=follow_up),
        )
        return self.model_copy(update={"messages": messages})


class TokenLogprob(BaseModel):
    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatResponse(BaseModel):
    text: str
    logprobs: list[TokenLogprob] | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None


class LLMError(RuntimeError):
    """A model call failed; `attempts` counts the requests that were sent for it."""

    attempts: int = 0


class TransientLLMError(LLMError):
    """Worth retrying: rate limits, server errors, timeouts, dropped connections."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentLLMError(LLMError):
    """Retrying will not help: bad request, bad key, unknown model."""


class PromptTooLongError(PermanentLLMError):
    """The request does not fit the model's context. Retrying the same request will not help;
    whether the run must stop depends on whose text made it long (`LLMClient.complete`)."""


class Backend(ABC):
    """Something that answers chat requests. Retries, caching and limits live in `LLMClient`."""

    name: str = "backend"

    @abstractmethod
    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        """Answer once, raising `TransientLLMError` or `PermanentLLMError` on failure."""

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """What determines this backend's answers besides the request (no secrets)."""

    def describe(self) -> dict[str, Any]:
        """Settings for the manifest (no secrets)."""
        return self.identity()

    def router(self, concurrency: int) -> Router | None:
        """How `LLMClient` reaches this backend with up to `concurrency` requests in flight:
        None, directly; a pool of replicas returns a `Router` that picks one per request, so
        the client's timeout, retries and hedging stay around every replica."""
        return None

    def cache_key(self, request: ChatRequest) -> str:
        """Content address of a request: same key, same answer."""
        return self._address(self.identity(), request)

    def _address(self, identity: dict[str, Any], request: ChatRequest) -> str:
        """The content address of `request` as answered by a backend of `identity`."""
        canonical = {
            "backend": identity,
            "messages": request.plain_messages(),
            "sampling": request.sampling(),
            "response_format": request.response_format,
            "sample_index": request.sample_index,
            **self._key_extras(request),
        }
        return hashlib.sha256(dumps_payload(canonical).encode()).hexdigest()

    def _key_extras(self, request: ChatRequest) -> dict[str, Any]:
        """Further request fields that change this backend's answer (none for real models)."""
        return {}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


Router: TypeAlias = Callable[[ChatRequest, Any], AbstractAsyncContextManager[Backend]]
"""Per request: a context manager that waits for a replica that may take it (its slot and
pacing), yields that replica's backend for one attempt, and learns from how the attempt ended
(an error may come out of it replaced: see simulation/llm/endpoint_pool.py). Its second
argument is a hedged duplicate's `hedging.Overrun` (None for any other request)."""
