"""The PersonaGym authors' released rubrics as a prompt pack (`--prompts`).

The pack is built at test time from the files of the authors' repository (vsamuel2003/PersonaGym,
MIT) kept in tests/data/public/personagym: `rubrics/<task>.txt` (each a complete evaluator prompt
in Python `str.format` style) and `prompts/score_examples/prompt.txt`. Their placeholders map
onto ours: {score_example} → ${examples}, {persona} → ${persona}, {question} → ${question},
{response} → ${response}, and the examples prompt's {rubric} → ${rubric_outline}. The rubric's
outline ("Evaluation Task: … Evaluation Criteria: …") becomes the `outline.*` entry, filled in
at ${rubric_outline}, and its task description the `description.*` entry, so the evaluator is
sent the authors' file exactly as their own `rubric.format(...)` fills it.

The grading batch (`--grading-batch N`, the authors' code: 5) sends `rubric_grading/sys_prompt.txt`
as the system message and the wrapper `rubric_grading/prompt.txt` around the N completed rubrics:
its {rubrics} → ${rubrics} and its numbered "(1) Evaluation: … (5) Evaluation:" block →
${format}, computed for N.

The settings-selection and question-generation prompts (`selection`, `selection_free`,
`questions`) and the questions' descriptions (`criteria.<task>`) come from the authors' code
(code/run.py and code/eval_tasks.py at commit 536f705, MIT), which this project does not carry:
they are kept as data in the shipped pack, each entry's source naming repository, commit, file
and licence, and `authors_pack` carries them over from it unchanged
(`test_the_code_entries_state_their_provenance`).

Not mapped, because our requests have no slot for them (documented in docs/persona-gym.md):
the examples prompt's "Output Format" block (our example writer answers JSON, so it is
replaced by ${format_instructions}) and `score_examples/parallel_examples.txt` (we ask for
the score examples of one question per request).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from conftest import DATA

from personasim.environments.persona_gym.place import TASKS
from personasim.simulation import SQLiteEventStore, list_scenarios
from personasim.simulation.cli.main import main
from personasim.simulation.llm.prompts import PromptPack

RELEASE = DATA / "personagym"
REPOSITORY = "vsamuel2003/PersonaGym"
CODE_COMMIT = "536f705"
COPYRIGHT = "Copyright (c) 2025 Vinay Samuel"
SHIPPED_AUTHORS_PACK = (
    Path(__file__).resolve().parents[1] / "scenarios" / "persona_gym" / "persona-gym-authors.yaml"
)
RUBRIC_FILES = {task: f"rubrics/{task}.txt" for task in TASKS} | {
    "Toxicity Control": "rubrics/Toxicity.txt"  # the task's name in the authors' files
}
PLACEHOLDERS = {
    "score_example": "examples",
    "persona": "persona",
    "question": "question",
    "response": "response",
    "rubric": "rubric_outline",
    "rubrics": "rubrics",
}


def key(task: str) -> str:
    return task.lower().replace(" ", "_")


def as_template(text: str) -> str:
    """A `str.format` text as a `string.Template` text: `$` doubled, {name} → ${ours}."""

    def placeholder(match: re.Match[str]) -> str:
        if match.group(0) in ("{{", "}}"):
            return match.group(0)[0]
        return "${" + PLACEHOLDERS[match.group(1)] + "}"  # an unknown one is a KeyError

    return re.sub(r"\{\{|\}\}|\{(\w+)\}", placeholder, text.replace("$", "$$"))


def split_rubric(text: str) -> tuple[str, str, str]:
    """(evaluation template, outline template, description) of one authors' rubric file."""
    start = text.index("Evaluation Task:\n")
    outline = text[start : text.index("-----", start)].rstrip("\n")
    head, tail = "Evaluation Task Description:\n\n", "\n\nEvaluation Criteria:"
    begin = outline.index(head) + len(head)
    description = outline[begin : outline.index(tail)]
    evaluation = as_template(text[:start]) + "${rubric_outline}"
    evaluation += as_template(text[start + len(outline) :])
    outline_template = outline[:begin].replace("$", "$$") + "${description}"
    outline_template += outline[begin + len(description) :].replace("$", "$$")
    return evaluation, outline_template, description.replace("$", "$$")


CODE_FILES = {"selection": "code/run.py", "selection_free": "code/run.py"}
CODE_FILES |= {"questions": "code/run.py"}
CODE_FILES |= {f"criteria.{key(task)}": "code/eval_tasks.py" for task in TASKS}
"""The pack's entries taken from the authors' code, and the file of their repository each is
from (their code is not in this project; the shipped pack keeps these entries as data)."""


