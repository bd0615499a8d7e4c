"""Benchmark: peak memory of a whole trust-population run (setup, round, metrics, reports).

Why: a population study wants 10^5 agents; events stream to SQLite, so memory should grow with
the agents and what the metrics read, not with the whole log (docs/performance.md). Each N runs
in its own process, so its peak resident memory is its own; the model answers instantly
(benchmarks/bench_decisions.py's `InstantBackend`), so the run measures the framework alone.

    python benchmarks/bench_memory.py [--n 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one_run(n: int) -> dict[str, float]:
    """Run trust-population with N synthetic personas here; peak RSS and wall time."""
    sys.path.insert(0, str(HERE))
    from bench_decisions import InstantBackend

    from personasim.simulation import run_scenario

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="personasim-memory-") as tmp:
        result = run_scenario(
            "trust-population",
            {"n_personas": n, "population": "synthetic"},
            backend=InstantBackend(),
            out=Path(tmp) / "run",
            use_cache=False,
            progress=False,
        )
        decisions = result.manifest["validity"]["overall"]["decisions"]
    return {
        "n": n,
        "decisions": decisions,
        "wall_s": round(time.perf_counter() - started, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10_000])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(one_run(args.child)))
        return
    print(f"{'agents':>9}{'decisions':>11}{'wall s':>9}{'peak MB':>9}")
    for n in args.n:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n)], capture_output=True, text=True
        )
        if out.returncode != 0:
            sys.exit(f"N={n} failed:\n{out.stderr[-2000:]}")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{row['n']:>9,}{row['decisions']:>11,}{row['wall_s']:>9}{row['peak_rss_mb']:>9,}")


if __name__ == "__main__":
    main()
