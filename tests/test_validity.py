"""Run validity: counted from the log, in the manifest, exit 3 and a first summary line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer

from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main
from personasim.simulation.runs.lifecycle.validity import ValidityLimits


def decision_counts(run_dir: Path) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {}
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        for event in store.read(["decision.made", "decision.failed", "decision.reask"]):
            counts.setdefault(event.payload["task"], Counter())[event.kind] += 1
    return counts


def assert_validity_matches_events(run_dir: Path) -> dict:
    validity = json.loads((run_dir / "manifest.json").read_text())["validity"]
    counts = decision_counts(run_dir)
    assert set(validity["tasks"]) == set(counts)
    for task, c in counts.items():
        entry = validity["tasks"][task]
        assert entry["parsed"] == c["decision.made"]
        assert entry["failed"] == c["decision.failed"]
        assert entry["reasks"] == c["decision.reask"]
        assert entry["decisions"] == c["decision.made"] + c["decision.failed"]
    total = sum(t["decisions"] for t in validity["tasks"].values())
    assert validity["overall"]["decisions"] == total
    return validity


def test_endpoint_that_never_answers_in_format_exits_3(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=lambda body: "I would rather not say.") as server:
        code = main(
            [
                "run", "trust-population", "--n-personas", "6", "--no-progress",
                "--model", "openai:fake", "--base-url", server.base_url,
                "--out", str(tmp_path / "r"),
            ]
        )  # fmt: skip
    stdout = capsys.readouterr().out.splitlines()
    assert code == 3
    assert stdout[0].startswith("RUN NOT VALID")
    assert "trust.trustor 6 of 6 failed (100%)" in stdout[0]
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "complete"  # it finished; it is just not usable
    validity = assert_validity_matches_events(tmp_path / "r")
    assert validity["overall"]["ok"] is False
    assert validity["tasks"]["trust.trustor"] == {
        "decisions": 6,
        "parsed": 0,
        "failed": 6,
        "failed_calls": 0,
        "context_exceeded": 0,
        "reasks": 12,
        "failure_rate": 1.0,
        "max_failure_rate": 0.2,
        "ok": False,
    }
    assert (tmp_path / "r" / "metrics.json").exists()


def test_a_good_run_is_valid_and_exits_0(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=trustor_reply) as server:
        code = main(
            [
                "run", "trust-population", "--n-personas", "6", "--no-progress",
                "--model", "openai:fake", "--base-url", server.base_url,
                "--out", str(tmp_path / "r"), "--max-failure-rate", "0",
            ]
        )  # fmt: skip
    assert code == 0
    assert "NOT VALID" not in capsys.readouterr().out
    validity = assert_validity_matches_events(tmp_path / "r")
    assert validity["overall"]["ok"] is True and validity["overall"]["failure_rate"] == 0.0
    assert validity["max_failure_rate"] == 0.0 and validity["min_group_n"] == 5


def test_failure_rate_limit_decides(tmp_path: Path, capsys) -> None:
    """Half the personas never answer in format: valid under 0.6, not valid under 0.2."""

    def half(body: dict) -> str:
        reply = trustor_reply(body)
        return reply if int(reply.rsplit(" ", 2)[-2]) % 2 else "no idea"

    with FakeOpenAIServer(responder=half) as server:
        base = ["--n-personas", "12", "--no-progress", "--model", "openai:fake"]
        base += ["--base-url", server.base_url, "--max-repairs", "0"]
        strict = main(["run", "trust-population", *base, "--out", str(tmp_path / "a")])
        lenient = main(
            [
                "run", "trust-population", *base, "--out", str(tmp_path / "b"),
                "--max-failure-rate", "0.9",
            ]
        )  # fmt: skip
    a = assert_validity_matches_events(tmp_path / "a")
    b = assert_validity_matches_events(tmp_path / "b")
    assert a["overall"]["failed"] == b["overall"]["failed"]
    rate = a["overall"]["failure_rate"]
    assert 0.2 < rate <= 0.9, rate  # the fixture's replies make both verdicts possible
    assert (strict, lenient) == (3, 0)


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--max-failure-rate", "1.5", "--max-failure-rate: must be a number from 0 to 1"),
        ("--max-failure-rate", "nan", "--max-failure-rate: must be a number from 0 to 1"),
        ("--min-group-n", "0", "--min-group-n: must be an integer of at least 1"),
        ("--max-tokens", "0", "--max-tokens: must be an integer of at least 1"),
    ],
)
def test_bad_settings_are_refused_before_anything_runs(
    tmp_path: Path, capsys, flag: str, value: str, message: str
) -> None:
    out = tmp_path / "r"
    code = main(["run", "trust-population", "--n-personas", "3", "--out", str(out), flag, value])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_settings_are_in_the_manifest_and_the_log(tmp_path: Path) -> None:
    out = tmp_path / "r"
    args = ["run", "trust-population", "--n-personas", "3", "--no-progress", "--out", str(out)]
    assert main([*args, "--min-group-n", "2", "--max-tokens", "300"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["response_format"], manifest["max_tokens"]) == ("text", 300)
    with SQLiteEventStore(out / "events.sqlite") as store:
        (started,) = store.read(["run.started"])
    assert started.payload["validity"] == {"max_failure_rate": 0.2, "min_group_n": 2}
    assert started.payload["max_tokens"] == 300
    # resuming with other settings is refused: they change answers or the verdict
    assert main([*args, "--resume", "--min-group-n", "3"]) == 2


def test_validity_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError):
        ValidityLimits(max_failure_rate=-0.1)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_metrics_of_an_interrupted_run_are_partial(tmp_path: Path) -> None:
    """Killed part-way, `personasim metrics` still computes, marked partial."""
    out = tmp_path / "r"
    script = (
        "import sys; from personasim.simulation.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    with FakeOpenAIServer(responder=trustor_reply, latency=0.2) as server:
        proc = subprocess.Popen(
            [
                sys.executable, "-c", script, "run", "trust-population", "--n-personas", "40",
                "--concurrency", "2", "--no-progress", "--model", "openai:fake",
                "--base-url", server.base_url, "--out", str(out),
            ],
            env={**os.environ, "OPENAI_API_KEY": "x"},
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(decision_counts_or_empty(out)) < 4:
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    assert main(["metrics", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["partial"] is True
    assert 4 <= metrics["metrics"]["n_decisions"] < 40


def decision_counts_or_empty(run_dir: Path) -> list:
    if not (run_dir / "events.sqlite").exists():
        return []
    try:
        with SQLiteEventStore(run_dir / "events.sqlite") as store:
            return list(store.read(["decision.made"]))
    except Exception:
        return []
