"""`persona-gym`: PersonaGym and PersonaScore (seed 002, §3).

Persona agents (the run's model, under the §3.2 system prompt) answer task-specific questions
in settings relevant to them; an ensemble of evaluator models, never the evaluated one, scores
every answer 1–5 against the task's rubric, completed with example answers for each score.

The dynamic pipeline plays three rounds:

1. **Environment selection** — a reasoner picks the relevant settings of the pool per
   persona, as many as it judges relevant or exactly `n_environments` (validated against the
   pool; re-asked, then a recorded failure).
2. **Question generation** — per persona and task, `questions_per_task` questions, each set in
   one of the selected settings, under the task's quality criteria (count and settings checked;
   re-asked within `max_repairs`, then a recorded failure).
3. **Scenes** — one unit per question: the persona answers, a reasoner writes an example
   answer for each score, then each evaluator scores with a justification. Each answer is read
   for stepping out of the persona (`refusals.py`): by the grammar, else by the refusal judge
   when `--role refusal` binds one (`reading.made`, reader "refusal"), else it is counted
   not judged. A scene is one committed unit, so persona × setting × task × question replays
   as one trajectory. With
   `grading_batch` N > 1 (the authors' code: 5) a unit is N consecutive questions of a task,
   and each evaluator grades their answers in one request; the answers whose evaluation in
   the reply cannot be read are asked again, alone, keeping the usable scores.

The static pipeline (`--question-file`, the benchmark's JSONL format) poses the file's questions in
setup and plays only round 3. A failed step ends its scene: nothing is defaulted, and an
evaluator whose score cannot be read is left out of the ensemble and counted.

Every text sent is in the prompt pack `persona-gym.yaml` beside this file; the answers' schemas
are in `answers.py`, the metrics and tables in `metrics.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from personasim.agents import Persona, PersonaAgent, ResearcherAgent
from personasim.environments.persona_gym.place import (
    BENCHMARK_SETTING,
    TASKS,
    GymQuestion,
    PersonaGym,
    load_gym_inputs,
)
from personasim.scenarios.persona_gym.batch import unusable
from personasim.scenarios.persona_gym.judging import EVALUATOR_SCORES
from personasim.scenarios.persona_gym.metric_blocks import GymMetricsBlock
from personasim.scenarios.persona_gym.metrics import gym_metrics
from personasim.scenarios.persona_gym.refusals import grammar_reading, judge_reading
from personasim.scenarios.persona_gym.tables import (
    SUMMARY_COUNTS,
    report_lines,
    summary_rows,
    write_gym_reports,
    write_sweep_reports,
)
from personasim.scenarios.persona_gym.tasks import GymTasks
from personasim.simulation import (
    Role,
    Scenario,
    ScenarioMetrics,
    ScenarioParams,
    Simulation,
    register_scenario,
)

__all__ = ["PersonaGymParams", "PersonaGymScenario"]

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
    environments: Literal["shipped", "authors"] = Field(
        "shipped",
        description="settings pool: shipped (our 30) or authors (the paper's 150, shipped, MIT)",
    )
    environments_file: Path | None = Field(
        None, description="settings pool, one per line (instead of --environments)"
    )
    n_environments: int | None = Field(
        None,
        ge=1,
        le=20,
        description="settings selected per persona (default: the model chooses, as in §3.2)",
    )
    questions_per_task: int = Field(10, ge=1, le=50, description="questions per task (§3.2)")
    tasks: tuple[str, ...] = Field(TASKS, min_length=1, description="evaluation tasks (§2)")
    temperature: float = Field(
        0.7, ge=0.0, le=2.0, description="persona agent temperature (the authors' code: 0.9)"
    )
    examples_temperature: float | None = Field(
        None,
        ge=0.0,
        le=2.0,
        description="score examples' temperature (default: sampled at 0.9 as in §4.1; "
        "the authors' code: 0)",
    )
    grading_batch: int = Field(
        1,
        ge=1,
        le=10,
        description="answers per evaluator request (1: one each; the authors' code: 5)",
    )
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
        if self.environments_file is not None and self.environments != "shipped":
            raise ValueError("give --environments or --environments-file, not both")
        if self.pipeline == "static" and self.environments != "shipped":
            raise ValueError("the static pipeline has no settings pool: drop --environments")
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


@register_scenario
class PersonaGymScenario(Scenario):
    name = "persona-gym"
    summary = "PersonaGym: personas answer questions in fitting settings; judges score them"
    smoke_params: ClassVar[dict[str, int]] = {
        "n_personas": 1,
        "n_environments": 1,
        "questions_per_task": 1,
    }
    Params = PersonaGymParams
    roles: ClassVar[dict[str, Role]] = {
        "persona": Role("the persona agent under evaluation", reply_tokens=200),  # in character
        "reasoner": Role(
            "settings selection and question generation (§3.2)",
            reply_tokens=300,  # settings, or a JSON list of questions
        ),
        "evaluator": Role(
            "the evaluator ensemble (two or more models, §3.2)",
            min_models=2,
            max_models=None,
            not_played_by=("persona",),
            scorer=True,
            reply_tokens=120,  # a short justification, then the score
        ),
        "examples": Role(
            "the score-example writer (§3.2; the paper's GPT-4o, not the evaluated model)",
            must_name=True,
            scorer_input=True,
            reply_tokens=400,  # five example answers, one a score
        ),
        "refusal": Role(
            "the refusal judge: whether each answer the grammar leaves is out of persona, "
            "seeing the persona (an evaluator's model is the natural one; unbound: those "
            "answers are counted not judged)",
            not_played_by=("persona",),
            optional=True,
            scorer=True,
            reply_tokens=40,  # out of persona or not, and why
        ),
    }
    scores = EVALUATOR_SCORES
    params: PersonaGymParams

    # --- inputs ------------------------------------------------------------------------------

    def prepare(self) -> None:
        self._inputs = load_gym_inputs(self.params)

    def rounds(self) -> int:
        return len(STAGES[self.params.pipeline])

    # --- setup -------------------------------------------------------------------------------

    def setup(self, sim: Simulation) -> None:
        p = self.params
        inputs = self._inputs
        self.gym = PersonaGym(sim, inputs.pool, p.tasks)
        self.tasks = GymTasks(
            self.prompts, p.max_repairs, p.temperature, p.scripted_fidelity, p.examples_temperature
        )
        self.personas = [
            PersonaAgent(sim, Persona(f"p{i:03d}", {"description": text}, {}))
            for i, text in enumerate(inputs.descriptions, 1)
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
        self.refusal_judge = (
            ResearcherAgent(sim, "refusal-judge", role="refusal judge (out of persona)")
            if sim.roles.get("refusal")
            else None
        )
        if p.pipeline == "static":
            for persona in self.personas:
                self._pose_benchmark(persona)
        if inputs.human is not None:
            sim.emit("gym.human_scores", {"rows": inputs.human})

    def _pose_benchmark(self, persona: PersonaAgent) -> None:
        questions = self._inputs.benchmark[_description(persona)]
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
        elif self.params.grading_batch == 1:
            work = {
                f"{p.agent_id}/{_slug(q.task)}/q{q.index}": (lambda p=p, q=q: self._scene(p, q))
                for p in self.personas
                for task in self.params.tasks
                for q in self.gym.questions.get((p.agent_id, task), ())
            }
        else:
            work = {
                f"{p.agent_id}/{_slug(task)}/b{k}": (lambda p=p, b=batch: self._batch(p, b))
                for p in self.personas
                for task in self.params.tasks
                for k, batch in enumerate(self._batches(p, task), 1)
            }
        await sim.concurrently(work)

    async def _select(self, persona: PersonaAgent) -> None:
        gym, about = self.gym, _description(persona)
        task = self.tasks.selection(
            about, gym.pool, self.params.n_environments, gym.check_selection,
            {"persona": persona.agent_id},
        )  # fmt: skip
        decision = await self.selector.decide(task)
        if decision.ok:  # a failure is logged as decision.failed; the persona is not placed
            self.gym.place(persona, decision.value)

    async def _generate(self, persona: PersonaAgent, task: str) -> None:
        decision = await self.generator.decide(
            self.tasks.questions(
                _description(persona), task, self.gym.placements[persona.agent_id],
                self.params.questions_per_task, self.gym.check_questions,
                {"persona": persona.agent_id, "gym_task": task},
            )
        )  # fmt: skip
        if decision.ok:
            posed = [
                GymQuestion(task, i, q["setting"], q["question"])
                for i, q in enumerate(decision.value, 1)
            ]
            self.gym.pose(persona, task, posed, source="generated")

    async def _scene(self, persona: PersonaAgent, question: GymQuestion) -> None:
        """Answer, score examples, then every evaluator; a failed step ends the scene."""
        answered = await self._answered(persona, question)
        if answered is None:
            return
        answer, examples = answered
        about, q = _description(persona), question
        for member, evaluator in enumerate(self.evaluators):
            await evaluator.decide(
                self.tasks.evaluation(
                    about, q.task, q.text, answer, examples, member,
                    {**q.scene(persona.agent_id), "evaluator": evaluator.agent_id},
                )
            )  # fmt: skip

    async def _answered(
        self, persona: PersonaAgent, q: GymQuestion
    ) -> tuple[str, dict[str, str]] | None:
        """The persona's answer and the score examples, or None where either failed."""
        about, scene = _description(persona), q.scene(persona.agent_id)
        answer = await persona.decide(self.tasks.answer(about, q.task, q.text, q.index, scene))
        if not answer.ok:
            return None
        await self._read_refusal(persona, q, answer.value)
        examples = await self.example_writer.decide(
            self.tasks.examples(about, q.task, q.text, scene)
        )
        return (answer.value, examples.value) if examples.ok else None

    async def _read_refusal(self, persona: PersonaAgent, q: GymQuestion, answer: str) -> None:
        """Whether the answer steps out of the persona: the grammar's mark, else the bound
        refusal judge's verdict (or its unreadable reply), logged as a `reading.made` of the
        reader "refusal" with what produced it. With no judge bound, an answer the grammar
        does not mark has no reading: the metrics count it "not judged"."""
        about, scene = _description(persona), q.scene(persona.agent_id)
        reading = grammar_reading(answer, about)
        if not reading.ok:
            if self.refusal_judge is None:
                return
            task = self.tasks.refusal(about, q.text, answer, scene)
            verdict = await self.refusal_judge.decide(task)
            reading = judge_reading(verdict.value if verdict.ok else None, verdict.error)
        persona.model.record_reading(
            persona.agent_id, "refusal", answer, reading,
            persona=about, gym_task=q.task, question=q.index,
        )  # fmt: skip

    def _batches(self, persona: PersonaAgent, task: str) -> list[tuple[GymQuestion, ...]]:
        """The task's questions in consecutive groups of `grading_batch`, as the authors'
        `score_answers` groups them."""
        questions = self.gym.questions.get((persona.agent_id, task), ())
        size = self.params.grading_batch
        return [questions[i : i + size] for i in range(0, len(questions), size)]

    async def _batch(self, persona: PersonaAgent, batch: tuple[GymQuestion, ...]) -> None:
        """Answer and score examples per question, then each evaluator grades the answered
        questions of the batch in one request; a failed step leaves its question out."""
        answered = [(q, await self._answered(persona, q)) for q in batch]
        graded = [(q, a) for q, a in answered if a is not None]
        for member in range(len(self.evaluators)):
            await self._grade(persona, graded, member)

    async def _grade(
        self,
        persona: PersonaAgent,
        graded: list[tuple[GymQuestion, tuple[str, dict[str, str]]]],
        member: int,
    ) -> None:
        """One evaluator grades the batch; the usable scores of its reply are kept and only the
        answers whose evaluation could not be read are asked again, as a smaller batch, at
        most `max_repairs` times (each request is its own decision, `partial_reask` k)."""
        evaluator, about = self.evaluators[member], _description(persona)
        for attempt in range(self.params.max_repairs + 1):
            if not graded:
                return
            details = {
                "persona": persona.agent_id,
                "gym_task": graded[0][0].task,
                "questions": [q.index for q, _ in graded],
                "settings": [q.setting for q, _ in graded],
                "evaluator": evaluator.agent_id,
                **({"partial_reask": attempt} if attempt else {}),
            }
            items = [(q.text, answer, examples) for q, (answer, examples) in graded]
            decision = await evaluator.decide(
                self.tasks.evaluation_batch(about, graded[0][0].task, items, member, details)
            )
            if not decision.ok:
                return
            graded = [graded[i] for i in unusable(decision.value)]

    # --- metrics and reports -----------------------------------------------------------------

    metrics = ScenarioMetrics(
        compute=gym_metrics,
        block=GymMetricsBlock,
        report=report_lines,
        write_reports=write_gym_reports,
        summary_rows=summary_rows,
        write_sweep_reports=write_sweep_reports,
        summary_counts=SUMMARY_COUNTS,
    )


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _description(persona: PersonaAgent) -> str:
    return str(persona.persona.attributes["description"])
