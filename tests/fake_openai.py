"""Fake OpenAI-compatible chat-completions server for tests and benchmarks.

Why: the simulation talks to an LLM through the ``openai`` SDK over HTTP.  Testing the real
client stack (retries, timeouts, rate limiting, concurrency, parsing) needs a server that speaks
the same wire format, answers deterministically, never leaves the machine and can be told to
misbehave on cue.  This server binds to 127.0.0.1 only, on a free port, and runs its own
asyncio event loop (aiohttp.web) in a background daemon thread, so it works from both sync and
async tests.

Usage::

    with FakeOpenAIServer(latency=0.0) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        server.enqueue_faults(RateLimitFault(retry_after="0.2"), "malformed")
        ...
        assert server.request_count == 3

Endpoints: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Replies come from ``responder(body) -> str`` (the parsed request JSON); the default answers
``DEFAULT_REPLY``.  With ``"logprobs": true`` the choice carries deterministic per-word
logprobs and ``top_logprobs`` alternatives.  Usage counts whitespace-separated words.

Fault script: ``server.enqueue_faults(*faults)`` queues faults FIFO; each one is consumed by
exactly one subsequent chat-completion request, in arrival order.  Requests arriving while the
queue is empty are answered normally.  A fault is a dataclass or a string/int spec:

=====================================  ===========================================================
dataclass                              string / int specs
=====================================  ===========================================================
``RateLimitFault(retry_after="1")``    ``"rate_limit"``, ``"429"``, ``429``, ``"rate_limit:0.2"``,
                                       ``"429:0.2"`` -> HTTP 429 + ``Retry-After`` header
``ServerErrorFault(status=500)``       ``"server_error"``, ``"server_error:503"``, ``"500"``,
                                       ``503`` -> that 5xx status with a ``server_error`` body
``HangFault(seconds=3600.0)``          ``"hang"``, ``"hang:5"`` -> handler sleeps (cancelled on
                                       stop() or client disconnect)
``MalformedFault(content=...)``        ``"malformed"``, ``"malformed:any text"`` -> HTTP 200 whose
                                       content is the given text (default ``MALFORMED_REPLY``)
``StatusFault(status=400)``            ``"status:401"``, ``"400"``, ``401`` -> that status with an
                                       OpenAI-style error body (``message`` may name ``{model}``
                                       and ``{response_format}``, filled in from the request)
``RawFault(status=200)``               ``"html"``, ``"html:502"`` -> an HTML page, not JSON (a web
                                       UI at the wrong URL; a proxy whose upstream is down);
                                       ``"html:501"``, ``"html:500"``: a framework's own page
=====================================  ===========================================================

Named faults, as real servers send them (``NAMED_FAULTS``): ``"model_not_found"`` (OpenAI/vLLM
404), ``"context_length"`` (OpenAI/vLLM 400), ``"context_size"`` (llama.cpp 400),
``"bad_param:NAME"`` (400 naming a parameter), ``"response_format"`` (OpenAI 400 rejecting the
form sent) and ``"response_format:llamacpp"`` (llama.cpp's 500 for ``json_schema``).

``FakeOpenAIServer(context_words=N)``: a request whose messages hold more than N words (the
server's stand-in for tokens) gets llama.cpp's context-size error, as a server started with a
small context does.

``server.fail_always(spec)`` makes every request fail that way until ``fail_always(None)``
(a server that stays down, a key that stays wrong); queued faults are consumed first.

Random faults: ``server.set_fault_mix({"429:1": 0.10, "500": 0.05, "hang": 0.02, "malformed":
0.05}, seed=0)`` makes each request that has no queued fault draw one of these faults with its
probability (else it is answered normally), from a seeded generator in arrival order;
``server.faults_served`` counts the faults drawn by spec. ``set_fault_mix(None)`` stops it.

Endpoint limits: with ``max_in_flight=K`` a chat request that arrives while K others are being
answered is rejected at once with HTTP 429 (``Retry-After: 1``), as a provider's concurrency cap
does; ``server.rejected`` counts them and ``server.peak_in_flight`` is the most answered at once.
``GET /v1/_fake/stats`` returns these counts as JSON (for a server in another process).

Standalone (benchmarks)::

    python tests/fake_openai.py --port 0 --latency 0.05 [--max-in-flight 64] [--no-record]

prints the base URL on one line, then serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import itertools
import json
import math
import random
import signal
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from aiohttp import web

HOST = "127.0.0.1"  # loopback only: the fake must never be reachable from elsewhere
DEFAULT_MODEL = "fake-model"
DEFAULT_REPLY = "I will cooperate. Finally, I will give 5 dollars."
MALFORMED_REPLY = "I am not sure what to do."
HTML_PAGE = "<!DOCTYPE html>\n<html><head><title>Open WebUI</title></head>\n<body></body></html>\n"
HTML_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)
HTML_STATUS_PAGES = {
    501: "<!doctype html>\n<html lang=en>\n<title>501 Not Implemented</title>\n"
    "<h1>Not Implemented</h1>\n<p>The server does not support the action requested.</p>\n",
    500: "<html><head><title>500 Internal Server Error</title></head>\n"
    "<body><h1>Internal Server Error</h1><p>Something went wrong.</p></body></html>\n",
}
"""Pages of a server's own framework (no proxy named), for `html:501` and `html:500`."""

