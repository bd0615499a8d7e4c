"""Chat completions posted straight over aiohttp, with the OpenAI SDK's own headers and errors.

Why: around every call the SDK builds httpx2 request and response objects (URL parsing, header
merging, copies of the options and body), which took about a quarter of the client's CPU per
call with many calls in flight (benchmarks/README.md). `DirectPost` sends the same request over
aiohttp, the transport the SDK itself uses here, with the headers the SDK builds for it, and
turns every failure into the exception the SDK raises for it: an error status through the SDK's
own `_make_status_error_from_response`, a failed connection through the SDK's aiohttp transport's
mapping and then `APITimeoutError` / `APIConnectionError` as the SDK does, so `OpenAIBackend`'s
error messages and retry decisions do not change. A proxy set in the environment is handled by
httpx2 in the SDK, so with one `OpenAIBackend` keeps to the SDK's path (`usable`), as it does
with an SDK release without the internals used here.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import aiohttp
import openai
from openai._base_client import make_request_options
from openai._models import FinalRequestOptions

try:  # the SDK's internals this relies on (openai 3.x); without them, the SDK's own path
    import httpx2
    from httpx2._utils import get_environment_proxies
    from openai._vendor.httpx_aiohttp.transport import map_aiohttp_exceptions
except ImportError:  # pragma: no cover - older openai releases
    httpx2 = None  # type: ignore[assignment]

__all__ = ["DirectPost"]


class DirectPost:
    """POSTs JSON to one path of an `openai.AsyncOpenAI` client's base URL."""

    def __init__(self, client: openai.AsyncOpenAI, path: str) -> None:
        self._client = client
        self._path = path
        self._url = f"{str(client.base_url).rstrip('/')}/{path.lstrip('/')}"
        self._headers: dict[float, dict[str, str]] = {}
        self._session: aiohttp.ClientSession | None = None

    @staticmethod
    def usable(client: openai.AsyncOpenAI) -> bool:
        """False when the environment sets a proxy (the SDK's httpx2 routes through it), or the
        base URL has a query (the SDK merges it with the request's) or credentials (httpx2
        turns them into basic auth): those stay on the SDK's path."""
        if httpx2 is None or not hasattr(client, "_make_status_error_from_response"):
            return False
        url = client.base_url
        return not (get_environment_proxies() or url.query or url.userinfo)

    async def post(self, body: dict[str, Any], timeout: float) -> Any:
        """The reply's JSON, or its text when it is not JSON (as the SDK's `post` with
        `cast_to=object` returns them); an SDK exception on failure."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        limits = aiohttp.ClientTimeout(sock_connect=timeout, sock_read=timeout, connect=timeout)
        try:
            with map_aiohttp_exceptions():  # aiohttp's errors as httpx2's, as the SDK maps them
                async with self._open().post(
                    self._url, data=data, headers=self._headers_for(timeout), timeout=limits
                ) as response:
                    status, raw_headers = response.status, response.raw_headers
                    content_type = response.headers.get("content-type", "*").split(";")[0]
                    content = await response.read()
        except httpx2.TimeoutException as exc:
            raise openai.APITimeoutError(request=self._request()) from exc
        except (httpx2.RequestError, ssl.SSLError) as exc:
            raise openai.APIConnectionError(request=self._request()) from exc
        if 200 <= status < 300 and content_type.endswith("json"):
            return json.loads(content)  # what httpx2's `Response.json()` does
        reply = httpx2.Response(
            status, headers=raw_headers, content=content, request=self._request()
        )
        if not reply.is_success:
            raise self._client._make_status_error_from_response(reply) from None
        return reply.text

    def _headers_for(self, timeout: float) -> dict[str, str]:
        """What the SDK's `post` sends with this timeout: auth, client and platform headers."""
        if timeout not in self._headers:
            options = FinalRequestOptions.construct(  # type: ignore[no-untyped-call]
                method="post",
                url=self._path,
                **make_request_options(timeout=timeout, security={"bearer_auth": True}),
            )
            headers = self._client._build_headers(options)
            self._headers[timeout] = dict(headers.items())
        return self._headers[timeout]

    def _request(self) -> httpx2.Request:
        """The request the SDK's exceptions and responses carry (its URL, for messages)."""
        return httpx2.Request("POST", self._url)

    def _open(self) -> aiohttp.ClientSession:
        """One session per backend, opened in the running loop on first use, with the
        connection limits and TLS settings of the SDK's aiohttp transport."""
        if self._session is None:
            limits = openai.DEFAULT_CONNECTION_LIMITS
            secure = self._url.startswith("https:")
            connector = aiohttp.TCPConnector(
                limit=limits.max_connections or 0,
                keepalive_timeout=limits.keepalive_expiry,
                ssl=httpx2.create_ssl_context(trust_env=True) if secure else True,
            )
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
