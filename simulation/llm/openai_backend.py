"""Any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server, a LiteLLM proxy.

The SDK's own retries are off (`max_retries=0`): `LLMClient` is the one retry layer, so
attempts never multiply. The aiohttp transport is used because the default httpx one spends
several times more CPU per call under many requests in flight. Chat completions are posted by
`DirectPost`: over aiohttp, with the SDK's headers, auth and timeouts, failing with the SDK's
error types; the SDK's per-call request and response objects and its conversion of arguments
and replies took most of the client's CPU per call (benchmarks/README.md). The reply is read
from its JSON directly. Behind a proxy from the environment, the SDK's own `post` is used.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from openai._base_client import make_request_options

from personasim.simulation.llm.chat import (
    Backend,
    ChatRequest,
    ChatResponse,
    LLMError,
    PermanentLLMError,
    TokenLogprob,
    TransientLLMError,
    Usage,
)
from personasim.simulation.llm.direct_post import DirectPost
from personasim.simulation.llm.endpoint_errors import (
    Endpoint,
    connection_error,
    describe_page,
    not_json_error,
    status_error,
)

__all__ = ["OpenAIBackend", "public_url"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def public_url(url: str) -> str:
    """The URL without user info, query or fragment, which may carry credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


class OpenAIBackend(Backend):
    """Chat completions over HTTP; the key comes from the environment, never from arguments
    that could end up in a manifest or shell history."""

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
    ) -> None:
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        if urlsplit(self.base_url).scheme not in ("http", "https"):
            raise PermanentLLMError(
                f"base URL {public_url(self.base_url)!r} must start with http:// or https:// "
                "(e.g. http://localhost:8000/v1)"
            )
        api_key = os.environ.get(api_key_env)
        self._key_env, self._key_set = api_key_env, bool(api_key)
        if not api_key:
            if base_url is None:
                raise PermanentLLMError(
                    f"the openai backend needs an API key: set {api_key_env}, or pass --base-url "
                    "for a local server that needs none"
                )
            api_key = "no-key"  # local servers (vLLM, Ollama...) accept any value
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.base_url,
            max_retries=0,
            http_client=openai.DefaultAioHttpClient(),
        )
        self._options_by_timeout: dict[float, Any] = {}
        self._direct: DirectPost | None = None  # the SDK's own path behind a proxy
        if DirectPost.usable(self._client):
            self._direct = DirectPost(self._client, "/chat/completions")
        self._public_url = public_url(self.base_url)
        self._keyed_url = self._public_url  # in every request's cache key

    def keyed_as(self, url: str) -> None:
        """Key requests (and name this backend) as served at `url` while sending them to this
        backend's own URL: a resumed run whose endpoint moved (`--allow-endpoint-change`)."""
        self._keyed_url = public_url(url)

    def identity(self) -> dict[str, Any]:
        return {"backend": "openai", "base_url": self._keyed_url, "model": self.model}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.plain_messages(),
            **request.sampling(),
        }
        if request.response_format is not None:
            body["response_format"] = request.response_format
        try:
            completion = await self._post(body, timeout)
        except openai.APIStatusError as exc:
            raise await self._status_error(exc, request) from exc
        except openai.APIConnectionError as exc:  # includes timeouts
            raise connection_error(exc, self._endpoint(), timeout) from exc
        if isinstance(completion, str):  # the SDK hands back a body that is not JSON as text
            raise not_json_error(200, completion, self._endpoint())
        return _to_response(completion)

    async def _post(self, body: dict[str, Any], timeout: float) -> Any:
        if self._direct is not None:
            return await self._direct.post(body, timeout)
        return await self._client.post(
            "/chat/completions", body=body, cast_to=object, options=self._options(timeout)
        )

    def _options(self, timeout: float) -> Any:
        """What `chat.completions.create` sends besides the body: bearer auth, the timeout."""
        if timeout not in self._options_by_timeout:
            self._options_by_timeout[timeout] = make_request_options(
                timeout=timeout, security={"bearer_auth": True}
            )
        return self._options_by_timeout[timeout]

    def _endpoint(self) -> Endpoint:
        return Endpoint(
            self._public_url,
            self.model,
            self._key_env,
            self._key_set,
            secret=self._client.api_key,
        )

    async def _status_error(self, exc: openai.APIStatusError, request: ChatRequest) -> LLMError:
        status, body, endpoint = exc.status_code, exc.body, self._endpoint()
        if "json" in exc.response.headers.get("content-type", ""):
            error = body if isinstance(body, dict) else {"message": str(body or exc.message)}
        elif status == 404:  # a web server's own page: the path itself is not there
            error = {"message": describe_page(str(body or ""), endpoint)}
        else:
            return not_json_error(status, str(body or ""), endpoint)
        sent = request.sampling()
        if request.response_format is not None:
            sent["response_format"] = request.response_format
        served = await self._served_models() if status == 404 else None
        return status_error(status, error, endpoint, sent, served, _retry_after(exc))

    async def _served_models(self) -> list[str] | None:
        """The server's model names, to say which exist when one is not found; None if the
        server has no model list (then the URL itself is likely wrong)."""
        try:
            page = await self._client.models.list(timeout=5.0)
            return [str(model.id) for model in page.data]
        except Exception:  # only a hint for an error message: any failure means "no list"
            return None

    async def aclose(self) -> None:
        if self._direct is not None:
            await self._direct.aclose()
        await self._client.close()


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date; fall back to our own backoff


def _to_response(completion: Any) -> ChatResponse:
    """The first choice of a chat-completion JSON object (fields absent or null read as empty,
    as the SDK's models read them)."""
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise TransientLLMError("the endpoint answered with no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    usage = completion.get("usage") or {}
    return ChatResponse(
        text=message.get("content") or "",
        logprobs=_logprobs(choice),
        usage=Usage(
            prompt_tokens=usage.get("prompt_tokens") or 0,
            completion_tokens=usage.get("completion_tokens") or 0,
        ),
        model=completion.get("model") or "",
        finish_reason=choice.get("finish_reason"),
    )


def _logprobs(choice: dict[str, Any]) -> list[TokenLogprob] | None:
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    return [
        TokenLogprob(
            token=item["token"],
            logprob=item["logprob"],
            top={alt["token"]: alt["logprob"] for alt in item.get("top_logprobs") or []},
        )
        for item in content
    ]
