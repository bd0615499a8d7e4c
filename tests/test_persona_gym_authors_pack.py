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

Not mapped, because our requests have no slot for them (documented in docs/persona-gym.md):
the examples prompt's "Output Format" block (our example writer answers JSON, so it is
replaced by ${format_instructions}) and `score_examples/parallel_examples.txt` (we ask for
the score examples of one question per request).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from conftest import DATA

from personasim.environments.persona_gym.place import TASK_ALIASES, TASKS
from personasim.simulation import SQLiteEventStore, list_scenarios
from personasim.simulation.cli.main import main

RELEASE = DATA / "personagym"
CODE = Path(__file__).parent / "data" / "personagym_code"
"""Their code/run.py and code/eval_tasks.py (commit 536f705, MIT), kept as text."""
REPOSITORY = "vsamuel2003/PersonaGym"
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


def code_prompt(function: str, names: dict[str, str]) -> str:
    """The f-string prompt that `function` of their run.py builds, as a template: each
    {expression} → ${ours}, `$` doubled, each line's source indentation dropped."""
    tree = ast.parse((CODE / "run.py.txt").read_text("utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    fstring = next(
        n.value
        for n in ast.walk(body)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.JoinedStr)
    )
    text = "".join(
        part.value.replace("$", "$$")
        if isinstance(part, ast.Constant)
        else "${" + names[ast.unparse(part.value)] + "}"  # an unknown one is a KeyError
        for part in fstring.values
    )
    return "\n".join(line.strip() for line in text.strip().splitlines())


def question_requirements() -> dict[str, str]:
    """`question_requirements` of their eval_tasks.py: per task, the questions' description."""
    tree = ast.parse((CODE / "eval_tasks.py.txt").read_text("utf-8"))
    found = next(
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "question_requirements"
    )
    return {TASK_ALIASES.get(k, k): v for k, v in ast.literal_eval(found).items()}


def swap(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


PYTHON_LIST = {
    "selection": "Your output must only be the selected settings in a python list format with "
    "no other verbose.",
    "questions": "Your output must be the generated questions in a python list format with no "
    "other verbose.",
}
JSON_ANSWER = {
    "selection": "Your output must only be the selected settings in the JSON format below, "
    "with no other verbose.",
    "questions": "Your output must be the generated questions in the JSON format below, with no "
    "other verbose; set each question in one of the settings and name that setting in its "
    '"setting" field.',
}


def selection_text(count: bool) -> str:
    """Their `select_settings` prompt, adapted: a JSON answer, the pool one per line, and (for
    `selection`, ours) a fixed count."""
    text = code_prompt("select_settings", {"persona": "persona", "settings_list": "pool"})
    text = swap(text, PYTHON_LIST["selection"], JSON_ANSWER["selection"])
    text = swap(text, "Settings: ${pool}", "Settings:\n${pool}")
    fixed = "Select exactly ${count} different settings, spelled exactly as listed.\n"
    return swap(
        text,
        "\nSelected Settings:",
        "\n" + (fixed if count else "") + "${format_instructions}\nSelected Settings:",
    )


def questions_text() -> str:
    """Their `gen_questions` prompt, adapted: a JSON answer with each question's setting, and
    the task's description line (our pack must fill every placeholder of the shipped one)."""
    names = {
        "persona": "persona",
        "settings": "settings",
        "num_questions": "count",
        "task": "task",
        "description": "criteria",
    }
    text = code_prompt("gen_questions", names)
    text = swap(text, PYTHON_LIST["questions"], JSON_ANSWER["questions"])
    text = swap(
        text,
        "Evaluation Task: ${task}\n",
        "Evaluation Task: ${task}\nTask Description: ${description}\n",
    )
    return swap(text, "\nQuestions:", "\n${format_instructions}\nQuestions:")


def code_entries() -> dict[str, dict[str, str]]:
    """Selection, question generation and the questions' descriptions from their code."""
    source = f"{REPOSITORY}, code/run.py"
    json_note = (
        "adapted: their prompt asks for a Python list (read with ast.literal_eval); ours asks "
        "for JSON (${format_instructions}, from the answer's schema), so the sentence about "
        "the output format says JSON and the format instructions come before the closing cue"
    )
    entries = {
        "selection_free": {
            "source": f"{source}, select_settings",
            "kind": "adapted",
            "note": f"{json_note}; their {{settings_list}} (a Python list's repr) is ${{pool}}, "
            "one '- setting' per line; each line's indentation in their source dropped",
            "text": selection_text(count=False),
        },
        "selection": {
            "source": f"{source}, select_settings",
            "kind": "adapted",
            "note": f"{json_note}; the pool as in selection_free; the sentence 'Select exactly "
            "${count} ...' is ours (--n-environments; their code lets the model choose)",
            "text": selection_text(count=True),
        },
        "questions": {
            "source": f"{source}, gen_questions",
            "kind": "adapted",
            "note": f"{json_note}; each question names its setting (our check that it is one "
            "of the persona's); {settings} is ${settings} (comma-separated, theirs a Python "
            "list), {num_questions} ${count}, {description} (their question_requirements) "
            "${criteria}; the line 'Task Description: ${description}' is ours (a pack must "
            "fill every placeholder of the shipped entry); their code re-asks up to 5 times "
            "for the exact count",
            "text": questions_text(),
        },
    }
    for task, text in question_requirements().items():
        entries[f"criteria.{key(task)}"] = {
            "source": f"{REPOSITORY}, code/eval_tasks.py, question_requirements",
            "kind": "verbatim",
            "note": "the questions' description for the task (their {description})",
            "text": text.replace("$", "$$"),
        }
    return entries


def authors_pack(path: Path) -> Path:
    """The shipped pack with the authors' rubric and score-examples texts in place of ours."""
    shipped = list_scenarios()["persona-gym"].shipped_prompts()
    assert shipped is not None
    pack = yaml.safe_load(Path(shipped.path).read_text(encoding="utf-8"))
    pack["licence"] = (
        f"entries from {REPOSITORY} are its released files (MIT, Copyright (c) 2025 Vinay "
        "Samuel); personasim's own texts are MIT"
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


SHIPPED_AUTHORS_PACK = (
    Path(__file__).resolve().parents[1] / "scenarios" / "persona_gym" / "persona-gym-authors.yaml"
)


def test_the_shipped_authors_pack_is_a_fresh_build(tmp_path: Path) -> None:
    """`scenarios/persona_gym/persona-gym-authors.yaml` (shipped with its provenance and the MIT
    licence) is what `authors_pack` builds from the released files and today's shipped pack."""
    built = yaml.safe_load(authors_pack(tmp_path / "authors.yaml").read_text("utf-8"))
    assert yaml.safe_load(SHIPPED_AUTHORS_PACK.read_text("utf-8")) == built
    assert "Copyright (c) 2025 Vinay Samuel" in SHIPPED_AUTHORS_PACK.read_text("utf-8")
    prompts = built["prompts"]
    for name in ("selection", "selection_free", "questions"):  # theirs, asked for JSON
        assert prompts[name]["source"].startswith(f"{REPOSITORY}, code/run.py")
        assert prompts[name]["kind"] == "adapted" and "Python list" in prompts[name]["note"]
        assert "python list" not in prompts[name]["text"] and "JSON" in prompts[name]["text"]
    assert prompts["selection_free"]["text"].startswith(
        "Given the following persona description, select the most relevant settings"
    )
    for task in TASKS:
        entry = prompts[f"criteria.{key(task)}"]
        assert entry["kind"] == "verbatim" and entry["source"].endswith("question_requirements")


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
