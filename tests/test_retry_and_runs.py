"""`personasim retry RUN` resumes a run from its manifest alone (same result as `run --resume`
with the whole original command); `personasim runs [DIR]` lists runs from their manifests."""

from __future__ import annotations

import json
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer, StatusFault

from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main
from personasim.simulation.cli.runs_command import find_runs
from personasim.simulation.core import scenario as scenario_module
from personasim.simulation.llm import scripted
from personasim.simulation.runs.lifecycle.run_lock import RunLock

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
ROUND_TWO = "        side = self.table.flip()\n"
VOLATILE = {"cached", "source", "attempts", "latency_s", "hedged", "beyond_limit"}


def manifest(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "manifest.json").read_text())


def events(run_dir: Path) -> list[Any]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read())


def signature(run_dir: Path, skip: tuple[str, ...] = ()) -> Counter:
    """The run's events as a multiset, without timing and cache fields (a resumed run answers
    from its log what the uninterrupted one asked)."""
    return Counter(
        (
            e.kind,
            e.agent_id,
            e.round,
            json.dumps({k: v for k, v in e.payload.items() if k not in VOLATILE}, sort_keys=True),
        )
        for e in events(run_dir)
        if e.kind not in skip
    )


def trust_args(server: FakeOpenAIServer, out: Path, *more: str) -> list[str]:
    """A run whose settings are all off their defaults: what `--resume` made users repeat."""
    return [
        "run", "trust-population", "--n-personas", "12", "--endowment", "20",
        "--model", "openai:fake-model", "--base-url", server.base_url, "--concurrency", "2",
        "--max-attempts", "2", "--max-failure-rate", "0.1", "--seed", "3", "--no-progress",
        "--out", str(out), *more,
    ]  # fmt: skip


# -- retry ---------------------------------------------------------------------------------


def test_retry_finishes_an_interrupted_run_as_the_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    cut, straight = tmp_path / "cut", tmp_path / "straight"
    with FakeOpenAIServer(responder=trustor_reply) as server:
        answered: list[int] = []

        def stop_after_six(body: dict[str, Any]) -> str:
            answered.append(1)
            if len(answered) == 6:  # the key is refused from then on: the run stops
                server.enqueue_faults(StatusFault(401))
            return trustor_reply(body)

        server.responder = stop_after_six
        assert main(trust_args(server, cut)) == 1
        assert manifest(cut)["status"] == "interrupted"
        (row,) = find_runs(cut)
        assert (row.path, row.status, row.model, row.n) == (
            ".", "interrupted", "openai:fake-model", "12 personas",
        )  # fmt: skip
        assert row.validity == "valid so far"
        server.responder = trustor_reply
        capsys.readouterr()
        # what the user reported: the short command is refused field by field
        assert main(["run", "trust-population", "--out", str(cut), "--resume"]) == 2
        assert "params.n_personas: 12 → 100" in capsys.readouterr().err
        server.clear_requests()

        assert main(["retry", str(cut), "--no-progress"]) == 0
        captured = capsys.readouterr()
        asked = server.requests
        monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "fresh-cache"))
        assert main(trust_args(server, straight)) == 0

    assert "retrying" in captured.err and "model openai:fake-model, seed 3" in captured.err
    assert f"run directory: {cut}" in captured.out
    assert 0 < len(asked) < 12  # only what the log did not hold was asked
    keys = {v for r in asked for k, v in r["headers"].items() if k.lower() == "authorization"}
    assert keys == {"Bearer sk-from-the-environment"}
    done = manifest(cut)
    assert done["status"] == "complete"
    assert "sk-from-the-environment" not in (cut / "manifest.json").read_text()
    assert done["client"]["concurrency"] == 2 and done["client"]["max_attempts"] == 2
    assert (cut / "metrics.json").read_bytes() == (straight / "metrics.json").read_bytes()
    # the refused key's error is the cut run's own incident; every other event is the same
    assert signature(cut, skip=("llm.error",)) == signature(straight)
    assert main(["metrics", str(cut), "--check"]) == 0


