"""`persona-gym`: PersonaGym and PersonaScore (seed 002, §3).

Persona agents (the run's model, under the §3.2 system prompt) answer task-specific questions
in settings relevant to them; an ensemble of evaluator models, never the evaluated one, scores
every answer 1–5 against the task's rubric, completed with example answers for each score.

The dynamic pipeline plays three rounds:

1. **Environment selection** — a reasoner picks `n_environments` settings of the pool per
   persona (validated against the pool; re-asked, then a recorded failure).
2. **Question generation** — per persona and task, `questions_per_task` questions, each set in
   one of the selected settings, under the task's quality criteria (count and settings checked;
   re-asked within `max_repairs`, then a recorded failure).
3. **Scenes** — one unit per question: the persona answers, a reasoner writes an example
   answer for each score, then each evaluator scores with a justification. A scene is one
   committed unit, so persona × setting × task × question replays as one trajectory.

The static pipeline (`--question-file`, the benchmark's JSONL format) poses the file's questions in
setup and plays only round 3. A failed step ends its scene: nothing is defaulted, and an
evaluator whose score cannot be read is left out of the ensemble and counted.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import BaseModel, Field, field_validator, model_validator

from personasim.agents import (
    DecisionParseError,
    DecisionTask,
    Persona,
    PersonaAgent,
    ResearcherAgent,
    format_instructions,
    json_parser,
    parse_nonempty,
)
from personasim.analysis import (
    Statistic,
    Undefined,
    mean_of,
    min_group_n,
    model_label,
    payloads,
    rounded,
    shown_stat,
    small_groups,
    small_note,
    stat_fields,
    write_table,
)
from personasim.analysis.persona_gym import (
    ensemble_scores,
    evaluator_agreement,
    human_alignment,
    is_refusal,
    persona_scores,
    task_counts,
    task_scores,
)
from personasim.environments.persona_gym import (
    BENCHMARK_SETTING,
    TASKS,
    GymQuestion,
    PersonaGym,
    load_benchmark,
    load_persona_descriptions,
    load_settings,
    shipped_file,
)
from personasim.simulation import (
    ChatRequest,
    InvalidActionError,
    Message,
    Role,
    Scenario,
    ScenarioError,
    ScenarioParams,
    Simulation,
    read_input,
    register_scenario,
)

__all__ = [
    "Evaluation",
    "GeneratedQuestion",
    "PersonaAnswer",
    "PersonaGymParams",
    "PersonaGymScenario",
    "QuestionSet",
    "ScoreExamples",
    "SettingSelection",
    "parse_score",
    "read_score",
]

# ---------------------------------------------------------------------------------------------
# Sampling — the texts themselves are in the prompt pack, packs/persona-gym.yaml
# ---------------------------------------------------------------------------------------------

SELECTION_SAMPLING = {"temperature": 0.9, "top_p": 0.9}
"""§4.1: environment selection and question generation at temperature and top-p 0.9."""

EVALUATOR_TEMPERATURE = 0.0
"""§4.1: evaluators at temperature 0."""

_FINAL_SCORE = re.compile(
    r"(?:therefore,?\s*)?(?:the\s+)?final score is(?:[:*$\s]|\\boxed\{)*(-?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)


# ---------------------------------------------------------------------------------------------
# Structured answers and parsers
# ---------------------------------------------------------------------------------------------


class SettingSelection(BaseModel):
    settings: list[str] = Field(description="the selected environments, spelled as listed")


class GeneratedQuestion(BaseModel):
    setting: str = Field(description="the setting the question is set in, spelled as listed")
    question: str = Field(description="the question put to the persona")


class QuestionSet(BaseModel):
    questions: list[GeneratedQuestion]


class ScoreExamples(BaseModel):
    score_1: str = Field(min_length=1, description="an answer that deserves score 1")
    score_2: str = Field(min_length=1, description="an answer that deserves score 2")
    score_3: str = Field(min_length=1, description="an answer that deserves score 3")
    score_4: str = Field(min_length=1, description="an answer that deserves score 4")
    score_5: str = Field(min_length=1, description="an answer that deserves score 5")


class PersonaAnswer(BaseModel):
    """The persona's answer to a question, under a structured response format."""

    response: str


class Evaluation(BaseModel):
    """An evaluator's justification and 'Therefore, the final score is N' (Appendix A.5),
    under a structured response format."""

    justification: str
    score: int = Field(ge=1, le=5)