Responder = Callable[[dict[str, Any]], str | Awaitable[str]]


@dataclass(frozen=True)
class RateLimitFault:
    """HTTP 429 with ``Retry-After`` (seconds; fractional values such as "0.2" allowed)."""

    retry_after: float | str = "1"
    message: str = "Rate limit reached for requests (fake)."


@dataclass(frozen=True)
class ServerErrorFault:
    """HTTP 5xx with an OpenAI-style ``server_error`` body."""

    status: int = 500
    message: str = "The server had an error while processing your request (fake)."


@dataclass(frozen=True)
class HangFault:
    """The handler sleeps ``seconds`` before answering: exercises client per-attempt timeouts."""

    seconds: float = 3600.0


@dataclass(frozen=True)
class MalformedFault:
    """A well-formed 200 completion whose content ignores the requested answer format."""

    content: str = MALFORMED_REPLY


@dataclass(frozen=True)
class StatusFault:
    """Arbitrary HTTP status with an OpenAI-style error body (e.g. 400, 401, 404)."""

    status: int = 400
    message: str | None = None
    type: str | None = None
    code: str | None = None
    param: str | None = None


@dataclass(frozen=True)
class RawFault:
    """A reply that is not the API's JSON, e.g. an HTML page (status 200 or a proxy's 502)."""

    status: int = 200
    body: str = HTML_PAGE
    content_type: str = "text/html"


Fault = RateLimitFault | ServerErrorFault | HangFault | MalformedFault | StatusFault | RawFault
FaultSpec = Fault | str | int

_FAULT_TYPES = (RateLimitFault, ServerErrorFault, HangFault, MalformedFault, StatusFault, RawFault)

NAMED_FAULTS: dict[str, Fault] = {
    "model_not_found": StatusFault(
        404,
        "The model `{model}` does not exist or you do not have access to it.",
        code="model_not_found",
    ),
    "context_length": StatusFault(
        400,
        "This model's maximum context length is 2048 tokens. However, your messages resulted in "
        "3071 tokens. Please reduce the length of the messages.",
        code="context_length_exceeded",
        param="messages",
    ),
    "context_size": StatusFault(
        400,
        "the request exceeds the available context size, try increasing it",
        type="exceed_context_size_error",
    ),
    "response_format": StatusFault(
        400,
        "Invalid parameter: 'response_format' of type '{response_format}' is not supported with "
        "this model.",
        code="invalid_parameter",
        param="response_format",
    ),
    "response_format:llamacpp": ServerErrorFault(
        500,
        'response_format type must be one of "text" or "json_object", but got: {response_format}',
    ),
}

