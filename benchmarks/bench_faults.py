"""Benchmark: a long run through a faulty endpoint, against the same run without faults.

Why: a run of many rounds sends tens of thousands of requests, and a real endpoint answers some
of them with 429 (with Retry-After), 500, a reply that ignores the format, or not at all. Such a
run must go to its end by itself (no manual resume), account for every decision (none silently
dropped), lose few decisions, bound the requests per call, and take not much longer than the
same run on a healthy endpoint. This script runs, in one invocation and against one fake
endpoint (tests/fake_openai.py, in this process, answering after `--latency` seconds):

1. the run fault-free;
2. the same run with, per request, 10% HTTP 429 (Retry-After: 1 s), 5% HTTP 500, 2% hangs (the
   server never answers; the client's hedge or timeout must act) and 5% malformed replies
   (valid JSON whose text ignores the requested format: the decision re-asks);

each as `personasim run trust-forecast` in its own process: N trustors (one archetype,
synthetic personas) over R rounds, a forecast and an action per agent and round, for each size
N×R of `--sizes` (default 200×5 and 1,000×10, about 6 minutes on 2 idle cores). It prints each
run's numbers, read from its log, the 1-minute load average before and after each run (the
fault-free run is the baseline only on a machine that is not busy: at a load over the number
of cores both runs slow down and the ratio says less), and per size the targets with the
measured values.

    python benchmarks/bench_faults.py [--sizes 200x5,1000x10] [--smoke]
    python benchmarks/bench_faults.py --endpoints 2   # a pool of two such servers

With `--endpoints N` the runs go to a pool of N fake servers (`--base-url` N times), each with
its own seeded draw of the same faults: a 429, a 5xx or a hang on one is re-sent at once to
another (simulation/llm/endpoint_pool.py) instead of waiting out the Retry-After or backoff.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from fake_openai import FakeOpenAIServer  # noqa: E402

from personasim.simulation import SQLiteEventStore  # noqa: E402
from personasim.simulation.log.event_log import latest_attempts  # noqa: E402

FAULTS = {"429:1": 0.10, "500": 0.05, "hang": 0.02, "malformed": 0.05}
"""Per request: the fault drawn and its probability (else a normal answer)."""
TARGETS = {"failed_share": 0.005, "max_attempts": 5, "wall_ratio": 1.5}


def responder(body: dict[str, Any]) -> str:
    """A well-formed answer to either question of trust-forecast (forecast or action)."""
    asked = " ".join(str(m.get("content", "")) for m in body["messages"])
    if "I will send" in asked:
        return "I expect to trust a little. Finally, I will send 4 dollars."
    return "THOUGHT: I trust a little. ACTION: give. Finally, I will give 4 dollars."


@dataclass
class Outcome:
    """One run, as its exit code, manifest and log say, and the load average around it."""

    label: str
    load: tuple[float, float]
    wall_s: float
    exit_code: int
    status: str
    expected: int
    accounted: int
    failed: Counter[str]
    calls: int
    attempts: Counter[int]
    hedged: int
    beyond_limit: int
    requests: int
    faults: Counter[str]

    @property
    def silent_drops(self) -> int:
        return self.expected - self.accounted

    @property
    def failed_share(self) -> float:
        return sum(self.failed.values()) / self.expected

    @property
    def max_attempts(self) -> int:
        return max(self.attempts, default=0)

    @property
    def needs_resume(self) -> bool:
        """Exit 0 (valid) or 3 (finished, not valid) leave a complete run; else resume."""
        return self.exit_code not in (0, 3) or self.status != "complete"


def run_once(
    label: str,
    servers: list[FakeOpenAIServer],
    mix: dict[str, float] | None,
    out: Path,
    size: tuple[int, int],
    args: Any,
) -> Outcome:
    agents, rounds = size
    for index, server in enumerate(servers):
        server.set_fault_mix(mix, seed=args.seed + index)
    before = sum(server.request_count for server in servers)
    urls = [word for server in servers for word in ("--base-url", server.base_url)]
    load_before = os.getloadavg()[0]
    command = [
        sys.executable, "-m", "personasim.simulation.cli.main", "run", "trust-forecast",
        "--n-personas", str(agents), "--archetypes", "M1", "--rounds", str(rounds),
        "--population", "synthetic", "--model", "openai:fake-model",
        *urls, "--concurrency", str(args.concurrency),
        "--timeout", str(args.timeout), "--no-cache", "--no-progress", "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark-dummy"}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 3):
        print(f"[{label}] exit {done.returncode}: {done.stderr.strip()[-600:]}", file=sys.stderr)
    load = (load_before, os.getloadavg()[0])
    print(f"  [{label} {agents}×{rounds}] {wall:.1f} s, load {load[0]:.2f}→{load[1]:.2f}")
    return read_outcome(label, load, out, wall, done.returncode, agents * rounds, servers, before)


def read_outcome(
    label: str,
    load: tuple[float, float],
    out: Path,
    wall: float,
    code: int,
    agent_rounds: int,
    servers: list[FakeOpenAIServer],
    before: int,
) -> Outcome:
    manifest = json.loads((out / "manifest.json").read_text())
    with SQLiteEventStore(out / "events.sqlite") as store:
        events = latest_attempts(store.read())
    decided = set()
    failed: Counter[str] = Counter()
    attempts: Counter[int] = Counter()
    calls = hedged = beyond_limit = 0
    for event in events:
        if event.kind in ("decision.made", "decision.failed"):
            decided.add((event.agent_id, event.round, event.payload["task"]))
            if event.kind == "decision.failed":
                failed[event.payload.get("reason", "unparsable")] += 1
        elif event.kind in ("llm.call", "llm.error"):
            calls += 1
            attempts[event.payload["attempts"]] += 1
            hedged += bool(event.payload.get("hedged"))
            beyond_limit += bool(event.payload.get("beyond_limit"))
    return Outcome(
        label=label,
        load=load,
        wall_s=wall,
        exit_code=code,
        status=manifest["status"],
        expected=agent_rounds * 2,  # a forecast and an action per agent and round
        accounted=len(decided),
        failed=failed,
        calls=calls,
        attempts=attempts,
        hedged=hedged,
        beyond_limit=beyond_limit,
        requests=sum(server.request_count for server in servers) - before,
        faults=sum((Counter(server.faults_served) for server in servers), Counter()),
    )


def report(clean: Outcome, faulty: Outcome, size: tuple[int, int], args: Any) -> bool:
    agents, rounds = size
    print(
        f"\ntrust-forecast, {agents} agents × {rounds} rounds (a forecast and an action "
        f"each: {clean.expected} decisions), concurrency {args.concurrency}, {args.endpoints} "
        f"endpoint(s), latency {args.latency} s, --timeout {args.timeout} s"
    )
    print(f"faults per request: {', '.join(f'{k} {v:.0%}' for k, v in FAULTS.items())}")
    header = (
        f"{'run':<11}{'wall s':>9}{'exit':>6}{'status':>11}{'decided':>9}{'dropped':>9}"
        f"{'failed':>8}{'(calls)':>8}{'calls':>8}{'requests':>10}{'hedged':>8}{'beyond':>8}"
        f"{'max att.':>9}{'load':>12}"
    )
    print(header)
    for o in (clean, faulty):
        load = f"{o.load[0]:.2f}→{o.load[1]:.2f}"
        print(
            f"{o.label:<11}{o.wall_s:>9.1f}{o.exit_code:>6}{o.status:>11}{o.accounted:>9}"
            f"{o.silent_drops:>9}{sum(o.failed.values()):>8}{o.failed['call_failed']:>8}"
            f"{o.calls:>8}{o.requests:>10}{o.hedged:>8}{o.beyond_limit:>8}{o.max_attempts:>9}"
            f"{load:>12}"
        )
    print(f"faults served: {dict(sorted(faulty.faults.items()))}")
    print(f"attempts per call (faulty run): {dict(sorted(faulty.attempts.items()))}")
    ratio = faulty.wall_s / clean.wall_s
    checks = [
        ("no manual resume", "0", f"{int(clean.needs_resume) + int(faulty.needs_resume)}",
         not (clean.needs_resume or faulty.needs_resume)),
        ("silent drops", "0", str(clean.silent_drops + faulty.silent_drops),
         clean.silent_drops == faulty.silent_drops == 0),
        ("failed decisions", f"≤ {TARGETS['failed_share']:.1%}", f"{faulty.failed_share:.3%}",
         faulty.failed_share <= TARGETS["failed_share"]),
        ("attempts per call", f"≤ {TARGETS['max_attempts']}", str(faulty.max_attempts),
         faulty.max_attempts <= TARGETS["max_attempts"]),
        ("wall faulty / fault-free", f"≤ {TARGETS['wall_ratio']}", f"{ratio:.2f}×",
         ratio <= TARGETS["wall_ratio"]),
    ]  # fmt: skip
    print(f"{'target':<26}{'wanted':>10}{'measured':>12}  met")
    for name, wanted, measured, met in checks:
        print(f"{name:<26}{wanted:>10}{measured:>12}  {'yes' if met else 'NO'}")
    return all(met for *_, met in checks)


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """`200x5,1000x10` → [(200, 5), (1000, 10)]: agents × rounds."""
    sizes = []
    for item in text.split(","):
        agents, sep, rounds = item.strip().lower().replace("×", "x").partition("x")
        if not (sep and agents.isdigit() and rounds.isdigit()) or "0" in (agents, rounds):
            raise argparse.ArgumentTypeError(f"a size is AGENTSxROUNDS (e.g. 200x5), not {item!r}")
        sizes.append((int(agents), int(rounds)))
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=parse_sizes, default="200x5,1000x10", help="AGENTSxROUNDS, comma-separated"
    )
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--endpoints", type=int, default=1, help="fake servers, as one pool")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per answer")
    parser.add_argument("--timeout", type=float, default=10.0, help="the runs' --timeout")
    parser.add_argument("--seed", type=int, default=0, help="of the fault draws")
    parser.add_argument(
        "--smoke", action="store_true", help="20 agents × 2 rounds, 0.05 s latency (a check)"
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.latency, args.concurrency = [(20, 2)], 0.05, 8
    print(
        f"bench_faults: sizes {', '.join(f'{a}×{r}' for a, r in args.sizes)}, "
        f"{args.endpoints} endpoint(s); {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f} at start"
    )
    pairs = []
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="personasim-faults-"))
        servers = [
            stack.enter_context(FakeOpenAIServer(responder, latency=args.latency, record=False))
            for _ in range(args.endpoints)
        ]
        for size in args.sizes:
            where = Path(tmp) / f"{size[0]}x{size[1]}"
            clean = run_once("fault-free", servers, None, where / "clean", size, args)
            faulty = run_once("faulty", servers, FAULTS, where / "faulty", size, args)
            pairs.append((size, clean, faulty))
    met = [report(clean, faulty, size, args) for size, clean, faulty in pairs]
    print("\nwall faulty / fault-free (load average before → after the pair):")
    for (agents, rounds), clean, faulty in pairs:
        print(
            f"  {agents}×{rounds}: {faulty.wall_s / clean.wall_s:.2f}× ({faulty.wall_s:.1f} s / "
            f"{clean.wall_s:.1f} s), load {clean.load[0]:.2f}→{faulty.load[1]:.2f}"
        )
    return 0 if all(met) or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
