"""A run at every phase, from start-up to its last report: input files in the fingerprint,
signals during start-up and during report writing, errors before the run directory, atomic
writes, and the lock's holder named by a second writer and by `metrics` at once.

Where the behaviour is a process's (signals, a second process, a full disk), the test starts
the `personasim` command line as a child process and reads what it left, as a user would.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer
from test_run_integrity import (
    COMMAND,
    _small_tmpfs_works,
    assert_one_error_line,
    count,
    manifest,
    personasim,
    start,
)

from personasim.simulation.cli.main import main
from personasim.simulation.core.scenario import ScenarioParams
from personasim.simulation.runs.lifecycle.atomic_files import atomic_path, write_text_atomic
from personasim.simulation.runs.lifecycle.fingerprint import input_changes
from personasim.simulation.runs.lifecycle.input_files import input_files
from personasim.simulation.runs.lifecycle.run_lock import RunLock

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
REPORT = (
    "        return [f\"{metrics['guesses']} guesses, accuracy "
    "{shown_stat(metrics, 'accuracy')}\"]\n"
)
PERSONAS = "id,age,sex,religion\na,30,Female,None\nb,71,Male,Jewish\nc,45,Male,None\n"


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    return assert_one_error_line(capsys.readouterr().err)


def reopen(run_dir: Path) -> None:
    """Make a finished run resumable again (as if stopped before its last commit)."""
    with sqlite3.connect(run_dir / "events.sqlite") as db:
        db.execute("DELETE FROM events WHERE kind = 'run.completed'")


def wait_for(path: Path, child: subprocess.Popen[str], within_s: float = 60) -> None:
    deadline = time.monotonic() + within_s
    while not path.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"{path.name} never appeared: {child.communicate()}")
        time.sleep(0.02)


# --- 4. every input file is in the fingerprint ------------------------------------------------


def test_an_edited_persona_file_is_refused_on_resume_before_anything_is_sent(
    tmp_path: Path, capsys
) -> None:
    personas, out = tmp_path / "personas.csv", tmp_path / "r"
    personas.write_text(PERSONAS)
    args = ["run", "trust-population", "--persona-file", str(personas), "--n-personas", "3",
            "--out", str(out), "--no-progress", "--no-cache"]  # fmt: skip
    assert main(args) == 0
    recorded = manifest(out)["inputs"]["--persona-file"]
    assert recorded["path"] == str(personas) and len(recorded["sha256"]) == 64
    reopen(out)
    calls, before = count(out, "llm.call"), (out / "manifest.json").read_bytes()
    personas.write_text(PERSONAS.replace("Jewish", "None"))
    capsys.readouterr()

    assert main([*args, "--resume"]) == 2
    line = one_line(capsys)
    assert f"{personas} (--persona-file) changed since the run started (sha256 " in line
    assert count(out, "llm.call") == calls  # nothing was sent
    assert (out / "manifest.json").read_bytes() == before  # nor written

    personas.write_text(PERSONAS)  # the run's file again: it resumes
    assert main([*args, "--resume"]) == 0
    assert manifest(out)["status"] == "complete"


class FileParams(ScenarioParams):
    """A scenario's parameters with files in each shape a parameter can take."""

    bank: Path | None = None
    questions: Path
    extras: tuple[Path, ...] = ()
    label: str = "not a file"


def test_every_parameter_typed_as_a_path_is_an_input(tmp_path: Path) -> None:
    for name in ("questions.csv", "a.txt", "b.txt"):
        (tmp_path / name).write_text(name)
    params = FileParams(
        questions=tmp_path / "questions.csv", extras=(tmp_path / "a.txt", tmp_path / "b.txt")
    )
    prompts = tmp_path / "prompts.yaml"
    prompts.write_text("pack")
    found = input_files(params, prompts=prompts)
    assert set(found) == {"--questions", "--extras[0]", "--extras[1]", "--prompts"}
    assert found["--questions"]["path"] == str(tmp_path / "questions.csv")

    (tmp_path / "b.txt").write_text("edited")
    again = input_files(params, prompts=prompts)
    changed = input_changes({"inputs": found}, {"inputs": again})
    assert list(changed) == ["--extras[1]"]
    assert changed["--extras[1]"].startswith(f"{tmp_path / 'b.txt'} (--extras[1]) changed since")
    assert input_changes({}, {"inputs": again}) == {}  # a run that recorded none


