"""Every example runs, offline, with a fixed seed (smoke test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(example: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, str(example), "--out", str(out), "--n-personas", "6"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "run directory:" in done.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert json.loads((out / "metrics.json").read_text())["metrics"]


def test_coin_guess_metrics_follow_its_rule(tmp_path: Path) -> None:
    """Its scripted rule (after heads, guess heads 30% of the time) shows in the log."""
    sys.path.insert(0, str(EXAMPLES[0].parent))
    from coin_guess import CoinGuess

    from personasim.simulation import SQLiteEventStore, run_scenario

    result = run_scenario(
        CoinGuess, {"n_personas": 60, "rounds": 6}, out=tmp_path / "r", progress=False
    )
    assert result.metrics["metrics"]["guesses"] == 360
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        flips = {e.round: e.payload["side"] for e in store.read(["coin.flipped"])}
        guesses = [(e.round, e.payload["value"]) for e in store.read(["decision.made"])]
    after_heads = [g == "heads" for r, g in guesses if flips.get(r - 1) == "heads"]
    after_tails = [g == "heads" for r, g in guesses if flips.get(r - 1) == "tails"]
    assert after_heads and after_tails
    assert sum(after_heads) / len(after_heads) < 0.45 < 0.55 < sum(after_tails) / len(after_tails)
