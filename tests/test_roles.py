"""Roles: binding models to the parts a scenario declares, from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation import Role, RoleError, SQLiteEventStore, bind_roles
from personasim.simulation.cli.main import main

ROLES = {
    "persona": Role("the persona"),
    "judge": Role("a judge"),
    "evaluator": Role("an ensemble", min_models=2, max_models=None, not_played_by=("persona",)),
}


def test_a_must_name_role_is_never_filled_by_a_real_model_by_default() -> None:
    roles = {"persona": Role("the persona"), "judge": Role("a judge", must_name=True)}
    with pytest.raises(RoleError, match=r"role 'judge' .* not filled by --model; pass --role"):
        bind_roles(roles, "openai:m", {})
    assert bind_roles(roles, "openai:m", {"judge": ["openai:m"]})["judge"] == ("openai:m",)
    assert bind_roles(roles, "scripted", {})["judge"] == ("scripted",)


def test_model_plays_every_role_not_named() -> None:
    bound = bind_roles(ROLES, "scripted", {"judge": ["openai:j"]})
    assert bound == {
        "persona": ("scripted",),
        "judge": ("openai:j",),
        "evaluator": ("scripted", "scripted"),  # the double may fill every seat
    }
    drift = bind_roles(ROLES, "scripted:drift=0.2", {})
    assert drift["evaluator"] == ("scripted:drift=0.2",) * 2


@pytest.mark.parametrize(
    ("model", "named", "message"),
    [
        ("openai:m", {}, "role 'evaluator' .* takes 2 or more models; --model gives one"),
        ("openai:m", {"evaluator": ["openai:m", "openai:e"]}, "may not be played by openai:m"),
        ("scripted", {"critic": ["openai:c"]}, "has no role 'critic'; its roles are persona"),
        ("scripted", {"judge": ["openai:a", "openai:b"]}, "takes 1 model, got 2"),
        ("scripted", {"evaluator": ["openai:e", "openai:e"]}, "may appear once"),
    ],
)
def test_bindings_that_cannot_work_are_refused(model: str, named: dict, message: str) -> None:
    with pytest.raises(RoleError, match=message):
        bind_roles(ROLES, model, named)


def test_role_flag_sends_the_judges_calls_to_its_endpoint(tmp_path: Path, capsys) -> None:
    """`--role judge=openai:NAME@URL`: judge calls there, the students' calls elsewhere."""
    out = tmp_path / "r"
    with FakeOpenAIServer(responder=lambda body: "Clear contrast.\nScore: 2") as judge:
        code = main(
            [
                "run", "classroom", "--n-questions", "2", "--repetitions", "1",
                "--strategies", "zero-shot", "--races", "none", "--orders", "before",
                "--role", f"judge=openai:judge@{judge.base_url}", "--no-progress",
                "--out", str(out),
            ]
        )  # fmt: skip
        asked = judge.request_count
    assert code == 0 and asked == 2
    assert "tokens" in (printed := capsys.readouterr().out)  # a language model answered
    assert "the scripted roles' word counts included" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    judge_spec = f"openai:judge@{judge.base_url}"
    assert manifest["roles"] == {"student": ["scripted"], "judge": [judge_spec], "reader": []}
    with SQLiteEventStore(out / "events.sqlite") as store:
        calls = [e.payload for e in store.read(["llm.call"])]
        (started,) = store.read(["run.started"])
    assert started.payload["roles"] == manifest["roles"]
    by_role = {(c["role"], c["backend"]["backend"]) for c in calls}
    assert by_role == {("student", "scripted"), ("judge", "openai")}


def test_bad_role_flags_exit_2_before_anything_runs(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    for flag, message in [
        ("judge", "use NAME=MODEL"),
        ("critic=scripted", "classroom has no role 'critic'"),
        ("judge=gpt-4o", "--role judge=gpt-4o: unknown model"),
    ]:
        assert main(["run", "classroom", "--role", flag, "--out", str(out)]) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()


def test_list_shows_each_scenarios_roles(capsys) -> None:
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    for role in ("role student", "role judge", "role evaluator", "role respondent", "role user"):
        assert role in text
    assert "(2 or more models)" in text


def test_list_shows_types_choices_and_defaults(capsys) -> None:
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert "PydanticUndefined" not in text
    pipeline = next(line for line in text.splitlines() if "--pipeline" in line)
    assert "dynamic|static" in pipeline and "dynamic" in pipeline.split("dynamic|static")[1]
    question_file = next(line for line in text.splitlines() if "--question-file" in line)
    assert " FILE " in question_file


def test_list_typed_parameters_take_comma_lists() -> None:
    from pydantic import Field

    from personasim.simulation import ScenarioParams

    class Params(ScenarioParams):
        names: list[str] = Field(default_factory=list)

    assert Params.model_validate({"names": "a, b,c"}).names == ["a", "b", "c"]


def test_an_optional_role_is_played_only_when_named() -> None:
    """No model fills an optional role by default, not even the scripted double; named, it is
    bound like any other."""
    roles = {"persona": Role("the persona"), "classifier": Role("labels", optional=True)}
    for model in ("scripted", "scripted:drift=0.15", "openai:m"):
        assert bind_roles(roles, model, {})["classifier"] == ()
    named = bind_roles(roles, "openai:m", {"classifier": ["openai:c"]})
    assert named == {"persona": ("openai:m",), "classifier": ("openai:c",)}
