"""`DirectPost` (simulation/llm/direct_post.py): the OpenAI backend's requests sent straight over
aiohttp must be the SDK's requests — same body, same headers — and fall back to the SDK's own
path where only it knows what to do (a proxy from the environment)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer

from personasim.simulation import ChatRequest, Message, OpenAIBackend

# Set per connection by the HTTP library, not by the SDK (aiohttp and httpx2 differ here).
TRANSPORT_HEADERS = {"host", "content-length", "accept-encoding", "connection"}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-direct-post-test")
    with FakeOpenAIServer(responder=trustor_reply) as fake:
        yield fake


def ask_both_ways(base_url: str) -> tuple[str, str]:
    """One request on the direct path, then the same on the SDK's path."""
    request = ChatRequest(
        messages=(Message(role="user", content="Wie viel schickst du? Ünïcödé ✓"),),
        temperature=0.05,
        top_p=1.0,
        max_tokens=64,
    )

    async def ask() -> tuple[str, str]:
        backend = OpenAIBackend("fake-model", base_url=base_url)
        direct_post = backend._direct
        assert direct_post is not None
        try:
            direct = await backend.complete(request, timeout=7.0)
            backend._direct = None
            via_sdk = await backend.complete(request, timeout=7.0)
        finally:
            await backend.aclose()
            await direct_post.aclose()
        return direct.text, via_sdk.text

    return asyncio.run(ask())


def test_direct_requests_are_the_sdks_requests(server: FakeOpenAIServer) -> None:
    direct_text, sdk_text = ask_both_ways(server.base_url)
    assert direct_text == sdk_text != ""
    direct, via_sdk = server.requests
    headers = [
        {k.lower(): v for k, v in r.pop("headers").items() if k.lower() not in TRANSPORT_HEADERS}
        for r in (direct, via_sdk)
    ]
    assert direct == via_sdk  # the JSON body
    assert headers[0] == headers[1]
    assert headers[0]["authorization"] == "Bearer sk-direct-post-test"
    assert headers[0]["x-stainless-read-timeout"] == "7.0"


def test_a_proxy_or_credentials_in_the_url_keep_the_sdks_path(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert OpenAIBackend("fake-model", base_url=server.base_url)._direct is not None
    with_credentials = server.base_url.replace("http://", "http://user:pw@")
    assert OpenAIBackend("fake-model", base_url=with_credentials)._direct is None
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert OpenAIBackend("fake-model", base_url=server.base_url)._direct is None
