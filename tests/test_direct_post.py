"""`DirectPost` (simulation/llm/direct_post.py): the OpenAI backend's requests sent straight over
aiohttp must carry what the SDK's requests carry — same body, same auth and organisation
headers — and every failure must read as it reads through the SDK's public API, which the
backend uses where only the SDK knows what to do (a proxy from the environment)."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterator

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer, HangFault, RawFault, StatusFault

from personasim.simulation import ChatRequest, LLMError, Message, OpenAIBackend

# Set per connection by the HTTP library, not by the SDK (aiohttp and httpx2 differ here).
TRANSPORT_HEADERS = {"host", "content-length", "accept-encoding", "connection"}
# What the SDK says about itself; the direct path names personasim instead.
SDK_ONLY = ("x-stainless-", "user-agent")

REQUEST = ChatRequest(
    messages=(Message(role="user", content="Wie viel schickst du? Ünïcödé ✓"),),
    temperature=0.05,
    top_p=1.0,
    max_tokens=64,
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-direct-post-test")
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    with FakeOpenAIServer(responder=trustor_reply) as fake:
        yield fake


def both_paths(base_url: str, monkeypatch: pytest.MonkeyPatch) -> list[OpenAIBackend]:
    """A backend on the direct path, and one that an environment naming proxy rules (here
    only hosts that bypass a proxy) keeps on the SDK's path."""
    direct = OpenAIBackend("fake-model", base_url=base_url)
    monkeypatch.setenv("NO_PROXY", "bypass.invalid")
    via_sdk = OpenAIBackend("fake-model", base_url=base_url)
    monkeypatch.delenv("NO_PROXY")
    assert direct._direct is not None and via_sdk._direct is None
    return [direct, via_sdk]


def outcomes(backends: list[OpenAIBackend], timeout: float = 7.0) -> list[object]:
    """Each backend's answer text, or its error's kind, message and Retry-After."""

    async def ask(backend: OpenAIBackend) -> object:
        try:
            return (await backend.complete(REQUEST, timeout=timeout)).text
        except LLMError as exc:
            return type(exc).__name__, str(exc), getattr(exc, "retry_after", None)
        finally:
            await backend.aclose()

    async def ask_all() -> list[object]:
        return [await ask(backend) for backend in backends]

    return asyncio.run(ask_all())


def sent_headers(request: dict) -> dict[str, str]:
    headers = {k.lower(): v for k, v in request["headers"].items()}
    return {k: v for k, v in headers.items() if k not in TRANSPORT_HEADERS}


def test_direct_requests_carry_what_the_sdks_requests_carry(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-direct")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-direct")
    direct_text, sdk_text = outcomes(both_paths(server.base_url, monkeypatch))
    assert direct_text == sdk_text != ""
    direct, via_sdk = server.requests
    direct_headers, sdk_headers = sent_headers(direct), sent_headers(via_sdk)
    assert {k: v for k, v in direct.items() if k != "headers"} == {
        k: v for k, v in via_sdk.items() if k != "headers"
    }  # the JSON body
    assert direct_headers["authorization"] == "Bearer sk-direct-post-test"
    assert direct_headers["openai-organization"] == "org-direct"
    assert direct_headers["openai-project"] == "proj-direct"
    assert direct_headers["user-agent"].startswith("personasim/")
    for name, value in direct_headers.items():
        if name != "user-agent":
            assert sdk_headers[name] == value, name
    assert all(name.startswith(SDK_ONLY) for name in set(sdk_headers) - set(direct_headers))


FAILURES = [
    "rate_limit:0.2",
    "server_error:503",
    "status:401",
    "status:403",
    "model_not_found",
    "context_length",
    "context_size",
    "bad_param:logit_bias",
    "response_format:llamacpp",
    "html",
    "html:502",
    "malformed",
    StatusFault(409),
    RawFault(404, "<html><title>Not Found</title></html>"),
    RawFault(500, '{"error": "a plain string"}', "application/json"),
    RawFault(400, '["not", "an", "object"]', "application/json"),
    RawFault(502, "", "application/json"),
    RawFault(503, "upstream connect error", "text/plain"),
    RawFault(200, '{"choices": [', "application/json"),
    RawFault(200, '{"choices": []}', "application/json"),
]


@pytest.mark.parametrize("fault", FAILURES, ids=str)
def test_every_failure_reads_the_same_on_both_paths(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, fault: object
) -> None:
    server.enqueue_faults(fault, fault)
    direct, via_sdk = outcomes(both_paths(server.base_url, monkeypatch))
    assert direct == via_sdk
    assert server.pending_faults == []


def test_a_hung_request_times_out_the_same_on_both_paths(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.enqueue_faults(HangFault(5.0), HangFault(5.0))
    direct, via_sdk = outcomes(both_paths(server.base_url, monkeypatch), timeout=0.3)
    assert direct == via_sdk
    assert direct[0] == "TransientLLMError" and "no answer within 0.3s" in direct[1]


def test_a_refused_connection_is_permanent_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    direct, via_sdk = outcomes(both_paths(f"http://127.0.0.1:{port}/v1", monkeypatch))
    assert direct == via_sdk
    assert direct[0] == "PermanentLLMError" and "(refused)" in direct[1]


def test_a_proxy_or_credentials_in_the_url_keep_the_sdks_path(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert OpenAIBackend("fake-model", base_url=server.base_url)._direct is not None
    with_credentials = server.base_url.replace("http://", "http://user:pw@")
    assert OpenAIBackend("fake-model", base_url=with_credentials)._direct is None
    assert OpenAIBackend("fake-model", base_url=server.base_url + "?v=1")._direct is None
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert OpenAIBackend("fake-model", base_url=server.base_url)._direct is None
