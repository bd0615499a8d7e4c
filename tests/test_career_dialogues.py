"""career-chat as in the paper (seed 003, §3, §5.2): one model's dialogues probed by others, in one
sweep; dialogue files; the reasoning model's two-pass query."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation import RunResult, SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main

SMALL = {"n_users": 4, "n_items": 2, "judge_samples": 0, "bootstrap": 50, "permutations": 50}
GENERATING_TASKS = {"career.user", "career.ooc", "career.assistant"}


def events(run_dir: Path, *kinds: str) -> list[Any]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read(list(kinds)))


def dialogue_texts(run_dir: Path) -> list[tuple[str, str, str]]:
    """Every question and answer of every dialogue, user by user (dialogues interleave in the
    log of the run that made them), each in the order the log has it."""
    said = events(run_dir, "career.question", "career.answer", "career.dialogue_ended")
    lines = [(e.agent_id, e.kind, json.dumps(e.payload, sort_keys=True)) for e in said]
    return sorted(lines, key=lambda line: line[0])  # stable: each user's order stays


@pytest.fixture(scope="module")
def dialogues(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """Dialogues generated once (by the scripted behaviour model, with a wrong-age rate high
    enough that the detector rewrites some questions)."""
    out = tmp_path_factory.mktemp("gen") / "dialogues"
    params = {**SMALL, "scripted_inconsistency": 0.5}
    return run_scenario("career-chat", params, out=out, progress=False, use_cache=False)


def probe_reply(body: dict[str, Any]) -> str:
    """Two probed models that answer the survey differently; anything else is a test failure."""
    assert body.get("logprobs"), f"a request that is not a survey probe: {body['messages'][0]}"
    option = {"probe-a": 1, "probe-b": 5}[body["model"]]
    return json.dumps({"option_id": option, "reason": "fits"})


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_a_sweep_probes_one_set_of_dialogues_with_two_models(
    dialogues: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    source = dialogues.run_dir
    with FakeOpenAIServer(responder=probe_reply) as server:
        code = main(
            [
                "sweep",
                "career-chat",
                "--models",
                "openai:probe-a,openai:probe-b",
                "--base-url",
                server.base_url,
                "--dialogues-from",
                str(source),
                "--n-items",
                "2",
                "--judge-samples",
                "0",
                "--no-cache",
                "--no-progress",
                "--out",
                str(tmp_path / "sweep"),
            ]
        )
        requests = server.requests
    assert code == 0
    usable = sum(e.payload["reason"] != "failed" for e in events(source, "career.dialogue_ended"))
    per_model = 4 * 2 + usable * 2  # BA_user for every user, BA_dialogue for usable dialogues
    assert {r["model"] for r in requests} == {"probe-a", "probe-b"}
    assert len(requests) == 2 * per_model  # nothing but probes reached the endpoint
    digest = hashlib.sha256((source / "events.sqlite").read_bytes()).hexdigest()
    for cell, option in (("openai-probe-a", 1), ("openai-probe-b", 5)):
        run_dir = tmp_path / "sweep" / cell
        assert dialogue_texts(run_dir) == dialogue_texts(source)  # the same dialogues
        calls = {e.payload["task"] for e in events(run_dir, "llm.call")}
        assert calls == {"career.probe"} and not calls & GENERATING_TASKS
        (origin,) = [e.payload for e in events(run_dir, "career.dialogues_source")]
        assert origin["kind"] == "run" and origin["run"] == source.name
        assert origin["sha256"] == digest and origin["users"] == 4
        assert origin["roles"] == {
            "user": ["scripted"],
            "detector": ["scripted"],
            "assistant": ["scripted"],
        }
        chosen = {e.payload["value"] for e in events(run_dir, "decision.made")}
        assert chosen == {option}
        metrics = json.loads((run_dir / "metrics.json").read_text())["metrics"]
        assert (
            metrics["probes"]["profile"]["n"] == 8
            and metrics["probes"]["dialogue"]["n"] == usable * 2
        )
        assert metrics["dialogues"] == dialogues.metrics["metrics"]["dialogues"]
        assert main(["metrics", str(run_dir), "--check"]) == 0
    combined = (tmp_path / "sweep" / "combined.csv").read_text()
    assert "openai:probe-a" in combined and "openai:probe-b" in combined
    # Figure 4's two measures side by side (issue 25, item 4), 3 significant figures
    header = combined.splitlines()[0].split(",")
    for fmt in ("BA_user", "BA_dialogue"):
        assert f"confidence_{fmt}" in header and f"confidence_top_{fmt}" in header
    markdown = (tmp_path / "sweep" / "combined.md").read_text()
    assert "confidence_top_BA_user" in markdown and "1.00" in markdown  # one-hot answers


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


PROFILE = {
    "id": "ana",
    "age": 34,
    "gender": "Female",
    "education": "Master's Degree",
    "experience": 8,
    "job_title": "Data Analyst",
    "country": "Germany",
}


def test_a_dialogue_file_is_probed_as_written(tmp_path: Path) -> None:
    turns = [
        {"question": "I am 34. Where could I be in five years?", "answer": "Lead analyst."},
        {
            "question": "I hold a Master's degree; which skills matter?",
            "answer": "SQL and statistics.",
            "proposed": "Which skills matter for her?",
            "out_of_context": True,
        },
    ]
    rows = [
        {"profile": PROFILE, "turns": turns, "ended": "goals_covered"},
        {"profile": {**PROFILE, "id": "ben", "age": 51}, "turns": [], "ended": "failed"},
    ]
    source = write_jsonl(tmp_path / "dialogues.jsonl", rows)
    result = run_scenario(
        "career-chat",
        {"dialogues_from": source, "n_items": 2, "judge_samples": 0, "max_turns": 1},
        out=tmp_path / "run",
        progress=False,
        use_cache=False,
    )
    questions = [e.payload for e in events(result.run_dir, "career.question")]
    assert [q["question"] for q in questions] == [t["question"] for t in turns]
    assert [q["out_of_context"] for q in questions] == [False, True]
    assert questions[1]["proposed"] == "Which skills matter for her?"
    (origin,) = [e.payload for e in events(result.run_dir, "career.dialogues_source")]
    assert origin["kind"] == "file" and origin["file"] == "dialogues.jsonl"
    assert origin["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    m = result.metrics["metrics"]
    assert m["n_users"] == 2 and m["dialogues"]["ended"] == {
        "failed": 1,
        "goals_covered": 1,
        "max_turns": 0,
    }
    assert m["probes"]["profile"]["n"] == 4 and m["probes"]["dialogue"]["n"] == 2  # ben: failed
    calls = {e.payload["task"] for e in events(result.run_dir, "llm.call")}
    assert calls == {"career.probe"}


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"turns": [], "ended": "failed"}, "needs a profile object"),
        ({"profile": {**PROFILE, "age": "old"}, "turns": [], "ended": "failed"}, "whole numbers"),
        ({"profile": PROFILE, "turns": [], "ended": "bored"}, "ended must be one of"),
        ({"profile": PROFILE, "turns": [], "ended": "max_turns"}, "needs a turn"),
        ({"profile": PROFILE, "turns": [{"question": "Hi?"}], "ended": "max_turns"}, "an answer"),
        (
            {
                "profile": PROFILE,
                "turns": [{"question": "A?", "answer": "B.", "proposed": "C?"}],
                "ended": "max_turns",
            },
            "proposed differs from question",
        ),
    ],
)
def test_a_bad_dialogue_file_exits_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: dict[str, Any], problem: str
) -> None:
    good = {"profile": {**PROFILE, "id": "first"}, "turns": [], "ended": "failed"}
    source = write_jsonl(tmp_path / "bad.jsonl", [good, row])
    out = tmp_path / "run"
    code = main(["run", "career-chat", "--dialogues-from", str(source), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "--dialogues-from" in err and "bad.jsonl:2" in err and problem in err
    assert not (out / "events.sqlite").exists()


def test_a_source_run_must_be_a_complete_career_chat_run(
    dialogues: RunResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = run_scenario(
        "trust-population", {"n_personas": 2}, out=tmp_path / "trust", progress=False
    )
    assert main(["run", "career-chat", "--dialogues-from", str(other.run_dir)]) == 2
    assert "not a career-chat run directory" in capsys.readouterr().err
    copy = tmp_path / "copy"
    copy.mkdir()
    manifest = json.loads((dialogues.run_dir / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    assert main(["run", "career-chat", "--dialogues-from", str(copy)]) == 2
    assert "resume it to the end first" in capsys.readouterr().err
    args = ["run", "career-chat", "--dialogues-from", str(dialogues.run_dir)]
    assert main([*args, "--profile-file", str(copy / "manifest.json")]) == 2
    assert "drop --profile-file" in capsys.readouterr().err


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_n_users_takes_the_first_dialogues(dialogues: RunResult, tmp_path: Path) -> None:
    params = {"dialogues_from": dialogues.run_dir, "n_users": 2, "n_items": 1, "judge_samples": 0}
    result = run_scenario("career-chat", params, out=tmp_path / "r", progress=False)
    assert result.metrics["metrics"]["n_users"] == 2
    users = [e.agent_id for e in events(result.run_dir, "career.dialogue_started")]
    assert users == [e.agent_id for e in events(dialogues.run_dir, "career.dialogue_started")][:2]


# --- the reasoning model's two queries (§5.2, Figure 12) ---------------------------------------


def reasoned(dialogues: RunResult) -> dict[str, Any]:
    """Two users of the shared dialogues, one item, probed with the reasoning pass."""
    params = {"dialogues_from": dialogues.run_dir, "n_users": 2, "n_items": 1}
    return {**params, "judge_samples": 0, "reasoning_pass": True}


def reasoning_reply(body: dict[str, Any]) -> str:
    if body.get("logprobs"):
        return json.dumps({"option_id": 3, "reason": "as reasoned"})
    return '<think>She values balance, so option 3.</think>\n{"option_id": 3}'


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_reasoning_pass_sends_its_thinking_before_the_answer(
    dialogues: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    params = reasoned(dialogues)
    with FakeOpenAIServer(responder=reasoning_reply) as server:
        result = run_scenario(
            "career-chat",
            params,
            out=tmp_path / "r",
            model="openai:qwq",
            base_url=server.base_url,
            progress=False,
            use_cache=False,
        )
        requests = server.requests
    first = [r for r in requests if not r.get("logprobs")]
    second = [r for r in requests if r.get("logprobs")]
    assert len(first) == len(second) > 0
    assert all(r["temperature"] == 0.6 and r["max_tokens"] == 4096 for r in first)
    for r in second:
        thought = r["messages"][-1]
        assert thought == {
            "role": "assistant",
            "content": "<think>\nShe values balance, so option 3.\n</think>\n",
        }
        assert r["messages"][:-1] in [f["messages"] for f in first]
    m = result.metrics["metrics"]
    assert m["probes"]["profile"]["n"] == 2
    assert {e.payload["value"] for e in events(result.run_dir, "decision.made")} >= {3}


def test_an_empty_reasoning_is_reasked_then_counted_and_the_item_not_probed(
    dialogues: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    params = {**reasoned(dialogues), "max_repairs": 1}
    with FakeOpenAIServer(responder=lambda body: "</think>") as server:
        code = main(
            [
                "run",
                "career-chat",
                *(f"--{k.replace('_', '-')}={v}" for k, v in params.items()),
                "--model",
                "openai:qwq",
                "--base-url",
                server.base_url,
                "--out",
                str(tmp_path / "r"),
                "--no-progress",
            ]
        )
        requests = server.requests
    assert code == 3  # nothing usable: the run says it is not valid
    assert requests and not any(r.get("logprobs") for r in requests)  # no probe was asked
    failed = [e.payload for e in events(tmp_path / "r", "decision.failed")]
    assert failed and {f["task"] for f in failed} == {"career.reasoning"}
    assert all(f["attempts"] == 2 for f in failed)
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())["metrics"]
    assert metrics["failures"]["reasoning"] == len(failed)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_reasoning_pass_on_the_scripted_double(tmp_path: Path) -> None:
    params = {**SMALL, "n_users": 3, "reasoning_pass": True}
    result = run_scenario(
        "career-chat", params, out=tmp_path / "r", progress=False, use_cache=False
    )
    made = [e.payload for e in events(result.run_dir, "decision.made")]
    reasoned = [p for p in made if p["task"] == "career.reasoning"]
    probes = [p for p in made if p["task"] == "career.probe"]
    probed = result.metrics["metrics"]["probes"]
    assert len(reasoned) == len(probes) == probed["profile"]["n"] + probed["dialogue"]["n"] > 0
    assert all(p.get("reasoned") for p in probes)


@pytest.mark.slow
def test_dialogues_from_and_the_reasoning_pass_under_drift(tmp_path: Path) -> None:
    """Real models' habits (refusals, prose around JSON, empty replies) in both runs: the probing
    run still asks nothing of the generating roles, and every probe and thinking pass it asked
    is in the log as made or as a counted failure."""
    drift = "scripted:drift=0.3"
    source = run_scenario(
        "career-chat", {**SMALL, "n_users": 6}, model=drift, out=tmp_path / "gen", progress=False
    )
    params = {"dialogues_from": source.run_dir, "n_items": 2, "judge_samples": 0}
    probed = run_scenario(
        "career-chat",
        {**params, "reasoning_pass": True},
        model=drift,
        out=tmp_path / "probe",
        progress=False,
    )
    assert dialogue_texts(probed.run_dir) == dialogue_texts(source.run_dir)
    calls = {e.payload["task"] for e in events(probed.run_dir, "llm.call")}
    assert calls == {"career.reasoning", "career.probe"}
    outcomes = [
        e.payload["task"] for e in events(probed.run_dir, "decision.made", "decision.failed")
    ]
    usable = sum(
        e.payload["reason"] != "failed" for e in events(source.run_dir, "career.dialogue_ended")
    )
    thought_failures = probed.metrics["metrics"]["failures"]["reasoning"]
    assert outcomes.count("career.reasoning") == (6 + usable) * 2
    assert outcomes.count("career.probe") == (6 + usable) * 2 - thought_failures
    assert main(["metrics", str(probed.run_dir), "--check"]) == 0
