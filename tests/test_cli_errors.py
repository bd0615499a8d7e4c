"""What a new user types wrong: one `error:` line naming what and where, exit 2, nothing left.

Real files throughout: a real run's event log copied and damaged, real CSV and JSONL persona
files, a real file where a directory should be.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from personasim.simulation import RunError, run_scenario
from personasim.simulation.cli.main import main


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a failed command printed (stderr), checked to be just that."""
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh current directory, so a default `runs/` would show up here."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def small_run(tmp_path: Path) -> Path:
    out = tmp_path / "done"
    args = ["run", "trust-population", "--n-personas", "3", "--out", str(out), "--no-progress"]
    assert main(args) == 0
    return out


# --- 7. numeric flags ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        (
            "--concurrency",
            "0",
            "argument --concurrency: must be an integer of at least 1 and at most 4096, got '0'",
        ),
        ("--concurrency", "many", "argument --concurrency: must be an integer of at least 1"),
        (
            "--concurrency",
            "100000000000000000000",
            "--concurrency: must be an integer of at least 1 and at most 4096",
        ),
        (
            "--timeout",
            "-1",
            "argument --timeout: must be a number greater than 0 and at most 86400, got '-1'",
        ),
        ("--timeout", "nan", "argument --timeout: must be a number greater than 0"),
        ("--timeout", "1e308", "--timeout: must be a number greater than 0 and at most 86400"),
        ("--seed", "-1", "argument --seed: must be an integer of at least 0"),
        ("--seed", str(2**70), f"--seed: must be an integer of at least 0 and at most {2**63 - 1}"),
        ("--max-attempts", "0", "argument --max-attempts: must be an integer of at least 1"),
        (
            "--max-attempts",
            "1000000000000",
            "--max-attempts: must be an integer of at least 1 and at most 100",
        ),
        ("--rpm", "0", "argument --rpm: must be a number greater than 0"),
        ("--rpm", "-5", "argument --rpm: must be a number greater than 0"),
        (
            "--max-failure-rate",
            "nan",
            "--max-failure-rate: must be a number from 0 to 1, got 'nan'",
        ),
    ],
)
def test_run_flags_out_of_range(workdir: Path, capsys, flag, value, expected) -> None:
    out = workdir / "r"
    assert main(["run", "trust-population", "--out", str(out), flag, value]) == 2
    line = one_error(capsys)
    assert expected in line and "(see personasim run --help)" in line
    assert not out.exists() and not (workdir / "runs").exists()


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--concurrency", "0", "argument --concurrency: must be an integer of at least 1"),
        ("--seed", "-3", "argument --seed: must be an integer of at least 0"),
    ],
)
def test_sweep_flags_out_of_range(workdir: Path, capsys, flag, value, expected) -> None:
    out = workdir / "sweep"
    assert main(["sweep", "trust-population", "--out", str(out), flag, value]) == 2
    assert expected in one_error(capsys)
    assert not out.exists()


def test_other_usage_mistakes_are_one_line_too(capsys) -> None:
    assert main(["frobnicate"]) == 2
    assert "invalid choice: 'frobnicate'" in one_error(capsys)
    assert main(["replay"]) == 2
    assert "the following arguments are required: run_dir" in one_error(capsys)
    assert main(["metrics", "a", "b"]) == 2
    assert "unrecognized arguments: b" in one_error(capsys)


