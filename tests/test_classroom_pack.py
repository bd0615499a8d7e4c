"""The classroom scenario's prompt pack: provenance checked against the paper, edits sent."""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

import yaml

from personasim.environments import Classroom, read_answer
from personasim.scenarios.classroom.metrics import ENVIRONMENT_KIND, behaviour_tags
from personasim.scenarios.classroom.scenario import ClassroomParams, ClassroomScenario
from personasim.simulation import SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main
from personasim.simulation.llm.prompts import PromptPack

SEED_000 = Path(__file__).parent / "data" / "reverso_excerpts.txt"
"""The passages of the REVERSO paper that print the texts the classroom's packs quote (the
prompts, race definitions, demonstrations and DoC rubric), copied verbatim with the citation."""


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("‘", "'").replace("’", "'"))


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
    # the default pack's demonstrations are ours (the paper's: classroom-paper.yaml)
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


# --- the paper's own texts (Figures 6-7, Table 4): scenarios/classroom/classroom-paper.yaml ----

PRINTED_FINAL_ANSWERS = {
    "demonstration_low": 85,
    "demonstration_high": 2,
    "demonstration_low_AA": 50_000,
    "demonstration_high_AA": 45,
    "demonstration_low_WA": 10,
    "demonstration_high_WA": 14,
    "demonstration_low_HS": 3,
    "demonstration_high_HS": 100,
}


def _paper_pack() -> PromptPack:
    from importlib.resources import files

    resource = files("personasim.scenarios.classroom") / "classroom-paper.yaml"
    return PromptPack.load(str(resource))


def _letters(text: str) -> str:
    """Letters and digits only, LaTeX commands dropped: what typesetting cannot change."""
    return re.sub(r"[^A-Za-z0-9]", "", re.sub(r"\\[a-z]+", "", text))


def test_the_paper_pack_has_the_papers_demonstrations_and_rubric() -> None:
    pack = _paper_pack()
    pack.check_against(ClassroomScenario.shipped_prompts())  # a complete pack for the scenario
    for name, answer in PRINTED_FINAL_ANSWERS.items():
        entry = pack.entries[name]
        assert entry.kind == "verbatim" and "Figure" in entry.source
        text = pack.render(name)
        assert text.startswith("Question: ") and " Answer: " in text
        assert read_answer(text).value == answer
    low_tags = behaviour_tags(pack.render("demonstration_low"))
    assert sorted(set(low_tags)) == [1, 2, 3, 4]  # the tagged comments read as Table 3 reads them
    judge = pack.entries["judge"]
    assert "Table 4" in judge.source and judge.kind == "adapted"
    assert "You CANNOT assign a score of 3" in pack.render("judge", question="q", high="h", low="l")


def test_the_paper_packs_texts_are_printed_in_the_paper() -> None:
    paper = SEED_000.read_text(encoding="utf-8")
    pack = _paper_pack()
    for name in PRINTED_FINAL_ANSWERS:
        assert _letters(pack.render(name)) in _letters(paper), name
    rubric = pack.render("judge", question="\0", high="\0", low="\0").split("\n\n")[1]
    for line in rubric.splitlines():
        assert _normalised(line.split(": ", 1)[1]) in _normalised(paper)


def test_a_run_with_the_paper_pack_sends_the_papers_demonstration(tmp_path: Path) -> None:
    params = {"n_questions": 1, "repetitions": 1, "strategies": ["one-shot"], "races": ["none"]}
    out = tmp_path / "r"
    run_scenario(
        "classroom",
        {**params, "orders": ["before"]},
        out=out,
        progress=False,
        prompts=_paper_pack().path,
    )
    with SQLiteEventStore(out / "events.sqlite") as store:
        firsts = [e.payload["messages"][0]["content"] for e in store.read(["llm.call"])]
    assert any("Mr. Shaefer harvested 500 lychees" in p for p in firsts)
    assert any("You CANNOT assign a score of 3" in p for p in firsts)
