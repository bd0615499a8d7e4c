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

    python benchmarks/fault_floor.py --redundant     # idle slots send second copies

`--redundant` is the rule the client does not have: while nobody waits for a slot, every free
slot sends a second copy of a request in flight, so a fault costs a retry only when both copies
fail (the price: answers paid for twice).
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


def one_round(
    units: int, slots: int, rules: Rules, faulty: bool, seed: int, redundant: bool = False
) -> float:
    """The time the round's last unit finishes its second decision.

    Each copy of a request holds a slot; a hang's hedged duplicate takes the hung copy's slot
    over. With `redundant`, slots that would stay idle (nobody waits for one) each send a second
    copy of a request in flight, oldest first; the first answer cancels the other copy, and a
    failure counts only once no copy is left, so a retry never goes out before a Retry-After."""
    rng = random.Random(seed)
    events: list[tuple[float, int, str, int, int]] = []
    waiting: list[int] = []  # units waiting for a slot, first come first served
    steps = [0] * units
    attempt = [0] * units  # the unit's current request; events of an older one are stale
    copies: dict[int, int] = {}  # unit -> copies of its current request in flight, by start
    free, order, end = slots, 0, 0.0

    def at(time: float, what: str, unit: int) -> None:
        nonlocal order
        order += 1
        heapq.heappush(events, (time, order, what, unit, attempt[unit]))

    def send_copy(now: float, unit: int) -> None:
        nonlocal free
        free -= 1
        copies[unit] = copies.get(unit, 0) + 1
        kind = draw(rng, faulty)
        at(now + (rules.hedge if kind == "hang" else rules.latency), kind, unit)

    def send(now: float) -> None:
        while free and waiting:
            unit = waiting.pop(0)
            attempt[unit] += 1
            send_copy(now, unit)
        if redundant and not waiting:
            for unit in [u for u, n in copies.items() if n == 1][:free]:
                send_copy(now, unit)

    waiting.extend(range(units))
    send(0.0)
    while events:
        now, _, kind, unit, sent_as = heapq.heappop(events)
        if kind == "wake":
            waiting.append(unit)
        elif sent_as != attempt[unit] or unit not in copies:
            continue  # a copy cancelled when another answered; its slot is already free
        elif kind == "hang":  # the duplicate goes beyond the limit, then takes the hung slot
            again = draw(rng, faulty)
            at(now + (rules.hedge if again == "hang" else rules.latency), again, unit)
            continue
        else:
            free += 1
            copies[unit] -= 1
            if kind == "ok":
                free += copies.pop(unit)  # the other copy is cancelled
                steps[unit] += 1
                if steps[unit] < 2:
                    waiting.append(unit)
                end = max(end, now)
            elif copies[unit]:
                pass  # another copy is still out
            else:
                del copies[unit]
                if kind == "malformed":
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
    parser.add_argument(
        "--redundant", action="store_true", help="idle slots send second copies (see one_round)"
    )
    args = parser.parse_args()
    backoff = (0.5, 1.0) if args.backoff is None else (args.backoff, args.backoff)
    rules = Rules(args.latency, args.retry_after, backoff, args.hedge)
    print(f"{'size':>9}{'round, fault-free':>19}{'round, faulty':>15}{'run ratio':>11}")
    for size in args.sizes.split(","):
        agents, rounds = (int(x) for x in size.lower().split("x"))
        clean = one_round(agents, args.concurrency, rules, False, 0, args.redundant)
        faulty = statistics.mean(
            one_round(agents, args.concurrency, rules, True, seed, args.redundant)
            for seed in range(args.seeds)
        )
        ratio = (args.overhead + rounds * faulty) / (args.overhead + rounds * clean)
        label = f"{agents}×{rounds}"
        print(f"{label:>9}{clean:>17.2f} s{faulty:>13.2f} s{ratio:>10.2f}×")


if __name__ == "__main__":
    main()