class LosesTwo:
    """Answers like `trustor_reply`, but the 3rd and 6th distinct prompts fail with HTTP 500
    on every attempt while the endpoint answers the others (their calls run out of attempts)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        with self.lock:
            if prompt not in self.seen:
                self.seen.append(prompt)
            if self.seen.index(prompt) in (2, 5):
                raise RuntimeError("upstream overloaded")
        return trustor_reply(body)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_retry_failed_asks_the_lost_units_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run = tmp_path / "r"
    with FakeOpenAIServer(responder=LosesTwo()) as server:
        assert main(trust_args(server, run, "--timeout", "5")) == 3  # 2 of 12 lost: over 10%
        before = events(run)
        assert manifest(run)["validity"]["overall"]["failed_calls"] == 2
        (row,) = find_runs(run)
        assert row.validity == "not valid: 2/12 decisions failed (17% > 10%)"
        server.responder = trustor_reply  # the endpoint recovered
        capsys.readouterr()

        assert main(["retry", str(run)]) == 0  # complete: nothing run, the way out named
        said = capsys.readouterr().out
        assert f"{run} is complete; nothing to retry" in said
        assert f"2 unit(s) lost to failed model calls: `personasim retry {run} --retry-failed`" in (
            said.replace("\n", "")
        )
        assert events(run) == before

        assert main(["retry", str(run), "--retry-failed", "--no-progress"]) == 0
        assert "retried 2 unit(s) with a failed model call" in capsys.readouterr().out
        after = events(run)
        assert main(["retry", str(run), "--retry-failed"]) == 0
        assert "no unit lost to a failed model call" in capsys.readouterr().out
        assert events(run) == after

    assert after[: len(before)] == before  # the failed attempts stay in the log
    assert [e.payload for e in after if e.kind == "unit.retried"] == [{"attempt": 2}] * 2
    overall = manifest(run)["validity"]["overall"]
    assert (overall["decisions"], overall["failed"], overall["ok"]) == (12, 0, True)


def test_retry_of_a_complete_run_does_nothing(tmp_path: Path, capsys) -> None:
    run = tmp_path / "r"
    assert main(["run", "trust-population", "--n-personas", "4", "--out", str(run)]) == 0
    files = {name: (run / name).read_bytes() for name in ("manifest.json", "events.sqlite")}
    capsys.readouterr()
    assert main(["retry", str(run)]) == 0
    assert capsys.readouterr().out.strip() == f"{run} is complete; nothing to retry"
    assert {name: (run / name).read_bytes() for name in files} == files


def test_retry_errors_are_one_line_exit_2(tmp_path: Path, capsys) -> None:
    missing, empty, damaged, foreign = (tmp_path / n for n in ("no", "empty", "bad", "foreign"))
    empty.mkdir()
    damaged.mkdir()
    (damaged / "manifest.json").write_text('{"status": "complete", ')
    foreign.mkdir()
    (foreign / "manifest.json").write_text('{"status": "complete", "scenario": "x"}')
    for run_dir, said in (
        (missing, f"{missing}: not a run directory (no manifest.json)"),
        (empty, f"{empty}: not a run directory (no manifest.json)"),
        (damaged, f"{damaged / 'manifest.json'}: unreadable manifest"),
        (foreign, f"{foreign / 'manifest.json'}: damaged manifest (no params, seed, model"),
    ):
        assert main(["retry", str(run_dir)]) == 2
        err = capsys.readouterr().err.replace("\n", "")
        assert err.count("error:") == 1 and said in err, err
    assert main(["retry", str(empty), "--n-personas", "3"]) == 2  # parameters are the run's
    assert "unrecognized arguments: --n-personas 3" in capsys.readouterr().err


def test_retry_of_a_rescore_names_the_rescore_command(tmp_path: Path, capsys) -> None:
    run = tmp_path / "rescore"
    assert main(["run", "trust-population", "--n-personas", "2", "--out", str(run)]) == 0
    data = manifest(run)
    data.update(status="interrupted", rescore_of={"run": "/runs/src", "roles": {"judge": ["a"]}})
    (run / "manifest.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["retry", str(run)]) == 2
    assert (
        f"is a rescore; resume it with `personasim rescore /runs/src --role=judge=a --out {run} "
        "--resume`"
    ) in capsys.readouterr().err.replace("\n", "")


@pytest.fixture
def coin_file(tmp_path: Path) -> Iterator[Path]:
    """coin_guess as a scenario file, stopped by Ctrl-C in round 2 while a marker file exists;
    the scenario and rules it registers are removed afterwards."""
    scenario_module.list_scenarios()  # built-ins imported before the snapshot
    scenarios, rules = scenario_module.SCENARIOS.snapshot(), scripted.RULES.snapshot()
    path = tmp_path / "scenarios" / "coin_guess.py"
    path.parent.mkdir()
    marker = str(tmp_path / "STOP")
    stop = (
        f'        if round_index == 2 and __import__("os").path.exists({marker!r}):\n'
        "            raise KeyboardInterrupt\n"
    )
    path.write_text(EXAMPLE.read_text().replace(ROUND_TWO, stop + ROUND_TWO))
    yield path
    scripted.RULES.restore(rules)
    scenario_module.SCENARIOS.restore(scenarios)


def test_retry_of_a_scenario_file_run_only_while_the_file_is_unchanged(
    coin_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    def run_file(out: Path) -> int:
        return main(["run", str(coin_file), "--n-personas", "4", "--rounds", "3", "--no-progress",
                     "--seed", "7", "--out", str(out)])  # fmt: skip

    assert run_file(tmp_path / "clean") == 0
    monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "cache-of-the-cut-runs"))
    (tmp_path / "STOP").touch()
    cut, changed = tmp_path / "cut", tmp_path / "changed"
    assert run_file(cut) == 130 and run_file(changed) == 130
    (tmp_path / "STOP").unlink()
    assert manifest(cut)["status"] == "interrupted"

    capsys.readouterr()
    assert main(["retry", str(cut), "--no-progress"]) == 2  # the manifest's path is not followed
    assert "pass --scenario-file FILE" in capsys.readouterr().err
    assert main(["retry", str(cut), "--no-progress", "--scenario-file", str(coin_file)]) == 0
    assert manifest(cut)["status"] == "complete"
    assert (cut / "metrics.json").read_bytes() == (tmp_path / "clean" / "metrics.json").read_bytes()
    assert signature(cut) == signature(tmp_path / "clean")

    marker = tmp_path / "executed"
    edited = coin_file.read_text() + f"\nopen({str(marker)!r}, 'w').close()\n"
    coin_file.write_text(edited)
    capsys.readouterr()
    assert main(["retry", str(changed), "--scenario-file", str(coin_file)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert "is not the file the run used" in err
    assert not marker.exists()  # refused before the changed code ran
    assert manifest(changed)["status"] == "interrupted"
    # listing reads manifests only: the (changed) scenario file is not run either
    assert main(["runs", str(tmp_path)]) == 0
    assert {(r.path, r.scenario, r.status) for r in find_runs(tmp_path)} == {
        ("clean", "coin-guess", "complete"),
        ("cut", "coin-guess", "complete"),
        ("changed", "coin-guess", "interrupted"),
    }
    assert not marker.exists()


# -- runs ----------------------------------------------------------------------------------


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_runs_lists_a_sweeps_cells_and_single_runs_newest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    quick = ["--n-personas", "3", "--no-progress"]
    sweep = ["sweep", "trust-population", "--vary", "endowment=10,20", "--out", "runs/table"]
    assert main([*sweep, *quick]) == 0
    assert main(["run", "trust-population", *quick, "--out", "runs/one"]) == 0
    drifting = ["run", "trust-population", "--model", "scripted:drift=0.15", "--n-personas", "4"]
    assert main([*drifting, "--no-progress", "--out", "runs/two"]) in (0, 3)
    cells = sorted(p.name for p in (tmp_path / "runs" / "table").iterdir() if p.is_dir())
    assert len(cells) == 2
    for age, name in enumerate(["one", f"table/{cells[0]}", f"table/{cells[1]}", "two"]):
        data = manifest(tmp_path / "runs" / name)  # distinct start times, to order by
        data["created_at"] = f"2026-01-0{age + 1}T10:00:00Z"
        (tmp_path / "runs" / name / "manifest.json").write_text(json.dumps(data))
    two = manifest(tmp_path / "runs" / "two")
    (tmp_path / "runs" / ".personasim").mkdir()  # hidden folders are not searched
    capsys.readouterr()

    assert main(["runs"]) == 0  # default: runs/
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "4 run(s) in runs, newest first:"
    header = next(line for line in lines if line.split()[:2] == ["path", "status"])
    assert header.split() == ["path", "status", "scenario", "model", "n", "validity", "started"]
    rows = find_runs(Path("runs"))
    assert [r.path for r in rows] == ["two", f"table/{cells[1]}", f"table/{cells[0]}", "one"]
    assert [r.started for r in rows][-1] == "2026-01-01 10:00Z"
    one = rows[-1]
    assert (one.status, one.scenario, one.model, one.n, one.validity) == (
        "complete", "trust-population", "scripted", "3 personas", "valid",
    )  # fmt: skip
    assert rows[0].model == "scripted:drift=0.15" and rows[0].n == "4 personas"
    assert rows[0].validity == ("valid" if two["validity"]["overall"]["ok"] else rows[0].validity)
    for row in rows:  # each row is one line of the table, path first
        assert any(line.split()[:2] == [row.path, row.status] for line in lines)
    # a sweep directory, and a run directory itself, are listed the same way
    assert [r.path for r in find_runs(Path("runs/table"))] == [cells[1], cells[0]]
    assert [(r.path, r.status) for r in find_runs(Path("runs/one"))] == [(".", "complete")]


def test_runs_marks_not_valid_interrupted_and_damaged_runs(tmp_path: Path, capsys) -> None:
    good = tmp_path / "good"
    assert main(["run", "trust-population", "--n-personas", "3", "--out", str(good)]) == 0
    stopped = tmp_path / "stopped"
    shutil.copytree(good, stopped)
    data = manifest(stopped)
    data.update(status="interrupted", validity={"max_failure_rate": 0.2, "min_group_n": 5})
    (stopped / "manifest.json").write_text(json.dumps(data))
    failing = tmp_path / "failing"
    shutil.copytree(good, failing)
    data = manifest(failing)
    overall = data["validity"]["overall"]
    overall.update(ok=False, failed=2, decisions=3, failure_rate=2 / 3)
    (failing / "manifest.json").write_text(json.dumps(data))
    for name, text in (("cut", '{"status": "comp'), ("list", "[]"), ("odd", '{"status": 1}')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(text)
    (tmp_path / "no-manifest").mkdir()
    (tmp_path / "no-manifest" / "events.sqlite").write_bytes(b"")
    (tmp_path / "wrong-types").mkdir()
    (tmp_path / "wrong-types" / "manifest.json").write_text(
        json.dumps({"status": "complete", "scenario": "x", "roles": ["not", "a", "dict"]})
    )
    running = tmp_path / "running"
    shutil.copytree(stopped, running)
    capsys.readouterr()

    with RunLock(running):  # another process writing it, as far as readers can tell
        assert main(["runs", str(tmp_path)]) == 0
        rows = {r.path: r for r in find_runs(tmp_path)}
        assert main(["retry", str(running)]) == 2
    out, err = capsys.readouterr()
    assert f"{running} is still running (pid " in err.replace("\n", "")
    assert "Traceback" not in out
    assert rows["running"].status == "running"
    assert rows["good"].validity == "valid"
    assert (rows["stopped"].status, rows["stopped"].validity) == ("interrupted", "not judged yet")
    assert rows["failing"].validity == "not valid: 2/3 decisions failed (67% > 20%)"
    assert rows["cut"].status == "damaged"
    assert rows["cut"].validity.startswith("unreadable manifest (")
    assert rows["list"].validity == "not a personasim manifest (no status)"
    assert rows["odd"].validity == "not a personasim manifest (no status)"
    assert rows["no-manifest"].validity == "not a run directory (no manifest.json)"
    assert rows["wrong-types"].status == "damaged"
    assert rows["wrong-types"].validity.startswith("unexpected content (")
    for path in ("cut", "list", "odd", "no-manifest", "wrong-types"):
        assert any(line.split()[:2] == [path, "damaged"] for line in out.splitlines())


def test_runs_of_an_empty_or_missing_directory(tmp_path: Path, capsys) -> None:
    assert main(["runs", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == f"no runs found in {tmp_path}"
    assert main(["runs", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'nowhere'}: no such directory"
    (tmp_path / "file").write_text("")
    assert main(["runs", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'file'}: not a directory"