@pytest.mark.parametrize(
    ("command", "typed", "expected"),
    [
        (["run"], ["--concurency", "4"], "unknown flag --concurency; did you mean --concurrency?"),
        (["run"], ["--no-progres"], "unknown flag --no-progres; did you mean --no-progress?"),
        (["run"], ["--n-persona=3"], "unknown flag --n-persona; did you mean --n-personas?"),
        (["run"], ["--no-big-fiv"], "unknown flag --no-big-fiv; did you mean --no-big-five?"),
        (
            ["sweep"],
            ["--max-atempts", "2"],
            "unknown flag --max-atempts; did you mean --max-attempts?",
        ),
        (["sweep"], ["--endownment", "3"], "unknown flag --endownment; did you mean --endowment?"),
        (
            ["counterfactual"],
            ["--attribute", "Sex", "--levels", "Male,Female", "--rmp", "60"],
            "unknown flag --rmp; did you mean --rpm?",
        ),
        (
            ["run"],
            ["--zzz", "1"],
            "unknown flag --zzz; `personasim run trust-population --help` lists the flags and "
            "trust-population's parameters",
        ),
    ],
)
def test_an_unknown_flag_is_matched_against_run_flags_and_parameters(
    workdir: Path, capsys, command, typed, expected
) -> None:
    """argparse takes the command's own flags; what is left must be a scenario parameter, and
    the did-you-mean of one that is not looks at both, before any value is read."""
    out = workdir / "out"
    assert main([*command, "trust-population", "--out", str(out), *typed]) == 2
    assert one_error(capsys) == f"error: {expected}"
    assert not out.exists() and not (workdir / "runs").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency must be at least 1, got 0"),
        ({"requests_per_minute": 0.0}, "requests_per_minute must be a number greater than 0"),
        ({"seed": -1}, "seed must be an integer of at least 0, got -1"),
    ],
)
def test_library_checks_the_same_before_the_run_directory(tmp_path, options, message) -> None:
    out = tmp_path / "r"
    with pytest.raises(RunError, match=message):
        run_scenario("trust-population", {"n_personas": 2}, out=out, progress=False, **options)
    assert not out.exists()


# --- 8. --out and --cache-dir that cannot be written ------------------------------------------


def test_out_is_an_existing_file(workdir: Path, capsys) -> None:
    target = workdir / "notes.txt"
    target.write_text("keep me\n")
    assert main(["run", "trust-population", "--out", str(target), "--no-progress"]) == 2
    assert f"--out {target} is a file, not a directory; choose another --out" in one_error(capsys)
    assert target.read_text() == "keep me\n"
    assert sorted(p.name for p in workdir.iterdir()) == ["cache", "notes.txt"]


def test_out_below_a_file(workdir: Path, capsys) -> None:
    (workdir / "notes.txt").write_text("x")
    target = workdir / "notes.txt" / "deeper" / "run"
    assert main(["run", "trust-population", "--out", str(target), "--no-progress"]) == 2
    line = one_error(capsys)
    assert f"cannot write to {target} (Not a directory); choose another --out" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_out_in_a_read_only_directory_leaves_nothing(workdir: Path, capsys) -> None:
    locked = workdir / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        target = locked / "a" / "run"
        assert main(["run", "trust-population", "--out", str(target), "--no-progress"]) == 2
        assert "Permission denied" in one_error(capsys)
        assert not any(locked.iterdir())
    finally:
        locked.chmod(0o700)


def test_created_directories_are_removed_when_the_run_directory_is_not_writable(
    workdir: Path, capsys, monkeypatch
) -> None:
    """Parents made on the way are taken back when the last step fails (simulated EACCES)."""
    real_touch = Path.touch

    def refuse(self: Path, *args, **kwargs) -> None:
        if self.name.startswith(".personasim-write-test"):
            raise PermissionError(13, "Permission denied", str(self))
        real_touch(self, *args, **kwargs)

    monkeypatch.setattr(Path, "touch", refuse)
    target = workdir / "new" / "deeper" / "run"
    assert main(["run", "trust-population", "--out", str(target), "--no-cache"]) == 2
    assert f"cannot write to {target} (Permission denied)" in one_error(capsys)
    assert not (workdir / "new").exists()


def test_cache_dir_that_is_a_file(workdir: Path, capsys) -> None:
    (workdir / "cachefile").write_text("")
    out = workdir / "r"
    args = ["run", "trust-population", "--out", str(out), "--cache-dir", "cachefile"]
    assert main(args) == 2
    assert "--cache-dir cachefile is a file, not a directory" in one_error(capsys)
    assert not out.exists()


