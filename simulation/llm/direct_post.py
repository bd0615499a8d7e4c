"""Chat completions posted straight over aiohttp, with aiohttp's public API only.

Why: around every call the openai SDK converts its arguments, builds request and response
objects (URL parsing, header merging, copies of the options and body) and pydantic models of
the reply, which took most of the client's CPU per call with many calls in flight
(benchmarks/README.md). `DirectPost` sends the JSON body over one `aiohttp.ClientSession` and
hands back the reply's JSON. It knows nothing of the endpoint's errors: an error status comes
back as `StatusFailure` (status, headers, text) and no answer as aiohttp's own exceptions
(`aiohttp.ClientError`, `TimeoutError`, `OSError`), which `OpenAIBackend` turns into its
errors (simulation/llm/endpoint_errors.py). A proxy from the environment and credentials or a
query in the base URL are left to the SDK (`usable`), as are connections through them.
"""

from __future__ import annotations

import json
import os
import platform
import ssl
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp

__all__ = ["DirectPost", "StatusFailure"]

MAX_CONNECTIONS = 1000
"""Connections open at once, as the openai SDK allows (`openai.DEFAULT_CONNECTION_LIMITS`)."""
KEEPALIVE_S = 5.0
"""How long an idle connection is kept, as the SDK keeps it."""


class StatusFailure(Exception):
    """An HTTP error status and what came with it, for `OpenAIBackend` to read."""

    def __init__(self, status: int, headers: Mapping[str, str], text: str) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = headers
        """Case-insensitive (aiohttp's and the SDK's both are): `headers.get("retry-after")`."""
        self.text = text


class DirectPost:
    """POSTs JSON to one URL with fixed headers (auth, content type), over aiohttp."""

    def __init__(self, url: str, headers: Mapping[str, str]) -> None:
        self._url = url
        self._headers = dict(headers)
        self._session: aiohttp.ClientSession | None = None

    @staticmethod
    def usable(base_url: str) -> bool:
        """False when the environment sets a proxy (or the names that bypass one), or the
        base URL has a query (the SDK merges it with the request's) or credentials (the SDK
        turns them into basic auth): those stay on the SDK's path."""
        parts = urlsplit(base_url)
        return not (urllib.request.getproxies() or parts.query or "@" in parts.netloc)

    async def post(self, body: dict[str, Any], timeout: float) -> Any:
        """The reply's JSON, or its text when it is not JSON; `StatusFailure` for an error
        status; aiohttp's exceptions (and `TimeoutError`, `OSError`) when no answer came."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        limits = aiohttp.ClientTimeout(sock_connect=timeout, sock_read=timeout, connect=timeout)
        async with self._open().post(
            self._url, data=data, headers=self._headers, timeout=limits
        ) as response:
            status, headers = response.status, response.headers
            is_json = response.content_type.endswith("json")
            charset = response.charset or "utf-8"
            content = await response.read()
        if 200 <= status < 300 and is_json:
            try:
                return json.loads(content)
            except ValueError:
                pass  # a JSON content type on a body that is not JSON: handed back as text
        text = content.decode(charset, errors="replace")
        if not 200 <= status < 300:
            raise StatusFailure(status, headers, text)
        return text

    def _open(self) -> aiohttp.ClientSession:
        """One session per backend, opened in the running loop on first use."""
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=MAX_CONNECTIONS,
                keepalive_timeout=KEEPALIVE_S,
                ssl=tls_context() if self._url.startswith("https:") else True,
            )
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def tls_context() -> ssl.SSLContext:
    """The certificates the SDK's HTTP client trusts: SSL_CERT_FILE or SSL_CERT_DIR when set,
    else the operating system's (through truststore on Windows and macOS, where Python's own
    default paths may hold none, when it is installed)."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    if platform.system() in ("Windows", "Darwin"):
        try:
            import truststore
        except ImportError:
            pass
        else:
            return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return ssl.create_default_context()
