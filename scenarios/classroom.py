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
judge compares the two (Degree of Contrast, Table 4, scored 1–3). Metrics (§2.2, §4): accuracy of
low and high and its change against the no-persona baseline per strategy and race (Tables 1, 2),
mean DoC, the order effect (Table 5), the distribution of the tagged low-performance comments
(1)–(4) (Table 3), and the accuracy change when a race is added under zero-shot (Figure 3), each
averaged over repetitions with its SD.

A missing `Final Answer:` is graded wrong and counted; an unusable judge score is re-asked, then
recorded as a failure and left out of the mean DoC (counted). Choices where the paper is silent
are listed in docs/classroom.md. The texts sent are the prompt pack `packs/classroom.yaml`
(each with its provenance); the answers are read by `agents.classroom_answers`; the metrics,
tables and Figure 3 are `analysis.classroom`'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
from pydantic import Field, field_validator, model_validator

from personasim.agents import DecisionTask, Persona, PersonaAgent, ResearcherAgent
from personasim.agents.classroom_answers import (
    ContrastScore,
    Refinement,
    StudentAnswer,
    parse_judge_score,
    parse_refinement,
    parse_response,
    read_answer,
    read_judge_score,
    read_refinement,
)
from personasim.analysis import classroom as analysis
from personasim.analysis.classroom import (
    LEVELS,
    ORDERS,
    RACE_NAMES,
    RACES,
    STRATEGIES,
    Cell,
    cells_of,
    doc_pairs,
)
from personasim.environments import (
    Classroom,
    Grade,
    GradedBy,
    WordProblem,
    extract_final_answer,
    load_word_problems,
    sample_problems,
)
from personasim.environments.gsm8k import shipped_problems
from personasim.simulation import (
    ChatRequest,
    Message,
    Role,
    Scenario,
    ScenarioError,
    ScenarioParams,
    SimAgent,
    Simulation,
    read_input,
    register_scenario,
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


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


def _known(names: tuple[str, ...], allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; choose from {', '.join(allowed)}")
    if len(set(names)) != len(names):
        raise ValueError(f"each {what[:-1]} may appear once, got {','.join(names)}")
    return names


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

    @field_validator("strategies")
    @classmethod
    def _strategies(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return _known(names, STRATEGIES, "strategies")

    @field_validator("races")
    @classmethod
    def _races(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return _known(names, RACES, "races")

    @field_validator("orders")
    @classmethod
    def _orders(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return _known(names, ORDERS, "orders")

    @model_validator(mode="after")
    def _two_stage_needs_a_race(self) -> ClassroomParams:
        if "two-stage" in self.strategies and set(self.races) <= {"none"}:
            raise ValueError("two-stage rewrites into a racial persona: add a race (AA, WA, HS)")
        return self


def cells(params: ClassroomParams) -> list[Cell]:
    """Every persona cell the parameters ask for (two-stage only with a race)."""
    return cells_of(params.strategies, params.races, params.orders)


def arrange(instruction: str, content: str, order: str) -> str:
    """Instruction then question ("before", the main setting) or question first (C.1)."""
    return f"{instruction}\n\n{content}" if order == "before" else f"{content}\n\n{instruction}"


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------


@register_scenario
class ClassroomScenario(Scenario):
    name = "classroom"
    summary = "high vs low performing student personas on GSM8K: accuracy, DoC (seed 000, REVERSO)"
    Params = ClassroomParams
    params: ClassroomParams
    roles: ClassVar[dict[str, Role]] = {
        "student": Role("the model under study: no-persona and student-persona answers"),
        "judge": Role("the Degree-of-Contrast judge (Table 4; GPT-4o in the paper)"),
    }

    def rounds(self) -> int:
        return self.params.repetitions

    def prepare(self) -> None:
        p = self.params
        self._bank = _load_questions(p.question_file)
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
                student = PersonaAgent(sim, _student_persona(level, race))
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

    def _reminder(self, name: str, error: str) -> str:
        """The re-ask after an unusable answer (the empty-answer one names no error)."""
        if name == "empty_reminder":
            return self.prompts.render(name)
        return self.prompts.render(name, error=error)

    # --- one unit of work ---------------------------------------------------------------------

    async def _baseline(self, problem: WordProblem, repetition: int) -> None:
        labels = {"strategy": "none", "race": "none", "order": "none", "level": "none"}
        prompt = self.prompts.render("no_persona", question=problem.question)
        task = self._answer_task(problem, labels, repetition, prompt, "answer", final=True)
        decision = await self.baseline.decide(task)
        if decision.ok:  # Figure 2's no-persona prompt asks for no 'Final Answer:' line
            self._grade(self.baseline, problem, decision.value, labels, repetition, "last_number")

    async def _cell(self, cell: Cell, problem: WordProblem, repetition: int) -> None:
        """High answer, low answer (each graded), then the judge compares them."""
        answers: dict[str, tuple[str, Grade]] = {}
        for level in LEVELS:
            student = self.students[(level, cell.race)]
            labels = {"strategy": cell.strategy, "race": cell.race, "order": cell.order}
            labels["level"] = level
            response = await self._respond(student, cell, problem, labels, repetition)
            if response is not None:
                grade = self._grade(student, problem, response, labels, repetition)
                answers[level] = (response, grade)
        if len(answers) == len(LEVELS):
            await self.judge.decide(self._judge_task(cell, problem, answers, repetition))

    async def _respond(
        self,
        student: PersonaAgent,
        cell: Cell,
        problem: WordProblem,
        labels: dict[str, str],
        repetition: int,
    ) -> str | None:
        """The student's final response under the cell's strategy (None: a failed decision)."""
        level = labels["level"]
        first_race = "none" if cell.strategy == "two-stage" else cell.race
        instruction = self.persona_instruction(level, first_race, cell.strategy == "one-shot")
        prompt = arrange(instruction, problem.question, cell.order)
        single = cell.strategy in ("zero-shot", "one-shot")
        first = self._answer_task(problem, labels, repetition, prompt, "answer", final=single)
        decision = await student.decide(first)
        if not decision.ok or single:
            return decision.value
        previous = extract_final_answer(decision.value)
        if cell.strategy == "self-refine":
            refined = await student.decide(
                self._refine_task(
                    first.request, decision.value, problem, labels, repetition, previous
                )
            )
            return refined.value["revised_response"] if refined.ok else None
        rewritten = await student.decide(
            self._rewrite_task(decision.value, problem, labels, repetition, previous)
        )
        return rewritten.value

    def _grade(
        self,
        agent: SimAgent,
        problem: WordProblem,
        response: str,
        labels: dict[str, str],
        repetition: int,
        graded_by: GradedBy = "final_answer",
    ) -> Grade:
        return self.classroom.grade(
            agent, problem.id, response, graded_by, repetition=repetition, **labels
        )

    # --- decision tasks -----------------------------------------------------------------------

    def _answer_task(
        self,
        problem: WordProblem,
        labels: dict[str, str],
        repetition: int,
        prompt: str,
        stage: str,
        final: bool,
    ) -> DecisionTask:
        level, race = labels["level"], labels["race"]
        request = ChatRequest(
            messages=(Message(role="user", content=prompt),),
            temperature=self.params.temperature,
            sample_index=_sample_index(repetition, labels["strategy"], race),
            task="classroom.answer",
            hints={
                "level": None if level == "none" else level,
                "race": None if race == "none" else race,
                "strategy": labels["strategy"],
                "gold": problem.gold,
            },
        )
        return self._student_task(
            request, parse_response, problem, labels, repetition, stage, final
        )

    def _refine_task(
        self,
        first: ChatRequest,
        first_reply: str,
        problem: WordProblem,
        labels: dict[str, str],
        repetition: int,
        previous: float | None,
    ) -> DecisionTask:
        follow_up = self.prompts.render("refine" if labels["race"] == "none" else "refine_race")
        request = first.with_reply(first_reply, follow_up).model_copy(
            update={"task": "classroom.refine", "hints": {**first.hints, "previous": previous}}
        )
        return self._student_task(
            request, parse_refinement, problem, labels, repetition, "refine", True
        )

    def _rewrite_task(
        self,
        stage1_reply: str,
        problem: WordProblem,
        labels: dict[str, str],
        repetition: int,
        previous: float | None,
    ) -> DecisionTask:
        prompt = arrange(self.rewrite_instruction(labels["race"]), stage1_reply, labels["order"])
        request = ChatRequest(
            messages=(Message(role="user", content=prompt),),
            temperature=self.params.temperature,
            sample_index=_sample_index(repetition, labels["strategy"], labels["race"]),
            task="classroom.rewrite",
            hints={
                "level": labels["level"],
                "race": labels["race"],
                "gold": problem.gold,
                "previous": previous,
            },
        )
        return self._student_task(
            request, parse_response, problem, labels, repetition, "rewrite", True
        )

    def _student_task(
        self,
        request: ChatRequest,
        parse: Callable[[str], Any],
        problem: WordProblem,
        labels: dict[str, str],
        repetition: int,
        stage: str,
        final: bool,
    ) -> DecisionTask:
        refine = stage == "refine"
        reminder = "refine_reminder" if refine else "empty_reminder"
        return DecisionTask(
            name=request.task,
            role="student",
            request=request,
            parse=parse,
            reminder=lambda error: self._reminder(reminder, error),
            schema=Refinement if refine else StudentAnswer,
            read=read_refinement if refine else read_answer,
            max_repairs=self.params.max_repairs,
            details={
                **labels,
                "question_id": problem.id,
                "repetition": repetition,
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
    ) -> DecisionTask:
        (high, high_grade), (low, low_grade) = answers["high"], answers["low"]
        request = ChatRequest(
            messages=(
                Message(
                    role="user",
                    content=self.prompts.render(
                        "judge", question=problem.question, high=high, low=low
                    ),
                ),
            ),
            temperature=JUDGE_TEMPERATURE,
            task="classroom.judge",
            hints={
                "high_correct": high_grade.correct,
                "low_correct": low_grade.correct,
                "low_response": low,
            },
        )
        return DecisionTask(
            name="classroom.judge",
            request=request,
            parse=parse_judge_score,
            reminder=lambda error: self.prompts.render("judge_reminder", error=error),
            schema=ContrastScore,
            read=read_judge_score,
            max_repairs=self.params.max_repairs,
            details={
                "strategy": cell.strategy,
                "race": cell.race,
                "order": cell.order,
                "question_id": problem.id,
                "repetition": repetition,
            },
            role="judge",
        )

    # --- metrics, report, tables, figure: analysis.classroom ----------------------------------

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        return analysis.classroom_metrics(events)

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return analysis.report_lines(metrics)

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        return analysis.write_reports(metrics, directory)

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        return analysis.summary_rows(metrics)


# ---------------------------------------------------------------------------------------------
# Helpers: questions, personas, sample indices
# ---------------------------------------------------------------------------------------------


def _load_questions(path: Path | None) -> list[WordProblem]:
    """The question bank, checked before the run directory exists."""
    if path is None:
        return shipped_problems()
    return read_input("--question-file", lambda: load_word_problems(path))


def _student_persona(level: str, race: str) -> Persona:
    attributes = {"performance_level": level}
    if race != "none":
        attributes["racial_background"] = RACE_NAMES[race]
    suffix = "" if race == "none" else f"-{race}"
    return Persona(
        id=f"student-{level}{suffix}", attributes=attributes, traits={"level": level, "race": race}
    )


def _sample_index(repetition: int, strategy: str, race: str) -> int:
    """Distinct per repetition, strategy and race, so repetitions, a self-refinement's first turn
    (the zero-shot prompt) and a two-stage stage 1 (the level-only prompt, the same for every
    race) are independent samples with their own cache and log entries."""
    return ((repetition - 1) * len(STRATEGIES) + STRATEGIES.index(strategy)) * len(
        RACES
    ) + RACES.index(race)
