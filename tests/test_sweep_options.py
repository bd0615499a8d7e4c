"""`personasim sweep` takes every option `run` takes, and each reaches every cell's run."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from personasim.simulation.cli.main import main

COIN_GUESS = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
CLASSROOM = [
    "classroom", "--n-questions", "2", "--strategies", "zero-shot", "--races", "none",
    "--orders", "before", "--vary", "repetitions=1,2",
]  # fmt: skip


def sweep_with_every_option(tmp_path: Path, executor: str) -> tuple[int, Path, Path, Path]:
    """A two-cell classroom sweep with every run option set away from its default."""
    pack, cache, out = tmp_path / "pack.yaml", tmp_path / "own-cache", tmp_path / "sweep"
    assert main(["prompts", "classroom", "--output", str(pack)]) == 0
    code = main(
        [
            "sweep", *CLASSROOM, "--executor", executor, "--out", str(out), "--no-progress",
            "--seed", "4", "--role", "judge=scripted:seed=5", "--prompts", str(pack),
            "--response-format", "json_schema", "--max-tokens", "50",
            "--max-failure-rate", "0.5", "--min-group-n", "2", "--concurrency", "3",
            "--rpm", "60000", "--timeout", "7", "--max-attempts", "2",
            "--no-cache", "--cache-dir", str(cache),
            # worker processes are one machine's: a sweep on Ray spreads its cells instead
            "--workers", "2" if executor == "local" else "1",
        ]
    )  # fmt: skip
    return code, out, pack, cache


def check_every_cell(out: Path, pack: Path, cache: Path, workers: int = 1) -> None:
    cells = sorted(p for p in out.iterdir() if p.is_dir())
    assert [c.name for c in cells] == ["scripted__repetitions=1", "scripted__repetitions=2"]
    for cell in cells:
        manifest = json.loads((cell / "manifest.json").read_text())
        assert manifest["status"] == "complete"
        assert manifest["seed"] == 4
        assert manifest["roles"] == {
            "student": ["scripted"],
            "judge": ["scripted:seed=5"],
            "reader": [],
        }
        assert manifest["prompts"]["file"] == str(pack)
        assert manifest["response_format"] == "json_schema"
        assert manifest["max_tokens"] == 50
        assert manifest["validity"]["max_failure_rate"] == 0.5
        assert manifest["validity"]["min_group_n"] == 2
        assert manifest["client"] == {
            "concurrency": 3,
            "requests_per_minute": 60000.0,
            "timeout_s": 7.0,
            "max_attempts": 2,
            "hedge": {
                "enabled": True,
                "multiplier": 1.5,
                "floor_s": 0.5,
                "ceiling_s": 30.0,
                "beyond_limit": 0.1,
            },
            "workers": workers,
        }
        assert manifest["llm"]["cache_hits"] == 0
    assert not cache.exists()  # --no-cache: neither read nor written


@pytest.mark.slow
def test_every_run_option_reaches_every_cell(tmp_path: Path) -> None:
    code, out, pack, cache = sweep_with_every_option(tmp_path, "local")
    assert code == 0
    check_every_cell(out, pack, cache, workers=2)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_cache_dir_reaches_every_cell(tmp_path: Path) -> None:
    cache = tmp_path / "own-cache"
    args = ["sweep", *CLASSROOM, "--no-progress", "--cache-dir", str(cache)]
    assert main([*args, "--out", str(tmp_path / "first")]) == 0
    assert (cache / "responses.sqlite").is_file()
    again = tmp_path / "again"
    assert main([*args, "--out", str(again)]) == 0
    for cell in (p for p in again.iterdir() if p.is_dir()):
        llm = json.loads((cell / "manifest.json").read_text())["llm"]
        assert llm["cache_hits"] > 0 and llm["calls"] == 0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--ray-address", "auto"], "--ray-address is for --executor ray"),
        (["--executor", "spark"], "invalid choice: 'spark'"),
        (["--executor", "ray", "--workers", "2"], "--workers is for one machine"),
    ],
)
def test_bad_executor_flags_exit_2(tmp_path: Path, capsys, flags: list[str], message: str) -> None:
    out = tmp_path / "sweep"
    assert main(["sweep", *CLASSROOM, "--out", str(out), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_seeds_are_a_dimension_of_the_sweep(tmp_path: Path) -> None:
    """Each seed is its own cell, equal to a run with that seed; the paper's table is written
    once per seed (Table 9 would otherwise keep one repetition per model and endowment)."""
    out = tmp_path / "sweep"
    args = ["sweep", "trust-beliefs", "--n-personas", "6", "--attributes", "Conscientiousness"]
    args += ["--vary", "endowment=10,44", "--seeds", "0,7", "--no-progress", "--no-cache"]
    code = main([*args, "--out", str(out)])
    assert code == 0
    cells = sorted(p.name for p in out.iterdir() if (p / "manifest.json").is_file())
    assert cells == [f"scripted__endowment={e}__seed={s}" for e in (10, 44) for s in (0, 7)]
    for cell in cells:
        manifest = json.loads((out / cell / "manifest.json").read_text())
        assert manifest["seed"] == int(cell.rsplit("=", 1)[1])
    single = tmp_path / "single"
    run = ["run", "trust-beliefs", "--n-personas", "6", "--attributes", "Conscientiousness"]
    assert main([*run, "--endowment", "44", "--seed", "7", "--out", str(single), "--no-cache"]) == 0
    assert (single / "metrics.json").read_text() == (
        out / "scripted__endowment=44__seed=7" / "metrics.json"
    ).read_text()
    combined = (out / "combined.csv").read_text().splitlines()
    assert combined[0].split(",")[:3] == ["model", "endowment", "seed"]
    assert {line.split(",")[2] for line in combined[1:]} == {"0", "7"}
    for seed in (0, 7):
        assert any((out / f"seed={seed}").glob("table9*.csv"))
    assert not list(out.glob("table9*.csv"))


@pytest.mark.parametrize("seeds", ["0,0", "1,x", ""])
def test_bad_seeds_exit_2(tmp_path: Path, capsys, seeds: str) -> None:
    out = tmp_path / "sweep"
    assert main(["sweep", *CLASSROOM, "--out", str(out), "--seeds", seeds]) == 2
    assert "--seeds" in capsys.readouterr().err
    assert not out.exists()


def test_an_address_where_nothing_answers_fails_at_once(tmp_path: Path, capsys) -> None:
    """Ray itself retries an unreachable head for minutes; the sweep says so in seconds (here,
    with no Ray started in this process)."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "sweep"
    started = time.monotonic()
    args = ["sweep", str(COIN_GUESS), "--executor", "ray", "--ray-address", f"127.0.0.1:{port}"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 2
    assert time.monotonic() - started < 30
    assert "nothing answers there" in capsys.readouterr().err
    assert not out.exists()
