"""Run integrity on real `personasim` processes: one writer per run directory, signals, a
damaged log and its salvage, a full disk, a corrupt cache row.

Each test starts the command line as a child process (the installed `personasim` script) and
reads what it left in the run directory with SQLite, as a user would.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer

from personasim.simulation.cli.main import main
from personasim.simulation.runs.lifecycle.run_lock import RunLock, lock_holder
from personasim.simulation.runs.sweeps.sweep import run_sweep

SCRIPT = Path(sys.executable).with_name("personasim")
MODULE = "personasim.simulation.cli.main"
COMMAND = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", MODULE]
N = 24


def personasim(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=180, **kwargs)


def start(*args: str, **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*COMMAND, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def child_pids(pid: int) -> list[int]:
    """A process's children, from /proc (Linux)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError):
            lines = status.read_text().splitlines()
            if f"PPid:\t{pid}" in lines:
                found.append(int(status.parent.name))
    return found


def served_run(server: FakeOpenAIServer, out: Path, n: int = N) -> list[str]:
    return [
        "run",
        "trust-population",
        "--n-personas",
        str(n),
        "--model",
        "openai:fake-model",
        "--base-url",
        server.base_url,
        "--concurrency",
        "2",
        "--out",
        str(out),
        "--no-progress",
    ]


