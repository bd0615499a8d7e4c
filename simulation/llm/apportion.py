"""Whole shares of a limit that add up to it exactly.

Why: requests in flight come in whole slots, and a part rounded on its own (up, or down with
every remainder to the first worker) makes the parts overrun the limit or leave slots unused:
twelve workers that each rounded up their quarter of `--concurrency 1024` sent 264 requests
at once to servers that took 256, and each such request came back with a 429.

Two splits are made here, both by largest remainder with equal weights (Hamilton's method:
each part is ⌊limit/n⌋ and the `limit mod n` slots left over go one each to different parts):

- a run's `--concurrency` over the endpoints of a pool that have no limit of their own
  (`endpoint_limits`);
- each endpoint's limit over the processes of `--workers N` (`worker_shares`). The slots left
  over are dealt in turn, each endpoint's deal going on where the previous one's stopped, so no
  worker takes the remainder of every endpoint and each worker's total differs from another's
  by one at most. A worker may get 0 slots of an endpoint whose limit is below the number of
  workers: it never sends there.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["apportion", "endpoint_limits", "rate_share", "worker_shares"]


def apportion(total: int, count: int, start: int = 0) -> list[int]:
    """`total` in `count` whole parts that add up to it; the `total mod count` parts with one
    more are those from index `start` on (wrapping around)."""
    if count < 1 or total < 0:
        raise ValueError(f"cannot split {total} into {count} part(s)")
    base, left_over = divmod(total, count)
    parts = [base] * count
    for offset in range(left_over):
        parts[(start + offset) % count] += 1
    return parts


def endpoint_limits(own: Sequence[int | None], concurrency: int) -> list[int]:
    """Each endpoint's limit: its own, else its part of the run's `concurrency` split evenly
    over all the pool's endpoints (at least 1: the run's own cap still bounds the total)."""
    parts = apportion(concurrency, len(own))
    return [
        max(part, 1) if limit is None else limit for limit, part in zip(own, parts, strict=True)
    ]


def worker_shares(limits: Sequence[int], count: int) -> list[list[int]]:
    """`shares[w][e]`: worker `w`'s slots of endpoint `e`; for every `e` they add up to
    `limits[e]` (see the module's doc for who gets the slots left over)."""
    shares = [[0] * len(limits) for _ in range(count)]
    start = 0
    for endpoint, limit in enumerate(limits):
        for worker, part in enumerate(apportion(limit, count, start)):
            shares[worker][endpoint] = part
        start = (start + limit % count) % count
    return shares


def rate_share(rpm: float | None, share: int, limit: int) -> float | None:
    """A worker's part of an endpoint's requests per minute, in proportion to its slots there
    (the parts add up to `rpm`); None when there is no rate limit or it has no slot."""
    if rpm is None or share == 0:
        return None
    return rpm * share / limit