def test_a_run_directory_given_as_input_is_identified_by_its_log(tmp_path: Path) -> None:
    source = tmp_path / "source"
    assert main(["run", "trust-population", "--n-personas", "3", "--out", str(source),
                 "--no-progress", "--no-cache"]) == 0  # fmt: skip
    params = FileParams(questions=source)
    first = input_files(params)["--questions"]["sha256"]
    (source / "view.html").write_text("a page written beside the run later")
    with sqlite3.connect(source / "events.sqlite") as db:  # read as a scenario reads it
        db.execute("SELECT COUNT(*) FROM events").fetchone()
    assert input_files(params)["--questions"]["sha256"] == first
    reopen(source)  # its log changes: a run resumed from it now would be refused
    assert main(["run", "trust-population", "--n-personas", "3", "--out", str(source),
                 "--no-progress", "--no-cache", "--resume"]) == 0  # fmt: skip
    assert input_files(params)["--questions"]["sha256"] != first


def test_an_edited_endpoints_file_needs_to_be_allowed(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out, pools = tmp_path / "r", tmp_path / "endpoints.toml"
    with FakeOpenAIServer(responder=trustor_reply) as server:
        pools.write_text(f'[[pools.p.endpoints]]\nurl = "{server.base_url}"\n')
        args = ["run", "trust-population", "--n-personas", "3", "--out", str(out),
                "--model", "openai:fake-model@pool:p", "--endpoints", str(pools),
                "--no-progress", "--no-cache"]  # fmt: skip
        assert main(args) == 0
        reopen(out)
        sent = server.request_count
        pools.write_text(pools.read_text() + "concurrency = 2\n")
        capsys.readouterr()
        assert main([*args, "--resume"]) == 2
        line = one_line(capsys)
        assert f"{pools} (--endpoints) changed since the run started" in line
        assert "--allow-endpoint-change" in line
        assert main([*args, "--resume", "--allow-endpoint-change"]) == 0
        assert server.request_count == sent  # every unit came back from the log
    (change,) = manifest(out)["input_changes"]
    assert change["input"] == "--endpoints" and change["from"] != change["to"]


# --- 5. errors before the run directory; atomic writes ---------------------------------------


def test_a_junk_cache_file_leaves_no_run_directory(
    tmp_path: Path, isolated_cache: Path, capsys
) -> None:
    isolated_cache.mkdir()
    (isolated_cache / "responses.sqlite").write_bytes(b"this is not a database" * 300)
    out = tmp_path / "r"
    args = ["run", "trust-population", "--n-personas", "3", "--out", str(out), "--no-progress"]
    assert main(args) == 2
    assert "not a usable response cache" in one_line(capsys)
    assert not out.exists()
    assert main([*args, "--no-cache"]) == 0  # the same --out, once the cache is left out


@pytest.mark.slow
@pytest.mark.skipif(not _small_tmpfs_works(), reason="needs unshare and a tmpfs mount")
def test_a_disk_full_at_start_names_the_file_and_leaves_nothing(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "r"
    run = shlex.join([*COMMAND, "run", "trust-population", "--n-personas", "3", "--out",
                      str(out), "--no-progress", "--no-cache"])  # fmt: skip
    script = (
        f"mount -t tmpfs -o size=64k tmpfs {shlex.quote(str(disk))} && "
        f"(head -c 1M /dev/zero > {shlex.quote(str(disk / 'fill'))} 2>/dev/null; true) && {run}; "
        f"code=$?; ls -A {shlex.quote(str(disk))} >&2; exit $code"
    )
    full = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )
    *error, listing = full.stderr.strip().splitlines()
    assert full.returncode == 1
    line = assert_one_error_line("\n".join(error))
    assert f"{out}/.personasim.lock: No space left on device" in line
    assert f"{out} was removed" in line
    assert listing == "fill"  # no run directory, no 0-byte lock


def test_a_failed_atomic_write_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "metrics.json"
    write_text_atomic(target, "old\n")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half of the new")
        raise RuntimeError("stopped half-way")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]
    with atomic_path(tmp_path / "table.csv") as tmp:
        assert tmp.suffix == ".csv" and tmp.parent == tmp_path  # writers pick formats by suffix
        tmp.write_text("a,b\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json", "table.csv"]


# --- 5. signals at every phase -----------------------------------------------------------------


def scenario_file(tmp_path: Path, *, at_import: str = "", in_reports: str = "") -> Path:
    """coin_guess as a scenario file, with code run when it is imported or when its reports
    are written."""
    source = EXAMPLE.read_text()
    assert REPORT in source
    reports = (
        "\n    @classmethod\n"
        "    def write_reports(cls, metrics, directory):\n"
        f"{in_reports}"
        "        return []\n"
    )
    path = tmp_path / "coin_guess_probe.py"
    future = "from __future__ import annotations\n"
    source = source.replace(future, future + at_import).replace(REPORT, REPORT + reports)
    path.write_text(source)
    return path


