"""PersonaGym (seed 002, §3) as an environment: a pool of settings, who is placed where, and
the questions each persona is posed per evaluation task.

The gym checks that a selection names settings of its pool and that every question is set in
one of the persona's settings; it logs placements and questions. Prompts, rubrics and scoring
belong to the scenario. The loaders read the gym's inputs (settings, persona descriptions, the
static benchmark, human scores) and name the file and line of any problem; `load_gym_inputs`
gathers and checks a run's inputs before anything runs.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from personasim.simulation import (
    Environment,
    InvalidActionError,
    ScenarioError,
    SimAgent,
    Simulation,
    csv_problem,
    read_input,
    unstorable,
    utf8_problem,
)

__all__ = [
    "BENCHMARK_SETTING",
    "SETTINGS_POOLS",
    "TASKS",
    "TASK_ALIASES",
    "BenchmarkEntry",
    "GymFileError",
    "GymInputParams",
    "GymInputs",
    "GymQuestion",
    "PersonaGym",
    "load_benchmark",
    "load_gym_inputs",
    "load_human_scores",
    "load_persona_descriptions",
    "load_settings",
    "shipped_file",
]

TASKS: tuple[str, ...] = (
    "Expected Action",
    "Linguistic Habits",
    "Persona Consistency",
    "Toxicity Control",
    "Action Justification",
)
"""The five evaluation tasks (§2), in the paper's order of introduction."""

TASK_ALIASES = {"Toxicity": "Toxicity Control"}
"""Task names of the released benchmark file that differ from the paper's (§2) names."""

SETTINGS_POOLS = {
    "shipped": "persona_gym_settings.txt",
    "authors": "persona_gym_settings_authors.txt",
}
"""The shipped settings pools (`--environments`): our 30, or the authors' 150 (MIT, their
`code/eval_tasks.py` `settings_list`; see data/persona_gym_README.md)."""

BENCHMARK_SETTING = "benchmark"
"""The setting recorded for static-benchmark questions, which name no setting of the pool."""