_ERROR_TYPES: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("not_found_error", "model_not_found"),
    409: ("conflict_error", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def _status_fault(status: int) -> Fault:
    """Map a bare HTTP status onto the most specific fault kind."""
    if status == 429:
        return RateLimitFault()
    if 500 <= status < 600:
        return ServerErrorFault(status=status)
    return StatusFault(status=status)


def parse_fault(spec: FaultSpec) -> Fault:
    """Turn a fault dataclass, an HTTP status int or a string spec into a fault dataclass."""
    if isinstance(spec, _FAULT_TYPES):
        return spec
    if isinstance(spec, bool) or not isinstance(spec, int | str):
        raise TypeError(f"unsupported fault spec: {spec!r}")
    if isinstance(spec, int):
        return _status_fault(spec)
    if spec in NAMED_FAULTS:
        return NAMED_FAULTS[spec]
    kind, sep, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "bad_param":
        return StatusFault(
            400,
            f"Unsupported parameter: '{arg}' is not supported with this model.",
            code="unsupported_parameter",
            param=arg,
        )
    if kind == "html":
        if not sep:
            return RawFault()
        return RawFault(status=int(arg), body=HTML_STATUS_PAGES.get(int(arg), HTML_502))
    if kind in ("rate_limit", "429"):
        return RateLimitFault(retry_after=arg.strip()) if sep else RateLimitFault()
    if kind == "server_error":
        return ServerErrorFault(status=int(arg)) if sep else ServerErrorFault()
    if kind == "hang":
        return HangFault(seconds=float(arg)) if sep else HangFault()
    if kind == "malformed":
        return MalformedFault(content=arg) if sep else MalformedFault()
    if kind == "status":
        if not sep:
            raise ValueError("status fault needs a code, e.g. 'status:401'")
        return _status_fault(int(arg))
    if kind.isdigit():
        return _status_fault(int(kind))
    raise ValueError(f"unknown fault spec: {spec!r}")


def default_responder(body: dict[str, Any]) -> str:
    """Answer in the format the public-goods scenarios parse, whatever was asked."""
    return DEFAULT_REPLY


def _text_of(content: Any) -> str:
    """Text of a message content: a plain string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return " ".join(p for p in parts if isinstance(p, str))
    return ""


def count_words(text: str) -> int:
    """Deterministic stand-in for a tokenizer: whitespace-separated words."""
    return len(text.split())


def prompt_tokens(body: dict[str, Any]) -> int:
    """Word count over every message's content."""
    messages = body.get("messages") or []
    return sum(count_words(_text_of(m.get("content"))) for m in messages if isinstance(m, dict))


def _retry_after_header(value: float | str) -> str:
    """Format Retry-After as clients expect: "2", "0.2"."""
    if isinstance(value, str):
        return value
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def error_body(
    status: int,
    message: str | None = None,
    type_: str | None = None,
    code: str | None = None,
    param: str | None = None,
) -> dict[str, Any]:
    """OpenAI-style error envelope, so the SDK fills in ``.type``/``.code`` on its exceptions."""
    default_type, default_code = _ERROR_TYPES.get(
        status, ("server_error", None) if status >= 500 else ("invalid_request_error", None)
    )
    return {
        "error": {
            "message": message or f"Fake error with status {status}.",
            "type": type_ or default_type,
            "param": param,
            "code": code if code is not None else default_code,
        }
    }


def fill_message(message: str | None, body: dict[str, Any]) -> str | None:
    """A fault's message with ``{model}`` and ``{response_format}`` taken from the request."""
    if message is None:
        return None
    response_format = body.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    return message.replace("{model}", str(body.get("model"))).replace(
        "{response_format}", str(kind)
    )


def build_logprobs(reply: str, top_logprobs: int) -> dict[str, Any]:
    """Deterministic per-word logprobs; alternatives share the leftover probability mass.

    Tokens are the whitespace-split words with a leading space (except the first), so joining
    them reproduces the reply modulo whitespace, like a BPE tokenizer's output does.
    """
    content = []
    for i, word in enumerate(reply.split()):
        token = word if i == 0 else " " + word
        logprob = -0.1 * (i % 5) - 0.01
        rest = 1.0 - math.exp(logprob)
        top = [{"token": token, "logprob": logprob, "bytes": list(token.encode())}]
        top = top[:top_logprobs]
        for j in range(1, top_logprobs):
            alt = f"{' ' if i else ''}<alt{j}>"
            top.append(
                {
                    "token": alt,
                    "logprob": math.log(rest * 0.5**j),
                    "bytes": list(alt.encode()),
                }
            )
        content.append(
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": top,
            }
        )
    return {"content": content, "refusal": None}