# --- 9. a damaged event log ------------------------------------------------------------------


def damage(run: Path, how: str) -> Path:
    path = run / "events.sqlite"
    data = path.read_bytes()
    noise = random.Random(7)
    if how == "random":
        path.write_bytes(bytes(noise.randrange(256) for _ in range(len(data))))
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 3])
    else:  # every page but the first (header and schema) overwritten
        path.write_bytes(data[:4096] + bytes(noise.randrange(256) for _ in data[4096:]))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"  # so that --resume reads the log
    (run / "manifest.json").write_text(json.dumps(manifest))
    return path


@pytest.mark.parametrize("how", ["random", "truncated", "pages"])
@pytest.mark.parametrize("command", ["replay", "metrics", "export", "resume"])
def test_damaged_event_log_is_named(small_run: Path, capsys, how, command) -> None:
    path = damage(small_run, how)
    before = path.read_bytes()
    if command == "resume":
        args = ["run", "trust-population", "--n-personas", "3", "--out", str(small_run)]
        code = main([*args, "--resume", "--no-progress"])
    else:
        code = main([command, str(small_run)])
    assert code == 2
    line = one_error(capsys)
    assert f"{path}: not a readable event store" in line
    assert "the file is damaged or is not a personasim event log" in line
    assert path.read_bytes() == before
    assert not (small_run / "events.jsonl").exists()


# --- 10. unknown trait names -----------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["trust-population", "trust-beliefs", "trust-conditioning"])
def test_unknown_trait_lists_the_known_ones(workdir: Path, capsys, scenario) -> None:
    out = workdir / "r"
    assert main(["run", scenario, "--attributes", "Age,Relgion", "--out", str(out)]) == 2
    line = one_error(capsys)
    assert "--attributes: unknown trait 'Relgion' (did you mean 'Religion'?)" in line
    assert "known traits: Age, Sex, Race, Political Views, Religion," in line
    assert not out.exists() and not (workdir / "runs").exists()


def test_a_repeated_trait_is_refused(workdir: Path, capsys) -> None:
    args = ["run", "trust-population", "--attributes", "Age,Age", "--out", "r"]
    assert main(args) == 2
    assert "name each trait once" in one_error(capsys)


# --- 11. persona files that cannot supply the traits -------------------------------------------


def test_persona_file_without_any_analysed_trait(workdir: Path, capsys) -> None:
    people = workdir / "people.jsonl"
    people.write_text('{"name": "Bo", "job": "cook"}\n{"name": "Al", "job": "nurse"}\n')
    args = ["run", "trust-population", "--persona-file", str(people), "--n-personas", "2"]
    assert main([*args, "--out", "r"]) == 2
    line = one_error(capsys)
    assert f"--persona-file: {people}: none of its 2 personas has a field for the traits" in line
    assert "those fields are age, family_structure_at_16," in line
    assert "the file has job, name" in line
    assert not (workdir / "r").exists()


def test_only_big_five_traits_asked_needs_nothing_from_the_file(workdir: Path) -> None:
    people = workdir / "people.jsonl"
    people.write_text('{"name": "Bo"}\n{"name": "Al"}\n')
    args = ["run", "trust-population", "--persona-file", str(people), "--n-personas", "2"]
    assert main([*args, "--attributes", "Conscientiousness", "--out", "r", "--no-progress"]) == 0


@pytest.mark.parametrize(
    ("scenario", "flag", "header"),
    [
        ("trust-population", "--persona-file", "id;age;sex;religion"),
        ("trust-forecast", "--persona-file", "id;age;sex;religion"),
        ("career-chat", "--profile-file", "id;age;gender;education"),
    ],
)
def test_semicolon_separated_csv(workdir: Path, capsys, scenario, flag, header) -> None:
    people = workdir / "people.csv"
    people.write_text(f"{header}\na;30;Female;None\nb;71;Male;Jewish\n")
    assert main(["run", scenario, flag, str(people), "--out", "r"]) == 2
    line = one_error(capsys)
    assert f"{flag}: {people}" in line and "separated by semicolons" in line
    assert f"the single column {header!r}" in line and "re-save it with commas" in line
    assert not (workdir / "r").exists()