def parse_score(reply: str) -> dict[str, Any]:
    """The score in 'Therefore, the final score is N' (the last one), a whole number 1–5."""
    matches = list(_FINAL_SCORE.finditer(reply))
    if not matches:
        raise DecisionParseError("it does not end with 'Therefore, the final score is N'")
    justification = reply[: matches[-1].start()].strip()
    return _scored(float(matches[-1].group(1)), justification)


def read_score(evaluation: Evaluation) -> dict[str, Any]:
    """A structured evaluation as `parse_score` would return it."""
    return _scored(evaluation.score, evaluation.justification.strip())


def _scored(value: float, justification: str) -> dict[str, Any]:
    if value != int(value) or not 1 <= value <= 5:
        raise DecisionParseError(f"the score must be a whole number from 1 to 5, got {value:g}")
    return {"score": int(value), "justification": justification}


def _read_answer(answer: PersonaAnswer) -> str:
    return parse_nonempty(answer.response)


def _read_selection(selection: SettingSelection, gym: PersonaGym, count: int) -> list[str]:
    try:
        return list(gym.check_selection(selection.settings, count))
    except InvalidActionError as exc:
        raise DecisionParseError(str(exc)) from None


def _read_questions(
    answer: QuestionSet, gym: PersonaGym, settings: Sequence[str], count: int
) -> list[dict[str, str]]:
    questions = answer.questions
    if len(questions) != count:
        raise DecisionParseError(f"write exactly {count} questions, got {len(questions)}")
    texts = [" ".join(q.question.split()) for q in questions]
    if not all(texts) or len(set(texts)) != len(texts):
        raise DecisionParseError("every question must be non-empty and different")
    result = []
    for question, text in zip(questions, texts, strict=True):
        try:
            setting = gym.setting_named(question.setting)
        except InvalidActionError as exc:
            raise DecisionParseError(str(exc)) from None
        if setting not in settings:
            raise DecisionParseError(f"{setting!r} is not one of the settings {list(settings)}")
        result.append({"setting": setting, "question": text})
    return result


def _read_examples(examples: ScoreExamples) -> dict[str, str]:
    return examples.model_dump()


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------



class PersonaGymParams(ScenarioParams):
    pipeline: Literal["dynamic", "static"] = Field(
        "dynamic", description="dynamic: select, generate, evaluate; static: --question-file"
    )
    persona_file: Path | None = Field(
        None, description="dynamic: JSON list or JSONL of persona descriptions (default: shipped)"
    )
    question_file: Path | None = Field(
        None, description="static benchmark JSONL (implies --pipeline static; default: shipped)"
    )
    n_personas: int | None = Field(None, ge=1, description="first N personas (default: all)")
    environments_file: Path | None = Field(
        None, description="settings pool, one per line (default: shipped 30)"
    )
    n_environments: int = Field(5, ge=1, le=20, description="settings selected per persona")
    questions_per_task: int = Field(10, ge=1, le=50, description="questions per task (§3.2)")
    tasks: tuple[str, ...] = Field(TASKS, min_length=1, description="evaluation tasks (§2)")
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="persona agent temperature")
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    scripted_fidelity: float = Field(
        0.8, ge=0.0, le=1.0, description="scripted backend only: persona answerer's fidelity"
    )
    human_scores: Path | None = Field(
        None, description="CSV persona,task,score of human raters (Appendix F alignment)"
    )

    @model_validator(mode="before")
    @classmethod
    def _question_file_means_static(cls, values: Any) -> Any:
        if isinstance(values, dict) and values.get("question_file") and "pipeline" not in values:
            return {**values, "pipeline": "static"}
        return values

    @model_validator(mode="after")
    def _inputs_fit_the_pipeline(self) -> PersonaGymParams:
        dynamic_only = [n for n in ("persona_file", "environments_file") if getattr(self, n)]
        if self.pipeline == "static" and dynamic_only:
            raise ValueError(
                f"the static pipeline takes its personas from --question-file, not "
                f"{', '.join(dynamic_only)}"
            )
        if self.pipeline == "dynamic" and self.question_file is not None:
            raise ValueError("--question-file is for --pipeline static")
        return self

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [n for n in names if n not in TASKS]
        if unknown or len(set(names)) != len(names):
            raise ValueError(f"tasks must be distinct names from {', '.join(TASKS)}")
        return names


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------