class FakeOpenAIServer:
    """OpenAI-compatible HTTP server on 127.0.0.1 in a background thread; see module doc."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        model: str = DEFAULT_MODEL,
        port: int = 0,
        max_in_flight: int | None = None,
        record: bool = True,
        context_words: int | None = None,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.context_words = context_words  # longer prompts get llama.cpp's context error
        self.max_in_flight = max_in_flight
        self.record = record  # off for benchmarks of many requests: keep counts, not bodies
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rejected = 0
        self._received = 0
        self.latency = latency  # read per request, so it may be changed while running
        self.model = model
        self._port = port
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._faults: deque[Fault] = deque()
        self._always: Fault | None = None
        self._mix: list[tuple[float, str, Fault]] = []
        self._rng = random.Random(0)
        self.faults_served: Counter[str] = Counter()
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.port = 0

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Start the loop thread and block until the socket is bound."""
        if self._thread is not None:
            raise RuntimeError("server already started")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._startup())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not ready.wait(timeout=10.0):
            raise RuntimeError("fake OpenAI server did not start within 10 s")
        if failure:
            self._thread.join()
            self._thread = None
            self._loop = None
            raise failure[0]
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel in-flight handlers (hangs included), close the socket, join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
            with contextlib.suppress(Exception):
                future.result(timeout=timeout)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=timeout)
        self._loop = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def _startup(self) -> None:
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/v1/_fake/stats", self._stats)
        # handler_cancellation: a client that gives up (timeout) also ends its hung handler.
        runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=0.5, handler_cancellation=True
        )
        await runner.setup()
        site = web.TCPSite(runner, HOST, self._port, backlog=1024)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        self.base_url = f"http://{HOST}:{self.port}/v1"

    async def _shutdown(self) -> None:
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- inspection and fault script ---------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot of recorded chat requests: JSON body plus a "headers" dict, arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """Number of chat-completion requests received (faulted and rejected ones included)."""
        with self._lock:
            return self._received

    def clear_requests(self) -> None:
        """Forget recorded requests (e.g. between benchmark phases)."""
        with self._lock:
            self._requests.clear()
            self._received = 0

    def enqueue_faults(self, *faults: FaultSpec) -> None:
        """Queue faults; each is consumed by exactly one later request, FIFO."""
        parsed = [parse_fault(f) for f in faults]
        with self._lock:
            self._faults.extend(parsed)

    def fail_always(self, spec: FaultSpec | None) -> None:
        """Answer every request with this fault (after any queued ones); None stops it."""
        fault = None if spec is None else parse_fault(spec)
        with self._lock:
            self._always = fault

    def set_fault_mix(self, mix: Mapping[str, float] | None, seed: int = 0) -> None:
        """Each request with no queued fault draws one of `mix`'s faults with its probability
        (spec -> probability; they must sum to at most 1); None stops drawing."""
        table: list[tuple[float, str, Fault]] = []
        total = 0.0
        for spec, probability in (mix or {}).items():
            total += probability
            table.append((total, spec, parse_fault(spec)))
        if total > 1.0 + 1e-9:
            raise ValueError(f"fault probabilities sum to {total} > 1")
        with self._lock:
            self._mix, self._rng = table, random.Random(seed)
            self.faults_served.clear()

    def _drawn(self) -> Fault | None:
        """A fault from the mix, or None (called with the lock held)."""
        if not self._mix:
            return None
        draw = self._rng.random()
        for bound, spec, fault in self._mix:
            if draw < bound:
                self.faults_served[spec] += 1
                return fault
        return None

    @property
    def pending_faults(self) -> list[Fault]:
        """Faults not yet consumed by a request."""
        with self._lock:
            return list(self._faults)

    def clear_faults(self) -> None:
        """Drop every queued fault."""
        with self._lock:
            self._faults.clear()

    # -- handlers ----------------------------------------------------------------------------

    def _track(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.model,
                        "object": "model",
                        "created": 1_700_000_000,
                        "owned_by": "personasim-fake",
                    }
                ],
            }
        )

    async def _stats(self, request: web.Request) -> web.Response:
        with self._lock:
            requests = self._received
        return web.json_response(
            {"requests": requests, "rejected": self.rejected, "peak_in_flight": self.peak_in_flight}
        )

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        # Counted on the server's one event-loop thread, so no lock is needed for these.
        if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
            self.rejected += 1
            with self._lock:
                self._received += 1
            await request.read()
            return web.json_response(
                error_body(429, f"more than {self.max_in_flight} requests in flight"),
                status=429,
                headers={"Retry-After": "1"},
            )
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        self._track()
        headers = dict(request.headers)
        raw = await request.read()
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            with self._lock:
                self._received += 1
                self._requests.append(
                    {"_invalid_body": raw.decode(errors="replace"), "headers": headers}
                )
            return web.json_response(error_body(400, f"Invalid JSON body: {exc}"), status=400)

        # Record and pick the fault atomically so faults follow arrival order exactly.
        with self._lock:
            self._received += 1
            if self.record:
                self._requests.append({**body, "headers": headers})
            fault = self._faults.popleft() if self._faults else (self._always or self._drawn())
            if fault is None and self.context_words is not None:
                fault = (
                    NAMED_FAULTS["context_size"]
                    if prompt_tokens(body) > self.context_words
                    else None
                )
            number = next(self._ids)
        extra_headers = {"x-request-id": f"req_fake_{number:06d}"}

        if self.latency > 0:
            await asyncio.sleep(self.latency)

        content: str | None = None
        match fault:
            case RateLimitFault(retry_after=retry_after, message=message):
                return web.json_response(
                    error_body(429, message),
                    status=429,
                    headers={**extra_headers, "Retry-After": _retry_after_header(retry_after)},
                )
            case ServerErrorFault(status=status, message=message):
                return web.json_response(
                    error_body(status, fill_message(message, body)),
                    status=status,
                    headers=extra_headers,
                )
            case StatusFault(status=status, message=message, type=type_, code=code, param=param):
                return web.json_response(
                    error_body(status, fill_message(message, body), type_, code, param),
                    status=status,
                    headers=extra_headers,
                )
            case RawFault(status=status, body=raw, content_type=content_type):
                return web.Response(
                    text=raw, status=status, content_type=content_type, headers=extra_headers
                )
            case HangFault(seconds=seconds):
                await asyncio.sleep(seconds)
            case MalformedFault(content=malformed):
                content = malformed

        if content is None:
            try:
                result = self.responder(body)
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:  # surface responder bugs to the test as a 500
                return web.json_response(
                    error_body(500, f"responder raised {type(exc).__name__}: {exc}"),
                    status=500,
                    headers=extra_headers,
                )
            content = str(result)

        return web.json_response(self._completion(body, content, number), headers=extra_headers)

    def _completion(self, body: dict[str, Any], content: str, number: int) -> dict[str, Any]:
        """A ChatCompletion object that the SDK's pydantic models accept."""
        prompt = prompt_tokens(body)
        completion = count_words(content)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": None},
            "finish_reason": "stop",
            "logprobs": None,
        }
        if body.get("logprobs"):
            choice["logprobs"] = build_logprobs(content, int(body.get("top_logprobs") or 0))
        return {
            "id": f"chatcmpl-fake-{number:06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


def main(argv: Iterable[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT; the first stdout line is the base URL (for benchmarks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per response")
    parser.add_argument("--reply", default=DEFAULT_REPLY, help="content of every reply")
    parser.add_argument(
        "--max-in-flight", type=int, default=None, help="reject (429) requests beyond this many"
    )
    parser.add_argument(
        "--no-record", action="store_true", help="count requests but keep no bodies (benchmarks)"
    )
    args = parser.parse_args(None if argv is None else list(argv))

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    reply: str = args.reply
    server = FakeOpenAIServer(
        lambda body: reply,
        latency=args.latency,
        port=args.port,
        max_in_flight=args.max_in_flight,
        record=not args.no_record,
    )
    with server:
        print(server.base_url, flush=True)
        while not stop.wait(0.2):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
