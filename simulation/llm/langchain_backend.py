"""Any LangChain chat model: an object passed from Python, or a class named by a spec
(`--model langchain:MODULE:CLASS?NAME=VALUE`, built in `backend_kinds`).

The model object keeps its own configuration; set its own retries to zero (for example
`ChatOpenAI(max_retries=0)`) so that `LLMClient` stays the one retry layer (a spec does this).
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from personasim.simulation.llm.chat import (
    Backend,
    ChatRequest,
    ChatResponse,
    TokenLogprob,
    TransientLLMError,
    Usage,
)
from personasim.simulation.llm.masking import mask_secrets

__all__ = ["LangChainBackend"]

_MESSAGE_TYPES = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}


class LangChainBackend(Backend):
    """Adapts a LangChain `BaseChatModel`; errors it raises are treated as transient."""

    name = "langchain"

    def __init__(
        self, model: BaseChatModel, name: str | None = None, spec: str | None = None
    ) -> None:
        self.model = model
        self.model_name = name or getattr(model, "model_name", None) or type(model).__name__
        self.spec = mask_secrets(spec) if spec else spec
        """The model spec it was built from (its options change answers, so they key the cache;
        recorded, so masked: a spec with a key is refused before, this is a second guard)."""

    def identity(self) -> dict[str, Any]:
        built = {"spec": self.spec} if self.spec else {}
        return {
            "backend": "langchain",
            "class": type(self.model).__name__,
            "model": self.model_name,
            **built,
        }

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        messages: list[BaseMessage] = [
            _MESSAGE_TYPES[m.role](content=m.content) for m in request.messages
        ]
        kwargs = {k: v for k, v in request.sampling().items() if k != "top_logprobs"}
        if request.top_logprobs:
            kwargs["top_logprobs"] = request.top_logprobs
        try:
            reply = await self.model.ainvoke(messages, **kwargs)
        except Exception as exc:  # the model's own exception types vary by provider
            raise TransientLLMError(f"{self.model_name}: {mask_secrets(str(exc))}") from exc
        return _to_response(reply, self.model_name)


def _to_response(reply: BaseMessage, model_name: str) -> ChatResponse:
    usage = getattr(reply, "usage_metadata", None) or {}
    metadata = getattr(reply, "response_metadata", None) or {}
    content = metadata.get("logprobs", {}) or {}
    logprobs = [
        TokenLogprob(
            token=item["token"],
            logprob=item["logprob"],
            top={alt["token"]: alt["logprob"] for alt in item.get("top_logprobs", [])},
        )
        for item in content.get("content", []) or []
    ]
    return ChatResponse(
        text=reply.text if isinstance(reply.content, list) else str(reply.content),
        logprobs=logprobs or None,
        usage=Usage(
            prompt_tokens=usage.get("input_tokens", 0),
            completion_tokens=usage.get("output_tokens", 0),
        ),
        model=metadata.get("model_name", model_name),
        finish_reason=metadata.get("finish_reason"),
    )
