"""Whole shares of a limit that add up to it (simulation/llm/apportion.py): a run's concurrency
over a pool's endpoints, and each endpoint's limit over `--workers` processes, checked for
every number of workers from 1 to 32 and of endpoints from 1 to 8, each with several sets of
limits (seeded draws, limits below the number of workers among them); then on the pools the
workers build."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from personasim.simulation.llm.apportion import (
    apportion,
    endpoint_limits,
    rate_share,
    worker_shares,
)
from personasim.simulation.llm.endpoint_pool import EndpointPool
from personasim.simulation.llm.endpoints_file import load_endpoints
from personasim.simulation.llm.model_spec import make_backend


def limit_sets(endpoints: int, rng: np.random.Generator) -> list[list[int]]:
    """Endpoint limits to split: small ones (0 to 40, so often fewer slots than workers), large
    ones, a mix, and all equal."""
    small = rng.integers(0, 41, size=endpoints)
    large = rng.integers(41, 5001, size=endpoints)
    mixed = np.where(rng.random(endpoints) < 0.5, small, large)
    equal = np.full(endpoints, int(rng.integers(1, 300)))
    return [[int(x) for x in limits] for limits in (small, large, mixed, equal)]


def test_worker_shares_add_up_to_every_endpoint_limit() -> None:
    rng = np.random.default_rng(37)
    cases = [
        (workers, limits)
        for workers in range(1, 33)
        for endpoints in range(1, 9)
        for limits in limit_sets(endpoints, rng)
    ]
    assert len(cases) == 32 * 8 * 4
    # the cases this is about: an endpoint with fewer slots than workers, a pool with fewer
    assert sum(min(limits) < workers for workers, limits in cases) > 300
    assert sum(sum(limits) < workers for workers, limits in cases) > 10
    for workers, limits in cases:
        check_shares(workers, limits)


def check_shares(workers: int, limits: list[int]) -> None:
    shares = worker_shares(limits, workers)
    assert len(shares) == workers and all(len(row) == len(limits) for row in shares)
    assert all(part >= 0 for row in shares for part in row)
    for endpoint, limit in enumerate(limits):
        column = [row[endpoint] for row in shares]
        assert sum(column) == limit
        assert max(column) - min(column) <= 1  # largest remainder: ⌊limit/n⌋ or one more
    # each endpoint's remainder is dealt where the previous one stopped: the workers' totals
    # are themselves the largest-remainder split of the pool's total
    totals = [sum(row) for row in shares]
    assert totals == apportion(sum(limits), workers)
    if sum(limits) >= workers:
        assert min(totals) >= 1  # every worker has somewhere to send


def test_endpoint_limits_keep_their_own_and_split_the_run() -> None:
    rng = np.random.default_rng(7)
    for concurrency in (*range(1, 20), 1024, 1023, 4096):
        for endpoints in range(1, 9):
            own: list[int | None] = [
                None if rng.random() < 0.5 else int(rng.integers(1, 513)) for _ in range(endpoints)
            ]
            limits = endpoint_limits(own, concurrency)
            parts = apportion(concurrency, endpoints)
            assert sum(parts) == concurrency and max(parts) - min(parts) <= 1
            for limit, mine, part in zip(limits, own, parts, strict=True):
                assert limit == (mine if mine is not None else max(part, 1))


def test_no_endpoint_always_gives_its_remainder_to_the_first_worker() -> None:
    """Three endpoints of 5 slots over 4 workers: the remainders go to workers 0, 1 and 2, not
    three times to worker 0 (which would have 6 slots to the others' 3 and 4)."""
    assert worker_shares([5, 5, 5], 4) == [[2, 1, 1], [1, 2, 1], [1, 1, 2], [1, 1, 1]]
    assert worker_shares([1, 1], 3) == [[1, 0], [0, 1], [0, 0]]  # the third: nowhere to send


def test_apportion_refuses_what_cannot_be_split() -> None:
    with pytest.raises(ValueError, match="cannot split"):
        apportion(5, 0)
    with pytest.raises(ValueError, match="cannot split"):
        apportion(-1, 2)
    assert rate_share(90.0, 2, 7) == pytest.approx(90 * 2 / 7)
    assert rate_share(90.0, 0, 7) is None and rate_share(None, 3, 7) is None


def worker_pools(file: Path, workers: int, concurrency: int) -> list[EndpointPool]:
    """The pool each of `workers` worker processes builds from the endpoints file."""
    pools = []
    for index in range(workers):
        pool = make_backend("openai:m@pool:gpus", None, 0, load_endpoints(file))
        assert isinstance(pool, EndpointPool)
        pool.take_share(index, workers, concurrency)
        pool.router(apportion(concurrency, workers)[index])
        pools.append(pool)
    return pools


def test_twelve_workers_share_four_endpoints_of_256_exactly(tmp_path: Path) -> None:
    """The case of issue 37: `--concurrency 1024` over four URLs with no limit of their own
    (256 each), 12 workers. Rounding each worker's quarter up gave 12 × 22 = 264 per server."""
    file = tmp_path / "endpoints.toml"
    file.write_text(
        "".join(
            f'[[pools.gpus.endpoints]]\nurl = "http://127.0.0.1:{9 + i}/v1"\n' for i in range(4)
        )
    )
    pools = worker_pools(file, 12, 1024)
    for endpoint in range(4):
        assert sum(pool.replicas[endpoint].limit for pool in pools) == 256
    assert sorted(sum(r.limit for r in pool.replicas) for pool in pools) == [85] * 8 + [86] * 4


def test_a_worker_with_no_slot_at_an_endpoint_never_sends_there(tmp_path: Path) -> None:
    """Two endpoints of 3 slots (rate 60 a minute) over 4 workers: each worker has slots at
    one or two of them, none is ever picked where it has none, and the rates add up."""
    file = tmp_path / "endpoints.toml"
    file.write_text(
        '[[pools.gpus.endpoints]]\nurl = "http://127.0.0.1:9/v1"\nconcurrency = 3\nrpm = 60\n'
        '[[pools.gpus.endpoints]]\nurl = "http://127.0.0.1:10/v1"\nconcurrency = 3\nrpm = 60\n'
    )
    pools = worker_pools(file, 4, 8)
    assert [[r.limit for r in pool.replicas] for pool in pools] == [[1, 1], [1, 1], [1, 0], [0, 1]]
    for endpoint in range(2):
        replicas = [pool.replicas[endpoint] for pool in pools]
        rates = [60 / r.limiter.pacer.time_period for r in replicas if r.limit]
        assert sum(rates) == pytest.approx(60)
    for pool in pools:
        for replica in pool.replicas:
            assert replica.may_take(0.0) == (replica.limit > 0)
