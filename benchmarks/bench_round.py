"""Benchmark: one round of N trust decisions at the latency floor, side by side with two others.

Why: with a real endpoint a round should take the ceiling ⌈N/C⌉·L (C calls in flight at a time,
each taking L seconds) and nothing more; the excess is client-side cost the latency does not
hide. This script runs, in one go and against the same fake endpoint (tests/fake_openai.py in
its own process, capped at C requests in flight: one more is rejected with 429 and counted):

- personasim: the trust-population scenario, `concurrency=C`, N synthetic personas;
- plain bounded asyncio + the openai SDK on aiohttp: N calls under an `asyncio.Semaphore(C)`,
  the least a Python client can do;
- mesa-llm's parallel stepping (`enable_automatic_parallel_stepping`, N Mesa agents whose
  `astep` asks `ModuleLLM.agenerate`), installed by this script into its own venv because it
  needs another Mesa version; driven as a subprocess (benchmarks/mesa_llm_worker.py).

Each contender runs in its own process (so peak memory is its own) and prints one JSON line.
It also measures personasim's own cost per decision with an instant model, and prints the
issue's targets with measured values. The machine's load average is printed with each row,
because on a shared machine it moves the numbers.

    python benchmarks/bench_round.py [--quick] [--no-mesa-llm] [--mesa-llm-venv DIR]
    python benchmarks/bench_round.py --pool     # (a) of issue 29: one model on two replicas
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FAKE_SERVER = HERE.parent / "tests" / "fake_openai.py"
MESA_WORKER = HERE / "mesa_llm_worker.py"
DEFAULT_MESA_VENV = Path.home() / ".cache" / "personasim-bench" / "mesa-llm-venv"
REPLY = "My belief is that people are fair. Finally, I will give 4 dollars"
PROMPT = (
    "You are a participant in an investment game. You have 10 dollars. You may give any part "
    "of it to another participant; the amount you give is tripled, and the other participant "
    "decides how much of it to return to you. " * 4
)
"""The plain and mesa-llm clients' prompt, about as long as the trust scenario's."""


# -- workers (each runs in its own process and prints one JSON line) --------------------------


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def worker_personasim(n: int, c: int, url: str) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from bench_decisions import timed_run  # the same timed trust-population run

    with tempfile.TemporaryDirectory(prefix="personasim-round-") as tmp:
        timing = timed_run(Path(tmp), n, model="openai:fake-model", base_url=url, concurrency=c)
    return {
        "round_s": timing.round.wall,
        "cpu_s": timing.round.cpu,
        "calls": timing.calls,
        "peak_rss_mb": peak_rss_mb(),
    }


async def _plain(n: int, c: int, url: str) -> tuple[float, float, int]:
    import openai

    slots = asyncio.Semaphore(c)
    client = openai.AsyncOpenAI(
        base_url=url, api_key="sk-benchmark-dummy", http_client=openai.DefaultAioHttpClient()
    )

    async def one(i: int) -> str:
        async with slots:
            done = await client.chat.completions.create(
                model="fake-model",
                messages=[{"role": "user", "content": f"Participant {i}. {PROMPT}"}],
                temperature=1.0,
            )
            return done.choices[0].message.content or ""

    wall, cpu = time.perf_counter(), time.process_time()
    replies = await asyncio.gather(*(one(i) for i in range(n)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await client.close()
    return wall, cpu, sum(1 for r in replies if r)


def worker_pool(n: int, c: int, urls: str) -> dict[str, Any]:
    """personasim on a pool: `--base-url` given once per replica (comma-separated here)."""
    sys.path.insert(0, str(HERE))
    from bench_decisions import timed_run

    with tempfile.TemporaryDirectory(prefix="personasim-pool-") as tmp:
        base_urls = urls.split(",")
        timing = timed_run(
            Path(tmp), n, model="openai:fake-model", base_url=base_urls, concurrency=c
        )
    return {
        "round_s": timing.round.wall,
        "cpu_s": timing.round.cpu,
        "calls": timing.calls,
        "peak_rss_mb": peak_rss_mb(),
    }


def worker_plain(n: int, c: int, url: str) -> dict[str, Any]:
    wall, cpu, calls = asyncio.run(_plain(n, c, url))
    return {"round_s": wall, "cpu_s": cpu, "calls": calls, "peak_rss_mb": peak_rss_mb()}


def worker_instant(n: int, repeats: int) -> dict[str, Any]:
    """Framework cost per decision with an instant model: `repeats` runs, per-run round / N."""
    sys.path.insert(0, str(HERE))
    from bench_decisions import InstantBackend, timed_run

    with tempfile.TemporaryDirectory(prefix="personasim-instant-") as tmp:
        timed_run(Path(tmp), 50, backend=InstantBackend())  # warm-up
        runs = [timed_run(Path(tmp), n, backend=InstantBackend()) for _ in range(repeats)]
    return {
        "wall_ms": [1000 * r.round.wall / r.decisions for r in runs],
        "cpu_ms": [1000 * r.round.cpu / r.decisions for r in runs],
        "peak_rss_mb": peak_rss_mb(),
    }


# -- the fake endpoint -------------------------------------------------------------------------


@contextmanager
def fake_endpoint(latency: float, cap: int) -> Iterator[str]:
    """tests/fake_openai.py in its own process, capped at `cap` requests in flight."""
    command = [
        sys.executable,
        str(FAKE_SERVER),
        "--port",
        "0",
        "--latency",
        str(latency),
        "--max-in-flight",
        str(cap),
        "--no-record",
        "--reply",
        REPLY,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit(f"the fake server did not start (it said {url!r})")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def endpoint_stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/_fake/stats", timeout=10) as page:
        return dict(json.load(page))


# -- driving the workers -----------------------------------------------------------------------


@dataclass
class Row:
    contender: str
    n: int
    c: int
    latency: float
    result: dict[str, Any] | None
    note: str = ""
    load: tuple[float, float] = (0.0, 0.0)

    @property
    def ceiling(self) -> float:
        return math.ceil(self.n / self.c) * self.latency


def run_worker(command: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"exit {done.returncode}: {' | '.join(tail)}")
    return dict(json.loads(lines[-1]))


def measure_round(contender: str, n: int, c: int, latency: float, mesa_python: Path | None) -> Row:
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark-dummy"}
    load_before = os.getloadavg()[0]
    with fake_endpoint(latency, c) as url:
        if contender == "mesa-llm":
            assert mesa_python is not None
            command = [str(mesa_python), str(MESA_WORKER), str(n), str(c), url]
        else:
            command = [sys.executable, __file__, "--worker", contender, str(n), str(c), url]
        try:
            result: dict[str, Any] | None = run_worker(command, env, timeout=600)
            note = ""
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            result, note = None, f"failed: {exc}"
        stats = endpoint_stats(url)
    if result is not None:
        result["rejected"] = stats["rejected"]
        result["requests"] = stats["requests"]
        result["peak_in_flight"] = stats["peak_in_flight"]
    return Row(contender, n, c, latency, result, note, (load_before, os.getloadavg()[0]))


def ensure_mesa_llm(venv: Path) -> tuple[Path | None, str]:
    """mesa-llm in its own venv (it needs another Mesa); installed with pip on first use."""
    python = venv / "bin" / "python"
    probe = "import mesa_llm, importlib.metadata as m; print(m.version('mesa-llm'))"
    check = [str(python), "-c", probe]
    if python.exists():
        done = subprocess.run(check, capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return python, done.stdout.strip()
    print(f"installing mesa-llm into {venv} (first run only) ...", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "mesa-llm"],
            check=True,
            timeout=1800,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return None, f"not installed: {exc}"
    done = subprocess.run(check, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None, f"not importable: {done.stderr.strip().splitlines()[-1:]}"
    return python, done.stdout.strip()


# -- report ------------------------------------------------------------------------------------


def print_rounds(rows: list[Row]) -> None:
    print("\nRound against the fake endpoint (capped at C in flight; L = latency per call)")
    header = (
        f"{'contender':<12}{'N':>7}{'C':>5}{'L s':>5}{'round s':>9}{'ceiling s':>10}"
        f"{'× ceiling':>10}{'CPU ms/call':>12}{'rejected':>9}{'requests':>9}"
        f"{'peak MB':>9}{'load 1-min':>12}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        r = row.result
        load = f"{row.load[0]:.1f}→{row.load[1]:.1f}"
        if r is None:
            print(f"{row.contender:<12}{row.n:>7}{row.c:>5}{row.latency:>5g}  {row.note}")
            continue
        print(
            f"{row.contender:<12}{row.n:>7}{row.c:>5}{row.latency:>5g}{r['round_s']:>9.2f}"
            f"{row.ceiling:>10.1f}{r['round_s'] / row.ceiling:>10.3f}"
            f"{1000 * r['cpu_s'] / max(r['calls'], 1):>12.2f}{r['rejected']:>9}"
            f"{r['requests']:>9}{r['peak_rss_mb']:>9.0f}{load:>12}"
            + (
                "  (this mesa-llm version has no step cap: all N at once)"
                if r.get("capped") is False
                else ""
            )
        )


def print_targets(rows: list[Row], instant: dict[str, Any] | None, big: tuple[int, int]) -> None:
    def ours(n: int) -> dict[str, Any] | None:
        for row in rows:
            if row.contender == "personasim" and row.n == n and row.result:
                return {**row.result, "ceiling": row.ceiling}
        return None

    small, large = ours(1000), ours(big[0])
    targets: list[tuple[str, str, str, bool | None]] = []

    def ratio_target(label: str, r: dict[str, Any] | None, limit: float) -> None:
        if r is None:
            targets.append((label, f"≤ {limit}× (0 rejected)", "not measured", None))
            return
        ratio = r["round_s"] / r["ceiling"]
        value = f"{ratio:.3f}× ({r['rejected']} rejected)"
        met = ratio <= limit and not r["rejected"]
        targets.append((label, f"≤ {limit}× (0 rejected)", value, met))

    ratio_target("round, N=1000, C=64, L=1 s", small, 1.03)
    ratio_target(f"round, N={big[0]}, C={big[1]}, L=1 s", large, 1.05)
    cpu = [1000 * r["cpu_s"] / r["calls"] for r in (small, large) if r]
    if cpu:
        values = " / ".join(f"{v:.2f} ms" for v in cpu)
        targets.append(("client CPU per call (N=1000 / large N)", "≤ 2 ms", values, max(cpu) <= 2))
    if instant:
        p50 = statistics.median(instant["wall_ms"])
        label = "framework per decision, instant model (p50 of runs)"
        targets.append((label, "≤ 0.8 ms", f"{p50:.2f} ms", p50 <= 0.8))
    if large:
        mb = large["peak_rss_mb"]
        targets.append((f"peak memory at {big[0]} agents", "≤ 1024 MB", f"{mb:.0f} MB", mb <= 1024))
    print("\nTargets (issue 15, part 3)")
    for label, target, value, met in targets:
        verdict = {True: "met", False: "NOT met", None: "-"}[met]
        print(f"  {label:<52} {target:<22} {value:<26} {verdict}")


# -- one model on two replicas (issue 29, benchmark a) ------------------------------------------


def pool_benchmark(
    n: int = 640,
    c: int = 64,
    cap: int = 32,
    latency: float = 1.0,
    replicas: int = 2,
    baseline: bool = True,
) -> int:
    """N decisions with `--base-url` given once per fake server, each server capped at `cap`
    requests in flight (one more is rejected with 429 and counted): the round against its
    ceiling ⌈N/C⌉·L, each server's share of the requests, and the rejections."""
    print(
        f"personasim pool benchmark  python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f} at start"
    )
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark-dummy"}
    with contextlib.ExitStack() as servers:
        urls = [servers.enter_context(fake_endpoint(latency, cap)) for _ in range(replicas)]
        command = [sys.executable, __file__, "--worker", "pool", str(n), str(c), ",".join(urls)]
        result = run_worker(command, env, timeout=600)
        stats = [endpoint_stats(url) for url in urls]
    ceiling = math.ceil(n / c) * latency
    ratio = result["round_s"] / ceiling
    requests = sum(s["requests"] for s in stats)
    rejected = sum(s["rejected"] for s in stats)
    shares = [s["requests"] / requests for s in stats]
    print(
        f"\nN={n} decisions, C={c}, {replicas} fake servers each capped at {cap} in flight, "
        f"L={latency:g} s per answer"
    )
    for index, (s, share) in enumerate(zip(stats, shares, strict=True), start=1):
        print(
            f"  server {index}: {s['requests']} requests ({share:.1%}), peak {s['peak_in_flight']}"
            f" in flight, {s['rejected']} rejected"
        )
    print(
        f"  round {result['round_s']:.2f} s, ceiling {ceiling:.1f} s: {ratio:.3f}× ceiling; "
        f"client CPU {1000 * result['cpu_s'] / max(result['calls'], 1):.2f} ms/call; peak "
        f"{result['peak_rss_mb']:.0f} MB; load {os.getloadavg()[0]:.2f} at the end"
    )
    if baseline:  # the same run on one server capped at C, on the same machine and load
        print_pool_baseline(measure_round("personasim", n, c, latency, None))
    print("\nTargets (issue 29, benchmark a)")
    checks = [
        ("round", "≤ 1.10× ceiling", f"{ratio:.3f}×", ratio <= 1.10),
        ("each server's share", "40–60%", " / ".join(f"{v:.1%}" for v in shares),
         all(0.40 <= v <= 0.60 for v in shares)),
        ("requests rejected", "0", str(rejected), rejected == 0),
    ]  # fmt: skip
    for label, target, value, met in checks:
        print(f"  {label:<22} {target:<18} {value:<18} {'met' if met else 'NOT met'}")
    return 0