def count(run_dir: Path, kind: str) -> int:
    try:
        with sqlite3.connect(f"file:{run_dir / 'events.sqlite'}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM events WHERE kind=?", (kind,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # not created yet


def decisions_per_agent(run_dir: Path) -> Counter:
    with sqlite3.connect(f"file:{run_dir / 'events.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT agent_id FROM events WHERE kind='decision.made'").fetchall()
    return Counter(agent for (agent,) in rows)


def wait_for_decisions(
    child: subprocess.Popen[str], run_dir: Path, at_least: int, within_s: float = 90
) -> None:
    """Until `at_least` decisions are logged; the child is killed if it makes none in time."""
    deadline = time.monotonic() + within_s
    try:
        while count(run_dir, "decision.made") + count(run_dir, "decision.failed") < at_least:
            assert child.poll() is None, f"the run ended early: {child.communicate()}"
            assert time.monotonic() < deadline, f"no progress within {within_s} s"
            time.sleep(0.02)
    except AssertionError:
        child.kill()
        child.wait()
        raise


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def assert_one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr and "CancelledError" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


# --- 1. one writer per run directory -----------------------------------------------------------


@pytest.mark.slow
def test_a_second_writer_is_refused_at_once_and_readers_see_a_run_still_running(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "r"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeOpenAIServer(responder=trustor_reply, latency=3.0) as server:
        first = start(*served_run(server, out), env=env)
        try:
            wait_for_decisions(first, out, 2)
            second = personasim(*served_run(server, out), "--resume", env=env)
            capsys.readouterr()
            exported = tmp_path / "events.jsonl"
            readers = [
                main(["replay", str(out)]),
                main(["export", str(out), "--output", str(exported)]),
            ]
            noted = capsys.readouterr().err
            assert first.poll() is None, "the first run must still be writing"
        finally:
            server.latency = 0.0  # let the first run finish now
            _, stderr = first.communicate(timeout=180)
    assert first.returncode == 0, stderr
    assert second.returncode == 2
    line = assert_one_error_line(second.stderr)
    assert "being written by another personasim process" in line
    assert f"pid {first.pid} on {socket.gethostname()}, since 20" in line
    assert readers == [0, 0], noted
    assert exported.read_text().count("\n") >= 2
    assert noted.count(f"note: {out} is still running (pid {first.pid}") == 2
    # the second process wrote nothing: one run.completed, one decision per persona
    assert count(out, "run.completed") == 1
    per_agent = decisions_per_agent(out)
    assert len(per_agent) == N and set(per_agent.values()) == {1}
    assert lock_holder(out) is None  # the OS released the lock when the run ended


def test_a_locked_cell_fails_and_the_other_cells_go_on(tmp_path: Path) -> None:
    locked = tmp_path / "sweep" / "scripted__endowment=10"
    locked.mkdir(parents=True)
    with RunLock(locked):  # another writer, as far as the sweep can tell
        result = run_sweep(
            "trust-population",
            ["scripted"],
            {"endowment": [10, 20]},
            {"n_personas": 3},
            out=tmp_path / "sweep",
            progress=False,
        )
    assert [f.cell for f in result.failed] == ["scripted__endowment=10"]
    assert "being written by another personasim process" in result.failed[0].error
    assert f"pid {os.getpid()}" in result.failed[0].error
    assert [r.run_dir.name for r in result.runs] == ["scripted__endowment=20"]
    assert manifest(result.runs[0].run_dir)["status"] == "complete"


# --- 6. signals; and the SIGKILL case of the lock -------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code", "workers"),
    [(signal.SIGTERM, 143, 1), (signal.SIGINT, 130, 1), (signal.SIGKILL, -9, 1),
     (signal.SIGTERM, 143, 2)],
)  # fmt: skip
def test_a_signal_stops_the_run_and_the_printed_command_resumes_it(
    tmp_path: Path, monkeypatch, signum: int, code: int, workers: int
) -> None:
    """With `--workers 2` too: the driver stops its worker processes before it exits."""
    out = tmp_path / "r"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeOpenAIServer(responder=trustor_reply, latency=0.2) as server:
        child = start(*served_run(server, out), "--workers", str(workers), env=env)
        wait_for_decisions(child, out, 4)
        children = child_pids(child.pid)
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=60)
        assert child.returncode == code, stderr
        assert len(children) == (workers if workers > 1 else 0)  # the worker processes
        assert not [pid for pid in children if Path(f"/proc/{pid}").exists()]
        assert lock_holder(out) is None  # no stale lock, whatever the signal
        assert manifest(out)["status"] == "interrupted"
        if signum == signal.SIGKILL:
            resume = [*served_run(server, out), "--resume"]
        else:  # the command printed is the one that resumes
            name = signal.Signals(signum).name
            assert "Traceback" not in stderr and "CancelledError" not in stderr, stderr
            assert stderr.startswith(f"stopped by {name}: {out} is marked interrupted; ")
            assert manifest(out)["error"] == f"stopped by {name}"
            command = shlex.split(stderr.split("resume with: ", 1)[1])
            assert command[0] == "personasim" and command[-1] == "--resume"
            resume = command[1:]
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        assert main(resume) == 0
    assert manifest(out)["status"] == "complete"
    assert count(out, "run.completed") == 1
    per_agent = decisions_per_agent(out)
    assert len(per_agent) == N and set(per_agent.values()) == {1}


# --- 3. a damaged log, --salvage, and the log deciding completeness --------------------------


def scripted_run(out: Path, n: int = 30) -> list[str]:
    return ["run", "trust-population", "--n-personas", str(n), "--out", str(out), "--no-progress"]


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    return assert_one_error_line(capsys.readouterr().err)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_truncated_log_is_named_and_salvage_gives_a_run_that_resumes(
    tmp_path: Path, capsys
) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main(scripted_run(whole)) == 0
    shutil.copytree(whole, cut)
    data = (cut / "events.sqlite").read_bytes()
    (cut / "events.sqlite").write_bytes(data[: len(data) // 2])
    capsys.readouterr()

    assert main([*scripted_run(cut), "--resume"]) == 2
    line = one_error(capsys)
    assert "not a readable event store" in line
    assert f"`personasim export {cut} --salvage`" in line

    salvaged = personasim("export", str(cut), "--salvage")
    assert salvaged.returncode == 0, salvaged.stderr
    target = tmp_path / "cut-salvaged"
    assert f"copied to {target}" in salvaged.stdout
    assert 0 < count(target, "decision.made") < 30
    assert manifest(target)["status"] == "interrupted"
    assert manifest(target)["salvaged_from"]["run"] == "cut"

    assert main([*scripted_run(target), "--resume"]) == 0
    assert (target / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()
    per_agent = decisions_per_agent(target)
    assert len(per_agent) == 30 and set(per_agent.values()) == {1}
    capsys.readouterr()
    assert main(["metrics", str(target), "--check"]) == 0
    assert "identical to what the manifest recorded" in capsys.readouterr().out


def test_salvage_of_a_file_with_nothing_readable(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert main(scripted_run(out, 3)) == 0
    (out / "events.sqlite").write_bytes(b"\0" * 8192)
    capsys.readouterr()
    assert main(["export", str(out), "--salvage"]) == 2
    assert "no event could be read" in one_error(capsys)
    assert not (tmp_path / "r-salvaged").exists()


def test_a_missing_log_is_not_a_complete_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert main(scripted_run(out, 3)) == 0
    (out / "events.sqlite").unlink()
    capsys.readouterr()
    assert main([*scripted_run(out, 3), "--resume"]) == 2
    assert "the log is missing; start a new run or restore it" in one_error(capsys)
    assert not (out / "events.sqlite").exists()  # nothing created in its place


def test_metrics_check_compares_the_log_with_the_manifest(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert main(scripted_run(out, 3)) == 0
    capsys.readouterr()
    assert main(["metrics", str(out), "--check"]) == 0
    events = manifest(out)["log"]["events"]
    assert f"{events} events, identical to what the manifest recorded" in capsys.readouterr().out
    with sqlite3.connect(out / "events.sqlite") as db:  # one decision goes missing
        db.execute(
            "DELETE FROM events WHERE seq = "
            "(SELECT MAX(seq) FROM events WHERE kind = 'decision.made')"
        )
    assert main(["metrics", str(out), "--check"]) == 1
    said = capsys.readouterr().out
    assert f"DIFFERS from the manifest: it recorded {events} events" in said
    assert f"the log holds {events - 1}" in said


def test_a_log_whose_end_is_gone_is_resumed_not_taken_as_complete(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert main(scripted_run(out, 4)) == 0
    before = decisions_per_agent(out)
    with sqlite3.connect(out / "events.sqlite") as db:  # as if killed before the last commit
        db.execute("DELETE FROM events WHERE kind = 'run.completed'")
    capsys.readouterr()
    assert main([*scripted_run(out, 4), "--resume"]) == 0
    assert "already complete" not in capsys.readouterr().out
    assert count(out, "run.completed") == 1
    assert decisions_per_agent(out) == before


def test_two_run_completed_events_are_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert main(scripted_run(out, 3)) == 0
    with sqlite3.connect(out / "events.sqlite") as db:  # what two writers used to leave
        db.execute(
            "INSERT INTO events (seq, round, agent_id, kind, scope, ts, payload) "
            "SELECT MAX(seq) + 1, NULL, NULL, 'run.completed', 'main', 0, '{}' FROM events"
        )
    capsys.readouterr()
    assert main([*scripted_run(out, 3), "--resume"]) == 2
    assert "holds 2 run.completed events" in one_error(capsys)


# --- 6. a full disk and a corrupt cache row ------------------------------------------------------


def _small_tmpfs_works() -> bool:
    if shutil.which("unshare") is None or sys.platform != "linux":
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null"],
        capture_output=True,
    )
    return probe.returncode == 0


def test_a_full_disk_is_one_error_line(tmp_path: Path) -> None:
    """On a 320 KiB tmpfs in a private mount namespace where the platform allows; else with a
    file-size limit (RLIMIT_FSIZE), which makes the kernel refuse writes past it. Either fills
    up mid-run, after the log's first events (a disk full before them: test_run_phases.py)."""
    out = tmp_path / "disk" / "r"
    out.parent.mkdir()
    args = [*scripted_run(out, 100), "--no-cache"]
    if _small_tmpfs_works():
        mount = shlex.join(["mount", "-t", "tmpfs", "-o", "size=320k", "tmpfs", str(out.parent)])
        full = subprocess.run(
            ["unshare", "-rm", "sh", "-c", f"{mount} && exec {shlex.join([*COMMAND, *args])}"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert "database or disk is full" in full.stderr  # ENOSPC, as SQLite says it
    else:

        def limit() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000))

        full = personasim(*args, preexec_fn=limit)
        assert manifest(out)["status"] == "interrupted"
        assert main([*args, "--resume"]) == 0  # the log up to the failure is intact
        assert len(decisions_per_agent(out)) == 100
    assert full.returncode == 1
    line = assert_one_error_line(full.stderr)
    assert "events.sqlite" in line and "interrupted" in line


def test_a_corrupt_cache_row_is_a_miss_and_an_incident(
    tmp_path: Path, isolated_cache: Path, capsys
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(scripted_run(first, 5)) == 0
    with sqlite3.connect(isolated_cache / "responses.sqlite") as db:
        (key,) = db.execute("SELECT key FROM responses ORDER BY key LIMIT 1").fetchone()
        db.execute("UPDATE responses SET response = '{not json' WHERE key = ?", (key,))
    capsys.readouterr()
    assert main(scripted_run(second, 5)) == 0
    assert "model calls 1, cache hits 4" in capsys.readouterr().out  # the bad row: asked again
    with sqlite3.connect(second / "events.sqlite") as db:
        rows = db.execute(
            "SELECT scope, payload FROM events WHERE kind = 'cache.bad_row'"
        ).fetchall()
    assert len(rows) == 1 and rows[0][0] == "incident"
    assert json.loads(rows[0][1])["request_key"] == key
    assert (first / "metrics.json").read_bytes() == (second / "metrics.json").read_bytes()


def test_a_cache_that_is_not_sqlite_is_one_error_line(
    tmp_path: Path, isolated_cache: Path, capsys
) -> None:
    isolated_cache.mkdir()
    (isolated_cache / "responses.sqlite").write_bytes(b"this is not a database" * 300)
    assert main(scripted_run(tmp_path / "r", 3)) == 2
    line = one_error(capsys)
    assert "not a usable response cache" in line and "--no-cache" in line
