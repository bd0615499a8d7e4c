"""What bench_faults' faults must cost a round, by simulation (no personasim, no HTTP).

Why: a round waits for its slowest unit, and a unit's requests are sequential, so a run's
fault cost is set by the longest chain of faults some unit meets, not by the average. This
script plays one round of bench_faults' trust-forecast (N units of two sequential decisions, C
slots handed out first come first served, every answer and every fault after L seconds) as a
discrete-event simulation, with the faults drawn per request as bench_faults draws them, and
each fault costing what the client's rules make it cost:

- a 429 waits its Retry-After (1 s) before the retry (`--retry-after`);
- a 500 waits the retry schedule's first backoff (0.5 s plus up to 0.5 s of jitter; a fixed
  `--backoff`);
- a hang is duplicated after the hedge delay (`--hedge`, default 0.85 s: 1.5 × a p95 of about
  0.57 s), the duplicate sent beyond the limit, its own outcome drawn anew;
- a malformed reply is re-asked (one more request).

It prints the mean round of fault-free and faulty runs over seeds, and the whole run's ratio
with `--overhead` seconds of start-up and metrics in both (about 4.7 s on 2 cores). The model
leaves out CPU (it is an ideal client), so it gives the floor of what the rules allow.

    python benchmarks/fault_floor.py                 # 200×5 and 1,000×10, one endpoint
    python benchmarks/fault_floor.py --hedge 2       # the hedge delay's old 2 s floor
    python benchmarks/fault_floor.py --retry-after 0 --backoff 0   # faults cost latency only

The last is the bound of a pool so large that every failed request finds an endpoint that has
not failed it: each fault then costs only its own latency.
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
from dataclasses import dataclass

FAULTS = (("429", 0.10), ("500", 0.05), ("hang", 0.02), ("malformed", 0.05))
"""bench_faults.FAULTS, by kind."""


@dataclass(frozen=True)
class Rules:
    latency: float = 0.5
    retry_after: float = 1.0
    backoff: tuple[float, float] = (0.5, 1.0)
    hedge: float = 0.85


def draw(rng: random.Random, faulty: bool) -> str:
    if not faulty:
        return "ok"
    r = rng.random()
    for kind, p in FAULTS:
        if r < p:
            return kind
        r -= p
    return "ok"


def one_round(units: int, slots: int, rules: Rules, faulty: bool, seed: int) -> float:
    """The time the round's last unit finishes its second decision."""
    rng = random.Random(seed)
    events: list[tuple[float, int, str, int]] = []
    waiting: list[int] = []  # units waiting for a slot, first come first served
    steps = [0] * units
    free, order, end = slots, 0, 0.0

    def at(time: float, what: str, unit: int) -> None:
        nonlocal order
        order += 1
        heapq.heappush(events, (time, order, what, unit))

    def send(now: float) -> None:
        nonlocal free
        while free and waiting:
            unit = waiting.pop(0)
            free -= 1
            kind = draw(rng, faulty)
            at(now + (rules.hedge if kind == "hang" else rules.latency), kind, unit)

    waiting.extend(range(units))
    send(0.0)
    while events:
        now, _, kind, unit = heapq.heappop(events)
        if kind == "wake":
            waiting.append(unit)
        elif kind == "hang":  # the duplicate goes beyond the limit; the hung one keeps its slot
            again = draw(rng, faulty)
            at(now + (rules.hedge if again == "hang" else rules.latency), f"{again}+", unit)
            continue
        else:
            free += 1
            kind = kind.rstrip("+")
            if kind == "ok":
                steps[unit] += 1
                if steps[unit] < 2:
                    waiting.append(unit)
                end = max(end, now)
            elif kind == "malformed":
                waiting.append(unit)
            elif kind == "429":
                at(now + rules.retry_after, "wake", unit)
            elif kind == "500":
                at(now + rng.uniform(*rules.backoff), "wake", unit)
        send(now)
    return end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200x5,1000x10", help="AGENTSxROUNDS, comma-separated")
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--backoff", type=float, default=None, help="fixed 5xx backoff, seconds")
    parser.add_argument("--hedge", type=float, default=0.85, help="hedge delay, seconds")
    parser.add_argument("--overhead", type=float, default=4.7, help="start-up and metrics, s")
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    backoff = (0.5, 1.0) if args.backoff is None else (args.backoff, args.backoff)
    rules = Rules(args.latency, args.retry_after, backoff, args.hedge)
    print(f"{'size':>9}{'round, fault-free':>19}{'round, faulty':>15}{'run ratio':>11}")
    for size in args.sizes.split(","):
        agents, rounds = (int(x) for x in size.lower().split("x"))
        clean = one_round(agents, args.concurrency, rules, False, 0)
        faulty = statistics.mean(
            one_round(agents, args.concurrency, rules, True, seed) for seed in range(args.seeds)
        )
        ratio = (args.overhead + rounds * faulty) / (args.overhead + rounds * clean)
        label = f"{agents}×{rounds}"
        print(f"{label:>9}{clean:>17.2f} s{faulty:>13.2f} s{ratio:>10.2f}×")


if __name__ == "__main__":
    main()