STAGES = {"dynamic": ("select", "generate", "scenes"), "static": ("scenes",)}


def _slug(task: str) -> str:
    return task.lower().replace(" ", "-")


def _key(task: str) -> str:
    """The task's suffix in the prompt pack's entry names (`evaluation.expected_action`)."""
    return task.lower().replace(" ", "_")


@register_scenario
class PersonaGymScenario(Scenario):
    name = "persona-gym"
    summary = "PersonaGym: rubric-scored persona answers, PersonaScore per task (seed 002)"
    Params = PersonaGymParams
    roles: ClassVar[dict[str, Role]] = {
        "persona": Role("the persona agent under evaluation"),
        "reasoner": Role("settings selection, question generation and score examples (§3.2)"),
        "evaluator": Role(
            "the evaluator ensemble (two or more models, §3.2)",
            min_models=2,
            max_models=None,
            not_played_by=("persona",),
        ),
    }
    params: PersonaGymParams

    # --- inputs ------------------------------------------------------------------------------

    def prepare(self) -> None:
        p = self.params
        if p.pipeline == "static":
            path = p.question_file or shipped_file("persona_gym_benchmark.jsonl")
            entries = read_input("--question-file", lambda: load_benchmark(path, p.tasks))
            self._descriptions = tuple(e.persona for e in entries)
            self._benchmark = {e.persona: e.questions for e in entries}
            self._pool: tuple[str, ...] = ()
        else:
            persona_path = p.persona_file or shipped_file("persona_gym_personas.json")
            pool_path = p.environments_file or shipped_file("persona_gym_settings.txt")
            self._descriptions = read_input(
                "--persona-file", lambda: load_persona_descriptions(persona_path)
            )
            self._pool = read_input("--environments-file", lambda: load_settings(pool_path))
            if p.n_environments > len(self._pool):
                raise ScenarioError(
                    f"--n-environments {p.n_environments} is more than the {len(self._pool)} "
                    f"settings in {pool_path}"
                )
        if p.n_personas is not None:
            if p.n_personas > len(self._descriptions):
                raise ScenarioError(
                    f"--n-personas {p.n_personas} is more than the {len(self._descriptions)} "
                    "personas in the file"
                )
            self._descriptions = self._descriptions[: p.n_personas]
        self._human = _load_human_scores(p.human_scores, p.tasks) if p.human_scores else None

    def rounds(self) -> int:
        return len(STAGES[self.params.pipeline])

    # --- setup -------------------------------------------------------------------------------

    def setup(self, sim: Simulation) -> None:
        p = self.params
        self.gym = PersonaGym(sim, self._pool, p.tasks)
        self.personas = [
            PersonaAgent(sim, Persona(f"p{i:03d}", {"description": text}, {}))
            for i, text in enumerate(self._descriptions, 1)
        ]
        for persona in self.personas:
            persona.move_to(self.gym)
        self.selector = ResearcherAgent(sim, "selector", role="environment selection (§3.2)")
        self.generator = ResearcherAgent(sim, "question-generator", role="questions (§3.2)")
        self.example_writer = ResearcherAgent(sim, "example-writer", role="score examples")
        self.evaluators = [
            ResearcherAgent(sim, f"evaluator-{i}", role=f"evaluator {spec}")
            for i, spec in enumerate(sim.roles["evaluator"], 1)
        ]
        if p.pipeline == "static":
            for persona in self.personas:
                self._pose_benchmark(persona)
        if self._human is not None:
            sim.emit("gym.human_scores", {"rows": self._human})

    def _pose_benchmark(self, persona: PersonaAgent) -> None:
        questions = self._benchmark[_description(persona)]
        for task in self.params.tasks:
            posed = [
                GymQuestion(task, i, BENCHMARK_SETTING, text)
                for i, text in enumerate(questions[task][: self.params.questions_per_task], 1)
            ]
            self.gym.pose(persona, task, posed, source="benchmark")

    # --- rounds ------------------------------------------------------------------------------

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        stage = STAGES[self.params.pipeline][round_index - 1]
        work: dict[str, Callable[[], Awaitable[None]]]
        if stage == "select":
            work = {p.agent_id: (lambda p=p: self._select(p)) for p in self.personas}
        elif stage == "generate":
            work = {
                f"{p.agent_id}/{_slug(task)}": (lambda p=p, t=task: self._generate(p, t))
                for p in self.personas
                if p.agent_id in self.gym.placements
                for task in self.params.tasks
            }
        else:
            work = {
                f"{p.agent_id}/{_slug(q.task)}/q{q.index}": (lambda p=p, q=q: self._scene(p, q))
                for p in self.personas
                for task in self.params.tasks
                for q in self.gym.questions.get((p.agent_id, task), ())
            }
        await sim.concurrently(work)

    async def _select(self, persona: PersonaAgent) -> None:
        decision = await self.selector.decide(self._selection_task(persona))
        if decision.ok:  # a failure is logged as decision.failed; the persona is not placed
            self.gym.place(persona, decision.value)

    async def _generate(self, persona: PersonaAgent, task: str) -> None:
        decision = await self.generator.decide(self._question_task(persona, task))
        if decision.ok:
            posed = [
                GymQuestion(task, i, q["setting"], q["question"])
                for i, q in enumerate(decision.value, 1)
            ]
            self.gym.pose(persona, task, posed, source="generated")

    async def _scene(self, persona: PersonaAgent, question: GymQuestion) -> None:
        """Answer, score examples, then every evaluator; a failed step ends the scene."""
        answer = await persona.decide(self._answer_task(persona, question))
        if not answer.ok:
            return
        examples = await self.example_writer.decide(self._examples_task(persona, question))
        if not examples.ok:
            return
        for evaluator in self.evaluators:
            await evaluator.decide(
                self._evaluation_task(persona, question, answer.value, examples.value, evaluator)
            )

    # --- decision tasks ----------------------------------------------------------------------

    def _selection_task(self, persona: PersonaAgent) -> DecisionTask:
        p = self.params
        prompt = self.prompts.render(
            "selection",
            persona=_description(persona),
            pool="\n".join(f"- {s}" for s in self.gym.pool),
            count=p.n_environments,
            format_instructions=format_instructions(SettingSelection),
        )
        hints = {
            "persona": _description(persona),
            "pool": list(self.gym.pool),
            "count": p.n_environments,
        }
        return self._reasoner_task(
            "persona_gym.select",
            prompt,
            hints,
            SettingSelection,
            read=lambda answer: _read_selection(answer, self.gym, p.n_environments),
            details={"persona": persona.agent_id},
        )

    def _question_task(self, persona: PersonaAgent, task: str) -> DecisionTask:
        p = self.params
        settings = self.gym.placements[persona.agent_id]
        prompt = self.prompts.render(
            "questions",
            persona=_description(persona),
            settings=", ".join(settings),
            task=task,
            description=self.prompts.render(f"description.{_key(task)}"),
            criteria=self.prompts.render(f"criteria.{_key(task)}"),
            count=p.questions_per_task,
            format_instructions=format_instructions(QuestionSet),
        )
        hints = {
            "persona": _description(persona),
            "task": task,
            "settings": list(settings),
            "count": p.questions_per_task,
        }
        return self._reasoner_task(
            "persona_gym.questions",
            prompt,
            hints,
            QuestionSet,
            read=lambda answer: _read_questions(answer, self.gym, settings, p.questions_per_task),
            details={"persona": persona.agent_id, "gym_task": task},
        )

    def _reasoner_task(
        self,
        name: str,
        prompt: str,
        hints: dict[str, Any],
        schema: type[BaseModel],
        read: Callable[[Any], Any],
        details: dict[str, Any],
    ) -> DecisionTask:
        """A reasoner's JSON answer at the paper's generation sampling (§4.1); its prompt asks
        for `schema` in text, and a structured format sends the same schema."""
        return DecisionTask(
            name=name,
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                **SELECTION_SAMPLING,
                task=name,
                hints=hints,
            ),
            parse=json_parser(schema, read),
            reminder=lambda error: self.prompts.render("json_reminder", error=error),
            max_repairs=self.params.max_repairs,
            details=details,
            role="reasoner",
            schema=schema,
            read=read,
        )

    def _answer_task(self, persona: PersonaAgent, question: GymQuestion) -> DecisionTask:
        system = self.prompts.render("persona_system", persona=_description(persona))
        return DecisionTask(
            name="persona_gym.answer",
            request=ChatRequest(
                messages=(
                    Message(role="system", content=system),
                    Message(role="user", content=question.text),
                ),
                temperature=self.params.temperature,
                sample_index=question.index,  # a repeated question is still its own sample
                task="persona_gym.answer",
                hints={
                    "persona": _description(persona),
                    "task": question.task,
                    "fidelity": self.params.scripted_fidelity,
                },
            ),
            parse=parse_nonempty,
            reminder=lambda error: self.prompts.render("answer_reminder"),
            max_repairs=self.params.max_repairs,
            details=_scene_details(persona, question),
            schema=PersonaAnswer,
            read=_read_answer,
        )

    def _examples_task(self, persona: PersonaAgent, question: GymQuestion) -> DecisionTask:
        prompt = self.prompts.render(
            "examples",
            rubric_outline=self._outline(question.task),
            persona=_description(persona),
            question=question.text,
            format_instructions=format_instructions(ScoreExamples),
        )
        hints = {"persona": _description(persona), "task": question.task}
        return self._reasoner_task(
            "persona_gym.examples",
            prompt,
            hints,
            ScoreExamples,
            read=_read_examples,
            details=_scene_details(persona, question),
        )

    def _evaluation_task(
        self,
        persona: PersonaAgent,
        question: GymQuestion,
        response: str,
        examples: dict[str, str],
        evaluator: ResearcherAgent,
    ) -> DecisionTask:
        index = self.evaluators.index(evaluator) + 1
        prompt = self.prompts.render(
            f"evaluation.{_key(question.task)}",
            rubric_outline=self._outline(question.task),
            examples="\n".join(
                self.prompts.render("score_example", score=i, example=examples[f"score_{i}"])
                for i in range(1, 6)
            ),
            persona=_description(persona),
            question=question.text,
            response=response,
        )
        return DecisionTask(
            name="persona_gym.evaluate",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=EVALUATOR_TEMPERATURE,
                task="persona_gym.evaluate",
                hints={
                    "persona": _description(persona),
                    "task": question.task,
                    "response": response,
                    "evaluator": index,
                },
            ),
            parse=parse_score,
            reminder=lambda error: self.prompts.render("score_reminder", error=error),
            max_repairs=self.params.max_repairs,
            schema=Evaluation,
            read=read_score,
            details={**_scene_details(persona, question), "evaluator": evaluator.agent_id},
            role="evaluator",
            member=index - 1,
        )

    def _outline(self, task: str) -> str:
        """The task's rubric outline (§3.2: its description and scoring guidelines)."""
        description = self.prompts.render(f"description.{_key(task)}")
        return self.prompts.render(f"outline.{_key(task)}", description=description)

    # --- metrics and reports -----------------------------------------------------------------

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        header = payloads(events, "run.started")[0]
        params = header["params"]
        tasks = params["tasks"]
        scores = _score_table(events)
        questions = ensemble_scores(scores)
        per_persona = persona_scores(questions, tasks)
        human = payloads(events, "gym.human_scores")
        smallest = min_group_n(events)
        counts = task_counts(questions, tasks)
        return {
            "model": model_label(header["model"]),
            "pipeline": params["pipeline"],
            "tasks": tasks,
            "evaluators": {
                f"evaluator-{i}": s for i, s in enumerate(header["roles"]["evaluator"], 1)
            },
            "n_personas": len(_descriptions(events)),
            "n_questions": sum(len(q["questions"]) for q in payloads(events, "gym.questions")),
            "n_scored_questions": len(questions),
            "min_group_n": smallest,
            "n_scored_by_task": counts,
            "small_tasks": small_groups(counts, smallest),
            "scores": _score_fields(task_scores(questions, tasks)),
            "by_evaluator": {
                evaluator: _score_fields(task_scores(ensemble_scores(group), tasks))
                for evaluator, group in scores.groupby("evaluator", sort=True)
            },
            "personas": _persona_records(events, per_persona, questions, tasks, smallest),
            "refusals": _refusals(events, tasks),
            "agreement": [
                {**_rounded_record(r), "small": r["n"] < smallest}
                for r in evaluator_agreement(scores)
            ],
            "failures": _counts(events, "decision.failed"),
            "reasks": _counts(events, "decision.reask"),
            **stat_fields(
                "human_alignment",
                [
                    {**_rounded_record(r), "small": r["n"] < smallest}
                    for r in human_alignment(per_persona, _human_rows(human[0], events), tasks)
                ]
                if human
                else Undefined("no human scores given (--human-scores)"),
            ),
        }

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        scores = metrics["scores"]
        per_task = ", ".join(f"{t} {shown_stat(scores, t)}" for t in metrics["tasks"])
        failures = metrics["failures"]
        lines = [
            f"{metrics['model']}: PersonaScore {shown_stat(scores, 'PersonaScore')} over "
            f"{metrics['n_personas']} personas, {metrics['n_scored_questions']} of "
            f"{metrics['n_questions']} questions scored ({metrics['pipeline']} pipeline)",
            f"  {per_task}",
            f"  refusals {metrics['refusals']['n']} of {metrics['refusals']['n_answers']} answers "
            f"({shown_stat(metrics['refusals'], 'rate')}); failures: "
            + ", ".join(f"{k} {v}" for k, v in failures.items())
            + f" (evaluator scores excluded: {failures['evaluate']})",
        ]
        if metrics["small_tasks"]:
            lines.append(
                f"  fewer than {metrics['min_group_n']} scored questions: "
                + ", ".join(metrics["small_tasks"])
            )
        for row in metrics["agreement"]:
            lines.append(
                f"  {row['evaluators']}: Spearman {shown_stat(row, 'spearman')}, mean |diff| "
                f"{shown_stat(row, 'mean_abs_diff')} over {row['n']} answers"
            )
        return lines

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        smallest = metrics["min_group_n"]
        small = metrics["small_tasks"]
        notes = [small_note(smallest, f"scored questions in {', '.join(small)}")] if small else []
        files = write_table(
            table2_rows(metrics), directory, "table2_persona_score", flag="small_group", notes=notes
        )
        files += write_table(
            persona_rows(metrics),
            directory,
            "persona_scores",
            flag="small_group",
            notes=[small_note(smallest, "scored questions in a task of the persona")],
        )
        pairs = small_note(smallest, "answers or personas in the row")
        for key, name in (
            ("agreement", "evaluator_agreement"),
            ("human_alignment", "human_alignment"),
        ):
            if metrics[key]:
                files += write_table(metrics[key], directory, name, flag="small", notes=[pairs])
        return files

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        """Table 2's row for this run; a sweep labels it with its model."""
        return [{k: v for k, v in row.items() if k != "model"} for row in table2_rows(metrics)]


