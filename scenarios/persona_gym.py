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

Every text sent is in the prompt pack `packs/persona-gym.yaml`; the answers' schemas are in
`agents/persona_gym_answers.py`, the metrics and tables in `analysis/persona_gym.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

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
from personasim.agents.persona_gym_answers import (
    Evaluation,
    GeneratedQuestion,
    PersonaAnswer,
    QuestionSet,
    ScoreExamples,
    SettingSelection,
    parse_score,
    read_answer,
    read_score,
)
from personasim.analysis.persona_gym import (
    gym_metrics,
    report_lines,
    table2_rows,
    write_gym_reports,
)
from personasim.environments.persona_gym import (
    BENCHMARK_SETTING,
    TASKS,
    GymQuestion,
    PersonaGym,
    load_benchmark,
    load_human_scores,
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

T = TypeVar("T")


def _checked(check: Callable[..., T], *args: Any) -> T:
    """The gym's check of a reasoner's answer; what it rejects is re-asked with its reason."""
    try:
        return check(*args)
    except InvalidActionError as exc:
        raise DecisionParseError(str(exc)) from None


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
        self._human = (
            read_input("--human-scores", lambda: load_human_scores(p.human_scores, p.tasks))
            if p.human_scores
            else None
        )

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
            read=lambda a: list(_checked(self.gym.check_selection, a.settings, p.n_environments)),
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
            read=lambda a: _checked(
                self.gym.check_questions,
                [(q.setting, q.question) for q in a.questions],
                settings,
                p.questions_per_task,
            ),
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
            read=read_answer,
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
            read=ScoreExamples.model_dump,
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
        return gym_metrics(events)

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return report_lines(metrics)

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        return write_gym_reports(metrics, directory)

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        """Table 2's row for this run; a sweep labels it with its model."""
        return [{k: v for k, v in row.items() if k != "model"} for row in table2_rows(metrics)]


# ---------------------------------------------------------------------------------------------
# Helpers: inputs, scene details
# ---------------------------------------------------------------------------------------------


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
