"""Tests of the fake OpenAI server itself, over real loopback HTTP with the openai SDK.

Why: other tests and the benchmarks trust this fake to behave like the real API (wire format,
error statuses, Retry-After, concurrency); if the fake drifts, those tests prove nothing.
"""

from __future__ import annotations

import asyncio
import math
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest
from fake_openai import (
    DEFAULT_REPLY,
    HTML_502,
    MALFORMED_REPLY,
    NAMED_FAULTS,
    FakeOpenAIServer,
    HangFault,
    MalformedFault,
    RateLimitFault,
    RawFault,
    ServerErrorFault,
    StatusFault,
    parse_fault,
)

MESSAGES: list[Any] = [
    {"role": "system", "content": "You are Alice, a careful economist."},
    {"role": "user", "content": "How much do you contribute?"},
]
MESSAGE_TOP_P = "Unsupported parameter: 'top_p' is not supported with this model."
MESSAGE_WORDS = 6 + 5  # whitespace-separated words of both contents


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(latency=0.0) as srv:
        yield srv


def _client(server: FakeOpenAIServer, **kwargs: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, **kwargs)


async def _ask(client: openai.AsyncOpenAI, **kwargs: Any) -> Any:
    return await client.chat.completions.create(
        model=kwargs.pop("model", "gpt-test"), messages=MESSAGES, **kwargs
    )


def test_plain_completion_round_trips_with_usage(server: FakeOpenAIServer) -> None:
    async def scenario() -> Any:
        async with _client(server) as client:
            return await _ask(client, model="gpt-4o-mini")

    completion = asyncio.run(scenario())
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/v1")
    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    assert completion.model == "gpt-4o-mini"
    choice = completion.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == DEFAULT_REPLY
    assert choice.finish_reason == "stop"
    assert choice.logprobs is None
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == MESSAGE_WORDS
    assert completion.usage.completion_tokens == len(DEFAULT_REPLY.split())
    assert completion.usage.total_tokens == MESSAGE_WORDS + len(DEFAULT_REPLY.split())


def test_responder_sees_body_and_can_be_replaced(server: FakeOpenAIServer) -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> str:
        seen.append(body)
        return f"echo {body['messages'][-1]['content']}"

    server.responder = responder

    async def scenario() -> Any:
        async with _client(server) as client:
            return await _ask(client, temperature=0.3)

    completion = asyncio.run(scenario())
    assert completion.choices[0].message.content == "echo How much do you contribute?"
    assert seen[0]["temperature"] == 0.3
    assert "headers" not in seen[0]


def test_models_endpoint_lists_one_model(server: FakeOpenAIServer) -> None:
    async def scenario() -> list[str]:
        async with _client(server) as client:
            page = await client.models.list()
            return [m.id async for m in page]

    assert asyncio.run(scenario()) == [server.model]


def test_logprobs_with_requested_top_logprobs(server: FakeOpenAIServer) -> None:
    async def scenario() -> Any:
        async with _client(server) as client:
            return await _ask(client, logprobs=True, top_logprobs=3)

    completion = asyncio.run(scenario())
    entries = completion.choices[0].logprobs.content
    words = DEFAULT_REPLY.split()
    assert [e.token for e in entries] == [words[0]] + [" " + w for w in words[1:]]
    assert "".join(e.token for e in entries) == " ".join(words)
    for i, entry in enumerate(entries):
        assert entry.logprob == pytest.approx(-0.1 * (i % 5) - 0.01)
        assert entry.bytes == list(entry.token.encode())
        assert len(entry.top_logprobs) == 3
        assert entry.top_logprobs[0].token == entry.token
        assert entry.top_logprobs[0].logprob == entry.logprob
        alt_logprobs = [t.logprob for t in entry.top_logprobs]
        assert alt_logprobs == sorted(alt_logprobs, reverse=True)
        assert len(set(alt_logprobs)) == 3
        assert sum(math.exp(lp) for lp in alt_logprobs) <= 1.0


