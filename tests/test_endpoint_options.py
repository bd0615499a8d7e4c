"""Endpoint options (`--base-url`, `--response-format`) that no model of a run would use are
bad input: one `error:` line naming the option and the model, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation.cli.main import main
from personasim.simulation.llm.backend_kind import BackendKind, ModelSpecError, backend_kind
from personasim.simulation.llm.model_spec import check_run_options, unused_run_options

TRUST = ["run", "trust-population", "--n-personas", "2", "--no-progress", "--no-cache"]


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        (["--base-url", "http://host/v1"], ["--base-url http://host/v1", "'scripted'"]),
        (
            ["--model", "scripted:drift=0.15", "--base-url", "http://host/v1"],
            ["--base-url", "'scripted:drift=0.15'"],
        ),
        (
            ["--model", "langchain:nowhere:Chat", "--response-format", "json_schema"],
            ["--response-format json_schema", "'langchain:nowhere:Chat'"],
        ),
        (  # a spec with its own URL does not take --base-url either
            ["--model", "openai:m@http://a/v1", "--base-url", "http://b/v1"],
            ["--base-url http://b/v1", "'openai:m@http://a/v1'", "own @URL"],
        ),
    ],
)
def test_an_option_no_model_uses_exits_2_and_writes_nothing(
    tmp_path: Path, capsys, flags: list[str], names: list[str]
) -> None:
    out = tmp_path / "run"
    assert main([*TRUST, *flags, "--out", str(out)]) == 2
    printed = capsys.readouterr().err
    assert printed.startswith("error: ") and printed.count("\n") == 1
    assert all(name in printed for name in names), printed
    assert not out.exists()


def test_the_scripted_model_takes_a_response_format(tmp_path: Path) -> None:
    """It writes JSON answers (docs/scripted.md), so --response-format is not refused."""
    out = tmp_path / "run"
    assert main([*TRUST, "--response-format", "json_object", "--out", str(out)]) == 0
    assert json.loads((out / "manifest.json").read_text())["response_format"] == "json_object"


def test_base_url_reaches_the_one_role_that_uses_it(tmp_path: Path, capsys) -> None:
    """--role judge=openai:NAME: --base-url serves the judge, the students stay scripted."""
    classroom = [
        "run", "classroom", "--n-questions", "2", "--repetitions", "1", "--strategies",
        "zero-shot", "--races", "none", "--orders", "before", "--no-progress", "--no-cache",
    ]  # fmt: skip
    with FakeOpenAIServer(responder=lambda body: "Clear contrast.\nScore: 2") as judge:
        ok = tmp_path / "ok"
        code = main([*classroom, "--role", "judge=openai:j", "--base-url", judge.base_url,
                     "--out", str(ok)])  # fmt: skip
        assert code == 0 and judge.request_count == 2
        own = tmp_path / "own"
        code = main([*classroom, "--role", f"judge=openai:j@{judge.base_url}",
                     "--base-url", judge.base_url, "--out", str(own)])  # fmt: skip
    printed = capsys.readouterr().err
    assert code == 2 and not own.exists()
    assert "--base-url" in printed and "'scripted'" in printed and "'openai:j@" in printed


def test_a_sweep_refuses_an_option_none_of_its_models_uses(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sweep"
    sweep = ["sweep", "trust-population", "--n-personas", "2", "--no-progress", "--no-cache"]
    assert main([*sweep, "--base-url", "http://host/v1", "--out", str(out)]) == 2
    assert "--base-url http://host/v1" in capsys.readouterr().err
    assert not out.exists()
    with FakeOpenAIServer() as server:  # one cell uses it: the scripted cell runs without it
        code = main([*sweep, "--models", f"scripted,openai:{server.model}",
                     "--base-url", server.base_url, "--out", str(out)])  # fmt: skip
        asked = server.request_count
    assert code == 0 and asked > 0
    assert len(list(out.glob("*/manifest.json"))) == 2


def test_kinds_declare_the_options_they_use() -> None:
    assert unused_run_options(["scripted"], {"base_url": "u", "response_format": None}) == [
        "base_url"
    ]
    assert unused_run_options(["openai:m", "scripted"], {"base_url": "u"}) == []
    with pytest.raises(ModelSpecError, match=r"--response-format json_schema .*'langchain:a:B'"):
        check_run_options(["langchain:a:B"], {"response_format": "json_schema"})

    @backend_kind("accepts-test")
    class Quiet(BackendKind):  # an installed kind is taken to use what it is given
        usage = "accepts-test:NAME"

    assert unused_run_options(["accepts-test:x"], {"base_url": "u"}) == []
    Quiet.accepts = frozenset()
    assert unused_run_options(["accepts-test:x"], {"base_url": "u"}) == ["base_url"]