# ---------------------------------------------------------------------------------------------
# Helpers: inputs, scene details
# ---------------------------------------------------------------------------------------------


def _load_human_scores(path: Path, tasks: Sequence[str]) -> list[list[Any]]:
    """Rows (persona, task, score) of a CSV with those columns; persona is a description or
    a persona id (p001...)."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if not {"persona", "task", "score"} <= set(reader.fieldnames or ()):
                raise ScenarioError(f"--human-scores: {path}:1: needs columns persona,task,score")
            return [_human_row(path, reader.line_num, row, tasks) for row in reader]
    except OSError as exc:
        raise ScenarioError(f"--human-scores: {path}: {exc.strerror or exc}") from None


def _human_row(path: Path, line: int, row: dict[str, str], tasks: Sequence[str]) -> list[Any]:
    if row["task"] not in tasks:
        raise ScenarioError(f"--human-scores: {path}:{line}: unknown task {row['task']!r}")
    try:
        score = float(row["score"])
    except (TypeError, ValueError):
        raise ScenarioError(f"--human-scores: {path}:{line}: score is not a number") from None
    if not 1 <= score <= 5:
        raise ScenarioError(f"--human-scores: {path}:{line}: score must be from 1 to 5")
    return [" ".join(row["persona"].split()), row["task"], score]


def _description(persona: PersonaAgent) -> str:
    return str(persona.persona.attributes["description"])


def _scene_details(persona: PersonaAgent, question: GymQuestion) -> dict[str, Any]:
    """What ties an event to its scene: persona × setting × task × question."""
    return {
        "persona": persona.agent_id,
        "gym_task": question.task,
        "question": question.index,
        "setting": question.setting,
    }


# ---------------------------------------------------------------------------------------------
# Metrics (from the event table alone) and tables
# ---------------------------------------------------------------------------------------------

STAGE_TASKS = {
    "select": "persona_gym.select",
    "generate": "persona_gym.questions",
    "answer": "persona_gym.answer",
    "examples": "persona_gym.examples",
    "evaluate": "persona_gym.evaluate",
}


def _score_table(events: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluator and answer it was asked about; NaN score for a failure."""
    rows = [
        {
            "persona": p["persona"],
            "task": p["gym_task"],
            "question": p["question"],
            "evaluator": p["evaluator"],
            "score": float(p["value"]["score"]) if "value" in p else float("nan"),
        }
        for kind in ("decision.made", "decision.failed")
        for p in payloads(events, kind)
        if p["task"] == "persona_gym.evaluate"
    ]
    columns = ["persona", "task", "question", "evaluator", "score"]
    return pd.DataFrame(rows, columns=columns).astype({"score": float})


