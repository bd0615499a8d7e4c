"""What an OpenAI-compatible endpoint's failure means, and what the user should do next.

Servers say the same thing in different words (OpenAI, vLLM, llama.cpp, Ollama, a proxy's HTML
page); these functions turn each into one line naming the cause and the next step, and decide
whether retrying can help. A failure that will happen again on every attempt (a refused
connection, a rejected key, an unknown model, a prompt longer than the context) is permanent,
so the run stops at once instead of after minutes of backoff.
"""

from __future__ import annotations

import re
import socket
import ssl
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from personasim.simulation.llm.chat import (
    LLMError,
    PermanentLLMError,
    PromptTooLongError,
    TransientLLMError,
)

__all__ = [
    "Endpoint",
    "connection_error",
    "describe_page",
    "error_causes",
    "not_json_error",
    "status_error",
    "timeout_error",
]

BASE_URL_HINT = "is --base-url the OpenAI-compatible API's address (it often ends in /v1)?"
_CONTEXT = re.compile(
    r"context[ _](length|size|window)|maximum context|too many tokens|prompt is too long"
    r"|input is too long|exceed_context",
    re.IGNORECASE,
)
_KEY_LIKE = re.compile(r"\bsk-[\w*.-]*[\w*]")  # OpenAI echoes a masked key: not even that is shown
_TITLE = re.compile(r"<title>\s*(.*?)\s*</title>", re.IGNORECASE | re.DOTALL)
_MAX_DETAIL = 200
_TAG = re.compile(r"<[^>]*>")
_PROXY = re.compile(
    r"\b(bad gateway|gateway time-?out|proxy|upstream|nginx|cloudflare|envoy|haproxy|traefik"
    r"|caddy|varnish)\b",
    re.IGNORECASE,
)
"""Words of a page that a proxy or gateway wrote (nginx's 502, Cloudflare's 52x...)."""


@dataclass(frozen=True)
class Endpoint:
    """What an error message may name: never the key itself, only where it comes from."""

    url: str
    model: str
    key_env: str
    key_set: bool
    secret: str = field(default="", repr=False)

    def clean(self, text: Any) -> str:
        """A server's message on one short line, with the key (if echoed back) blanked out."""
        line = " ".join(str(text).split())
        if self.secret and len(self.secret) >= 4:
            line = line.replace(self.secret, "***")
        line = _KEY_LIKE.sub("sk-***", line)
        return line if len(line) <= _MAX_DETAIL else line[: _MAX_DETAIL - 1] + "…"


def connection_error(exc: BaseException, endpoint: Endpoint, timeout: float) -> LLMError:
    """No HTTP answer: refused, unknown host and TLS mismatch are permanent; timeouts are not."""
    causes = list(error_causes(exc))
    url = endpoint.url
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return PermanentLLMError(f"cannot connect to {url} — is the server running? (refused)")
    if any(isinstance(c, socket.gaierror) for c in causes):
        return PermanentLLMError(f"cannot connect to {url}: host not found — check --base-url")
    if tls := next((c for c in causes if isinstance(c, ssl.SSLError)), None):
        return PermanentLLMError(
            f"cannot connect to {url}: TLS failed ({endpoint.clean(tls)}) — if the server speaks "
            "plain HTTP, use http:// in --base-url"
        )
    if any(isinstance(c, TimeoutError) for c in causes) or "timed out" in str(exc).lower():
        return timeout_error(timeout)
    return TransientLLMError(f"connection to {url} failed: {endpoint.clean(_innermost(exc))}")


def timeout_error(timeout: float) -> TransientLLMError:
    return TransientLLMError(
        f"no answer within {timeout:g}s — the server may be overloaded or the model slow: "
        "lower --concurrency or raise --timeout"
    )


def not_json_error(status: int, body: str, endpoint: Endpoint) -> LLMError:
    """A page instead of the API's JSON: a wrong URL (200, 4xx, 501), a server that failed
    (5xx), or a proxy whose upstream is down (a 5xx page that names a gateway or proxy)."""
    what = describe_page(body, endpoint)
    if (status >= 500 and status != 501) or status == 429:
        return TransientLLMError(
            f"HTTP {status} with {what} instead of the API's JSON — {_cause(status, body)}"
        )
    implemented = " (the server does not implement this request)" if status == 501 else ""
    return PermanentLLMError(
        f"{endpoint.url} answered HTTP {status} with {what} instead of the API's JSON"
        f"{implemented} — {BASE_URL_HINT}"
    )


def _cause(status: int, body: str) -> str:
    """What a retryable page says went wrong; a proxy only when the page names one."""
    if status == 429:
        return "the server is limiting requests: lower --concurrency or set --rpm"
    if _PROXY.search(_TAG.sub(" ", body)):
        return (
            "a proxy in front of the model server could not reach it: is the model server running?"
        )
    return "the server failed and its page says no more: see the server's log"


