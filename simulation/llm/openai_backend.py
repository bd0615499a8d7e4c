"""Any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server, a LiteLLM proxy.

Chat completions are posted by `DirectPost` (simulation/llm/direct_post.py), straight over
aiohttp with the auth and organisation headers the SDK would send: the SDK's per-call
conversion of arguments, request and response objects took most of the client's CPU per call
(benchmarks/README.md). The reply is read from its JSON directly, and an error status is read
here as the SDK reads it (the body's `error` object), so messages and retry decisions are the
same on both paths. Behind a proxy from the environment, or with credentials or a query in the
base URL, the SDK's public API posts instead (`with_streaming_response`: its raw reply). The
SDK's own retries are off (`max_retries=0`): `LLMClient` is the one retry layer, so attempts
never multiply; the SDK's aiohttp transport is used because its default httpx one spends
several times more CPU per call under many requests in flight.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import openai

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
from personasim.simulation.llm.direct_post import DirectPost, StatusFailure
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
        self._direct: DirectPost | None = None  # the SDK's own path behind a proxy
        if DirectPost.usable(self.base_url):
            url = f"{self.base_url.rstrip('/')}/chat/completions"
            self._direct = DirectPost(url, _headers(self._client))
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
        except StatusFailure as failure:
            raise await self._status_error(failure, request) from failure
        except (openai.APIConnectionError, aiohttp.ClientError, OSError) as exc:
            raise connection_error(exc, self._endpoint(), timeout) from exc  # timeouts too
        if isinstance(completion, str):  # a body that is not JSON comes back as text
            raise not_json_error(200, completion, self._endpoint())
        return _to_response(completion)

    async def _post(self, body: dict[str, Any], timeout: float) -> Any:
        if self._direct is not None:
            return await self._direct.post(body, timeout)
        return await self._post_with_sdk(body, timeout)

    async def _post_with_sdk(self, body: dict[str, Any], timeout: float) -> Any:
        """The same request through the SDK's public API, read as `DirectPost` reads it."""
        create = self._client.chat.completions.with_streaming_response.create
        try:
            async with create(**body, timeout=timeout) as reply:
                is_json = reply.headers.get("content-type", "").split(";")[0].endswith("json")
                text = await reply.text()
        except openai.APIStatusError as exc:  # the SDK has read the body
            response = exc.response
            raise StatusFailure(exc.status_code, response.headers, response.text) from exc
        if is_json:
            try:
                return json.loads(text)
            except ValueError:
                pass
        return text

    def _endpoint(self) -> Endpoint:
        return Endpoint(
            self._public_url,
            self.model,
            self._key_env,
            self._key_set,
            secret=self._client.api_key,
        )

    async def _status_error(self, failure: StatusFailure, request: ChatRequest) -> LLMError:
        status, endpoint = failure.status, self._endpoint()
        body = _error_body(failure.text)
        if "json" in failure.headers.get("content-type", ""):
            message = f"Error code: {status}"
            error = body if isinstance(body, dict) else {"message": str(body or message)}
        elif status == 404:  # a web server's own page: the path itself is not there
            error = {"message": describe_page(str(body or ""), endpoint)}
        else:
            return not_json_error(status, str(body or ""), endpoint)
        sent = request.sampling()
        if request.response_format is not None:
            sent["response_format"] = request.response_format
        served = await self._served_models() if status == 404 else None
        return status_error(status, error, endpoint, sent, served, _retry_after(failure.headers))

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


def _headers(client: openai.AsyncOpenAI) -> dict[str, str]:
    """What `DirectPost` sends with every request: the key as bearer auth, the organisation
    and project the SDK read from its environment (`OPENAI_ORG_ID`, `OPENAI_PROJECT_ID`)."""
    try:
        ours = version("personasim")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        ours = "dev"
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"personasim/{ours} aiohttp/{aiohttp.__version__}",
        "Authorization": f"Bearer {client.api_key}",
    }
    if client.organization:
        headers["OpenAI-Organization"] = client.organization
    if client.project:
        headers["OpenAI-Project"] = client.project
    return headers


def _error_body(text: str) -> Any:
    """An error reply's body as the SDK reads it: its JSON's `error` member (or the whole
    JSON when it has none), else its text."""
    text = text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text
    return body.get("error", body) if isinstance(body, dict) else body


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
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
