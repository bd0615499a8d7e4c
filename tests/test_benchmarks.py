"""The benchmark scripts still run (they print timings; no timing is asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
