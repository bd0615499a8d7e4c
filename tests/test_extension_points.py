"""Outside packages add scripted rules and journey places through entry points, loaded only
when needed: a fake installed distribution (a `*.dist-info` folder with `entry_points.txt` on
sys.path) whose modules are the example package in examples/journey_plugin."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from personasim.scenarios.persona_journey import PersonaJourney, places
from personasim.simulation import (
    ChatRequest,
    Message,
    PermanentLLMError,
    ScenarioError,
    run_scenario,
)
from personasim.simulation.llm import scripted
from personasim.simulation.log.sqlite_store import SQLiteEventStore

PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "journey_plugin"
MODULES = ("personasim_quiz", "personasim_quiz.place", "personasim_quiz.rules")


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The example package as if pip-installed: its metadata and entry points on sys.path;
    the registries and sys.modules are restored afterwards."""
    info = tmp_path / "personasim_quiz-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: personasim-quiz\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[personasim.journey_places]\nquiz = personasim_quiz.place\n\n"
        "[personasim.scripted_rules]\nquiz = personasim_quiz.rules\n"
    )
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    with places.PLACE_REGISTRY.scoped(), scripted.RULES.scoped():
        yield
    for name in MODULES:
        sys.modules.pop(name, None)


def _ask(task: str) -> str:
    request = ChatRequest(messages=(Message(role="user", content="hi"),), task=task)
    return asyncio.run(scripted.ScriptedBackend().complete(request, timeout=5)).text


def test_a_scripted_rule_package_is_loaded_only_for_a_task_without_a_rule(
    installed_plugin: None,
) -> None:
    scripted.scripted_behaviour("test.known")(lambda request, rng: "known")
    assert _ask("test.known") == "known"
    assert "personasim_quiz.rules" not in sys.modules  # a task with a rule reads no metadata
    answer = _ask("quiz.answer")
    assert "personasim_quiz.rules" in sys.modules
    assert answer.startswith("A leap year has an extra day. ANSWER: 36")
    with pytest.raises(PermanentLLMError, match=r"no behaviour for task 'nope'.*quiz\.answer"):
        _ask("nope")


def test_a_rule_package_that_fails_to_load_is_named_with_the_missing_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[personasim.scripted_rules]\nb = no_such_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with (
        scripted.RULES.scoped(),
        pytest.raises(PermanentLLMError, match="entry point b = no_such_module failed"),
    ):
        _ask("nope")


def test_a_journey_place_package_is_loaded_only_when_a_run_names_its_place(
    installed_plugin: None, tmp_path: Path
) -> None:
    PersonaJourney.parse_params({"n_personas": 2})
    assert "personasim_quiz.place" not in sys.modules
    with pytest.raises(ScenarioError, match=r"unknown places \['pub'\]; places are .*quiz"):
        PersonaJourney.parse_params({"edges": "trust-pub"})
    params = {
        "n_personas": 3,
        "edges": "trust-quiz,quiz-survey",
        "order": "trust,quiz,survey",
        "n_items": 1,
        "survey_repeats": 1,
        "memory": "summary",
    }
    result = run_scenario("persona-journey", params, out=tmp_path / "run", progress=False)
    assert "personasim_quiz.rules" in sys.modules  # its rule answered the quiz
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        graded = list(store.read(["quiz.graded"]))
        moves = [(e.payload["from"], e.payload["to"]) for e in store.read(["agent.moved"])]
        survey = [e for e in store.read(["llm.call"]) if e.payload["task"] == "career.probe"]
    assert len(graded) == 3 and {e.payload["answer"] for e in graded} <= {365, 366}
    assert moves.count(("trust", "quiz")) == 3 and moves.count(("quiz", "survey")) == 3
    remembered = [e.payload["messages"][-1]["content"] for e in survey]
    assert all("You took a quiz and were" in text for text in remembered)  # its memory line