class GymFileError(ValueError):
    """An input file the gym cannot use; the message starts with `path:line:`."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class GymQuestion:
    """One question posed to a persona for one task, in one setting (a scene's step)."""

    task: str
    index: int
    setting: str
    text: str

    def record(self) -> dict[str, Any]:
        return {"index": self.index, "setting": self.setting, "text": self.text}

    def scene(self, agent_id: str) -> dict[str, Any]:
        """What ties an event to its scene: persona × setting × task × question."""
        return {
            "persona": agent_id,
            "gym_task": self.task,
            "question": self.index,
            "setting": self.setting,
        }


@dataclass(frozen=True)
class BenchmarkEntry:
    """One line of the static benchmark: a persona and its questions per task."""

    persona: str
    questions: dict[str, tuple[str, ...]]
    line: int


def shipped_file(name: str) -> Path:
    """A data file shipped with the package (see data/persona_gym_README.md beside this module)."""
    return Path(str(resources.files(__package__).joinpath("data", name)))


def _normalised(name: str) -> str:
    return " ".join(name.lower().split())


def load_settings(path: Path) -> tuple[str, ...]:
    """The settings pool: one per line; blank lines are skipped, duplicates are errors."""
    seen: dict[str, int] = {}
    settings: list[str] = []
    for number, raw in enumerate(_read_text(path).splitlines(), 1):
        name = " ".join(raw.split())
        if not name:
            continue
        if len(name) > 100:
            raise GymFileError(path, number, "a setting name longer than 100 characters")
        key = _normalised(name)
        if key in seen:
            raise GymFileError(path, number, f"{name!r} repeats line {seen[key]}")
        seen[key] = number
        settings.append(name)
    if len(settings) < 2:
        raise GymFileError(path, None, "the pool needs at least two settings, one per line")
    return tuple(settings)


def load_persona_descriptions(path: Path) -> tuple[str, ...]:
    """Free-text personas: a JSON list of strings, or JSONL with a string or a `persona`
    field per line."""
    text = _read_text(path)
    if path.suffix == ".jsonl":
        items = [
            (number, _persona_field(path, number, json_line(path, number, line)))
            for number, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GymFileError(path, exc.lineno, f"not JSON: {exc.msg}") from None
        except (ValueError, RecursionError):  # a 5,000-digit number, [[[[...]]]]
            raise GymFileError(path, None, "not JSON (too long a number or too deep)") from None
        if not isinstance(data, list):
            raise GymFileError(path, 1, "expected a JSON list of persona descriptions")
        if problem := unstorable(data):
            raise GymFileError(path, None, f"item {problem}")
        lines = _item_lines(text, len(data))
        items = [(lines[i], _persona_field(path, lines[i], v)) for i, v in enumerate(data)]
    return _distinct_personas(path, items)


def _persona_field(path: Path, line: int, value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("persona")
    if not isinstance(value, str) or not value.strip():
        raise GymFileError(path, line, "a persona must be a non-empty string")
    return " ".join(value.split())


def _item_lines(text: str, count: int) -> list[int]:
    """The line of each element of a JSON list written one element per line (as the paper's
    personas.json is); otherwise the element's 1-based position stands in for its line."""
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line.strip() not in "[]"]
    return lines if len(lines) == count else list(range(1, count + 1))


def _distinct_personas(path: Path, items: Iterable[tuple[int, str]]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    for line, persona in items:
        if persona in seen:
            raise GymFileError(path, line, f"the persona of line {seen[persona]} repeats")
        seen[persona] = line
    if not seen:
        raise GymFileError(path, None, "the file holds no personas")
    return tuple(seen)


def load_benchmark(path: Path, tasks: Sequence[str]) -> tuple[BenchmarkEntry, ...]:
    """The static benchmark: one `{"persona": str, "questions": {task: [str, ...]}}` per line;
    every task in `tasks` must have at least one question (`TASK_ALIASES` are accepted)."""
    entries: list[BenchmarkEntry] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        record = json_line(path, number, line)
        if not isinstance(record, dict) or not isinstance(record.get("questions"), dict):
            raise GymFileError(path, number, 'expected {"persona": ..., "questions": {...}}')
        persona = _persona_field(path, number, record.get("persona"))
        if persona in seen:
            raise GymFileError(path, number, f"the persona of line {seen[persona]} repeats")
        seen[persona] = number
        entries.append(BenchmarkEntry(persona, _questions(path, number, record, tasks), number))
    if not entries:
        raise GymFileError(path, None, "the file holds no benchmark lines")
    return tuple(entries)


def _questions(
    path: Path, number: int, record: dict[str, Any], tasks: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    named = {TASK_ALIASES.get(name, name): listed for name, listed in record["questions"].items()}
    questions: dict[str, tuple[str, ...]] = {}
    for task in tasks:
        listed = named.get(task)
        if not isinstance(listed, list) or not listed:
            raise GymFileError(path, number, f"no questions for the task {task!r}")
        if not all(isinstance(q, str) and q.strip() for q in listed):
            raise GymFileError(path, number, f"a question of {task!r} is not a non-empty string")
        questions[task] = tuple(q.strip() for q in listed)
    return questions


def json_line(path: Path, number: int, line: str) -> Any:
    """One JSONL line, or an error naming it (text a run cannot record is one too)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise GymFileError(path, number, f"not JSON: {exc.msg}") from None
    except (ValueError, RecursionError):  # a 5,000-digit number, [[[[...]]]]
        raise GymFileError(path, number, "not JSON (too long a number or too deep)") from None
    if problem := unstorable(value):  # a "\ud800" escape, NaN
        raise GymFileError(path, number, problem)
    return value


def load_human_scores(path: Path, tasks: Sequence[str]) -> list[list[Any]]:
    """Rows of a CSV of Appendix F's human scores: persona,task,score (one score per persona
    and task), or with a `question` column (its number within the persona's task, as in the log)
    and optionally `rater`, one row per rater and answer, the paper's unit: rows (persona, task,
    question, rater, score). Persona is a description or a persona id (p001...), score 1 to 5."""
    reader = csv.DictReader(_read_text(path).splitlines(keepends=True))
    try:
        return _human_rows(path, reader, tasks)
    except csv.Error as exc:  # a cell over the CSV reader's limit
        raise GymFileError(path, reader.reader.line_num, csv_problem(exc)) from None


def _human_rows(path: Path, reader: csv.DictReader[str], tasks: Sequence[str]) -> list[list[Any]]:
    columns = set(reader.fieldnames or ())
    if not {"persona", "task", "score"} <= columns:
        raise GymFileError(path, 1, "needs columns persona,task,score (and question,rater)")
    per_question = "question" in columns
    if "rater" in columns and not per_question:
        raise GymFileError(path, 1, "a rater column needs a question column")
    rows = []
    for row in reader:
        base = _human_row(path, reader.line_num, row, tasks)
        if per_question:
            base[2:2] = [_question_number(path, reader.line_num, row), row.get("rater") or ""]
        rows.append(base)
    return rows


def _question_number(path: Path, line: int, row: dict[str, str]) -> int:
    try:
        number = int(row["question"])
    except (TypeError, ValueError):
        raise GymFileError(path, line, "question is not a whole number") from None
    if number < 1:
        raise GymFileError(path, line, "question numbers start at 1")
    return number


def _human_row(path: Path, line: int, row: dict[str, str], tasks: Sequence[str]) -> list[Any]:
    if row["task"] not in tasks:
        raise GymFileError(path, line, f"unknown task {row['task']!r}")
    try:
        score = float(row["score"])
    except (TypeError, ValueError):
        raise GymFileError(path, line, "score is not a number") from None
    if not 1 <= score <= 5:
        raise GymFileError(path, line, "score must be from 1 to 5")
    return [" ".join(row["persona"].split()), row["task"], score]


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GymFileError(path, None, "no such file") from None
    except UnicodeDecodeError as exc:
        raise GymFileError(path, *utf8_problem(exc)) from None
    except OSError as exc:
        raise GymFileError(path, None, f"unreadable ({exc})") from None


@dataclass(frozen=True)
class GymInputs:
    """A run's checked inputs: the personas, the settings pool (empty for the static
    pipeline), the static benchmark's questions per persona and task, and human scores."""

    descriptions: tuple[str, ...]
    pool: tuple[str, ...]
    benchmark: dict[str, dict[str, tuple[str, ...]]]
    human: list[list[Any]] | None


class GymInputParams(Protocol):
    """The run parameters that name and count the gym's inputs (the scenario's params)."""

    @property
    def pipeline(self) -> str: ...
    @property
    def tasks(self) -> tuple[str, ...]: ...
    @property
    def question_file(self) -> Path | None: ...
    @property
    def persona_file(self) -> Path | None: ...
    @property
    def environments_file(self) -> Path | None: ...
    @property
    def environments(self) -> str: ...
    @property
    def n_environments(self) -> int | None: ...
    @property
    def n_personas(self) -> int | None: ...
    @property
    def human_scores(self) -> Path | None: ...


def load_gym_inputs(p: GymInputParams) -> GymInputs:
    """Read the pipeline's inputs (the shipped files where none is named) and check the counts
    asked of them; every problem is one `ScenarioError` naming the flag, file and line."""
    benchmark: dict[str, dict[str, tuple[str, ...]]] = {}
    pool: tuple[str, ...] = ()
    if p.pipeline == "static":
        path = p.question_file or shipped_file("persona_gym_benchmark.jsonl")
        entries = read_input("--question-file", lambda: load_benchmark(path, p.tasks))
        descriptions = tuple(e.persona for e in entries)
        benchmark = {e.persona: e.questions for e in entries}
    else:
        persona_path = p.persona_file or shipped_file("persona_gym_personas.json")
        pool_path = p.environments_file or shipped_file(SETTINGS_POOLS[p.environments])
        descriptions = read_input("--persona-file", lambda: load_persona_descriptions(persona_path))
        pool = read_input("--environments-file", lambda: load_settings(pool_path))
        if p.n_environments is not None and p.n_environments > len(pool):
            raise ScenarioError(
                f"--n-environments {p.n_environments} is more than the {len(pool)} "
                f"settings in {pool_path}"
            )
    if p.n_personas is not None:
        if p.n_personas > len(descriptions):
            raise ScenarioError(
                f"--n-personas {p.n_personas} is more than the {len(descriptions)} "
                "personas in the file"
            )
        descriptions = descriptions[: p.n_personas]
    human = (
        read_input("--human-scores", lambda: load_human_scores(p.human_scores, p.tasks))
        if p.human_scores
        else None
    )
    return GymInputs(descriptions, pool, benchmark, human)


class PersonaGym(Environment):
    """The settings pool and, per persona, its settings and the questions posed to it."""

    kind = "persona_gym"

    def __init__(
        self, sim: Simulation, pool: Sequence[str], tasks: Sequence[str], name: str | None = None
    ) -> None:
        self.pool = tuple(pool)
        self.tasks = tuple(tasks)
        self._by_key = {_normalised(s): s for s in self.pool}
        self.placements: dict[str, tuple[str, ...]] = {}
        self.questions: dict[tuple[str, str], tuple[GymQuestion, ...]] = {}
        super().__init__(sim, name)

    def settings(self) -> dict[str, Any]:
        return {"pool": list(self.pool), "tasks": list(self.tasks)}

    def setting_named(self, name: str) -> str:
        """The pool's spelling of `name` (case and spacing do not matter), or an error."""
        found = self._by_key.get(_normalised(name))
        if found is None:
            raise InvalidActionError(f"{name!r} is not a setting of the pool")
        return found

    def check_selection(self, names: Sequence[str], count: int | None) -> tuple[str, ...]:
        """Exactly `count` distinct settings of the pool (None: one or more), in the pool's
        spelling."""
        chosen = tuple(self.setting_named(n) for n in names)
        if len(set(chosen)) != len(chosen):
            raise InvalidActionError(f"a setting is named twice in {list(names)}")
        if count is None and not chosen:
            raise InvalidActionError("select at least one setting")
        if count is not None and len(chosen) != count:
            raise InvalidActionError(f"select exactly {count} settings, got {len(chosen)}")
        return chosen

    def check_questions(
        self, questions: Sequence[tuple[str, str]], settings: Sequence[str], count: int
    ) -> list[dict[str, str]]:
        """Exactly `count` (setting, question) pairs: distinct, non-empty questions (spacing
        normalised), each set in one of `settings` (the persona's), in the pool's spelling."""
        if len(questions) != count:
            raise InvalidActionError(f"write exactly {count} questions, got {len(questions)}")
        texts = [" ".join(text.split()) for _, text in questions]
        if not all(texts) or len(set(texts)) != len(texts):
            raise InvalidActionError("every question must be non-empty and different")
        result = []
        for (named, _), text in zip(questions, texts, strict=True):
            setting = self.setting_named(named)
            if setting not in settings:
                raise InvalidActionError(f"{setting!r} is not one of the settings {list(settings)}")
            result.append({"setting": setting, "question": text})
        return result

    def place(self, agent: SimAgent, settings: Sequence[str]) -> None:
        """Seed the persona in its settings (dynamic environment selection, §3.2)."""
        checked = tuple(self.setting_named(s) for s in settings)
        self.placements[agent.agent_id] = checked
        self.emit("gym.placed", {"settings": list(checked)}, agent_id=agent.agent_id)

    def pose(
        self, agent: SimAgent, task: str, questions: Sequence[GymQuestion], source: str
    ) -> None:
        """Record the questions of one task for a persona; each must be set where it is."""
        if task not in self.tasks:
            raise InvalidActionError(f"{task!r} is not a task of this gym")
        allowed = self.placements.get(agent.agent_id, ())
        for question in questions:
            if question.setting != BENCHMARK_SETTING and question.setting not in allowed:
                raise InvalidActionError(
                    f"{agent.agent_id} is not placed in {question.setting!r} ({list(allowed)})"
                )
        self.questions[(agent.agent_id, task)] = tuple(questions)
        payload = {"task": task, "source": source, "questions": [q.record() for q in questions]}
        self.emit("gym.questions", payload, agent_id=agent.agent_id)
