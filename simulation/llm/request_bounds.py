"""The largest request limits a run accepts, and why each is where it is.

Past these a number is a typo or a unit mix-up (`--timeout 1e308`, `--concurrency 1e20`), not a
setting: the command line and endpoint files refuse it in one line rather than run with it.
docs/performance.md and docs/endpoints.md state them.
"""

from __future__ import annotations

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_CONCURRENCY",
    "MAX_COOLDOWN_S",
    "MAX_ENDPOINT_FAILURES",
    "MAX_ENDPOINT_WEIGHT",
    "MAX_RPM",
    "MAX_TIMEOUT_S",
]

MAX_CONCURRENCY = 4096
"""Requests in flight: each is an open connection (a process's default limit of open files is
often 1,024), and no server batches more (vLLM's default is 256 sequences at once)."""
MAX_RPM = 1_000_000.0
"""Requests per minute (about 16,700 a second): more than any hosted API grants one key."""
MAX_TIMEOUT_S = 86_400.0
"""Seconds per attempt: one day, far above the slowest reply a local model on a CPU writes."""
MAX_ATTEMPTS = 100
"""Attempts per request: with the retry waits capped at 8 s, 100 already means many minutes of
trying one request."""
MAX_COOLDOWN_S = 86_400.0
"""Seconds a failing endpoint is set aside: one day."""
MAX_ENDPOINT_FAILURES = 1_000
"""Failures in a row before an endpoint is set aside."""
MAX_ENDPOINT_WEIGHT = 1_000_000.0
"""An endpoint's routing weight (a ratio between endpoints)."""
