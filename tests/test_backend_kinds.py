"""Model specs and backend kinds: one parser, kinds added by decorator or entry point, the
LangChain backend chosen from the command line, and a command line that starts light."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from personasim.simulation import (
    LangChainBackend,
    ModelSpecError,
    SQLiteEventStore,
    backend_kinds,
    make_backend,
    parse_model_spec,
)
from personasim.simulation.cli.main import main

FAKE = "langchain:langchain_core.language_models.fake_chat_models:FakeListChatModel"
TRUSTOR = "BELIEF: b. DESIRE: d. INTENTION: i.\nFinally, I will give 4 dollars"
HEAVY = ("langgraph", "mesa", "pandas", "matplotlib", "ray", "openai", "aiohttp")


def test_langchain_specs_are_read_with_typed_options() -> None:
    spec = parse_model_spec(f"{FAKE}?responses=[%22a%26b%22]&sleep=0.5&name=x")
    assert (spec.kind, spec.url) == ("langchain", None)
    assert spec.name == FAKE.removeprefix("langchain:")
    assert spec.option_dict == {"responses": ["a&b"], "sleep": 0.5, "name": "x"}
    backend = make_backend(spec)
    assert isinstance(backend, LangChainBackend)
    assert backend.model.responses == ["a&b"] and backend.identity()["spec"] == spec.text


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("langchain:ChatOpenAI", "use langchain:MODULE:CLASS"),
        ("langchain:no_such_module:Chat", "cannot import no_such_module:Chat"),
        ("langchain:json:JSONDecoder", "json:JSONDecoder is not a LangChain chat model"),
        (f"{FAKE}?responses=1", "FakeListChatModel(...) failed"),
        (f"{FAKE}?sleep", "option 'sleep': use NAME=VALUE"),
        ("mystery:model", "unknown model 'mystery:model'"),
    ],
)
def test_bad_specs_name_the_spec(spec: str, message: str) -> None:
    with pytest.raises(ModelSpecError, match=re.escape(repr(spec))) as caught:
        make_backend(spec)
    assert message in str(caught.value)


def test_langchain_model_runs_from_the_command_line(tmp_path: Path, capsys) -> None:
    """`--model langchain:...` through the real CLI; the manifest and events record the spec."""
    spec = f"{FAKE}?responses={json.dumps([TRUSTOR])}"
    out = tmp_path / "run"
    code = main(
        ["run", "trust-population", "--n-personas", "2", "--model", spec, "--out", str(out),
         "--no-progress", "--no-cache"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"]["backend"] == "langchain"
    assert manifest["model"]["class"] == "FakeListChatModel"
    assert manifest["model"]["spec"] == spec and manifest["roles"] == {"persona": [spec]}
    with SQLiteEventStore(out / "events.sqlite") as store:
        calls = [e.payload for e in store.read(["llm.call"])]
    assert len(calls) == 2 and {c["backend"]["backend"] for c in calls} == {"langchain"}
    assert "mean sent 4.00" in capsys.readouterr().out


def test_langchain_model_plays_a_role(tmp_path: Path, capsys) -> None:
    spec = f"{FAKE}?responses=[%22Clear contrast.\\nScore: 2%22]"
    out = tmp_path / "run"
    code = main(
        ["run", "classroom", "--n-questions", "2", "--repetitions", "1", "--strategies",
         "zero-shot", "--races", "none", "--orders", "before", "--role", f"judge={spec}",
         "--no-progress", "--no-cache", "--out", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["roles"] == {"student": ["scripted"], "judge": [spec], "reader": []}
    with SQLiteEventStore(out / "events.sqlite") as store:
        calls = [e.payload for e in store.read(["llm.call"])]
    assert {(c["role"], c["backend"]["backend"]) for c in calls} == {
        ("student", "scripted"),
        ("judge", "langchain"),
    }


def test_a_secret_in_a_spec_is_refused_masked_and_nothing_is_written(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    code = main(["run", "trust-population", "--model", f"{FAKE}?api_key=sk-9", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert f"{FAKE}?api_key=***" in err and "holds a key (api_key=)" in err and "sk-9" not in err


def test_an_option_named_like_a_secret_without_a_value_is_refused() -> None:
    with pytest.raises(ModelSpecError, match="option 'token' looks like a secret"):
        make_backend(f"{FAKE}?token=")


def test_sweep_reads_every_model_before_the_first_cell(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sweep"
    code = main(["sweep", "trust-population", "--models", "scripted,gpt-4", "--out", str(out)])
    assert code == 2 and "unknown model 'gpt-4'" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow  # a CLI run, among the fast tier's longest: CI runs it in the slow tier
def test_an_outside_package_adds_a_kind_by_entry_point(tmp_path: Path) -> None:
    """A package installed beside ours (a module and its dist-info with an entry point under
    `personasim.backends`) adds the `echo` kind: listed without importing it, imported only
    when a spec asks for it, and run through the CLI."""
    site = tmp_path / "site"
    (site / "echo_kind-0.1.dist-info").mkdir(parents=True)
    (site / "echo_kind-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: echo-kind\nVersion: 0.1\n"
    )
    (site / "echo_kind-0.1.dist-info" / "entry_points.txt").write_text(
        "[personasim.backends]\necho = echo_kind\n"
    )
    (site / "echo_kind.py").write_text(
        textwrap.dedent(
            f"""
            from personasim.simulation import BackendKind, backend_kind
            from personasim.simulation.llm.chat import Backend, ChatResponse, Usage

            class Echo(Backend):
                name = "echo"
                def __init__(self, amount):
                    self.amount = amount
                def identity(self):
                    return {{"backend": "echo", "model": str(self.amount)}}
                async def complete(self, request, timeout):
                    text = {TRUSTOR[:-9]!r} + f"{{self.amount}} dollars"
                    return ChatResponse(text=text, usage=Usage(), model="echo")

            @backend_kind("echo")
            class EchoKind(BackendKind):
                usage = "echo:AMOUNT"
                def build(self, spec, *, base_url, seed):
                    return Echo(int(spec.name))
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    listing = (
        "import sys; from personasim.simulation import backend_kinds; "
        "print(backend_kinds()['echo'], 'echo_kind' in sys.modules)"
    )
    listed = subprocess.run(
        [sys.executable, "-c", listing], env=env, capture_output=True, text=True, check=True
    )
    assert listed.stdout.split() == ["echo:...", "(from", "echo_kind)", "False"]
    out = tmp_path / "run"
    ran = subprocess.run(
        [sys.executable, "-m", "personasim.simulation.cli.main", "run", "trust-population",
         "--n-personas", "2", "--model", "echo:7", "--out", str(out), "--no-progress",
         "--no-cache"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "mean sent 7.00" in ran.stdout
    assert json.loads((out / "manifest.json").read_text())["model"]["backend"] == "echo"


def test_builtin_kinds_are_listed_with_their_forms() -> None:
    kinds = backend_kinds()
    assert kinds["scripted"] == "scripted[:drift=D,seed=S]"
    assert kinds["langchain"].startswith("langchain:MODULE:CLASS")


def test_the_command_line_imports_nothing_heavy() -> None:
    """`personasim --help` and importing the CLI import no runner dependency."""
    code = (
        "import personasim.simulation.cli.main, sys; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    helped = (
        "import sys, contextlib, io\nfrom personasim.simulation.cli.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['run', '--help'])\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", helped], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_clis_executors_are_the_sweeps() -> None:
    from personasim.simulation.cli.sweep_command import EXECUTORS
    from personasim.simulation.runs.sweeps.sweep import EXECUTORS as SWEEP_EXECUTORS

    assert EXECUTORS == SWEEP_EXECUTORS


@pytest.mark.realmodel
@pytest.mark.timeout(900)
def test_langchain_chat_openai_on_smollm2(
    smollm2: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """`--model langchain:langchain_openai:ChatOpenAI?...` against SmolLM2 on llama.cpp's
    server: the run finishes, every call went through LangChain and was counted by the server,
    and the key the class read from the environment is written nowhere."""
    key = "sk-local-server-ignores-this-7c1e"
    monkeypatch.setenv("OPENAI_API_KEY", key)  # ChatOpenAI reads it; the local server needs none
    spec = f"langchain:langchain_openai:ChatOpenAI?model=smollm2&base_url={smollm2}&temperature=0"
    out = tmp_path / "run"
    code = main(
        ["run", "trust-population", "--n-personas", "3", "--model", spec, "--out", str(out),
         "--no-progress", "--no-cache", "--concurrency", "1", "--max-tokens", "200",
         "--max-repairs", "0"]
    )  # fmt: skip
    printed = capsys.readouterr()
    assert code in (0, 3), printed.err  # 3: SmolLM2's free text may not parse (counted)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["model"]["spec"] == spec
    assert manifest["model"]["class"] == "ChatOpenAI" and manifest["model"]["model"] == "smollm2"
    with SQLiteEventStore(out / "events.sqlite") as store:
        calls = [e.payload for e in store.read(["llm.call"])]
    assert len(calls) == 3 and all(c["backend"]["backend"] == "langchain" for c in calls)
    assert all(c["response"]["usage"]["prompt_tokens"] > 0 for c in calls)  # by the server
    for path in out.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
