"""The benchmark scripts still run (they print timings; no timing is asserted here)."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the benchmarks' smoke modes: whole runs, servers, processes

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_decision_benchmark_quick_mode_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_decisions.py"), "--quick", "--repeats", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for table in ("A. Framework cost per decision", "A2. Where a decision", "B. One round"):
        assert table in done.stdout


@pytest.mark.timeout(300)  # four Python processes start; slow on a loaded 2-core machine
def test_round_benchmark_smoke_mode_holds_the_endpoint_cap() -> None:
    """Its smallest run: personasim and plain asyncio answer every call under the endpoint's
    in-flight cap with none rejected (mesa-llm needs its own venv, so it is skipped here)."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_round.py"), "--smoke", "--no-mesa-llm"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    words = [line.split() for line in done.stdout.splitlines()]
    names = ("personasim", "plain-asyncio")
    rows = [w for w in words if len(w) > 9 and w[0] in names and w[1].isdigit()]
    assert sorted((r[0], r[1], r[2]) for r in rows) == [
        ("personasim", "20", "4"),
        ("plain-asyncio", "20", "4"),
    ]
    for row in rows:  # columns: ..., rejected, requests, peak MB, load
        rejected, requests = int(row[8]), int(row[9])
        assert (rejected, requests) == (0, int(row[1])), row


def test_bench_round_pool_smoke() -> None:
    """`--pool --smoke`: 40 decisions over two servers capped at 4, every request answered, none
    rejected, each server a share."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_round.py"), "--pool", "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    servers = [line.split() for line in done.stdout.splitlines() if "  server " in line]
    assert len(servers) == 2
    assert sum(int(words[2]) for words in servers) == 40
    assert all(words[-2] == "0" and words[-1] == "rejected" for words in servers), servers
    assert all(int(words[2]) > 0 for words in servers)


@pytest.mark.timeout(300)  # two runs in their own processes; slow on a loaded 2-core machine
def test_fault_benchmark_smoke_mode_loses_nothing() -> None:
    """Its smallest size: both runs finish by themselves and account for every decision (the
    fault draws are seeded; no timing is asserted)."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_faults.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {w[0]: w for w in (line.split() for line in done.stdout.splitlines()) if w}
    for run in ("fault-free", "faulty"):  # columns: run, wall, exit, status, decided, dropped
        assert rows[run][3:6] == ["complete", "80", "0"], rows[run]
    assert rows["no"][1:5] == ["manual", "resume", "0", "0"]  # the target line, met
    assert "faults served: {" in done.stdout


@pytest.mark.timeout(300)
def test_career_import_benchmark_runs_on_synthetic_answers() -> None:
    """The import benchmark on the 25 synthetic users in the released files' formats
    (tests/career_synthetic.py), resampling cut short."""
    data = Path(__file__).parent / "data" / "career_mba" / "synthetic"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "bench_career_import.py"),
            *("--profile-answers", str(data / "profile_answers.jsonl")),
            *("--dialogue-answers", str(data / "dialogue_answers.jsonl")),
            *("--profiles", str(data / "profiles.csv")),
            *("--bootstrap", "20", "--permutations", "20"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "25 users" in done.stdout and "wall" in done.stdout and "resampling" in done.stdout


def test_reader_heldout_benchmark_asks_the_role_exactly_where_a_run_would() -> None:
    """On the scripted double (math-verify as the role) and the benchmark's seeded sample of
    400 held-out rows: the role is asked for each row the rules found unreadable (fill), and
    also for every row they read or found ambiguous between candidates (confirm)."""
    from test_heldout_readers import NO_VALUE, math_reader

    path = BENCHMARKS / "reader_heldout.py"
    spec = importlib.util.spec_from_file_location("reader_heldout", path)
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    rows = [row for _, row in random.Random(0).sample(list(benchmark.held_out_rows()), 400)]
    read = math_reader()
    readings = [read(row["reply"], row.get("question")) for row in rows]
    unreadable = sum(r.status == "unreadable" for r in readings)
    valued = sum(row["label"] not in NO_VALUE for row in rows)
    for mode, expect in (
        ("fill", unreadable),
        ("confirm", unreadable + sum(r.ok or bool(r.candidates) for r in readings)),
    ):
        done = subprocess.run(
            [sys.executable, str(path), "--reader", "scripted", "--mode", mode,
             "--sample", "400", "--seed", "0"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        total = next(line for line in done.stdout.splitlines() if "all: n=" in line)
        assert f"all: n=400 ({valued} with a value); role asked {expect};" in total