def print_pool_baseline(single: Row) -> None:
    if single.result is None:
        print(f"  baseline on one server: {single.note}")
        return
    result = single.result
    print(
        f"  baseline, same run on one server capped at {single.c}: {result['round_s']:.2f} s, "
        f"{result['round_s'] / single.ceiling:.3f}× ceiling, {result['rejected']} rejected, "
        f"client CPU {1000 * result['cpu_s'] / max(result['calls'], 1):.2f} ms/call (the "
        f"machine's own excess; load {os.getloadavg()[0]:.2f})"
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        kind, *rest = argv[1:]
        if kind == "instant":
            out = worker_instant(int(rest[0]), int(rest[1]))
        elif kind == "pool":
            out = worker_pool(int(rest[0]), int(rest[1]), rest[2])
        else:
            n, c, url = int(rest[0]), int(rest[1]), rest[2]
            out = (worker_personasim if kind == "personasim" else worker_plain)(n, c, url)
        print(json.dumps(out))
        return 0

    # `kill` (SIGTERM) unwinds like Ctrl-C, so the fake server and workers are stopped too
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    parser = argparse.ArgumentParser(description="a round at the latency floor, side by side")
    parser.add_argument("--quick", action="store_true", help="N=200/C=32 and N=1000/C=128, L=0.5 s")
    parser.add_argument(
        "--smoke", action="store_true", help="one round, N=20/C=4, L=0.05 s (the test's run)"
    )
    parser.add_argument("--no-mesa-llm", action="store_true", help="skip the mesa-llm contender")
    parser.add_argument("--mesa-llm-venv", type=Path, default=DEFAULT_MESA_VENV)
    parser.add_argument("--latency", type=float, default=None, help="L in seconds (default 1)")
    parser.add_argument(
        "--pool",
        action="store_true",
        help="only (a) of issue 29: 640 decisions over two replicas capped at 32, C=64, L=1 s",
    )
    args = parser.parse_args(argv)
    if args.pool and args.smoke:  # the test's run: N=40, C=8, 4 per server, L=0.05 s
        return pool_benchmark(n=40, c=8, cap=4, latency=args.latency or 0.05, baseline=False)
    if args.pool:
        return pool_benchmark(latency=args.latency or 1.0)

    latency = args.latency or (0.05 if args.smoke else 0.5 if args.quick else 1.0)
    small, big = ((1000, 64), (10_000, 256))
    if args.quick:
        small, big = (200, 32), (1000, 128)
    sizes = [small, big]
    if args.smoke:
        small = big = (20, 4)
        sizes = [small]
    started = time.perf_counter()
    print(
        f"personasim round benchmark  python {platform.python_version()}, {platform.platform()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
    )
    mesa_python: Path | None = None
    if not args.no_mesa_llm:
        mesa_python, mesa_version = ensure_mesa_llm(args.mesa_llm_venv)
        print(f"mesa-llm: {mesa_version}")

    instant: dict[str, Any] | None = None
    if not args.smoke:  # the smoke run checks the rounds only
        n_instant, repeats = small[0], 5
        instant = run_worker(
            [sys.executable, __file__, "--worker", "instant", str(n_instant), str(repeats)],
            dict(os.environ),
            timeout=600,
        )
        wall = instant["wall_ms"]
        print(
            f"\nFramework cost per decision, instant model, N={n_instant}, {repeats} runs: "
            "round wall / N "
            f"p50 {statistics.median(wall):.2f} ms (runs: {', '.join(f'{v:.2f}' for v in wall)}); "
            f"CPU p50 {statistics.median(instant['cpu_ms']):.2f} ms; load {os.getloadavg()[0]:.2f}"
        )

    rows: list[Row] = []
    for n, c in sizes:
        contenders = ["personasim", "plain-asyncio"]
        if mesa_python is not None and (n, c) == small:
            contenders.append("mesa-llm")
        for contender in contenders:
            rows.append(measure_round(contender, n, c, latency, mesa_python))
            print(f"  {contender} N={n} C={c}: done", flush=True)
    print_rounds(rows)
    if not (args.quick or args.smoke):
        print_targets(rows, instant, big)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
