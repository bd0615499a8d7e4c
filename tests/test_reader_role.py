"""The `reader` role in a run: a bound model reads a classroom answer no rule can read, its
value is marked as the role's, its calls are logged under the role; unbound, the answer stays
unreadable and counts against validity. Real HTTP to a local fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAIServer

from personasim.environments.classroom.gsm8k import shipped_problems
from personasim.simulation import SQLiteEventStore, run_scenario

GOLDS = {p.question: p.gold for p in shipped_problems()}
PARAMS = {
    "n_questions": 3,
    "repetitions": 1,
    "strategies": ["zero-shot"],
    "races": ["none"],
    "orders": ["before"],
}


def written(gold: float) -> str:
    return f"{gold:g}"


def responder(body: dict[str, Any]) -> str:
    """Students give the right number with no statement a rule reads; the judge scores; the
    reader reads the number back."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "Score: N" in body["messages"][0]["content"]:
        return "The low answer struggles visibly.\nScore: 2"
    if prompt.startswith("You read another model's reply"):
        text = prompt.split("----------\n", 1)[1]
        gold = next(g for q, g in GOLDS.items() if written(g) in text)
        return f"Value: {written(gold)}"
    gold = next(g for q, g in GOLDS.items() if q in prompt)
    return f"I think {written(gold)} could be it, more or less, though I'm not sure.\nBye!"


def classroom_run(tmp_path: Path, server: FakeOpenAIServer, reader: bool) -> Any:
    spec = f"openai:fake@{server.base_url}"
    roles = {"judge": [spec], **({"reader": [spec]} if reader else {})}
    return run_scenario(
        "classroom",
        PARAMS,
        model=spec,
        roles=roles,
        out=tmp_path / ("with" if reader else "without"),
        use_cache=False,
        progress=False,
    )


def readings(run_dir: Path) -> list[dict[str, Any]]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read(["reading.made"])]


def test_a_bound_reader_reads_what_no_rule_can(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        result = classroom_run(tmp_path, server, reader=True)
    read = readings(result.run_dir)
    assert read and all(r["status"] == "read" and r["by"] == "reader role" for r in read)
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        graded = [e.payload for e in store.read(["classroom.graded"])]
        roles = [e.payload.get("role") for e in store.read(["llm.call"])]
    assert all(g["correct"] and g["by"] == "reader role" for g in graded)
    assert roles.count("reader") == len(read)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["roles"]["reader"] == [f"openai:fake@{server.base_url}"]
    assert manifest["validity"]["readings"]["math_answer"]["by"] == {"reader role": len(read)}
    assert result.valid


def test_unbound_the_answers_stay_unreadable_and_the_run_is_not_valid(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        result = classroom_run(tmp_path, server, reader=False)
    read = readings(result.run_dir)
    assert read and all(r["status"] == "unreadable" for r in read)
    entry = result.manifest["validity"]["readings"]["math_answer"]
    assert entry["unread_rate"] == 1.0 and not entry["ok"]
    assert not result.valid
    assert result.report[0].startswith("RUN NOT VALID: more texts than the limit")
