"""PersonaGym (seed 002, §3) as an environment: a pool of settings, who is placed where, and
the questions each persona is posed per evaluation task.

The gym checks that a selection names settings of its pool and that every question is set in
one of the persona's settings; it logs placements and questions. Prompts, rubrics and scoring
belong to the scenario. The loaders read the gym's inputs (settings, persona descriptions, the
static benchmark) and name the file and line of any problem.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from personasim.simulation import Environment, InvalidActionError, SimAgent, Simulation

__all__ = [
    "BENCHMARK_SETTING",
    "TASKS",
    "TASK_ALIASES",
    "BenchmarkEntry",
    "GymFileError",
    "GymQuestion",
    "PersonaGym",
    "load_benchmark",
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


@dataclass(frozen=True)
class BenchmarkEntry:
    """One line of the static benchmark: a persona and its questions per task."""

    persona: str
    questions: dict[str, tuple[str, ...]]
    line: int


def shipped_file(name: str) -> Path:
    """A data file shipped with the package (see environments/data/persona_gym_README.md)."""
    return Path(str(resources.files("personasim.environments").joinpath("data", name)))


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
        if not isinstance(data, list):
            raise GymFileError(path, 1, "expected a JSON list of persona descriptions")
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
    """One JSONL line, or an error naming it."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise GymFileError(path, number, f"not JSON: {exc.msg}") from None


def load_human_scores(path: Path, tasks: Sequence[str]) -> list[list[Any]]:
    """Rows (persona, task, score) of a CSV with those columns (Appendix F's human scores);
    persona is a description or a persona id (p001...), score a number from 1 to 5."""
    with _open_csv(path) as handle:
        reader = csv.DictReader(handle)
        if not {"persona", "task", "score"} <= set(reader.fieldnames or ()):
            raise GymFileError(path, 1, "needs columns persona,task,score")
        return [_human_row(path, reader.line_num, row, tasks) for row in reader]


def _open_csv(path: Path) -> Any:
    try:
        return path.open(newline="", encoding="utf-8")
    except FileNotFoundError:
        raise GymFileError(path, None, "no such file") from None
    except OSError as exc:
        raise GymFileError(path, None, f"unreadable ({exc.strerror or exc})") from None


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
    except (OSError, UnicodeDecodeError) as exc:
        raise GymFileError(path, None, f"unreadable ({exc})") from None


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

    def check_selection(self, names: Sequence[str], count: int) -> tuple[str, ...]:
        """Exactly `count` distinct settings of the pool, in the pool's spelling."""
        chosen = tuple(self.setting_named(n) for n in names)
        if len(set(chosen)) != len(chosen):
            raise InvalidActionError(f"a setting is named twice in {list(names)}")
        if len(chosen) != count:
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
