"""What a user sees when a real endpoint fails: one line naming the cause and the next step.

Each failure is produced for real: a closed port, an unresolvable host, the fake server's
faults (HTML pages, 401/403, 404, context overflow, rejected parameters) over loopback HTTP.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer, StatusFault

import personasim.simulation.llm.client as llm_client
from personasim.simulation import (
    ChatRequest,
    LLMClient,
    Message,
    OpenAIBackend,
    PermanentLLMError,
    RetryPolicy,
    TransientLLMError,
)
from personasim.simulation.cli.main import main

SECRET = "sk-personasim-test-SECRET-7f3a9c"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    # The CLI's backoff is seconds; these tests retry in milliseconds.
    fast = functools.partial(RetryPolicy, initial_backoff=0.01, max_backoff=0.02, jitter=0)
    monkeypatch.setattr(llm_client, "RetryPolicy", fast)  # what the CLI builds its policy from
    with FakeOpenAIServer(responder=trustor_reply) as fake:
        yield fake


def run_cli(base_url: str, out: Path, *more: str) -> int:
    return main(
        [
            "run",
            "trust-population",
            "--n-personas",
            "1",
            "--model",
            "openai:fake-model",
            "--base-url",
            base_url,
            "--out",
            str(out),
            "--no-progress",
            "--no-cache",
            "--max-attempts",
            "3",
            "--timeout",
            "2",
            *more,
        ]
    )


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: model call failed: ")
    assert SECRET not in err
    return lines[0]


def assert_interrupted(out: Path, line: str) -> dict:
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert not (out / "metrics.json").exists()
    assert f"{out} is marked interrupted (`personasim retry {out}` continues)" in line
    return manifest


def closed_port_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_refused_connection_fails_at_once_without_retries(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    url = closed_port_url()
    started = time.perf_counter()
    assert run_cli(url, tmp_path / "r", "--max-attempts", "5") == 1
    assert time.perf_counter() - started < 5  # was ~20 s of backoff reported as a timeout
    line = one_error_line(capsys)
    assert f"cannot connect to {url} — is the server running?" in line
    assert "timed out" not in line
    manifest = assert_interrupted(tmp_path / "r", line)
    assert manifest["llm"]["failures"] == 1 and manifest["llm"]["calls"] == 1  # one attempt


def test_unknown_host_names_base_url(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert run_cli("http://no-such-host.invalid/v1", tmp_path / "r") == 1
    line = one_error_line(capsys)
    assert "cannot connect to http://no-such-host.invalid/v1: host not found" in line
    assert "check --base-url" in line


def test_https_to_a_plain_http_server_says_use_http(server, tmp_path, capsys) -> None:
    url = server.base_url.replace("http://", "https://")
    assert run_cli(url, tmp_path / "r") == 1
    line = one_error_line(capsys)
    assert f"cannot connect to {url}: TLS failed" in line and "use http://" in line
    assert server.request_count == 0


def test_a_timeout_stays_transient_and_says_what_to_change(server, tmp_path, capsys) -> None:
    server.fail_always("hang")
    assert run_cli(server.base_url, tmp_path / "r", "--timeout", "0.3") == 1
    line = one_error_line(capsys)
    assert "gave up after 3 attempt(s): no answer within 0.3s" in line
    assert "lower --concurrency or raise --timeout" in line
    assert server.request_count == 3


@pytest.mark.parametrize(
    ("fault", "expected", "requests"),
    [
        # a web UI (or any HTML page) at the base URL: retrying cannot help
        (
            "html",
            [
                "answered HTTP 200 with an HTML page ('Open WebUI') instead of the API's JSON",
                "is --base-url the OpenAI-compatible API's address (it often ends in /v1)?",
            ],
            1,
        ),
        # a proxy whose upstream is down: transient, retried, then said plainly
        (
            "html:502",
            [
                "gave up after 3 attempt(s): HTTP 502 with an HTML page ('502 Bad Gateway')",
                "a proxy in front of the model server",
                "is the model server running?",
            ],
            3,
        ),
        # a framework's own 501 page: the server does not implement the request, no proxy
        (
            "html:501",
            [
                "answered HTTP 501 with an HTML page ('501 Not Implemented')",
                "the server does not implement this request",
                "is --base-url the OpenAI-compatible API's address",
            ],
            1,
        ),
        # a server's own 500 page: retried, then the server (not a proxy) is named
        (
            "html:500",
            [
                "gave up after 3 attempt(s): HTTP 500 with an HTML page "
                "('500 Internal Server Error')",
                "the server failed and its page says no more: see the server's log",
            ],
            3,
        ),
        (401, ["refused the API key (HTTP 401", "check the key in OPENAI_API_KEY"], 1),
        (
            403,
            [
                "does not let the API key use model 'fake-model' (HTTP 403",
                "check the key in OPENAI_API_KEY",
            ],
            1,
        ),
        (
            "model_not_found",
            [
                "model 'fake-model' not found at",
                "check the model name",
                "the server has: fake-model",
                "/v1/models",
            ],
            1,
        ),
        (
            "context_length",
            [
                "the prompt is too long for the context of model 'fake-model'",
                "maximum context length is 2048 tokens",
                "a model with a longer context",
                "--ctx-size",
                "fewer rounds",
            ],
            1,
        ),
        (
            "context_size",
            [
                "the prompt is too long for the context",
                "exceeds the available context size",
                "--ctx-size",
            ],
            1,
        ),
        (
            "bad_param:temperature",
            [
                "rejected the parameter 'temperature' for model 'fake-model'",
                "Unsupported parameter",
            ],
            1,
        ),
        (
            "bad_param:top_logprobs",
            ["rejected the parameter 'top_logprobs'", "needs token logprobs"],
            1,
        ),
        (
            StatusFault(400, "temperature must be at most 2, got 0.05"),  # no error.param
            ["rejected the parameter 'temperature'"],
            1,
        ),
    ],
)
def test_endpoint_failures_are_one_line_with_the_next_step(
    server, tmp_path, capsys, fault, expected, requests
) -> None:
    server.fail_always(fault)
    assert run_cli(server.base_url, tmp_path / "r") == 1
    line = one_error_line(capsys)
    for fragment in expected:
        assert fragment in line
    if fault in ("html:501", "html:500"):  # a page that names no proxy is not blamed on one
        assert "proxy" not in line
    assert server.request_count == requests  # permanent: one attempt; transient: all of them
    manifest = assert_interrupted(tmp_path / "r", line)
    assert SECRET not in json.dumps(manifest)


def test_model_not_found_on_a_server_with_other_models(tmp_path, capsys, monkeypatch) -> None:
    """A bare 404 on a server whose /models lists others: the real names are shown."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIServer(model="llama3.1:8b") as fake:
        fake.fail_always(404)
        assert run_cli(fake.base_url, tmp_path / "r") == 1
    line = one_error_line(capsys)
    assert "model 'fake-model' not found" in line and "the server has: llama3.1:8b" in line


