"""`classroom`: can the model play a student with reversed (low) math performance? (seed 000)

REVERSO (Senthil Kumar, Yan et al.): middle-school student personas of high and low math
performance answer GSM8K word problems (§2.1), with and without a racial background (AA, WA,
HS; Appendix A.1), under the prompting strategies of §3 (Figures 2 and 5): no persona (the
baseline), zero-shot, one-shot (a demonstration per level and per level × race, Appendix A.3),
self-refinement (a second turn of reflection and revision) and two-stage (level first, then a
rewrite in the racial persona). The persona instructions come before the question (the main
setting) or after it (Appendix C.1).

Every repetition is one round; one unit of work is one cell (strategy × race × order) on one
question: the high student answers, then the low one, each graded by the `Classroom`, then the
judge compares the two (Degree of Contrast, Table 4, 1–3). Metrics, tables and Figure 3 (§2.2,
§4) are in `metrics.py` and `tables.py` beside this file; the texts are a prompt pack
(`classroom.yaml` beside it by default); answers are read by `answers.py`; choices the paper
leaves open: docs/classroom.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, ValidationInfo, field_validator, model_validator

from personasim.agents import DecisionTask, PersonaAgent, ResearcherAgent
from personasim.environments import (
    Classroom,
    Grade,
    WordProblem,
    follows_format,
    load_word_problems,
    read_answer,
    sample_problems,
)
from personasim.environments.classroom import READER_NAME as MATH_READER
from personasim.environments.classroom.gsm8k import shipped_problems
from personasim.scenarios.classroom import answers as parsing
from personasim.scenarios.classroom.judging import JUDGE_SCORES, JUDGE_TASK, SWAPPED_TASK
from personasim.scenarios.classroom.metrics import (
    LEVELS,
    ORDERS,
    RACES,
    STRATEGIES,
    Cell,
    ClassroomMetrics,
    cells_of,
    classroom_metrics,
)
from personasim.scenarios.classroom.reports import (
    SUMMARY_COUNTS,
    report_lines,
    summary_rows,
    write_all_reports,
)
from personasim.scenarios.classroom.students import sample_index, student_persona
from personasim.scenarios.classroom.tables import write_sweep_reports
from personasim.scenarios.classroom.validation import doc_pairs
from personasim.simulation import (
    ChatRequest,
    Message,
    Outcome,
    Role,
    Scenario,
    ScenarioError,
    ScenarioMetrics,
    ScenarioParams,
    SimAgent,
    Simulation,
    Twins,
    read_input,
    read_with_role,
    register_scenario,
    with_reader_role,
)

__all__ = [
    "ORDERS",
    "RACES",
    "STRATEGIES",
    "ClassroomParams",
    "ClassroomScenario",
    "arrange",
    "cells",
    "doc_pairs",
]

DEFAULT_QUESTIONS = 100
"""§4.1: a random subset of 100 questions."""
JUDGE_TEMPERATURE = 0.0
"""The paper does not give the judge's temperature; a judge should be as repeatable as it can."""