# --- 12. export to stdout --------------------------------------------------------------------


def test_export_to_stdout_writes_only_the_events(small_run: Path, capsys) -> None:
    assert main(["export", str(small_run), "--output", "-"]) == 0
    captured = capsys.readouterr()
    events = [json.loads(line) for line in captured.out.splitlines()]
    assert events and events[0]["kind"] == "run.started"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert captured.err.strip() == f"{len(events)} events written to stdout"
    assert not (small_run / "events.jsonl").exists()
    assert main(["export", str(small_run)]) == 0  # the file holds the same lines
    assert (small_run / "events.jsonl").read_text() == captured.out


def test_export_to_a_place_that_cannot_be_written(small_run: Path, tmp_path, capsys) -> None:
    target = tmp_path / "missing" / "events.jsonl"
    assert main(["export", str(small_run), "--output", str(target)]) == 2
    line = one_error(capsys)
    assert f"cannot write {target} (No such file or directory); choose another --output" in line
    assert not (tmp_path / "missing").exists()


# --- more things a new user types --------------------------------------------------------------


def test_replay_of_a_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("x")
    assert main(["replay", str(tmp_path / "notes.txt")]) == 2
    assert "not a run directory (no manifest.json)" in one_error(capsys)


def test_reading_a_run_without_its_log_creates_nothing(small_run: Path, capsys) -> None:
    (small_run / "events.sqlite").unlink()
    for command in ("replay", "metrics", "export"):
        assert main([command, str(small_run)]) == 2
        assert "no events.sqlite (the run's event log); nothing to read" in one_error(capsys)
    assert not (small_run / "events.sqlite").exists()


def test_manifest_that_is_not_a_manifest(small_run: Path, capsys) -> None:
    (small_run / "manifest.json").write_text("[]")
    assert main(["replay", str(small_run)]) == 2
    assert "manifest.json: not a personasim manifest" in one_error(capsys)
    args = ["run", "trust-population", "--out", str(small_run), "--resume", "--no-progress"]
    assert main(args) == 2
    assert "not a personasim manifest" in one_error(capsys)


def test_resuming_a_complete_run_whose_metrics_are_gone(small_run: Path, capsys) -> None:
    (small_run / "metrics.json").unlink()
    args = ["run", "trust-population", "--n-personas", "3", "--out", str(small_run), "--resume"]
    assert main([*args, "--no-progress"]) == 2
    assert f"`personasim metrics {small_run}` recomputes it" in one_error(capsys)
    assert main(["metrics", str(small_run)]) == 0  # ... and it does


def test_openai_model_without_a_key_is_bad_input(workdir: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["run", "trust-population", "--model", "openai:gpt-4o-mini", "--out", "r"]) == 2
    assert "needs an API key: set OPENAI_API_KEY" in one_error(capsys)
    assert not (workdir / "r").exists()


def test_base_url_without_a_scheme(workdir: Path, capsys) -> None:
    args = ["run", "trust-population", "--model", "openai:m", "--base-url", "localhost:8000/v1"]
    assert main([*args, "--out", "r"]) == 2
    line = one_error(capsys)
    assert "base URL 'localhost:8000/v1' must start with http:// or https://" in line
    assert not (workdir / "r").exists()


def test_brackets_in_a_message_are_printed_not_styled(workdir: Path, capsys) -> None:
    missing = "[/bold][red]people.jsonl"
    assert main(["run", "trust-population", "--persona-file", missing, "--out", "r"]) == 2
    assert f"{missing}: no such file" in one_error(capsys)


def test_a_copied_run_can_still_be_read(small_run: Path, tmp_path: Path, capsys) -> None:
    """The checks above refuse damaged runs, not moved ones."""
    copy = tmp_path / "copy"
    shutil.copytree(small_run, copy)
    assert main(["metrics", str(copy), "--check"]) == 0