def _descriptions(events: pd.DataFrame) -> dict[str, str]:
    return {
        p["persona"]["id"]: p["persona"]["attributes"]["description"]
        for p in payloads(events, "agent.created")
        if "persona" in p
    }


def _persona_records(
    events: pd.DataFrame,
    per_persona: dict[str, dict[str, Statistic]],
    questions: pd.DataFrame,
    tasks: Sequence[str],
    smallest: int,
) -> dict[str, dict[str, Any]]:
    """Per persona: description, settings, task scores and the tasks scored over fewer than
    `smallest` questions (`small_tasks`)."""
    placed = {
        row["agent_id"]: row["payload"]["settings"]
        for row in events.loc[events["kind"] == "gym.placed", ["agent_id", "payload"]].to_dict(
            "records"
        )
    }
    unscored = dict.fromkeys(tasks, Undefined("no scored questions"))
    return {
        persona: {
            "description": description,
            "settings": placed.get(persona),
            "scores": _score_fields(
                per_persona.get(persona, {**unscored, "PersonaScore": Undefined("no scores")})
            ),
            "small_tasks": small_groups(
                task_counts(questions[questions["persona"] == persona], tasks), smallest
            ),
        }
        for persona, description in _descriptions(events).items()
    }


def _refusals(events: pd.DataFrame, tasks: Sequence[str]) -> dict[str, Any]:
    """Refusal / "as an AI" answers of the persona agent (§4.2, Figure 4), overall and per task."""
    answers = [
        (p["gym_task"], is_refusal(p["value"]))
        for p in payloads(events, "decision.made")
        if p["task"] == "persona_gym.answer"
    ]
    by_task = {t: [r for task, r in answers if task == t] for t in tasks}
    flags = [r for _, r in answers]
    return {
        "n": sum(flags),
        "n_answers": len(flags),
        **stat_fields("rate", mean_of(flags, "no answers")),
        "by_task": {
            k: v
            for t, f in by_task.items()
            for k, v in stat_fields(t, mean_of(f, "no answers")).items()
        },
    }


