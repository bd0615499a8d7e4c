"""The classroom scenario's prompt pack: provenance checked against the paper, edits sent."""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

import pytest
import yaml
from conftest import DATA

from personasim.analysis.classroom import ENVIRONMENT_KIND
from personasim.environments import Classroom
from personasim.scenarios.classroom import ClassroomParams, ClassroomScenario
from personasim.simulation import SQLiteEventStore, run_scenario
from personasim.simulation.cli import main

SEED_000 = DATA.parent / "seeds" / "000_71ddcda8064e1e0c.txt"
"""The REVERSO paper's text next to the checkout (the provenance test skips without it)."""


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("‘", "'").replace("’", "'"))


@pytest.mark.skipif(not SEED_000.is_file(), reason="the seed paper is not next to the checkout")
def test_every_verbatim_entry_is_printed_in_the_paper() -> None:
    paper = _normalised(SEED_000.read_text(encoding="utf-8"))
    pack = ClassroomScenario.shipped_prompts()
    assert pack is not None
    verbatim = [n for n, e in pack.entries.items() if e.kind == "verbatim"]
    assert len(verbatim) >= 10  # Figure 2's and 5's templates, Figure 4's names and definitions
    for name in verbatim:
        text = pack.render(name, **{p: "\0" for p in pack.entries[name].placeholders()})
        for fragment in _normalised(text).split("\0"):
            assert fragment.strip() in paper, f"{name}: {fragment!r} is not in the paper"
    # our own texts are not the paper's: its demonstrations (Figures 6-7) are not shipped
    for name in (n for n in pack.entries if n.startswith("demonstration_")):
        assert pack.entries[name].kind == "ours"
        assert "lychees" not in pack.text(name) and "coffees" not in pack.text(name)


def test_every_text_has_its_entry_and_dollars_are_escaped() -> None:
    pack = ClassroomScenario.shipped_prompts()
    assert pack is not None
    levels, races = ("high", "low"), ("AA", "WA", "HS")
    demos = [f"demonstration_{lv}{s}" for lv in levels for s in ("", *(f"_{r}" for r in races))]
    assert {*demos, *(f"race_name_{r}" for r in races), "judge", "no_persona"} <= set(pack.entries)
    for name, entry in pack.entries.items():
        Template(entry.text).substitute({p: "x" for p in entry.placeholders()})  # no bare $
        if name.startswith("demonstration_"):
            assert "$$" not in pack.render(name)
    assert "cost $8 for adults" in pack.render("demonstration_high")


def test_reminders_keep_their_literal_braces() -> None:
    pack = ClassroomScenario(ClassroomParams()).prompts  # the re-asks render with the error
    refine = pack.render("refine_reminder", error="it has no 'Revised Response:' part")
    assert refine == (
        "Your answer could not be used: it has no 'Revised Response:' part. Answer again in "
        "exactly this format: 'Reflection: {reflection} Revised Response: {new_response} "
        "Final Answer: {number}'."
    )
    assert pack.render("empty_reminder", error="the answer is empty") == (
        "Your answer was empty. Please answer the question."
    )


def test_the_environment_kind_the_metrics_read_is_the_classrooms() -> None:
    assert Classroom.kind == ENVIRONMENT_KIND


def test_an_edited_pack_is_what_students_and_judge_see(tmp_path: Path, capsys) -> None:
    path = tmp_path / "pack.yaml"
    assert main(["prompts", "classroom", "--output", str(path)]) == 0
    data = yaml.safe_load(path.read_text())
    prompts = data["prompts"]
    prompts["level_low"]["text"] = "You dislike numbers and make mistakes, tagged (1)-(4)"
    prompts["demonstration_low"]["text"] = "Q: 2 + 2? Answer: 5, it costs $$5. Final Answer: 5"
    prompts["judge"]["text"] = prompts["judge"]["text"].replace(
        "You are comparing two answers", "Compare two answers"
    )
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    params = {
        "n_questions": 2,
        "repetitions": 1,
        "strategies": ["one-shot"],
        "races": ["none"],
        "orders": ["before"],
    }
    out = tmp_path / "r"
    run_scenario("classroom", params, out=out, progress=False, prompts=path)
    with SQLiteEventStore(out / "events.sqlite") as store:
        calls = [e.payload for e in store.read(["llm.call"])]
    firsts = [c["messages"][0]["content"] for c in calls]
    low = [p for p in firsts if p.startswith("You are a middle school student with low")]
    judge = [p for p in firsts if "High-performance answer:" in p]
    assert len(low) == 2 and len(judge) == 2
    assert all("You dislike numbers and make mistakes, tagged (1)-(4). Here is" in p for p in low)
    assert all("Answer: 5, it costs $5. Final Answer: 5. Adopt the identity" in p for p in low)
    assert all(p.startswith("Compare two answers") for p in judge)
