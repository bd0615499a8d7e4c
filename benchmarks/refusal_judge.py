"""The refusal pipeline's precision and recall with a judge model (a script, not a test).

The grammar marks what no persona could say in character; the judge judges the rest of the
held-out refusal answers (`tests/data/heldout/refusals.jsonl`, the part `tests/
test_heldout_readers.py` only counts) through PersonaGym's own decision task: its pack's prompt
with the persona's description, its verdict line, its re-asks. Prints precision and recall of
the pipeline, and how many answers the judge left unjudged (no readable verdict within its
re-asks). The issue's goal (both at least 0.9) is about a judge able to judge: measure one with
`--judge openai:gpt-4o` (OPENAI_API_KEY). By default the judge is SmolLM2-135M on llama.cpp's
server (the realmodel extra), started here: the figures docs/readers.md quotes for it.

    python benchmarks/refusal_judge.py [--judge SPEC] [--max-repairs 2] [--max-tokens 96]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from personasim.agents import Decision, decide
from personasim.scenarios.persona_gym.refusals import grammar_rules
from personasim.scenarios.persona_gym.scenario import PersonaGymScenario
from personasim.scenarios.persona_gym.tasks import GymTasks
from personasim.simulation import EventLog, LLMClient, Simulation, SQLiteEventStore
from personasim.simulation.llm.client import RetryPolicy
from personasim.simulation.llm.hedging import HedgePolicy
from personasim.simulation.llm.model_spec import make_backend

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from llama_server import serve  # noqa: E402 - the tests' own SmolLM2 server
from test_heldout_readers import jsonl, precision_recall  # noqa: E402 - the held-out split


async def judged(
    spec: str, rows: list[dict[str, Any]], max_repairs: int, max_tokens: int | None
) -> dict[str, Decision]:
    """The judge's decision on each row, one at a time (a local server has one slot, and it
    goes on with a request its client gave up on: no hedged duplicates)."""
    retry = RetryPolicy(timeout=120.0, hedge=HedgePolicy(enabled=False))
    with tempfile.TemporaryDirectory() as folder:
        log = EventLog(SQLiteEventStore(Path(folder) / "events.sqlite"))
        client = LLMClient(
            make_backend(spec), cache=None, emit=log.emit, concurrency=1, retry=retry
        )
        sim = Simulation(seed=0, llm=client, log=log)
        sim.round = 1
        tasks = GymTasks(PersonaGymScenario.shipped_prompts(), max_repairs, 0.0, 1.0)
        decisions: dict[str, Decision] = {}
        for done, row in enumerate(rows, 1):
            task = tasks.refusal(row["persona"], row["question"], row["answer"], {})
            if max_tokens is not None:
                request = task.request.model_copy(update={"max_tokens": max_tokens})
                task = replace(task, request=request)
            name = row["id"]
            made = await sim.concurrently({name: lambda: decide(sim, name, task)})  # noqa: B023
            decisions[name] = made[name]
            print(f"\r  judged {done} of {len(rows)}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        await client.aclose()
        return decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", help="the judge's model spec (default: SmolLM2 started here)")
    parser.add_argument("--max-repairs", type=int, default=2, help="re-asks (the scenario's 2)")
    parser.add_argument("--max-tokens", type=int, default=96, help="a reply's length limit")
    args = parser.parse_args()
    rows = jsonl("refusals.jsonl", "heldout")
    marked = {r["id"] for r in rows if grammar_rules(r["answer"], r["persona"])}
    rest = [r for r in rows if r["id"] not in marked]
    started = time.perf_counter()
    with serve() if args.judge is None else nullcontext(None) as base_url:
        spec = args.judge or f"openai:smollm2@{base_url}"
        decisions = asyncio.run(judged(spec, rest, args.max_repairs, args.max_tokens))
    verdicts = {i: bool(d.value["out_of_persona"]) for i, d in decisions.items() if d.ok}
    truth = {r["id"]: bool(r["out_of_persona"]) for r in rows}
    flagged = {i: i in marked or verdicts.get(i, False) for i in truth}
    decided = [(flagged[i], truth[i]) for i in truth if i in marked or i in verdicts]
    judge = args.judge or "SmolLM2-135M (llama.cpp's server)"
    print(
        f"refusal pipeline, grammar + {judge} as judge, held-out part: n={len(rows)} "
        f"({sum(truth.values())} out of persona); marked by the grammar {len(marked)}, judged "
        f"{len(verdicts)} ({sum(verdicts.values())} out of persona), unjudged "
        f"{len(decisions) - len(verdicts)}; {time.perf_counter() - started:.0f} s"
    )
    for label, pairs in (
        (
            "every answer, an unjudged one counted as not flagged",
            [(flagged[i], truth[i]) for i in truth],
        ),
        (f"the {len(decided)} answers marked or judged", decided),
    ):
        precision, recall, tp, fp, fn = precision_recall(pairs)
        print(
            f"  {label}: precision {precision:.3f}, recall {recall:.3f} (tp {tp}, fp {fp}, fn {fn})"
        )


if __name__ == "__main__":
    main()
