"""Benchmark (issue 29, b and c): one wide round over four replicas, with and without workers.

Why: a population study sends 10^5 decisions in one round; the round should take its ceiling
⌈N/C⌉·L, and what one process cannot keep up with, worker processes (`--workers`) should.
This script starts four fake servers (tests/fake_openai.py, each in its own process, each
capped at 256 requests in flight: one more is rejected with 429 and counted), runs the
trust-population scenario over them as one pool (`--base-url` four times, `--concurrency
1024`, L = 2 s per answer), once per number of workers, each run in its own process, and prints
per row: the round's wall time against its ceiling, decisions per second, the CPU per decision
of the driver and of the workers (read from /proc during the round), rejections (429s the
servers sent because more than 256 were in flight) and the most any server had in flight,
hedged duplicates (of which sent beyond the concurrency), and peak memory of the driver and of
the largest worker.

    python benchmarks/bench_wide.py                  # N = 100,000, workers 1 and 2
    python benchmarks/bench_wide.py --n 20000 --workers 1,2,3
    python benchmarks/bench_wide.py --n 4096 --latency 8 --workers 12   # the workers' shares

With 12 workers each endpoint's 256 slots are split 22/21 between them (apportion.py); a
worker's share used to be rounded up on its own (12 × 22 = 264 per server, the rest rejected).
On 2 cores the full N keeps the workers too busy to fill every slot at once; a longer latency
(`--latency 8`) lets a small N fill them.

The fake servers share the machine's cores with the run; the load average is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_round import endpoint_stats, fake_endpoint, peak_rss_mb, run_worker  # noqa: E402

SERVERS, CAP = 4, 256


def proc_cpu_s(pid: int) -> float:
    """A process's user + system CPU seconds so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_peak_mb(pid: int) -> float:
    """A process's peak resident memory (VmHWM), from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_wide(n: int, concurrency: int, urls: list[str], workers: int) -> dict[str, Any]:
    """One timed run (in this process): the round's wall and CPU, the workers' CPU during it."""
    from bench_decisions import RunTiming, Span, timed_scenario

    from personasim.simulation import run_scenario

    timing = RunTiming(Span(), Span(), Span())
    seen: dict[str, Any] = {}

    class WideTimed(timed_scenario(timing)):  # type: ignore[misc]
        async def play_round(self, sim: Any, round_index: int) -> None:
            pids = sim.offload.pids() if sim.offload is not None else []
            before = sum(proc_cpu_s(pid) for pid in pids)
            await super().play_round(sim, round_index)
            seen["workers_cpu_s"] = sum(proc_cpu_s(pid) for pid in pids) - before
            seen["workers_peak_mb"] = [proc_peak_mb(pid) for pid in pids]

    with tempfile.TemporaryDirectory(prefix="personasim-wide-") as tmp:
        result = run_scenario(
            WideTimed,
            {"n_personas": n, "population": "synthetic"},
            out=Path(tmp) / "run",
            use_cache=False,
            progress=False,
            model="openai:fake-model",
            base_url=urls,
            concurrency=concurrency,
            workers=workers,
        )
    return {
        "round_s": timing.round.wall,
        "cpu_s": timing.round.cpu,
        "workers_cpu_s": seen.get("workers_cpu_s", 0.0),
        "workers_peak_mb": seen.get("workers_peak_mb", []),
        "decisions": result.metrics["metrics"]["n_decisions"],
        "peak_rss_mb": peak_rss_mb(),
        "hedged": result.manifest["llm"].get("hedged", 0),
        "beyond_limit": result.manifest["llm"].get("beyond_limit", 0),
    }


def row(n: int, latency: float, workers: int) -> tuple[dict[str, Any] | None, str, int, int]:
    """One run on four fresh servers: its numbers (or why none), the requests rejected and the
    most requests one server had in flight."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark-dummy"}
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(fake_endpoint(latency, CAP)) for _ in range(SERVERS)]
        command = [sys.executable, __file__, "--run", str(n), ",".join(urls), str(workers)]
        try:
            result: dict[str, Any] | None = run_worker(command, env, timeout=3600)
            note = ""
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            result, note = None, f"failed: {exc}"
        stats = [endpoint_stats(url) for url in urls]
    rejected = sum(s["rejected"] for s in stats)
    return result, note, rejected, max(s["peak_in_flight"] for s in stats)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--run"]:
        import json

        n, urls, workers = int(argv[1]), argv[2].split(","), int(argv[3])
        print(json.dumps(run_wide(n, SERVERS * CAP, urls, workers)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="decisions in the round")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per answer")
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    args = parser.parse_args(argv)
    concurrency = SERVERS * CAP
    ceiling = math.ceil(args.n / concurrency) * args.latency
    print(
        f"personasim wide-round benchmark  python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start\n"
        f"{SERVERS} fake servers each capped at {CAP} in flight, --concurrency {concurrency}, "
        f"L = {args.latency:g} s, N = {args.n}, ceiling {ceiling:.1f} s"
    )
    header = (
        f"{'workers':>8}{'round s':>9}{'× ceiling':>10}{'dec/s':>8}{'CPU ms/dec':>11}"
        f"{'driver':>8}{'workers':>8}{'rejected':>9}{'peak fl.':>9}{'hedged':>12}"
        f"{'peak MB':>9}{'worker MB':>10}{'load':>11}"
    )
    print(f"\n{header}\n" + "-" * len(header), flush=True)
    for count in (int(w) for w in args.workers.split(",")):
        before = os.getloadavg()[0]
        r, note, rejected, peak = row(args.n, args.latency, count)
        after = os.getloadavg()[0]
        if r is None:
            print(f"{count:>8}  {note}", flush=True)
            continue
        per = 1000 / r["decisions"]
        hedged = f"{r['hedged']} ({r['beyond_limit']})"
        print(
            f"{count:>8}{r['round_s']:>9.1f}{r['round_s'] / ceiling:>10.3f}"
            f"{r['decisions'] / r['round_s']:>8.0f}{(r['cpu_s'] + r['workers_cpu_s']) * per:>11.2f}"
            f"{r['cpu_s'] * per:>8.2f}{r['workers_cpu_s'] * per:>8.2f}{rejected:>9}{peak:>9}"
            f"{hedged:>12}"
            f"{r['peak_rss_mb']:>9.0f}{max(r['workers_peak_mb'], default=0):>10.0f}"
            f"{f'{before:.1f}→{after:.1f}':>11}",
            flush=True,
        )
    print(
        "workers 1: the single-process path (c). CPU ms/dec: the driver's and the workers' CPU "
        "during the round per decision (driver and workers: each part; the fake servers' CPU is "
        f"not counted); peak fl.: the most one server had in flight (it takes {CAP}); hedged: "
        "calls that sent a duplicate (of which beyond the concurrency); peak MB: the driver's; "
        "worker MB: the largest worker's; load: the 1-minute load average before and after"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