def test_base_url_without_the_api_path(server, tmp_path, capsys) -> None:
    """No /v1: the server 404s both the request and its model list, so the URL is wrong."""
    url = server.base_url.removesuffix("/v1")
    assert run_cli(url, tmp_path / "r") == 1
    line = one_error_line(capsys)
    assert f"{url}: not found (HTTP 404" in line
    assert "(it often ends in /v1)?" in line


def test_no_key_set_says_which_variable(server, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    server.fail_always(401)
    assert run_cli(server.base_url, tmp_path / "r") == 1
    assert "wants an API key (HTTP 401" in one_error_line(capsys)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer no-key"


def test_a_key_echoed_by_the_server_is_never_printed(server, tmp_path, capsys) -> None:
    masked = SECRET[:8] + "*" * 10 + SECRET[-4:]
    server.fail_always(StatusFault(401, f"Incorrect API key provided: {masked} and {SECRET}."))
    assert run_cli(server.base_url, tmp_path / "r") == 1
    line = one_error_line(capsys)
    assert masked not in line and SECRET[-4:] not in line
    assert "Incorrect API key provided: sk-*** and ***." in line
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert masked not in manifest["error"] and SECRET not in manifest["error"]


# --- response_format: sent only with a structured format, so asked here through the client ---


def ask_with_format(server: FakeOpenAIServer, kind: str) -> BaseException:
    form = {"type": kind, "json_schema": {"name": "answer", "schema": {"type": "object"}}}
    if kind == "json_object":
        form = {"type": kind, "schema": {"type": "object"}}
    request = ChatRequest(messages=(Message(role="user", content="hi"),), response_format=form)
    fast = RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02, jitter=0)

    async def ask() -> None:
        client = LLMClient(OpenAIBackend("fake-model", base_url=server.base_url), retry=fast)
        try:
            await client.complete(request)
        finally:
            await client.aclose()

    with pytest.raises(PermanentLLMError) as info:
        asyncio.run(ask())
    return info.value


def test_llamacpp_rejecting_json_schema_suggests_json_object(server) -> None:
    server.fail_always("response_format:llamacpp")  # llama.cpp answers this with HTTP 500
    error = ask_with_format(server, "json_schema")
    assert "does not accept response_format 'json_schema'" in str(error)
    assert "try --response-format json_object (the form llama.cpp's server takes)" in str(error)
    assert server.request_count == 1  # a 500 that will never succeed is not retried


def test_openai_rejecting_json_object_suggests_json_schema(server) -> None:
    server.fail_always("response_format")
    error = ask_with_format(server, "json_object")
    assert "does not accept response_format 'json_object'" in str(error)
    assert "of type 'json_object' is not supported" in str(error)  # the server's own words
    assert "try --response-format json_schema (the form OpenAI and vLLM take)" in str(error)


def test_an_ordinary_500_is_still_retried(server) -> None:
    server.enqueue_faults("500", "500")

    async def ask() -> str:
        fast = RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02, jitter=0)
        client = LLMClient(OpenAIBackend("fake-model", base_url=server.base_url), retry=fast)
        try:
            request = ChatRequest(messages=(Message(role="user", content="hi"),))
            return (await client.complete(request)).text
        finally:
            await client.aclose()

    assert "Finally, I will give" in asyncio.run(ask())
    assert server.request_count == 3


def test_transient_and_permanent_kinds_of_backend_errors(server) -> None:
    """The backend alone (no client): which failures it calls worth retrying."""

    async def once(url: str) -> BaseException:
        backend = OpenAIBackend("fake-model", base_url=url)
        request = ChatRequest(messages=(Message(role="user", content="hi"),))
        try:
            await backend.complete(request, timeout=2)
        except Exception as exc:  # the test inspects it
            return exc
        finally:
            await backend.aclose()
        raise AssertionError("no error")

    server.fail_always("html:502")
    assert isinstance(asyncio.run(once(server.base_url)), TransientLLMError)
    server.fail_always("context_size")
    assert isinstance(asyncio.run(once(server.base_url)), PermanentLLMError)
    assert isinstance(asyncio.run(once(closed_port_url())), PermanentLLMError)


def test_the_endpoint_description_never_shows_the_key() -> None:
    from personasim.simulation.llm.endpoint_errors import Endpoint

    endpoint = Endpoint("http://h/v1", "m", "OPENAI_API_KEY", True, secret=SECRET)
    assert SECRET not in repr(endpoint)
    assert endpoint.clean(f"bad key {SECRET}\n\tsee docs") == "bad key *** see docs"