def code_entries() -> dict[str, dict[str, str]]:
    """The entries from the authors' code, as the shipped authors' pack keeps them."""
    kept = yaml.safe_load(SHIPPED_AUTHORS_PACK.read_text(encoding="utf-8"))["prompts"]
    return {name: kept[name] for name in CODE_FILES}


def authors_pack(path: Path) -> Path:
    """The shipped pack with the authors' rubric and score-examples texts in place of ours."""
    shipped = list_scenarios()["persona-gym"].shipped_prompts()
    assert shipped is not None
    pack = yaml.safe_load(Path(shipped.path).read_text(encoding="utf-8"))
    pack["licence"] = (
        f"entries from {REPOSITORY} are its released files (MIT, {COPYRIGHT}); those from its "
        f"code (code/run.py, code/eval_tasks.py) are of commit {CODE_COMMIT}, under the same "
        "licence; personasim's own texts are MIT"
    )
    entries = pack["prompts"]
    entries.update(code_entries())
    mapping = "placeholders mapped: {score_example} → ${examples}, {persona}, {question} and "
    mapping += "{response} kept; the outline is filled in at ${rubric_outline}"
    for task, name in RUBRIC_FILES.items():
        evaluation, outline, description = split_rubric((RELEASE / name).read_text("utf-8"))
        source = f"{REPOSITORY}, {name}"
        entries[f"evaluation.{key(task)}"] = {
            "source": source,
            "kind": "verbatim",
            "note": mapping,
            "text": evaluation,
        }
        entries[f"outline.{key(task)}"] = {
            "source": source,
            "kind": "verbatim",
            "note": "Evaluation Task … Evaluation Criteria; the description at ${description}",
            "text": outline,
        }
        entries[f"description.{key(task)}"] = {
            "source": source,
            "kind": "verbatim",
            "text": description,
        }
    examples = (RELEASE / "prompts/score_examples/prompt.txt").read_text("utf-8")
    entries["examples"] = {
        "source": f"{REPOSITORY}, prompts/score_examples/prompt.txt",
        "kind": "adapted",
        "note": "{rubric} → ${rubric_outline}; the Output Format block (Score N: Response -) "
        "replaced by ${format_instructions}, since our example writer answers JSON",
        "text": as_template(examples[: examples.index("-----")]) + "${format_instructions}",
    }
    system = (RELEASE / "prompts/rubric_grading/sys_prompt.txt").read_text("utf-8")
    entries["evaluation_batch_system"] = {
        "source": f"{REPOSITORY}, prompts/rubric_grading/sys_prompt.txt",
        "kind": "verbatim",
        "note": "the evaluator's system message under --grading-batch N > 1, as in their code",
        "text": as_template(system),
    }
    wrapper = (RELEASE / "prompts/rubric_grading/prompt.txt").read_text("utf-8")
    block = re.search(r"(?:\(\d+\) Evaluation: ?\n)+", wrapper)
    assert block is not None, "the numbered format block of rubric_grading/prompt.txt"
    entries["evaluation_batch"] = {
        "source": f"{REPOSITORY}, prompts/rubric_grading/prompt.txt",
        "kind": "adapted",
        "note": "{rubrics} → ${rubrics}: the N completed rubrics, each headed (i) and "
        "separated by blank lines (their code pastes a Python list's repr); the numbered "
        "block (1) … (5) Evaluation: → ${format}, computed for --grading-batch N (at N = 5 "
        "the same five lines, without their trailing spaces)",
        "text": as_template(wrapper[: block.start()])
        + "${format}\n"
        + as_template(wrapper[block.end() :]),
    }
    path.write_text(yaml.safe_dump(pack, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def scene_of(payload: dict[str, Any]) -> tuple[str, str, int]:
    return payload["persona"], payload["gym_task"], payload["question"]


def scene_inputs(run_dir: Path) -> list[dict[str, Any]]:
    """Per scene: the task, persona description, question, answer and the examples block."""
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        events = list(store.read(["agent.created", "gym.questions", "decision.made"]))
    personas = {
        e.payload["persona"]["id"]: e.payload["persona"]["attributes"]["description"]
        for e in events
        if e.kind == "agent.created" and "persona" in e.payload
    }
    questions = {
        (e.agent_id, e.payload["task"], q["index"]): q["text"]
        for e in events
        if e.kind == "gym.questions"
        for q in e.payload["questions"]
    }
    made = [e.payload for e in events if e.kind == "decision.made"]
    answers = {scene_of(p): p["value"] for p in made if p["task"] == "persona_gym.answer"}
    return [
        {
            "task": p["gym_task"],
            "persona": personas[p["persona"]],
            "question": questions[scene_of(p)],
            "response": answers[scene_of(p)],
            "score_example": "\n".join(
                f"Score {i}: {p['value'][f'score_{i}']}" for i in range(1, 6)
            ),
        }
        for p in made
        if p["task"] == "persona_gym.examples"
    ]


def first_prompts(run_dir: Path, task: str) -> list[str]:
    """The first user message of every request of `task` (a re-ask repeats it)."""
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        calls = [e.payload for e in store.read(["llm.call"]) if e.payload["task"] == task]
    return [c["messages"][0]["content"] for c in calls if len(c["messages"]) == 1]


def test_the_authors_rubrics_are_what_the_evaluators_are_sent(tmp_path: Path) -> None:
    path = authors_pack(tmp_path / "authors.yaml")
    out = tmp_path / "run"
    small = ["--n-personas", "2", "--n-environments", "2", "--questions-per-task", "1"]
    args = ["run", "persona-gym", *small, "--prompts", str(path), "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["prompts"]["file"] == str(path)

    scenes = scene_inputs(out)
    assert Counter(s["task"] for s in scenes) == dict.fromkeys(TASKS, 2)
    # the authors' file, filled in by their own mechanism (str.format), is the evaluator prompt
    expected = Counter(
        (RELEASE / RUBRIC_FILES[s.pop("task")]).read_text("utf-8").format(**s) for s in scenes
    )
    sent = Counter(first_prompts(out, "persona_gym.evaluate"))
    assert sent == Counter({text: 2 * n for text, n in expected.items()})  # two evaluators
    assert all("You are an expert evaluator" not in text for text in sent)
    assert all(text.rstrip().endswith("Evaluation Form:") for text in sent)

    # the example writer gets the authors' prompt with the authors' rubric outline
    examples = first_prompts(out, "persona_gym.examples")
    assert len(examples) == len(scenes)
    for text in examples:
        assert text.startswith("Given the following persona, question, and rubric, generate")
        assert "Rubric:\n\nEvaluation Task:\n\n" in text and "Score = 5: " in text
        assert "Output Format" not in text and '"score_1"' in text  # our JSON format
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert metrics["n_scored_questions"] == len(scenes)
    assert 1 <= metrics["scores"]["PersonaScore"] <= 5


def test_the_authors_placeholders_map_one_to_one() -> None:
    """Each rubric file names exactly the four placeholders we map, each once."""
    for name in RUBRIC_FILES.values():
        found = re.findall(r"\{(\w+)\}", (RELEASE / name).read_text("utf-8"))
        assert sorted(found) == ["persona", "question", "response", "score_example"], name
    examples = (RELEASE / "prompts/score_examples/prompt.txt").read_text("utf-8")
    assert sorted(re.findall(r"\{(\w+)\}", examples)) == ["persona", "question", "rubric"]


def test_the_shipped_authors_pack_is_a_fresh_build(tmp_path: Path) -> None:
    """`scenarios/persona_gym/persona-gym-authors.yaml` (shipped with its provenance and the MIT
    licence) is what `authors_pack` builds from the released files and today's shipped pack;
    its entries from the authors' code are carried over as they are kept (next test)."""
    built = yaml.safe_load(authors_pack(tmp_path / "authors.yaml").read_text("utf-8"))
    shipped = yaml.safe_load(SHIPPED_AUTHORS_PACK.read_text("utf-8"))
    assert shipped == built
    ours = list_scenarios()["persona-gym"].shipped_prompts()
    assert ours is not None
    rebuilt = set(built["prompts"]) - set(CODE_FILES)  # from the released files, or ours
    assert rebuilt == set(ours.entries) - set(CODE_FILES)
    released = {n for n in rebuilt if built["prompts"][n]["source"].startswith(REPOSITORY)}
    assert len(released) == 3 * len(TASKS) + 3  # evaluation, outline, description; 3 prompts


def test_the_code_entries_state_their_provenance() -> None:
    """Each entry taken from the authors' code names their repository, commit 536f705, the
    file and function, and the MIT licence with its copyright line; the pack's header carries
    the licence text; no other entry claims their code."""
    text = SHIPPED_AUTHORS_PACK.read_text("utf-8")
    pack = yaml.safe_load(text)
    prompts = pack["prompts"]
    functions = {"selection": "select_settings", "selection_free": "select_settings"}
    functions |= {"questions": "gen_questions"}
    for name, file in CODE_FILES.items():
        source = prompts[name]["source"]
        function = functions.get(name, "question_requirements")
        assert source.startswith(f"{REPOSITORY} at commit {CODE_COMMIT}, {file}, {function}")
        assert "MIT licence" in source and COPYRIGHT in source, name
    assert {n for n, e in prompts.items() if "code/" in e["source"]} == set(CODE_FILES)
    assert CODE_COMMIT in pack["licence"] and COPYRIGHT in pack["licence"]
    header = "".join(line for line in text.splitlines(True) if line.startswith("#"))
    assert f"# {COPYRIGHT}" in header and "# Permission is hereby granted" in header
    assert f"at commit {CODE_COMMIT}" in " ".join(header.replace("#", " ").split())


def test_the_code_entries_are_their_prompts_asked_for_json() -> None:
    """The pack loads and fits the shipped persona-gym pack; the selection and question
    prompts are adapted to a JSON answer, and `selection` is `selection_free` with our one
    sentence asking for ${count} settings."""
    pack = PromptPack.load(SHIPPED_AUTHORS_PACK)
    shipped = list_scenarios()["persona-gym"].shipped_prompts()
    assert shipped is not None
    pack.check_against(shipped)  # raises on a missing entry or a changed placeholder
    for name in ("selection", "selection_free", "questions"):
        entry = pack.entries[name]
        assert entry.kind == "adapted" and entry.note and "Python list" in entry.note
        assert "python list" not in entry.text and "JSON" in entry.text
        assert "${format_instructions}" in entry.text
    assert pack.text("selection_free").startswith(
        "Given the following persona description, select the most relevant settings"
    )
    count = "Select exactly ${count} different settings, spelled exactly as listed.\n"
    cue = "${format_instructions}\nSelected Settings:"
    assert pack.text("selection") == pack.text("selection_free").replace(cue, count + cue)
    assert "Task Description: ${description}" in pack.text("questions")
    criteria = [pack.entries[f"criteria.{key(task)}"] for task in TASKS]
    assert all(entry.kind == "verbatim" for entry in criteria)
    assert len({entry.text for entry in criteria}) == len(TASKS)  # one per task, none empty
    assert all(entry.text.strip() for entry in criteria)


def test_a_batch_of_five_is_sent_as_the_authors_code_sends_it(tmp_path: Path) -> None:
    """`--grading-batch 5` with the authors' pack: per task, each evaluator gets one request:
    their sys_prompt.txt as the system message, and their prompt.txt wrapped around the five
    completed rubric files (each as their `rubric.format(...)` fills it), numbered (1)–(5)."""
    path = authors_pack(tmp_path / "authors.yaml")
    out = tmp_path / "run"
    small = ["--n-personas", "1", "--n-environments", "2", "--questions-per-task", "5"]
    args = ["run", "persona-gym", *small, "--grading-batch", "5", "--prompts", str(path)]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0

    with SQLiteEventStore(out / "events.sqlite") as store:
        events = list(store.read(["gym.questions", "decision.made", "llm.call"]))
    rubrics: dict[str, dict[int, str]] = {task: {} for task in TASKS}
    for scene in scene_inputs(out):  # one per question, in the order their examples were made
        task = scene.pop("task")
        question = next(
            q["index"]
            for e in events
            if e.kind == "gym.questions" and e.payload["task"] == task
            for q in e.payload["questions"]
            if q["text"] == scene["question"]
        )
        rubrics[task][question] = (RELEASE / RUBRIC_FILES[task]).read_text("utf-8").format(**scene)
    wrapper = (RELEASE / "prompts/rubric_grading/prompt.txt").read_text("utf-8")
    wrapper = re.sub(r"(\(\d\) Evaluation:) \n", r"\1\n", wrapper)  # their trailing spaces
    expected = Counter(
        wrapper.format(rubrics="\n\n".join(f"({i}) {by_index[i]}" for i in range(1, 6)))
        for by_index in rubrics.values()
    )
    system = (RELEASE / "prompts/rubric_grading/sys_prompt.txt").read_text("utf-8")
    calls = [
        e.payload["messages"]
        for e in events
        if e.kind == "llm.call" and e.payload["task"] == "persona_gym.evaluate_batch"
    ]
    first = [m for m in calls if len(m) == 2]  # a re-ask appends to the conversation
    assert all(m[0] == {"role": "system", "content": system} for m in first)
    assert Counter(m[1]["content"] for m in first) == Counter(
        {text: 2 * n for text, n in expected.items()}  # two evaluators
    )
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert metrics["n_scored_questions"] == 25 and metrics["failures"]["evaluate"] == 0
