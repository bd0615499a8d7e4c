"""The local server of `personasim view --serve`: pages on loopback, for this machine only.

A browser on this machine can be led by any web site to a name that resolves to 127.0.0.1 (DNS
rebinding), and the site's script could then read the page: prompts, replies, personas. Such a
request carries the site's name as its Host header, so only requests whose Host names this
machine (127.0.0.1, localhost, [::1], or the address served) are answered; any other gets 403.
Every answer forbids sniffing and framing, and a page may run only its own script and style.
"""

from __future__ import annotations

import http.server
import ipaddress
import re
import socket
import threading
from collections.abc import Callable
from typing import Any

from personasim.simulation.runs.viewer.viewer import page_csp

__all__ = ["LOOPBACK_NAMES", "LocalServer", "ViewServer", "host_name", "is_loopback"]

Answer = Callable[[str], tuple[int, str, bytes]]
"""A request path → status, content type and body."""

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host header names a local server always answers (with or without a port)."""
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_REFUSED = (
    b"refused: this server answers only requests addressed to 127.0.0.1, localhost or [::1] "
    b"(the Host header), so a web page cannot reach it through another name\n"
)


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is this machine only."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower().rstrip(".") == "localhost"


def host_name(header: str) -> str | None:
    """The name in a Host header, lower-case, without its port (`[::1]:8000` → `::1`); None
    when it is not a name with an optional numeric port."""
    header = header.strip().lower()
    if header.startswith("["):
        name, bracket, rest = header[1:].partition("]")
        if not bracket:
            return None
    else:
        name, colon, port = header.partition(":")
        rest = colon + port
    if rest and not re.fullmatch(r":[0-9]{1,5}", rest):
        return None
    return name.rstrip(".") or None


class LocalServer(http.server.ThreadingHTTPServer):
    """Pages on loopback (standard library only), each request answered by `answer`.

    A browser on this machine can be led by any web site to a name that resolves to 127.0.0.1
    (DNS rebinding); such a request carries that site's name as its Host, so only requests
    whose Host names this machine (or the address served, `host`) are answered, 403 else.
    Every answer forbids sniffing, framing and (pages) anything but the page's own script and
    style (`page_csp`)."""

    def __init__(self, answer: Answer, port: int = 0, host: str = "127.0.0.1") -> None:
        allowed = LOOPBACK_NAMES | {name for name in [host_name(host)] if name}
        headers = {**_SECURITY_HEADERS, "Content-Security-Policy": page_csp(frame=True)}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hosts = self.headers.get_all("Host") or []
                if len(hosts) != 1 or host_name(hosts[0]) not in allowed:
                    self._send(403, "text/plain; charset=utf-8", _REFUSED)
                    return
                self._send(*answer(self.path))

            def _send(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        if ":" in host.strip("[]"):
            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"

    def serve_in_background(self, poll_interval: float = 0.05) -> threading.Thread:
        """Serve from a daemon thread; `shutdown` returns within `poll_interval` seconds."""
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True
        )
        thread.start()
        return thread


class ViewServer(LocalServer):
    """The page on loopback; every path answers with the page."""

    def __init__(self, html: str, port: int = 0, host: str = "127.0.0.1") -> None:
        body = html.encode("utf-8")
        super().__init__(lambda _path: (200, "text/html; charset=utf-8", body), port, host)
