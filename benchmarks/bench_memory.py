"""Benchmark: peak memory of a whole trust-population run (setup, round, metrics, reports).

Why: a population study wants 10^5 agents; events stream to SQLite, so memory should grow with
the agents and what the metrics read, not with the whole log (docs/performance.md). Each N runs
in its own process, so its peak resident memory is its own; the model answers instantly
(benchmarks/bench_decisions.py's `InstantBackend`), so the run measures the framework alone.

    python benchmarks/bench_memory.py [--n 10000 100000]
    python benchmarks/bench_memory.py --resume --n 100000   # resuming a run stopped after its
                                                            # round: every unit re-derived
"""

from __future__ import annotations

import argparse
import json
import os
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


class StoppedAfterTheRound(RuntimeError):
    """Raised after the round when STOP_ENV is set: the run ends interrupted, every unit logged."""


STOP_ENV = "PERSONASIM_BENCH_STOP_AFTER_ROUND"


def resumable_run(n: int, out: Path) -> dict[str, float]:
    """The worst case for resume's memory: a run of N stopped after its whole round (run here
    with STOP_ENV set), then resumed (run here without it): each unit is re-derived from the
    log, its answers held by `ResumeState` until then."""
    sys.path.insert(0, str(HERE))
    from bench_decisions import InstantBackend

    from personasim.scenarios.trust.population import TrustPopulation
    from personasim.simulation import run_scenario

    class Stoppable(TrustPopulation):
        async def play_round(self, sim: object, round_index: int) -> None:
            await super().play_round(sim, round_index)  # type: ignore[arg-type]
            if os.environ.get(STOP_ENV):
                raise StoppedAfterTheRound(f"stopped after round {round_index} (benchmark)")

    started = time.perf_counter()
    try:
        result = run_scenario(
            Stoppable, {"n_personas": n, "population": "synthetic"}, backend=InstantBackend(),
            out=out, use_cache=False, progress=False, resume=not os.environ.get(STOP_ENV),
        )  # fmt: skip
        decisions = result.manifest["validity"]["overall"]["decisions"]
    except StoppedAfterTheRound:
        decisions = 0
    return {
        "n": n,
        "decisions": decisions,
        "wall_s": round(time.perf_counter() - started, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def child(arguments: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *arguments], capture_output=True, text=True, env=env
    )
    if out.returncode != 0:
        sys.exit(f"{arguments} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def resume_rows(sizes: list[int]) -> None:
    header = f"{'agents':>9}{'first run, peak MB':>20}{'resume: decisions':>19}{'wall s':>9}"
    print(f"{header}{'peak MB':>9}")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="personasim-memory-") as tmp:
            out = str(Path(tmp) / "run")
            first = child(["--resume-child", str(n), out], {**os.environ, STOP_ENV: "1"})
            row = child(["--resume-child", str(n), out])
        print(
            f"{n:>9,}{first['peak_rss_mb']:>20,}{row['decisions']:>19,}{row['wall_s']:>9}"
            f"{row['peak_rss_mb']:>9,}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10_000])
    parser.add_argument("--resume", action="store_true", help="resume's peak (see above)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--resume-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(one_run(args.child)))
        return
    if args.resume_child is not None:
        print(json.dumps(resumable_run(int(args.resume_child[0]), Path(args.resume_child[1]))))
        return
    if args.resume:
        resume_rows(args.n)
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