def test_logprobs_default_to_no_alternatives(server: FakeOpenAIServer) -> None:
    async def scenario() -> Any:
        async with _client(server) as client:
            return await _ask(client, logprobs=True)

    entries = asyncio.run(scenario()).choices[0].logprobs.content
    assert len(entries) == len(DEFAULT_REPLY.split())
    assert all(e.top_logprobs == [] for e in entries)


def test_rate_limit_fault_carries_retry_after_then_recovers(server: FakeOpenAIServer) -> None:
    server.enqueue_faults(RateLimitFault(retry_after="0.2"))

    async def scenario() -> tuple[openai.RateLimitError, Any]:
        async with _client(server) as client:
            with pytest.raises(openai.RateLimitError) as info:
                await _ask(client)
            return info.value, await _ask(client)

    error, completion = asyncio.run(scenario())
    assert error.status_code == 429
    assert error.response.headers["retry-after"] == "0.2"
    assert error.type == "rate_limit_error"
    assert error.code == "rate_limit_exceeded"
    assert completion.choices[0].message.content == DEFAULT_REPLY
    assert server.request_count == 2
    assert server.pending_faults == []


def test_server_error_fault(server: FakeOpenAIServer) -> None:
    server.enqueue_faults("500")

    async def scenario() -> openai.InternalServerError:
        async with _client(server) as client:
            with pytest.raises(openai.InternalServerError) as info:
                await _ask(client)
            return info.value

    error = asyncio.run(scenario())
    assert error.status_code == 500
    assert error.type == "server_error"


def test_status_faults_map_to_sdk_errors(server: FakeOpenAIServer) -> None:
    server.enqueue_faults("status:401", StatusFault(status=400, message="bad prompt"))

    async def scenario() -> tuple[Exception, Exception]:
        async with _client(server) as client:
            with pytest.raises(openai.AuthenticationError) as auth:
                await _ask(client)
            with pytest.raises(openai.BadRequestError) as bad:
                await _ask(client)
            return auth.value, bad.value

    auth, bad = asyncio.run(scenario())
    assert isinstance(auth, openai.AuthenticationError)
    assert auth.code == "invalid_api_key"
    assert isinstance(bad, openai.BadRequestError)
    assert bad.message.endswith("bad prompt")


def test_hang_fault_is_cut_by_client_timeout_and_server_keeps_serving(
    server: FakeOpenAIServer,
) -> None:
    server.enqueue_faults("hang")

    async def scenario() -> tuple[float, Any]:
        async with _client(server, timeout=0.3) as client:
            start = time.perf_counter()
            with pytest.raises(openai.APITimeoutError):
                await _ask(client)
            elapsed = time.perf_counter() - start
            return elapsed, await _ask(client)

    elapsed, completion = asyncio.run(scenario())
    assert 0.25 <= elapsed < 2.0
    assert completion.choices[0].message.content == DEFAULT_REPLY


def test_stop_returns_quickly_while_a_handler_hangs() -> None:
    server = FakeOpenAIServer().start()
    server.enqueue_faults(HangFault(seconds=60))

    async def scenario() -> float:
        async with _client(server) as client:
            pending = asyncio.create_task(_ask(client))
            while server.request_count == 0:
                await asyncio.sleep(0.01)
            start = time.perf_counter()
            server.stop()
            took = time.perf_counter() - start
            with pytest.raises(openai.APIConnectionError):
                await pending
            return took

    assert asyncio.run(scenario()) < 1.5


def test_malformed_faults_and_fifo_order(server: FakeOpenAIServer) -> None:
    server.enqueue_faults("malformed", MalformedFault("Maybe I'll pay, maybe not."), 429)

    async def scenario() -> list[str]:
        async with _client(server) as client:
            first = await _ask(client)
            second = await _ask(client)
            with pytest.raises(openai.RateLimitError):
                await _ask(client)
            fourth = await _ask(client)
            return [c.choices[0].message.content for c in (first, second, fourth)]

    assert asyncio.run(scenario()) == [MALFORMED_REPLY, "Maybe I'll pay, maybe not.", DEFAULT_REPLY]