def _counts(events: pd.DataFrame, kind: str) -> dict[str, int]:
    tasks = [p["task"] for p in payloads(events, kind)]
    return {stage: tasks.count(task) for stage, task in STAGE_TASKS.items()}


def _human_rows(payload: dict[str, Any], events: pd.DataFrame) -> list[tuple[str, str, float]]:
    """Human rows keyed by persona id (a description in the CSV is mapped to its id)."""
    ids = {description: persona for persona, description in _descriptions(events).items()}
    return [(ids.get(persona, persona), task, score) for persona, task, score in payload["rows"]]


def _score_fields(scores: dict[str, Statistic]) -> dict[str, Any]:
    """Each task's score (and PersonaScore) with the reason beside an undefined one."""
    return {k: v for task, value in scores.items() for k, v in stat_fields(task, value).items()}


def _rounded_record(record: dict[str, Any]) -> dict[str, Any]:
    return {k: rounded(v) if isinstance(v, float) else v for k, v in record.items()}


def table2_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 2's shape: the model, its score per task, and PersonaScore; `small_group` when a
    task's score rests on fewer scored questions than the run's `min_group_n`."""
    return [
        {
            "model": metrics["model"],
            **metrics["scores"],
            "small_group": bool(metrics["small_tasks"]),
        }
    ]


def persona_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Per persona: its description, settings, task scores and PersonaScore."""
    return [
        {
            "persona": persona,
            "description": record["description"],
            "settings": "; ".join(record["settings"] or []),
            **record["scores"],
            "small_group": bool(record["small_tasks"]),
        }
        for persona, record in metrics["personas"].items()
    ]