class ClassroomParams(ScenarioParams):
    question_file: Path | None = Field(
        None, description="GSM8K-format JSONL (default: the 31 shipped word problems)"
    )
    n_questions: int | None = Field(
        None, ge=1, description="questions sampled (default: all, at most 100 as in §4.1)"
    )
    repetitions: int = Field(3, ge=1, le=10, description="repetitions averaged (§4.1: 3)")
    strategies: tuple[str, ...] = Field(STRATEGIES, min_length=1, description="strategies (§3)")
    races: tuple[str, ...] = Field(RACES, min_length=1, description="races (none = level only)")
    orders: tuple[str, ...] = Field(
        ORDERS, min_length=1, description="persona instructions before/after the question (C.1)"
    )
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="students' temperature (§4.1)")
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    swap_order: bool = Field(
        False,
        description="also ask the judge each comparison with the low answer first (position bias)",
    )
    reader_confirms: bool = Field(
        False,
        description="the bound reader role also re-reads the answers the rules read: a value "
        "stands only where both agree (docs/readers.md)",
    )

    @field_validator("strategies", "races", "orders")
    @classmethod
    def _known(cls, names: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        what = info.field_name or ""
        allowed = {"strategies": STRATEGIES, "races": RACES, "orders": ORDERS}[what]
        unknown = [n for n in names if n not in allowed]
        if unknown:
            raise ValueError(f"unknown {what} {unknown}; choose from {', '.join(allowed)}")
        if len(set(names)) != len(names):
            raise ValueError(f"each {what[:-1]} may appear once, got {','.join(names)}")
        return names

    @model_validator(mode="after")
    def _two_stage_needs_a_race(self) -> ClassroomParams:
        if "two-stage" in self.strategies and set(self.races) <= {"none"}:
            raise ValueError("two-stage rewrites into a racial persona: add a race (AA, WA, HS)")
        return self


def cells(params: ClassroomParams) -> list[Cell]:
    """Every persona cell the parameters ask for (two-stage only with a race)."""
    return cells_of(params.strategies, params.races, params.orders)


@dataclass(frozen=True)
class _Unit:
    """One answer's question, the labels its events carry (strategy, race, order, level) and
    its repetition."""

    problem: WordProblem
    labels: dict[str, str]
    repetition: int


def arrange(instruction: str, content: str, order: str) -> str:
    """Instruction then question ("before", the main setting) or question first (C.1)."""
    return f"{instruction}\n\n{content}" if order == "before" else f"{content}\n\n{instruction}"


GRADED = Outcome(
    "classroom.graded", "correct", ("strategy", "order"), ("question_id", "repetition")
)
"""Each answer's grade, paired over races for the same student level, question, strategy, order
and repetition (the race design's paired statistics; the races are the twins' levels)."""


@register_scenario
class ClassroomScenario(Scenario):
    name = "classroom"
    summary = "high- and low-performing students solve GSM8K problems: can a model play low?"
    smoke_params: ClassVar[dict[str, int]] = {"n_questions": 1, "repetitions": 1}
    Params = ClassroomParams
    params: ClassroomParams
    roles: ClassVar[dict[str, Role]] = {
        "student": Role(
            "the model under study: no-persona and student-persona answers",
            reply_tokens=250,  # a worked solution, step by step
        ),
        "judge": Role(
            "the DoC judge (Table 4; GPT-4o in the paper)",
            must_name=True,
            scorer=True,
            reply_tokens=150,  # a few sentences, then "Score: N"
        ),
        "reader": Role(
            "reads an answer no rule can read into its final number (docs/readers.md)",
            optional=True,
            reply_tokens=20,  # a number
        ),
    }
    scores = JUDGE_SCORES
    metrics = ScenarioMetrics(
        compute=classroom_metrics,
        block=ClassroomMetrics,
        report=report_lines,
        write_reports=write_all_reports,
        summary_rows=summary_rows,
        write_sweep_reports=write_sweep_reports,
        summary_counts=SUMMARY_COUNTS,
    )
    twins = Twins(
        (GRADED,),
        decisions=False,  # the answers are text; their grades are what is compared
    )

    def rounds(self) -> int:
        return self.params.repetitions

    def prepare(self) -> None:
        p = self.params
        self._bank = (  # checked before the run directory exists
            shipped_problems()
            if p.question_file is None
            else read_input("--question-file", lambda: load_word_problems(p.question_file))
        )
        self._n = p.n_questions or min(DEFAULT_QUESTIONS, len(self._bank))
        if self._n > len(self._bank):
            raise ScenarioError(
                f"--n-questions {self._n} is more than the {len(self._bank)} questions in "
                f"{p.question_file or 'the shipped set'}"
            )

    def setup(self, sim: Simulation) -> None:
        self.problems = sample_problems(self._bank, self._n, sim.rng)
        self.classroom = Classroom(sim, self.problems)
        self.students: dict[tuple[str, str], PersonaAgent] = {}
        for race in self.params.races:
            for level in LEVELS:
                student = PersonaAgent(sim, student_persona(level, race))
                student.move_to(self.classroom)
                self.students[(level, race)] = student
        self.baseline = ResearcherAgent(sim, "no-persona", role="no-persona baseline (Fig. 2)")
        self.baseline.move_to(self.classroom)
        self.judge = ResearcherAgent(sim, "judge", role="Degree-of-Contrast judge (Table 4)")

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        work: dict[str, Callable[[], Awaitable[None]]] = {}
        for problem in self.problems:
            if "none" in self.params.strategies:
                work[f"none/{problem.id}"] = lambda q=problem: self._baseline(q, round_index)
            for cell in cells(self.params):
                work[f"{cell.name}/{problem.id}"] = lambda c=cell, q=problem: self._cell(
                    c, q, round_index
                )
        await sim.concurrently(work)

    # --- prompts: Figures 2, 4 and 5 composed here, their words in the pack --------------------

    def persona_instruction(self, level: str, race: str, one_shot: bool) -> str:
        """The zero-shot or one-shot instruction of Figure 2 (race "none") or Figure 5."""
        values = {"level": level, "level_description": self.prompts.render(f"level_{level}")}
        if one_shot:
            suffix = "" if race == "none" else f"_{race}"
            values["demonstration"] = self.prompts.render(f"demonstration_{level}{suffix}")
        strategy = "one_shot" if one_shot else "zero_shot"
        if race == "none":
            return self.prompts.render(strategy, **values)
        return self.prompts.render(f"{strategy}_race", **values, **self._race(race))

    def rewrite_instruction(self, race: str) -> str:
        """Two-stage prompting, stage 2 (Figure 2)."""
        return self.prompts.render("rewrite", **self._race(race))

    def _race(self, race: str) -> dict[str, str]:
        """A race's name and Figure 4 definition, and the article its name needs."""
        name = self.prompts.render(f"race_name_{race}")
        article = "an" if name[:1].upper() in ("A", "E", "I", "O", "U") else "a"
        definition = self.prompts.render(f"race_definition_{race}")
        return {"article": article, "race_name": name, "race_definition": definition}

    # --- one unit of work ---------------------------------------------------------------------

    async def _baseline(self, problem: WordProblem, repetition: int) -> None:
        labels = {"strategy": "none", "race": "none", "order": "none", "level": "none"}
        unit = _Unit(problem, labels, repetition)
        prompt = self.prompts.render("no_persona", question=problem.question)
        decision = await self.baseline.decide(self._answer_task(unit, prompt, final=True))
        if decision.ok:  # Figure 2's no-persona prompt asks for no format: compliance None
            await self._grade(self.baseline, unit, decision.value, None)

    async def _cell(self, cell: Cell, problem: WordProblem, repetition: int) -> None:
        """High answer, low answer (each graded), then the judge compares them."""
        answers: dict[str, tuple[str, Grade]] = {}
        for level in LEVELS:
            student = self.students[(level, cell.race)]
            labels = {"strategy": cell.strategy, "race": cell.race, "order": cell.order}
            unit = _Unit(problem, {**labels, "level": level}, repetition)
            answer = await self._respond(student, cell, unit)
            if answer is not None:
                response, compliant = answer
                grade = await self._grade(student, unit, response, compliant)
                answers[level] = (response, grade)
        if len(answers) == len(LEVELS):
            await self.judge.decide(self._judge_task(cell, problem, answers, repetition))
            if self.params.swap_order:
                swapped = self._judge_task(cell, problem, answers, repetition, swapped=True)
                await self.judge.decide(swapped)

    async def _respond(
        self, student: PersonaAgent, cell: Cell, unit: _Unit
    ) -> tuple[str, bool] | None:
        """The student's final response under the cell's strategy, and whether it kept the
        format the prompt asked for (None: a failed decision)."""
        first_race = "none" if cell.strategy == "two-stage" else cell.race
        one_shot = cell.strategy == "one-shot"
        instruction = self.persona_instruction(unit.labels["level"], first_race, one_shot)
        prompt = arrange(instruction, unit.problem.question, cell.order)
        single = cell.strategy in ("zero-shot", "one-shot")
        first = self._answer_task(unit, prompt, final=single)
        decision = await student.decide(first)
        if not decision.ok:
            return None
        if single:
            return decision.value, follows_format(decision.value)
        previous = read_answer(decision.value, unit.problem.question).value
        if cell.strategy == "self-refine":
            task = self._refine_task(unit, first.request, decision.value, previous)
            refined = await student.decide(task)
            if not refined.ok:
                return None
            revised = refined.value["revised_response"]
            return revised, refined.value.get("labelled", True) and follows_format(revised)
        rewritten = await student.decide(self._rewrite_task(unit, decision.value, previous))
        return (rewritten.value, follows_format(rewritten.value)) if rewritten.ok else None

    async def _grade(
        self, agent: SimAgent, unit: _Unit, response: str, compliant: bool | None
    ) -> Grade:
        """Grade as a careful grader reads; an answer no rule can read goes to the `reader`
        role when one is bound (an ambiguous one does not: choosing would be a guess); with
        `reader_confirms` it re-reads the others too, as a second reader (`confirmed_by_role`).
        `compliant`: the reply kept the asked format (None for the no-persona baseline)."""
        question = unit.problem.question
        reading = await with_reader_role(
            read_answer(response, question),
            lambda: read_with_role(
                agent.model, agent.agent_id, MATH_READER, response, {"problem": question}
            ),
            self.params.reader_confirms,
        )
        return self.classroom.grade(
            agent, unit.problem.id, response, compliant, reading,
            repetition=unit.repetition, **unit.labels,
        )  # fmt: skip

    # --- decision tasks -----------------------------------------------------------------------

    def _answer_task(self, unit: _Unit, prompt: str, final: bool) -> DecisionTask:
        level, race = unit.labels["level"], unit.labels["race"]
        hints = {
            "level": None if level == "none" else level,
            "race": None if race == "none" else race,
            "strategy": unit.labels["strategy"],
            "gold": unit.problem.gold,
        }
        request = self._student_request(unit, prompt, "classroom.answer", hints)
        return self._student_task(unit, request, "answer", final)

    def _refine_task(
        self, unit: _Unit, first: ChatRequest, first_reply: str, previous: float | None
    ) -> DecisionTask:
        follow_up = self.prompts.render(
            "refine" if unit.labels["race"] == "none" else "refine_race"
        )
        request = first.with_reply(first_reply, follow_up).model_copy(
            update={"task": "classroom.refine", "hints": {**first.hints, "previous": previous}}
        )
        return self._student_task(unit, request, "refine", True)

    def _rewrite_task(self, unit: _Unit, stage1_reply: str, previous: float | None) -> DecisionTask:
        labels = unit.labels
        prompt = arrange(self.rewrite_instruction(labels["race"]), stage1_reply, labels["order"])
        hints = {
            "level": labels["level"],
            "race": labels["race"],
            "gold": unit.problem.gold,
            "previous": previous,
        }
        request = self._student_request(unit, prompt, "classroom.rewrite", hints)
        return self._student_task(unit, request, "rewrite", True)

    def _student_request(
        self, unit: _Unit, prompt: str, task: str, hints: dict[str, Any]
    ) -> ChatRequest:
        return ChatRequest(
            messages=(Message(role="user", content=prompt),),
            temperature=self.params.temperature,
            sample_index=sample_index(
                unit.repetition, unit.labels["strategy"], unit.labels["race"]
            ),
            task=task,
            hints=hints,
        )

    def _student_task(
        self, unit: _Unit, request: ChatRequest, stage: str, final: bool
    ) -> DecisionTask:
        refine = stage == "refine"
        reminder = "refine_reminder" if refine else "empty_reminder"
        return DecisionTask(
            name=request.task,
            role="student",
            request=request,
            parse=parsing.parse_refinement if refine else parsing.parse_response,
            reminder=lambda error: self.prompts.render(reminder, error=error),  # empty: no ${error}
            schema=parsing.Refinement if refine else parsing.StudentAnswer,
            read=parsing.read_refinement if refine else parsing.read_answer,
            max_repairs=self.params.max_repairs,
            details={
                **unit.labels,
                "question_id": unit.problem.id,
                "repetition": unit.repetition,
                "stage": stage,
                "final": final,
            },
        )

    def _judge_task(
        self,
        cell: Cell,
        problem: WordProblem,
        answers: dict[str, tuple[str, Grade]],
        repetition: int,
        swapped: bool = False,
    ) -> DecisionTask:
        """The DoC comparison; `swapped`: the low answer in the first slot (`judge_swapped`,
        same labels), the same hints, so the scripted judge has no position bias."""
        (high, high_grade), (low, low_grade) = answers["high"], answers["low"]
        entry, task = ("judge_swapped", SWAPPED_TASK) if swapped else ("judge", JUDGE_TASK)
        prompt = self.prompts.render(entry, question=problem.question, high=high, low=low)
        request = ChatRequest(
            messages=(Message(role="user", content=prompt),),
            temperature=JUDGE_TEMPERATURE,
            task=task,
            hints={
                "high_correct": high_grade.correct,
                "low_correct": low_grade.correct,
                "low_response": low,
            },
        )
        return DecisionTask(
            name=task,
            request=request,
            parse=parsing.parse_judge_score,
            reminder=lambda error: self.prompts.render("judge_reminder", error=error),
            schema=parsing.ContrastScore,
            read=parsing.read_judge_score,
            max_repairs=self.params.max_repairs,
            details={**asdict(cell), "question_id": problem.id, "repetition": repetition},
            role="judge",
        )
