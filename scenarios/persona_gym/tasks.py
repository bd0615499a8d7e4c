"""The decision tasks of PersonaGym (seed 002, §3.2): what each step sends and how it is read.

The scenario says who decides what and when; this module builds each request from the prompt
pack (`persona-gym.yaml` beside it, or `--prompts FILE`) at the paper's sampling (§4.1), so
the scenario file stays readable top to bottom. Agents cannot import environments, so the gym's
checks come in as callables and a question's scene as a plain dict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from personasim.agents.decision import DecisionTask, parse_nonempty
from personasim.agents.structured import format_instructions, json_task
from personasim.scenarios.persona_gym.answers import (
    Evaluation,
    PersonaAnswer,
    QuestionSet,
    ScoreExamples,
    SettingSelection,
    checked,
    parse_score,
    read_answer,
    read_score,
)
from personasim.scenarios.persona_gym.batch import (
    batch_format,
    batch_schema,
    parse_batch,
    read_batch,
)
from personasim.scenarios.persona_gym.refusals import RefusalVerdict, parse_verdict, read_verdict
from personasim.simulation import ChatRequest, Message
from personasim.simulation.llm.prompts import PromptPack

__all__ = [
    "EVALUATOR_TEMPERATURE",
    "REFUSAL_TEMPERATURE",
    "SELECTION_SAMPLING",
    "GymTasks",
    "task_key",
]

SELECTION_SAMPLING = {"temperature": 0.9, "top_p": 0.9}
"""§4.1: environment selection and question generation at temperature and top-p 0.9."""

EVALUATOR_TEMPERATURE = 0.0
"""§4.1: evaluators at temperature 0."""

REFUSAL_TEMPERATURE = 0.0
"""The refusal judge answers greedily: one answer, one verdict."""


def task_key(task: str) -> str:
    """The task's suffix in the prompt pack's entry names (`evaluation.expected_action`)."""
    return task.lower().replace(" ", "_")


@dataclass(frozen=True)
class GymTasks:
    """Builds PersonaGym's decision tasks. `examples_temperature`: None samples the score
    examples as the paper says (§4.1, temperature and top-p 0.9); 0 is the authors' code."""

    prompts: PromptPack
    max_repairs: int
    persona_temperature: float
    fidelity: float
    examples_temperature: float | None = None

    def selection(
        self,
        persona: str,
        pool: Sequence[str],
        count: int | None,
        check: Callable[[Sequence[str], int | None], tuple[str, ...]],
        details: dict[str, Any],
    ) -> DecisionTask:
        """`count` settings of the pool, or as many as the model judges relevant (None)."""
        entry = "selection" if count is not None else "selection_free"
        prompt = self.prompts.render(
            entry,
            persona=persona,
            pool="\n".join(f"- {s}" for s in pool),
            **({"count": count} if count is not None else {}),
            format_instructions=format_instructions(SettingSelection),
        )
        hints = {"persona": persona, "pool": list(pool), "count": count}
        return self._reasoner(
            "persona_gym.select",
            prompt,
            hints,
            SettingSelection,
            read=lambda a: list(checked(check, a.settings, count)),
            details=details,
        )

    def questions(
        self,
        persona: str,
        task: str,
        settings: Sequence[str],
        count: int,
        check: Callable[..., list[dict[str, str]]],
        details: dict[str, Any],
    ) -> DecisionTask:
        prompt = self.prompts.render(
            "questions",
            persona=persona,
            settings=", ".join(settings),
            task=task,
            description=self.prompts.render(f"description.{task_key(task)}"),
            criteria=self.prompts.render(f"criteria.{task_key(task)}"),
            count=count,
            format_instructions=format_instructions(QuestionSet),
        )
        hints = {"persona": persona, "task": task, "settings": list(settings), "count": count}
        return self._reasoner(
            "persona_gym.questions",
            prompt,
            hints,
            QuestionSet,
            read=lambda a: checked(
                check, [(q.setting, q.question) for q in a.questions], settings, count
            ),
            details=details,
        )

    def answer(
        self, persona: str, task: str, question: str, index: int, details: dict[str, Any]
    ) -> DecisionTask:
        system = self.prompts.render("persona_system", persona=persona)
        return DecisionTask(
            name="persona_gym.answer",
            request=ChatRequest(
                messages=(
                    Message(role="system", content=system),
                    Message(role="user", content=question),
                ),
                temperature=self.persona_temperature,
                sample_index=index,  # a repeated question is still its own sample
                task="persona_gym.answer",
                hints={"persona": persona, "task": task, "fidelity": self.fidelity},
            ),
            parse=parse_nonempty,
            reminder=lambda error: self.prompts.render("answer_reminder"),
            max_repairs=self.max_repairs,
            details=details,
            schema=PersonaAnswer,
            read=read_answer,
        )

    def examples(
        self, persona: str, task: str, question: str, details: dict[str, Any]
    ) -> DecisionTask:
        prompt = self.prompts.render(
            "examples",
            rubric_outline=self.outline(task),
            persona=persona,
            question=question,
            format_instructions=format_instructions(ScoreExamples),
        )
        sampling = (
            SELECTION_SAMPLING
            if self.examples_temperature is None
            else {"temperature": self.examples_temperature}
        )
        return self._reasoner(
            "persona_gym.examples",
            prompt,
            {"persona": persona, "task": task},
            ScoreExamples,
            read=ScoreExamples.model_dump,
            details=details,
            role="examples",
            sampling=sampling,
        )

    def evaluation(
        self,
        persona: str,
        task: str,
        question: str,
        response: str,
        examples: dict[str, str],
        member: int,
        details: dict[str, Any],
    ) -> DecisionTask:
        """The evaluator `member` (0-based) scores one answer against the task's rubric."""
        prompt = self.rubric(persona, task, question, response, examples)
        return DecisionTask(
            name="persona_gym.evaluate",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=EVALUATOR_TEMPERATURE,
                task="persona_gym.evaluate",
                hints={
                    "persona": persona,
                    "task": task,
                    "question": question,
                    "response": response,
                    "evaluator": member + 1,
                },
            ),
            parse=parse_score,
            reminder=lambda error: self.prompts.render("score_reminder", error=error),
            max_repairs=self.max_repairs,
            schema=Evaluation,
            read=read_score,
            details=details,
            role="evaluator",
            member=member,
        )

    def refusal(
        self, persona: str, question: str, answer: str, details: dict[str, Any]
    ) -> DecisionTask:
        """The refusal judge (`--role refusal`) reads whether `answer` is out of persona, seeing
        the persona's description and the question (pack entry `refusal_judge`)."""
        prompt = self.prompts.render(
            "refusal_judge", persona=persona, question=question, answer=answer
        )
        return DecisionTask(
            name="persona_gym.refusal",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=REFUSAL_TEMPERATURE,
                task="persona_gym.refusal",
                hints={"persona": persona, "question": question, "answer": answer},
            ),
            parse=parse_verdict,
            reminder=lambda error: self.prompts.render("refusal_reminder", error=error),
            max_repairs=self.max_repairs,
            schema=RefusalVerdict,
            read=read_verdict,
            details=details,
            role="refusal",
        )

    def evaluation_batch(
        self,
        persona: str,
        task: str,
        graded: Sequence[tuple[str, str, dict[str, str]]],
        member: int,
        details: dict[str, Any],
    ) -> DecisionTask:
        """The evaluator `member` scores several answers (question, response, examples) of one
        persona and task in one request, as the authors' code does (`--grading-batch`)."""
        n = len(graded)
        rubrics = "\n\n".join(
            f"({i}) {self.rubric(persona, task, q, r, e)}" for i, (q, r, e) in enumerate(graded, 1)
        )
        prompt = self.prompts.render(
            "evaluation_batch", count=n, format=batch_format(n), rubrics=rubrics
        )
        return DecisionTask(
            name="persona_gym.evaluate_batch",
            request=ChatRequest(
                messages=(
                    Message(role="system", content=self.prompts.render("evaluation_batch_system")),
                    Message(role="user", content=prompt),
                ),
                temperature=EVALUATOR_TEMPERATURE,
                task="persona_gym.evaluate_batch",
                hints={
                    "persona": persona,
                    "task": task,
                    "answers": [{"question": q, "response": r} for q, r, _ in graded],
                    "evaluator": member + 1,
                },
            ),
            parse=lambda reply: parse_batch(reply, n),
            reminder=lambda error: self.prompts.render("batch_reminder", error=error, count=n),
            max_repairs=self.max_repairs,
            schema=batch_schema(n),
            read=lambda answer: read_batch(answer, n),
            details=details,
            role="evaluator",
            member=member,
        )

    def rubric(
        self, persona: str, task: str, question: str, response: str, examples: dict[str, str]
    ) -> str:
        """The task's completed rubric for one answer (what an evaluator is sent about it)."""
        return self.prompts.render(
            f"evaluation.{task_key(task)}",
            rubric_outline=self.outline(task),
            examples="\n".join(
                self.prompts.render("score_example", score=i, example=examples[f"score_{i}"])
                for i in range(1, 6)
            ),
            persona=persona,
            question=question,
            response=response,
        )

    def outline(self, task: str) -> str:
        """The task's rubric outline (§3.2: its description and scoring guidelines)."""
        description = self.prompts.render(f"description.{task_key(task)}")
        return self.prompts.render(f"outline.{task_key(task)}", description=description)

    def _reasoner(
        self,
        name: str,
        prompt: str,
        hints: dict[str, Any],
        schema: type[BaseModel],
        read: Callable[[Any], Any],
        details: dict[str, Any],
        role: str = "reasoner",
        sampling: dict[str, float] = SELECTION_SAMPLING,
    ) -> DecisionTask:
        """A reasoner's JSON answer; its prompt asks for `schema` in text, and a structured
        format sends the same schema."""
        return json_task(
            name,
            ChatRequest(
                messages=(Message(role="user", content=prompt),),
                **sampling,
                task=name,
                hints=hints,
            ),
            schema,
            read,
            lambda error: self.prompts.render("json_reminder", error=error),
            max_repairs=self.max_repairs,
            details=details,
            role=role,
        )
