"""The response cache shared by a sweep's workers on one machine: several processes write to
the same SQLite file at once (WAL, a busy timeout) and no answer is lost or refused."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from personasim.simulation.llm.cache import ResponseCache, cache_info
from personasim.simulation.llm.chat import ChatResponse

WRITERS = 4
PUTS = 150


def write_many(directory: str, writer: int, start: multiprocessing.synchronize.Barrier) -> None:
    start.wait()  # every process opens the cache and writes at the same moment
    cache = ResponseCache(directory)
    try:
        for i in range(PUTS):
            key = f"{writer}-{i}"
            cache.put(key, ChatResponse(text=f"answer {key}"))
            assert cache.get(key) is not None
    finally:
        cache.close()


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(WRITERS)
    workers = [
        context.Process(target=write_many, args=(str(tmp_path), n, start)) for n in range(WRITERS)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * WRITERS
    assert cache_info(tmp_path).entries == WRITERS * PUTS
    cache = ResponseCache(tmp_path)
    assert cache.get("3-149") == ChatResponse(text="answer 3-149")
    cache.close()