GATED_REPORTS = (
    "        import os, pathlib, time\n"
    "        (directory / 'partial.md').write_text('a report written before the stop')\n"
    "        if os.environ.get('REPORT_GATE'):  # the test stops the run here\n"
    "            pathlib.Path(os.environ['REPORT_GATE']).touch()\n"
    "            time.sleep(120)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_while_reports_are_written_is_recorded_and_resumable(
    tmp_path: Path, signum: int, code: int
) -> None:
    path, out, gate = (
        scenario_file(tmp_path, in_reports=GATED_REPORTS),
        tmp_path / "r",
        tmp_path / "gate",
    )
    args = ["run", str(path), "--n-personas", "3", "--rounds", "2", "--out", str(out),
            "--no-progress", "--no-cache"]  # fmt: skip
    child = start(*args, env={**os.environ, "REPORT_GATE": str(gate)})
    wait_for(gate, child)
    assert count(out, "run.completed") == 1 and (out / "metrics.json").is_file()
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    name = signal.Signals(signum).name
    assert child.returncode == code, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith(f"stopped by {name}: {out} is marked interrupted; resume with: ")
    assert (manifest(out)["status"], manifest(out)["error"]) == (
        "interrupted",
        f"stopped by {name}",
    )
    leftovers = [p.name for p in (out, out / "reports") for p in p.iterdir() if ".tmp" in p.name]
    assert leftovers == []
    command = shlex.split(stderr.split("resume with: ", 1)[1])
    assert command[:2] == ["personasim", "run"] and command[-1] == "--resume"
    calls = count(out, "llm.call")
    resumed = personasim(*command[1:])
    assert resumed.returncode == 0, resumed.stderr
    assert manifest(out)["status"] == "complete" and "error" not in manifest(out)
    assert count(out, "llm.call") == calls  # the log answered every unit
    assert count(out, "run.completed") == 1


SLOW_IMPORT = (
    "import os as _os, pathlib as _pathlib, time as _time\n"
    "_pathlib.Path(_os.environ['IMPORT_GATE']).touch()\n"
    "_time.sleep(120)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_start_up_says_that_nothing_was_written(
    tmp_path: Path, signum: int, code: int
) -> None:
    path = scenario_file(tmp_path, at_import=SLOW_IMPORT)
    out, gate = tmp_path / "r", tmp_path / "gate"
    child = start("run", str(path), "--out", str(out), env={**os.environ, "IMPORT_GATE": str(gate)})
    wait_for(gate, child)
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == code, stderr
    name = signal.Signals(signum).name
    assert stderr.strip() == (
        f"stopped by {name}: before a run directory was made; nothing was written; run again: "
        f"{shlex.join(['personasim', 'run', str(path), '--out', str(out)])}"
    )
    assert not out.exists()


def test_a_keyboard_interrupt_before_the_run_claims_no_run_directory(
    tmp_path: Path, capsys
) -> None:
    path = scenario_file(tmp_path, at_import="raise KeyboardInterrupt\n")
    out = tmp_path / "r"
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    assert not out.exists()


# --- 5. a run being written: a second writer and `metrics` name the holder at once -----------


def no_runner_imported(stderr: str) -> list[str]:
    """The lines of `-X importtime` that show the runner (and with it Mesa, pandas...)."""
    return [
        line
        for line in stderr.splitlines()
        if "personasim.simulation.runs.runner" in line
    ]


def test_a_second_writer_and_metrics_name_the_holder_before_the_slow_imports(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r"
    assert main(["run", "trust-population", "--n-personas", "3", "--out", str(out),
                 "--no-progress", "--no-cache"]) == 0  # fmt: skip
    files = {p: p.read_bytes() for p in [out / "metrics.json", *(out / "reports").iterdir()]}
    holder = f"(pid {os.getpid()} on {socket.gethostname()}, since 20"
    traced = [sys.executable, "-X", "importtime", "-m", "personasim.simulation.cli.main"]
    with RunLock(out):  # this process writes the run, as far as others can tell
        for args, then in (
            (["run", "trust-population", "--out", str(out)], "or choose another --out"),
            (["run", "trust-population", "--out", str(out), "--resume"], "then resume"),
            (["metrics", str(out)], "then run `personasim metrics` again"),
        ):
            refused = subprocess.run([*traced, *args], capture_output=True, text=True, timeout=60)
            assert refused.returncode == 2, refused.stderr
            (line,) = [x for x in refused.stderr.splitlines() if not x.startswith("import time")]
            assert line == (
                f"error: {out} is being written by another personasim process {holder}"
                + line.split(holder, 1)[1]
            )
            assert line.endswith(f"; wait for it to end or stop it, {then}")
            assert no_runner_imported(refused.stderr) == []
    assert {p: p.read_bytes() for p in files} == files  # metrics wrote nothing into the run
    assert json.loads((out / "metrics.json").read_text())["partial"] is False