def test_concurrent_requests_overlap_under_latency(server: FakeOpenAIServer) -> None:
    server.latency = 0.2

    async def scenario() -> tuple[float, list[Any]]:
        async with _client(server) as client:
            start = time.perf_counter()
            results = await asyncio.gather(*(_ask(client) for _ in range(32)))
            return time.perf_counter() - start, results

    elapsed, results = asyncio.run(scenario())
    assert 0.2 <= elapsed < 1.5  # serialised would take 32 * 0.2 = 6.4 s
    assert len({r.id for r in results}) == 32
    assert server.request_count == 32


def test_256_concurrent_requests_are_not_serialised(server: FakeOpenAIServer) -> None:
    """Benchmarks fan out hundreds of agents; raw aiohttp keeps client overhead out of it."""
    server.latency = 0.3
    url = server.base_url + "/chat/completions"
    payload = {"model": "m", "messages": MESSAGES}

    async def scenario() -> tuple[float, list[int]]:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one() -> int:
                async with session.post(url, json=payload) as resp:
                    await resp.json()
                    return resp.status

            start = time.perf_counter()
            statuses = await asyncio.gather(*(one() for _ in range(256)))
            return time.perf_counter() - start, statuses

    elapsed, statuses = asyncio.run(scenario())
    assert statuses == [200] * 256
    assert 0.3 <= elapsed < 2.0  # serialised would take 256 * 0.3 = 76.8 s
    assert server.request_count == 256


def test_requests_recorded_with_headers(server: FakeOpenAIServer) -> None:
    async def scenario() -> None:
        async with _client(server) as client:
            await _ask(client, model="first")
            await _ask(client, model="second")

    asyncio.run(scenario())
    recorded = server.requests
    assert server.request_count == 2
    assert [r["model"] for r in recorded] == ["first", "second"]
    assert recorded[0]["messages"] == MESSAGES
    headers = {k.lower(): v for k, v in recorded[0]["headers"].items()}
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("rate_limit", RateLimitFault()),
        ("429:0.2", RateLimitFault(retry_after="0.2")),
        (429, RateLimitFault()),
        ("500", ServerErrorFault()),
        ("server_error", ServerErrorFault()),
        (503, ServerErrorFault(status=503)),
        ("hang", HangFault()),
        ("hang:5", HangFault(seconds=5.0)),
        ("malformed", MalformedFault()),
        ("malformed:no idea", MalformedFault(content="no idea")),
        ("status:401", StatusFault(status=401)),
        (400, StatusFault(status=400)),
        ("html", RawFault()),
        ("html:502", RawFault(status=502, body=HTML_502)),
        (
            "bad_param:top_p",
            StatusFault(400, MESSAGE_TOP_P, code="unsupported_parameter", param="top_p"),
        ),
        ("context_length", NAMED_FAULTS["context_length"]),
    ],
)
def test_parse_fault_specs(spec: Any, expected: Any) -> None:
    assert parse_fault(spec) == expected


def test_fail_always_until_cleared_and_after_queued_faults(server: FakeOpenAIServer) -> None:
    server.enqueue_faults("429:0")
    server.fail_always("model_not_found")

    async def scenario() -> list[Any]:
        outcomes: list[Any] = []
        async with _client(server) as client:
            for _ in range(3):
                try:
                    outcomes.append(await _ask(client, model="ghost"))
                except openai.APIStatusError as exc:
                    outcomes.append(exc)
            server.fail_always(None)
            outcomes.append(await _ask(client))
        return outcomes

    first, second, third, last = asyncio.run(scenario())
    assert isinstance(first, openai.RateLimitError)
    for exc in (second, third):
        assert isinstance(exc, openai.NotFoundError) and exc.code == "model_not_found"
        assert "The model `ghost` does not exist" in exc.message  # filled from the request
    assert last.choices[0].message.content == DEFAULT_REPLY


