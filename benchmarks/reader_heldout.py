"""Held-out figures of the math reader with a bound `reader` role (a script, not a test).

Reads every held-out row of the blind math sets (`tests/data/heldout*/`, the 60 % that
`tests/test_heldout_readers.py` only counts) the way a classroom run grades an answer: by the
rules, then by the `reader` role where the rules found it unreadable (`--mode fill`: what
`--role reader=SPEC` does), or also re-reading every value the rules read, a value standing only
where both agree (`--mode confirm`: the classroom's `reader_confirms`). The role sees the
question, as in a run. Prints, per set and in all, wrong readings and answers left without a
value, for the rules alone and for rules and role, beside the goals (≤ 1 % wrong, ≤ 5 % with
no value where a careful grader takes one).

The issue's goals are about a reader able to read: measure one with `--reader
openai:gpt-4o-mini` (OPENAI_API_KEY) or any spec `--role reader=` takes. By default the reader
is SmolLM2-135M on llama.cpp's server (the realmodel extra), started here; `--reader scripted`
is the scripted double, which answers by math-verify (a plumbing check, not a model).

    python benchmarks/reader_heldout.py [--reader SPEC] [--mode fill|confirm] [--sample N]
        [--max-tokens 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from personasim.environments.classroom.numeric_answers import READER_NAME, read_answer
from personasim.simulation import LLMClient, Reading, same_value, with_reader_role
from personasim.simulation.llm.client import RetryPolicy
from personasim.simulation.llm.hedging import HedgePolicy
from personasim.simulation.llm.model_spec import make_backend
from personasim.simulation.runs.tools.reader_role import FOUND_NONE, RoleReader

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "tests"))
from llama_server import serve  # noqa: E402 - the tests' own SmolLM2 server
from test_heldout_readers import NO_VALUE, part  # noqa: E402 - the held-out split

WRONG_GOAL = 0.01
NO_VALUE_GOAL = 0.05


def held_out_rows() -> Iterator[tuple[str, dict[str, Any]]]:
    """(set, row) for every held-out row of every blind math set, in file order."""
    for folder in sorted(DATA.glob("heldout*"), key=lambda f: (len(f.name), f.name)):
        for path in sorted(folder.glob("*math*.jsonl")):
            corpus = folder.name.removeprefix("heldout").lstrip("_") or "v1"
            name = path.name if corpus == "v1" else f"{corpus}/{path.name}"
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line) if line.strip() else None
                if row is not None and part(name, str(row["id"])) == "heldout":
                    yield corpus, row


def verdict(label: Any, reading: Reading) -> str:
    """right, wrong (a value other than the label, or one where a grader takes none) or
    no value (none where the label has one)."""
    valued = label not in NO_VALUE
    if reading.ok:
        return "right" if valued and same_value(reading.value, float(label)) else "wrong"
    return "no value" if valued else "right"


async def read_one(
    role: RoleReader, reply: str, question: str | None, confirm: bool
) -> tuple[Reading, Reading, Reading | None]:
    """The rules' reading, the graded one, and the role's own (None: it was not asked)."""
    rules = read_answer(reply, question)
    asked: list[Reading | None] = [None]

    async def ask() -> Reading | None:
        asked[0] = await role(READER_NAME, reply, {"problem": question} if question else {})
        return asked[0]

    graded = await with_reader_role(rules, ask, confirm)
    return rules, graded, asked[0]


async def read_all(
    spec: str, rows: list[tuple[str, dict[str, Any]]], confirm: bool, max_tokens: int
) -> list[tuple[str, Any, Reading, Reading, Reading | None]]:
    """(set, label, the rules' reading, the graded reading, the role's) per row, one request
    at a time (a local server has one slot)."""
    retry = RetryPolicy(timeout=120.0, hedge=HedgePolicy(enabled=False))
    client = LLMClient(make_backend(spec), cache=None, concurrency=1, retry=retry)
    role, out = RoleReader(client, max_tokens), []
    for done, (corpus, row) in enumerate(rows, 1):
        read = await read_one(role, row["reply"], row.get("question"), confirm)
        out.append((corpus, row["label"], *read))
        if done % 100 == 0 or done == len(rows):
            print(f"  read {done} of {len(rows)}", file=sys.stderr, flush=True)
    await client.aclose()
    return out


def _kind_of_reply(role: Reading) -> str:
    """A value, a judgement that there is none, or a reply that broke the `Value:` format."""
    if role.ok:
        return "a value"
    return "no value" if role.reason == FOUND_NONE else "format broken"


def _rate(part_: int, whole: int) -> str:
    return f"{part_} ({part_ / whole:.1%})" if whole else f"{part_} (undefined: n = 0)"


def report(results: list[tuple[str, Any, Reading, Reading, Reading | None]]) -> list[str]:
    """One line per set and one for all: rows, wrong and no value, rules alone → with role."""
    sets = [*sorted({r[0] for r in results}, key=lambda name: int(name[1:])), "all"]
    lines = []
    for name in sets:
        mine = [r for r in results if name in ("all", r[0])]
        valued = sum(r[1] not in NO_VALUE for r in mine)
        alone = Counter(verdict(r[1], r[2]) for r in mine)
        graded = Counter(verdict(r[1], r[3]) for r in mine)
        lines.append(
            f"  {name:>4}: n={len(mine)} ({valued} with a value); role asked "
            f"{sum(r[4] is not None for r in mine)}; wrong {_rate(alone['wrong'], len(mine))} → "
            f"{_rate(graded['wrong'], len(mine))}; no value {_rate(alone['no value'], valued)}"
            f" → {_rate(graded['no value'], valued)}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", help="the reader role's model spec (default: SmolLM2 here)")
    parser.add_argument(
        "--mode", choices=("fill", "confirm"), default="fill",
        help="fill: the role reads what the rules could not; confirm: it also re-reads values",
    )  # fmt: skip
    parser.add_argument("--sample", type=int, help="a seeded sample of N held-out rows")
    parser.add_argument("--max-tokens", type=int, default=32, help="a role reply's length limit")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    args = parser.parse_args()
    rows = list(held_out_rows())
    if args.sample is not None:
        rows = random.Random(args.seed).sample(rows, min(args.sample, len(rows)))
    started = time.perf_counter()
    with serve() if args.reader is None else nullcontext(None) as base_url:
        spec = args.reader or f"openai:smollm2@{base_url}"
        results = asyncio.run(read_all(spec, rows, args.mode == "confirm", args.max_tokens))
    reader = args.reader or "SmolLM2-135M (llama.cpp's server)"
    graded = Counter(verdict(r[1], r[3]) for r in results)
    valued = sum(r[1] not in NO_VALUE for r in results)
    met = graded["wrong"] <= WRONG_GOAL * len(results) and graded["no value"] <= (
        NO_VALUE_GOAL * valued
    )
    print(
        f"math reader, rules + {reader} as the reader role ({args.mode}), held-out rows: "
        f"{len(results)}; {time.perf_counter() - started:.0f} s. Wrong and no value, rules "
        f"alone → with the role:"
    )
    print("\n".join(report(results)))
    replies = Counter(_kind_of_reply(r[4]) for r in results if r[4] is not None)
    print(f"  the role's replies: {dict(replies)}")
    decided = Counter(r[3].status for r in results if r[4] is not None)
    print(f"  the answers it was asked about, as graded: {dict(decided)}")
    print(f"  goals (≤ 1 % wrong, ≤ 5 % no value) met: {'yes' if met else 'no'}")


if __name__ == "__main__":
    main()