def status_error(
    status: int,
    error: dict[str, Any],
    endpoint: Endpoint,
    sent: dict[str, Any],
    served: Sequence[str] | None = None,
    retry_after: float | None = None,
) -> LLMError:
    """An HTTP error with the API's error object (`message`, `type`, `param`, `code`).

    `sent` holds the parameters the request carried (to name the one a server rejects);
    `served` the models the server lists, when a 404 made us ask.
    """
    message = endpoint.clean(error.get("message") or f"HTTP {status}")
    detail = f"HTTP {status}: {message}"
    if status in (401, 403):
        return _key_refused(status, endpoint, detail)
    if status == 404:
        return _not_found(endpoint, detail, served)
    if _is_context_overflow(error, message):
        return PromptTooLongError(
            f"the prompt is too long for the context of model {endpoint.model!r} ({detail}) — "
            "use a model with a longer context, start the server with a larger one (llama.cpp "
            "-c/--ctx-size, vLLM --max-model-len), or run fewer rounds"
        )
    if sent.get("response_format") and (
        error.get("param") == "response_format" or "response_format" in message
    ):
        return _format_refused(endpoint, detail, sent["response_format"])
    if status in (408, 409, 429) or status >= 500:
        return TransientLLMError(detail, retry_after)  # the client names the endpoint
    if param := error.get("param") or _named_param(message, sent):
        return PermanentLLMError(
            f"{endpoint.url} rejected the parameter {param!r} for model {endpoint.model!r} "
            f"({detail}){_param_hint(param)}"
        )
    return PermanentLLMError(f"{endpoint.url} rejected the request ({detail})")


def _key_refused(status: int, endpoint: Endpoint, detail: str) -> PermanentLLMError:
    if not endpoint.key_set:
        return PermanentLLMError(
            f"{endpoint.url} wants an API key ({detail}) — set {endpoint.key_env}"
        )
    refused = "refused the API key" if status == 401 else "does not let the API key use"
    target = "" if status == 401 else f" model {endpoint.model!r}"
    return PermanentLLMError(
        f"{endpoint.url} {refused}{target} ({detail}) — check the key in {endpoint.key_env}"
    )


def _not_found(endpoint: Endpoint, detail: str, served: Sequence[str] | None) -> PermanentLLMError:
    if served is None:
        return PermanentLLMError(f"{endpoint.url}: not found ({detail}) — {BASE_URL_HINT}")
    listed = ", ".join(served[:10]) + (f", … ({len(served)})" if len(served) > 10 else "")
    has = f"the server has: {listed}" if served else "the server lists no models"
    return PermanentLLMError(
        f"model {endpoint.model!r} not found at {endpoint.url} ({detail}) — check the model "
        f"name; {has} (GET {endpoint.url}/models)"
    )


def _format_refused(endpoint: Endpoint, detail: str, sent: Any) -> PermanentLLMError:
    kind = sent.get("type") if isinstance(sent, dict) else sent
    other = (
        "--response-format json_schema (the form OpenAI and vLLM take)"
        if kind == "json_object"
        else "--response-format json_object (the form llama.cpp's server takes)"
    )
    return PermanentLLMError(
        f"{endpoint.url} does not accept response_format {kind!r} ({detail}) — try {other}, "
        "or --response-format text"
    )


def _is_context_overflow(error: dict[str, Any], message: str) -> bool:
    codes = {str(error.get("code")), str(error.get("type"))}
    return bool(codes & {"context_length_exceeded", "exceed_context_size_error"}) or bool(
        _CONTEXT.search(message)
    )


def _named_param(message: str, sent: dict[str, Any]) -> str | None:
    """The one parameter of the request that the server's message names, if exactly one."""
    named = [name for name in sent if re.search(rf"\b{re.escape(name)}\b", message)]
    return named[0] if len(named) == 1 else None


def _param_hint(param: str) -> str:
    if "logprobs" in param:
        return (
            " — this scenario needs token logprobs: use a server and model that return them "
            "(OpenAI chat models, vLLM, llama.cpp)"
        )
    return " — this server or model does not take it; use one that does"


def describe_page(body: str, endpoint: Endpoint) -> str:
    if title := _TITLE.search(body):
        return f"an HTML page ({endpoint.clean(title.group(1))!r})"
    if "<html" in body.lower() or "<!doctype" in body.lower():
        return "an HTML page"
    text = endpoint.clean(body)
    return f"the text {text[:80]!r}" if text else "an empty body"


def error_causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what caused it (`raise ... from`, or the error being handled), and so on."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _innermost(exc: BaseException) -> BaseException:
    return list(error_causes(exc))[-1]