def test_html_pages_are_not_json(server: FakeOpenAIServer) -> None:
    server.enqueue_faults("html", "html:502")

    async def scenario() -> tuple[Any, Any]:
        async with _client(server) as client:
            page = await _ask(client)
            with pytest.raises(openai.InternalServerError) as info:
                await _ask(client)
            return page, info.value

    page, error = asyncio.run(scenario())
    assert isinstance(page, str) and page.startswith("<!DOCTYPE html>")  # the SDK's fallback
    assert error.status_code == 502 and "502 Bad Gateway" in str(error.body)
    assert error.response.headers["content-type"].startswith("text/html")


def test_parse_fault_rejects_unknown_specs() -> None:
    with pytest.raises(ValueError):
        parse_fault("explode")
    with pytest.raises(TypeError):
        parse_fault(1.5)  # type: ignore[arg-type]


def test_standalone_process_prints_url_serves_and_exits_on_sigterm() -> None:
    script = Path(__file__).with_name("fake_openai.py")
    # No PYTHONUNBUFFERED: the URL line must arrive because the server flushes it.
    with subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--latency", "0.01", "--reply", "pong"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            base_url = proc.stdout.readline().strip()
            assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")

            async def scenario() -> str | None:
                async with openai.AsyncOpenAI(
                    base_url=base_url, api_key="sk-test", max_retries=0
                ) as client:
                    return (await _ask(client)).choices[0].message.content

            assert asyncio.run(scenario()) == "pong"
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=5) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_in_flight_cap_rejects_and_counts_the_excess() -> None:
    """Benchmarks compare clients against an endpoint that caps concurrent requests."""

    async def scenario(server: FakeOpenAIServer) -> tuple[list[Any], dict[str, Any]]:
        async with _client(server) as client:
            results = await asyncio.gather(
                *(_ask(client) for _ in range(5)), return_exceptions=True
            )
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{server.base_url}/_fake/stats") as page,
        ):
            return results, await page.json()

    with FakeOpenAIServer(latency=0.3, max_in_flight=2, record=False) as server:
        results, stats = asyncio.run(scenario(server))
        rejected = [r for r in results if isinstance(r, openai.RateLimitError)]
        assert len(rejected) == 3 and len(results) - len(rejected) == 2
        assert rejected[0].response.headers["retry-after"] == "1"
        assert (server.rejected, server.peak_in_flight, server.request_count) == (3, 2, 5)
        assert stats == {"requests": 5, "rejected": 3, "peak_in_flight": 2}
        assert server.requests == []  # record=False keeps counts only


def test_a_fault_mix_draws_seeded_faults_per_request(server: FakeOpenAIServer) -> None:
    """Each request draws a fault with its probability; the same seed gives the same draws."""

    async def outcomes() -> list[str]:
        seen = []
        async with _client(server) as client:
            for _ in range(200):
                try:
                    reply = await _ask(client)
                    seen.append(reply.choices[0].message.content)
                except openai.APIStatusError as exc:
                    seen.append(str(exc.status_code))
        return seen

    mix = {"429:0": 0.2, "500": 0.1, "malformed": 0.1}
    server.set_fault_mix(mix, seed=3)
    first = asyncio.run(outcomes())
    served = dict(server.faults_served)
    server.set_fault_mix(mix, seed=3)
    assert asyncio.run(outcomes()) == first
    counts = {kind: first.count(kind) for kind in ("429", "500", MALFORMED_REPLY, DEFAULT_REPLY)}
    assert served == {
        "429:0": counts["429"],
        "500": counts["500"],
        "malformed": counts[MALFORMED_REPLY],
    }
    assert sum(counts.values()) == 200
    assert 20 <= counts["429"] <= 60 and 5 <= counts["500"] <= 35  # 40 and 20 expected
    server.set_fault_mix(None)
    assert asyncio.run(outcomes()).count(DEFAULT_REPLY) == 200
    with pytest.raises(ValueError, match="sum to"):
        server.set_fault_mix({"500": 0.7, "429": 0.5})
