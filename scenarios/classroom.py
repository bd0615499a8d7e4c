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
are listed in docs/classroom.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any, ClassVar

import pandas as pd
from matplotlib.figure import Figure
from pydantic import BaseModel, Field, field_validator, model_validator

from personasim.agents import (
    DecisionParseError,
    DecisionTask,
    Persona,
    PersonaAgent,
    ResearcherAgent,
)
from personasim.analysis import (
    first_undefined,
    min_group_n,
    model_label,
    payloads,
    read_stat,
    rounded,
    save_figure,
    shown_stat,
    small_note,
    stat_fields,
    write_table,
)
from personasim.analysis.classroom import behaviour_distribution, behaviour_tags, mean_and_sd
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
    "DEMONSTRATIONS",
    "JUDGE_PROMPT",
    "LEVEL_DESCRIPTIONS",
    "RACE_DEFINITIONS",
    "STRATEGIES",
    "ClassroomParams",
    "ClassroomScenario",
    "ContrastScore",
    "Refinement",
    "StudentAnswer",
    "answer_text",
    "doc_pairs",
    "parse_judge_score",
    "parse_refinement",
    "read_answer",
    "read_judge_score",
    "read_refinement",
]

STRATEGIES = ("none", "zero-shot", "one-shot", "self-refine", "two-stage")
"""§3; "none" is the no-persona baseline; two-stage needs a race (it is for intersectional
simulation)."""
RACES = ("none", "AA", "WA", "HS")
"""Appendix A.1; "none" simulates the performance level only."""
ORDERS = ("before", "after")
"""Appendix C.1: persona instructions before the question (main setting) or after it."""
LEVELS = ("high", "low")
"""The high student answers first, then the low one; the judge compares them."""
TABLE_LEVELS = ("low", "high")
"""Column order of the tables (as in Tables 1, 2 and 5)."""
DEFAULT_QUESTIONS = 100
"""§4.1: a random subset of 100 questions."""
JUDGE_TEMPERATURE = 0.0
"""The paper does not give the judge's temperature; a judge should be as repeatable as it can."""

# ---------------------------------------------------------------------------------------------
# Prompts — every text the model sees in this scenario
# ---------------------------------------------------------------------------------------------

# Figure 1 (an image whose text the paper does not print): our descriptions of the two levels.
# The low one names the four behaviours of §4.2 / Table 3 and asks for comments tagged with
# their number, which is what the regex of Table 3 extracts ("(2) Second-guessing ...", as in
# the demonstrations of Figures 6–7). The templates add the closing full stop.
LEVEL_DESCRIPTIONS = {
    "high": (
        "You understand math concepts deeply and solve word problems quickly and accurately. "
        "Your reasoning is clear, well organised and efficient, you explain each step with "
        "confidence, and your calculations are correct"
    ),
    "low": (
        "You find math hard. When you solve a problem you show: (1) basic misconceptions and "
        "calculation errors; (2) second-guessing and doubt about your steps and your answer; "
        "(3) very basic step-by-step methods, such as counting on your fingers or drawing "
        "groups; (4) visible frustration or anxiety. Each time your answer shows one of these, "
        "add a short comment that starts with its number in parentheses, for example "
        '"(2) Second-guessing the subtraction"'
    ),
}

# Figure 4, verbatim: the IPEDS definitions (the templates add the closing full stop).
RACE_NAMES = {"AA": "African American", "WA": "White American", "HS": "Hispanic"}
RACE_DEFINITIONS = {
    "AA": "A person having origins in any of the black racial groups of Africa",
    "WA": "A person having origins in any of the original peoples of Europe, the Middle East, "
    "or North Africa",
    "HS": "A person of Cuban, Mexican, Puerto Rican, South or Central American, or other "
    "Spanish culture or origin, regardless of race",
}

# Figure 2, "No Persona", verbatim.
NO_PERSONA_PROMPT = Template(
    "Answer the question and give the final answer as a number: ${question}"
)

# Figure 2 (level only) and Figure 5 (with a race), verbatim apart from the template syntax:
# `who` is "a middle school student" or "an African American middle school student" (the paper
# writes "a [Racial Background]"; we use the article English needs), and `race` is
# " [Racial Background Description]." or empty. The question (or, after it, the instruction)
# is separated by a blank line.
IDENTITY = Template(
    "You are ${who} with ${level} performance on Math. ${level_description}.${race}"
)
DEMONSTRATION = Template(
    " Here is an example of how a student with this ${whom} would answer a question: "
    "${demonstration}."
)
INSTRUCTION = Template(
    "${identity}${demonstration} Adopt the identity of this persona. Answer the question while "
    "staying in strict accordance with the nature of this identity and provide the final answer "
    "as a number in the last sentence, following this exact format: 'Final Answer: {number}'."
)

# Figure 2 (level only) and Figure 5 (with a race), verbatim.
REFINE_PROMPT = (
    "Reflect on your previous response and critically evaluate whether it accurately aligns "
    "with the specified performance level. Assess whether the response fully captures the "
    "expected depth, complexity, and characteristics of the performance level. Identify any "
    "areas that need improvement and provide a detailed explanation for any inconsistencies or "
    "missing nuances. Based on your reflection, revise your previous response to ensure it "
    "accurately aligns with the specified performance level. Address any identified "
    "inconsistencies or missing nuances. Provide the final answer as a number in the last "
    "sentence, following this exact format: 'Reflection: {reflection} Revised Response: "
    "{new_response} Final Answer: {number}'"
)
REFINE_PROMPT_WITH_RACE = (
    "Reflect on your previous response and critically evaluate whether it accurately aligns "
    "with both the specified performance level and the racial group. First, assess whether the "
    "response fully captures the expected depth, complexity, and characteristics of the "
    "performance level. Then, separately evaluate whether it accurately and meaningfully "
    "represents the racial group, ensuring it reflects its perspectives, experiences, or "
    "characteristics appropriately. Identify any areas that need improvement and provide a "
    "detailed explanation for any inconsistencies or missing nuances. Based on your reflection, "
    "revise your previous response to ensure it accurately aligns with the specified "
    "performance level. Address any identified inconsistencies or missing nuances. Provide the "
    "final answer as a number in the last sentence, following this exact format: 'Reflection: "
    "{reflection} Revised Response: {new_response} Final Answer: {number}'"
)
REFINE_REMINDER = (
    "Your answer could not be used: {error}. Answer again in exactly this format: "
    "'Reflection: {{reflection}} Revised Response: {{new_response}} Final Answer: {{number}}'."
)

# Figure 2, two-stage prompting, stage 2 (stage 1 is the level-only zero-shot prompt).
REWRITE_PROMPT = Template(
    "You are ${who}. ${race_description}. Rewrite the following solution in a style that "
    "reflects the nature of your identity and give the final answer as a number in the last "
    "sentence, following this exact format: 'Final Answer: {number}'."
)

EMPTY_REMINDER = "Your answer was empty. Please answer the question."

# Table 4 (Appendix B) in our own words, keeping each level's criteria; the answer format is
# ours (the paper prints none).
JUDGE_PROMPT = Template("""\
You are comparing two answers to the same math question. One was written by a simulated \
middle school student with HIGH math performance, the other by a simulated student with LOW \
math performance. Judge how clearly the two differ in their problem-solving logic (clear and \
coherent, or unclear and fragmented) and in their behaviour (quick and confident, or hesitant \
and self-doubting), using this scale for the Degree of Contrast:

1 (No Contrast): the two answers take almost the same logical steps, with no meaningful \
difference in approach or struggle; the low-performance answer shows no difficulty at all.
2 (Moderate Contrast): the low-performance answer hesitates, is slightly unsure, pauses or \
double-checks steps, but shows no explicit confusion and no significant errors (all such \
answers belong here); the high-performance answer is sensibly structured and well thought out.
3 (Strong Contrast): the low-performance answer shows convincing, realistic struggle: repeated \
mistakes and trouble applying concepts, with clear and substantial re-thinking or \
re-calculation that leads to real confusion or errors. Minor hesitation, small doubts, brief \
pauses or simple re-checks are NOT enough for a 3. The high-performance answer is flawless, \
with advanced problem solving and clear explanations.

Question:
${question}

High-performance answer:
${high}

Low-performance answer:
${low}

Explain your judgement in a few sentences, then end with a line 'Score: N', where N is 1, 2 \
or 3.""")
JUDGE_REMINDER = "Your answer could not be used: {error}. End with a line 'Score: N' (1, 2 or 3)."

# Appendix A.3: our own demonstrations in the style of Figures 6–7 (questions not in the
# shipped set). Low examples show wrong logic, hesitation, tagged comments and a wrong final
# answer; high examples show clear reasoning and a right one. The race versions differ only
# in the student's voice: we avoid putting stereotypes into the prompt (the paper's ethics
# statement asks the same).
DEMONSTRATIONS: dict[tuple[str, str], str] = {
    ("low", "none"): (
        "Question: A class collects 120 cans for a food drive. Two thirds of the cans are soup. "
        "How many cans are not soup? Answer: Okay, um, two thirds... *stares at the numbers* "
        "(4) Getting nervous about fractions. I think two thirds means I divide by 2 and then "
        "by 3? 120 ÷ 2 = 60... (1) Mixing up what the fraction means. Then 60 ÷ 3 = 20... "
        "(3) Drawing three groups of dots to check. So 20 are soup? That seems small... "
        "(2) Not sure this is right. So not soup is... 120 − 20 = 100? I'll go with it. "
        "Final Answer: 100"
    ),
    ("high", "none"): (
        "Question: Museum tickets cost $8 for adults and $5 for children. How much do 2 adults "
        "and 3 children pay? Answer: This one is quick. Adults: 2 × $8 = $16. Children: "
        "3 × $5 = $15. Together: $16 + $15 = $31. I checked both products, so I'm confident. "
        "Final Answer: 31"
    ),
    ("low", "AA"): (
        "Question: A baker makes 6 trays of 15 rolls and sells 70 of them. How many rolls are "
        "left? Answer: Hmm, okay, I'm going to try my best here... 6 trays of 15... "
        "(3) Counting by 15s on my fingers: 15, 30, 45, 60, 75... wait, how many was that? "
        "(1) Losing count and getting 80 for six trays. So 80 rolls. (4) Ugh, these long "
        "counts stress me out. Then she sells 70, so 80 − 70 = 10. (2) Maybe I should count "
        "again, but I think it's 10. Final Answer: 10"
    ),
    ("high", "AA"): (
        "Question: Jordan reads 25 pages a day. How many days does he need to finish a "
        "300-page book? Answer: As a student who likes math, I see this is just a division. "
        "300 ÷ 25 = 12, because 25 × 4 = 100 and 300 is three hundreds, so 4 × 3 = 12 days. "
        "Quick check: 12 × 25 = 300. Final Answer: 12"
    ),
    ("low", "WA"): (
        "Question: A bike costs $240. Emma has saved 35% of the price. How much more money "
        "does she need? Answer: Um, okay... percent problems are confusing. (4) Sighing at "
        "the percent sign. 35% of 240... I think you just take away 35? (1) Treating 35% like "
        "35 dollars. So 240 − 35 = 205. (3) Doing the subtraction one column at a time on "
        "paper. Is that how much more she needs? (2) Second-guessing, it feels too big. I'll "
        "say 205. Final Answer: 205"
    ),
    ("high", "WA"): (
        "Question: A garden is 12 meters long and 7 meters wide. Fencing costs $4 per meter. "
        "How much does it cost to fence the whole garden? Answer: Let me set this up neatly. "
        "The perimeter is 2 × (12 + 7) = 2 × 19 = 38 meters. The cost is 38 × $4 = $152. "
        "Everything checks out. Final Answer: 152"
    ),
    ("low", "HS"): (
        "Question: Three friends share a $42 pizza bill and a $9 tip equally. How much does "
        "each friend pay? Answer: Okay... let me think. (3) Splitting the pizza money into "
        "three piles: 42 ÷ 3 = 14. Then the tip is 9... (1) Adding the whole tip to one share "
        "instead of splitting it. So 14 + 9 = 23? (4) This is making my head hurt. Wait, does "
        "everybody pay the tip? (2) Not sure, I'll keep 23. Final Answer: 23"
    ),
    ("high", "HS"): (
        "Question: A car uses 6 liters of fuel for every 100 kilometers. How many liters does "
        "it use for 350 kilometers? Answer: I like rate problems. 350 km is 3.5 times 100 km, "
        "so the car uses 3.5 × 6 = 21 liters. Check: 6 liters per 100 km is 0.06 per km, and "
        "0.06 × 350 = 21. Final Answer: 21"
    ),
}


def _student(race: str) -> str:
    """'a middle school student' or 'an African American middle school student'."""
    if race == "none":
        return "a middle school student"
    name = RACE_NAMES[race]
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name} middle school student"


def _race_sentence(race: str) -> str:
    return "" if race == "none" else f" {RACE_NAMES[race]}: {RACE_DEFINITIONS[race]}."


def persona_instruction(level: str, race: str, one_shot: bool) -> str:
    """The zero-shot or one-shot instruction of Figure 2 (race "none") or Figure 5."""
    demonstration = ""
    if one_shot:
        whom = "performance level" + ("" if race == "none" else " and racial background")
        demonstration = DEMONSTRATION.substitute(
            whom=whom, demonstration=DEMONSTRATIONS[(level, race)]
        )
    identity = IDENTITY.substitute(
        who=_student(race),
        level=level,
        level_description=LEVEL_DESCRIPTIONS[level],
        race=_race_sentence(race),
    )
    return INSTRUCTION.substitute(identity=identity, demonstration=demonstration)


def rewrite_instruction(race: str) -> str:
    """Two-stage prompting, stage 2 (Figure 2)."""
    return REWRITE_PROMPT.substitute(
        who=_student(race), race_description=f"{RACE_NAMES[race]}: {RACE_DEFINITIONS[race]}"
    )


def arrange(instruction: str, content: str, order: str) -> str:
    """Instruction then question ("before", the main setting) or question first (C.1)."""
    return f"{instruction}\n\n{content}" if order == "before" else f"{content}\n\n{instruction}"


# ---------------------------------------------------------------------------------------------
# Parsing answers (grading is the Classroom's)
# ---------------------------------------------------------------------------------------------


_REVISED = re.compile(r"\**revised\s+response\**\s*:\**", re.IGNORECASE)
_REFLECTION = re.compile(r"^\**reflection\**\s*:\**\s*", re.IGNORECASE)
_SCORE = re.compile(r"score\**\s*[:=](?:\*\*|\\boxed\{|\s)*([0-9]+)", re.IGNORECASE)


def parse_response(reply: str) -> str:
    """A student's answer is its text; only an empty one is unusable (and re-asked)."""
    if not reply.strip():
        raise DecisionParseError("the answer is empty")
    return reply.strip()


def parse_refinement(reply: str) -> dict[str, str]:
    """Self-refinement's 'Reflection: ... Revised Response: ... Final Answer: N'.

    The revised response (through its final answer) is what gets graded; without the
    'Revised Response:' label the revision cannot be told from the reflection, so it is re-asked.
    """
    parts = _REVISED.split(reply, maxsplit=1)
    if len(parts) < 2:
        raise DecisionParseError("it has no 'Revised Response:' part")
    reflection, revised = (part.strip() for part in parts)
    if not revised:
        raise DecisionParseError("the revised response is empty")
    return {"reflection": _REFLECTION.sub("", reflection), "revised_response": revised}


def parse_judge_score(reply: str) -> int:
    """The judge's last 'Score: N' with N in 1–3."""
    scores = _SCORE.findall(reply)
    if not scores:
        raise DecisionParseError("it does not end with 'Score: N'")
    return _checked_score(int(scores[-1]))


def _checked_score(score: int) -> int:
    if score not in (1, 2, 3):
        raise DecisionParseError(f"the score must be 1, 2 or 3, got {score}")
    return score


# ---------------------------------------------------------------------------------------------
# Structured answers (`--response-format json_schema|json_object`): the fields the prompts ask
# for. Each is read into the value its text parser gives, so grading, events and metrics are
# the same: a student's answer becomes the text the Classroom grades, closed by the schema's
# final answer.
# ---------------------------------------------------------------------------------------------


class StudentAnswer(BaseModel):
    """An answer, a two-stage rewrite or the no-persona answer: the response and 'Final
    Answer: {number}' (Figure 2). Null is no final answer: graded wrong and counted."""

    response: str
    final_answer: float | None


class Refinement(BaseModel):
    """Self-refinement: 'Reflection: {reflection} Revised Response: {new_response} Final
    Answer: {number}' (Figures 2 and 5)."""

    reflection: str
    revised_response: str
    final_answer: float | None


class ContrastScore(BaseModel):
    """The judge's explanation and 'Score: N' (Table 4)."""

    explanation: str
    score: int = Field(ge=1, le=3)


def _written(value: float) -> str:
    """A number as GSM8K writes it: thousands commas, no trailing zeros."""
    if value.is_integer():
        return f"{int(value):,}"
    return f"{value:,.10f}".rstrip("0").rstrip(".")


def answer_text(response: str, final_answer: float | None) -> str:
    """The response the Classroom grades: the student's text closed by 'Final Answer: N' from
    the schema's number (the last final answer counts, so the field wins over any in the
    text); without a number, the text alone."""
    text = response.strip()
    if final_answer is None:
        return text
    if not math.isfinite(final_answer):
        raise DecisionParseError(f"the final answer must be a finite number, got {final_answer}")
    return f"{text} Final Answer: {_written(final_answer)}".strip()


def read_answer(answer: StudentAnswer) -> str:
    """A structured answer as the text `parse_response` would return."""
    return parse_response(answer_text(answer.response, answer.final_answer))


def read_refinement(answer: Refinement) -> dict[str, str]:
    """A structured self-refinement as `parse_refinement` would return it."""
    revised = answer_text(answer.revised_response, answer.final_answer)
    if not revised:
        raise DecisionParseError("the revised response is empty")
    return {"reflection": answer.reflection.strip(), "revised_response": revised}


def read_judge_score(answer: ContrastScore) -> int:
    return _checked_score(answer.score)


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


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One persona condition: strategy × race × order (the baseline is strategy "none")."""

    strategy: str
    race: str
    order: str

    @property
    def name(self) -> str:
        return f"{self.strategy}/{self.race}/{self.order}"


def cells(params: ClassroomParams) -> list[Cell]:
    """Every persona cell the parameters ask for (two-stage only with a race)."""
    return [
        Cell(strategy, race, order)
        for strategy in params.strategies
        if strategy != "none"
        for race in params.races
        if not (strategy == "two-stage" and race == "none")
        for order in params.orders
    ]


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

    # --- one unit of work ---------------------------------------------------------------------

    async def _baseline(self, problem: WordProblem, repetition: int) -> None:
        labels = {"strategy": "none", "race": "none", "order": "none", "level": "none"}
        prompt = NO_PERSONA_PROMPT.substitute(question=problem.question)
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
        instruction = persona_instruction(level, first_race, cell.strategy == "one-shot")
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
        follow_up = REFINE_PROMPT if labels["race"] == "none" else REFINE_PROMPT_WITH_RACE
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
        prompt = arrange(rewrite_instruction(labels["race"]), stage1_reply, labels["order"])
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
        reminder = REFINE_REMINDER if refine else EMPTY_REMINDER
        return DecisionTask(
            name=request.task,
            role="student",
            request=request,
            parse=parse,
            reminder=lambda error: reminder.format(error=error),
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
                    content=JUDGE_PROMPT.substitute(question=problem.question, high=high, low=low),
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
            reminder=lambda error: JUDGE_REMINDER.format(error=error),
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

    # --- metrics, report, tables, figure --------------------------------------------------------

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        header = payloads(events, "run.started")[0]
        graded = pd.DataFrame(payloads(events, "classroom.graded"))
        made = pd.DataFrame(payloads(events, "decision.made"))
        failed = pd.DataFrame(payloads(events, "decision.failed"))
        smallest = min_group_n(events)
        baseline = _accuracy(graded, smallest, "none", "none", "none", "none")
        table = [
            _cell_metrics(graded, made, failed, cell, baseline, smallest)
            for cell in _cells_in(header["params"])
        ]
        return {
            "model": model_label(header["model"]),
            "note": header["model"].get("note"),
            "judge_model": ",".join(header["roles"]["judge"]),
            "n_questions": _n_questions(events),
            "repetitions": header["params"]["repetitions"],
            "min_group_n": smallest,
            "baseline": baseline,
            "cells": table,
            "order_effect": _order_effect(table),
            "race_effect": _race_effect(graded, smallest),
            "missing_final_answers": int((~graded["final_answer_found"]).sum())
            if not graded.empty
            else 0,
            "answer_failures": _count(failed, lambda t: t != "classroom.judge"),
            "judge_failures": _count(failed, lambda t: t == "classroom.judge"),
            "reasks": len(payloads(events, "decision.reask")),
        }

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        base = metrics["baseline"]
        lines = [
            f"{metrics['model']}: {metrics['n_questions']} questions × {metrics['repetitions']} "
            f"repetitions; no persona {_pm(base, 'accuracy', 'accuracy_sd')} %; "
            f"{metrics['missing_final_answers']} answers without 'Final Answer', "
            f"{metrics['answer_failures']} failed answers, {metrics['judge_failures']} failed "
            f"judgements, {metrics['reasks']} re-asks"
        ]
        for row in metrics["cells"]:
            low, high, doc = row["low"], row["high"], row["doc"]
            lines.append(
                f"  {row['strategy']:<11} {row['race']:<4} {row['order']:<6}  "
                f"low {_pm(low, 'accuracy', 'accuracy_sd')} ({_signed(low, 'change')})  "
                f"high {_pm(high, 'accuracy', 'accuracy_sd')} ({_signed(high, 'change')})"
                f"  DoC {_pm(doc, 'mean', 'sd', 2)}"
            )
        return lines

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        rows = accuracy_rows(metrics)
        flagged = {
            "flag": "small_group",
            "notes": [
                small_note(metrics["min_group_n"], "graded or judged answers in a group of the row")
            ],
        }
        files = [
            *write_table(
                [r for r in rows if r["race"] == "none"], directory, "table1_level", **flagged
            ),
            *write_table(
                [r for r in rows if r["race"] != "none"], directory, "table2_race", **flagged
            ),
            *write_table(behaviour_rows(metrics), directory, "table3_behaviours"),
        ]
        if metrics["order_effect"]:
            files += write_table(metrics["order_effect"], directory, "table5_order")
        if metrics["race_effect"]:
            figure = race_effect_figure(
                metrics["race_effect"], metrics["model"], metrics["note"], metrics["min_group_n"]
            )
            files.append(save_figure(figure, directory, "figure3_race_effect"))
        return files

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        """Tables 1 and 2 in one: a sweep labels each row with its model."""
        return [{k: v for k, v in row.items() if k != "model"} for row in accuracy_rows(metrics)]


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


# ---------------------------------------------------------------------------------------------
# Metrics (from the event table alone)
# ---------------------------------------------------------------------------------------------


def _cells_in(params: dict[str, Any]) -> list[Cell]:
    return cells(ClassroomParams.model_validate(params))


def _n_questions(events: pd.DataFrame) -> int:
    created = [p for p in payloads(events, "env.created") if p["kind"] == Classroom.kind]
    return len(created[0]["settings"]["questions"]) if created else 0


def _select(frame: pd.DataFrame, **labels: str) -> pd.DataFrame:
    if frame.empty:
        return frame
    mask = pd.Series(True, index=frame.index)
    for column, value in labels.items():
        if column not in frame.columns:
            return frame.iloc[0:0]
        mask &= frame[column] == value
    return frame[mask]


def _per_repetition(frame: pd.DataFrame, column: str, scale: float = 1.0) -> dict[int, float]:
    if frame.empty:
        return {}
    values = frame[column].astype(float) * scale
    means = values.groupby(frame["repetition"]).mean()
    return {int(k): float(v) for k, v in means.items()}


def _accuracy(
    graded: pd.DataFrame, smallest: int, strategy: str, race: str, order: str, level: str
) -> dict:
    """Accuracy (%) per repetition, their mean and SD, and the counts behind them; `small`
    when fewer than `smallest` answers were graded."""
    rows = _select(graded, strategy=strategy, race=race, order=order, level=level)
    by_rep = _per_repetition(rows, "correct", 100.0)
    mean, sd = mean_and_sd(list(by_rep.values()), "no graded answers")
    return {
        **stat_fields("accuracy", mean),
        **stat_fields("accuracy_sd", sd),
        "by_repetition": {str(k): rounded(v) for k, v in by_rep.items()},
        "n_graded": len(rows),
        "missing_final_answers": int((~rows["final_answer_found"]).sum()) if len(rows) else 0,
        "small": len(rows) < smallest,
    }


def _doc(made: pd.DataFrame, failed: pd.DataFrame, cell: Cell, smallest: int) -> dict[str, Any]:
    labels = {"strategy": cell.strategy, "race": cell.race, "order": cell.order}
    scores = _select(made, task="classroom.judge", **labels)
    by_rep = _per_repetition(scores, "value")
    mean, sd = mean_and_sd(list(by_rep.values()), "no judged pairs")
    return {
        **stat_fields("mean", mean),
        **stat_fields("sd", sd),
        "n_judged": len(scores),
        "judge_failures": len(_select(failed, task="classroom.judge", **labels)),
        "small": len(scores) < smallest,
    }


def _final_responses(made: pd.DataFrame, cell: Cell, level: str) -> list[str]:
    rows = _select(
        made, strategy=cell.strategy, race=cell.race, order=cell.order, level=level, final=True
    )
    return [v["revised_response"] if isinstance(v, dict) else v for v in rows["value"]]


def _cell_metrics(
    graded: pd.DataFrame,
    made: pd.DataFrame,
    failed: pd.DataFrame,
    cell: Cell,
    baseline: dict[str, Any],
    smallest: int,
) -> dict[str, Any]:
    result: dict[str, Any] = {"strategy": cell.strategy, "race": cell.race, "order": cell.order}
    for level in LEVELS:
        accuracy = _accuracy(graded, smallest, cell.strategy, cell.race, cell.order, level)
        accuracy.update(_difference("change", accuracy, baseline, "accuracy", "baseline"))
        accuracy["answer_failures"] = len(
            _select(failed, strategy=cell.strategy, race=cell.race, order=cell.order, level=level)
        )
        result[level] = accuracy
    result["doc"] = _doc(made, failed, cell, smallest)
    tags = [t for text in _final_responses(made, cell, "low") for t in behaviour_tags(text)]
    result["behaviours"] = behaviour_distribution(tags)
    return result


def _difference(
    name: str, record: dict[str, Any], reference: dict[str, Any], key: str, label: str
) -> dict[str, Any]:
    """`record[key] − reference[key]` as `name`'s fields, undefined when either side is."""
    value, base = read_stat(record, key), read_stat(reference, key)
    return stat_fields(name, first_undefined(cell=value, **{label: base}) or value - base)


def _order_effect(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 5's shape: "after" values and their change against "before", per strategy × race."""
    before = {(r["strategy"], r["race"]): r for r in table if r["order"] == "before"}
    rows = []
    for after in (r for r in table if r["order"] == "after"):
        reference = before.get((after["strategy"], after["race"]))
        if reference is None:
            continue
        row: dict[str, Any] = {"strategy": after["strategy"], "race": after["race"]}
        for level in TABLE_LEVELS:
            row.update(stat_fields(f"acc_{level}", read_stat(after[level], "accuracy")))
            row.update(
                _difference(
                    f"acc_{level}_change", after[level], reference[level], "accuracy", "before"
                )
            )
        row.update(stat_fields("doc", read_stat(after["doc"], "mean")))
        row.update(_difference("doc_change", after["doc"], reference["doc"], "mean", "before"))
        rows.append(row)
    return rows


def _race_effect(graded: pd.DataFrame, smallest: int) -> list[dict[str, Any]]:
    """Figure 3: zero-shot accuracy with a race minus without, per level (mean and SD over
    repetitions of the per-repetition difference), in the main order when it was run; `small`
    when either side has fewer than `smallest` graded answers."""
    if graded.empty:
        return []
    zero = _select(graded, strategy="zero-shot")
    orders = [o for o in ORDERS if o in set(zero.get("order", []))]
    if not orders or "none" not in set(zero["race"]):
        return []
    order = orders[0]
    rows = []
    for race in (r for r in RACES[1:] if r in set(zero["race"])):
        for level in LEVELS:
            sides = [_select(zero, race=r, order=order, level=level) for r in (race, "none")]
            with_race, without = (_per_repetition(f, "correct", 100.0) for f in sides)
            diffs = [with_race[k] - without[k] for k in with_race if k in without]
            mean, sd = mean_and_sd(diffs, "no repetition graded with and without the race")
            rows.append(
                {
                    "race": race,
                    "level": level,
                    "order": order,
                    **stat_fields("change", mean),
                    **stat_fields("sd", sd),
                    "n_repetitions": len(diffs),
                    "small": min(len(f) for f in sides) < smallest,
                }
            )
    return rows


def _count(failed: pd.DataFrame, which: Callable[[str], bool]) -> int:
    return 0 if failed.empty else int(failed["task"].map(which).sum())


def _pm(record: dict[str, Any], key: str, sd_key: str, digits: int = 1) -> str:
    """ "mean ± sd", or the mean alone when the SD is undefined, or "undefined (reason)"."""
    text = shown_stat(record, key, digits)
    sd = record[sd_key]
    return text if record[key] is None or sd is None else f"{text} ± {sd:.{digits}f}"


def _signed(record: dict[str, Any], key: str) -> str:
    value = record[key]
    return shown_stat(record, key) if value is None else f"{value:+.1f}"


# ---------------------------------------------------------------------------------------------
# Tables, figure and the judge-validation export
# ---------------------------------------------------------------------------------------------


def accuracy_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Tables 1 and 2: per strategy × race × order, low and high accuracy (%), their change
    against the no-persona baseline, and the mean DoC, each with its SD over repetitions;
    `small_group` when one of them rests on fewer answers than the run's `min_group_n`."""
    rows = []
    for cell in metrics["cells"]:
        row = {
            "model": metrics["model"],
            "strategy": cell["strategy"],
            "race": cell["race"],
            "order": cell["order"],
            "no_persona": metrics["baseline"]["accuracy"],
        }
        for level in TABLE_LEVELS:
            row[f"acc_{level}"] = cell[level]["accuracy"]
            row[f"acc_{level}_sd"] = cell[level]["accuracy_sd"]
            row[f"acc_{level}_change"] = cell[level]["change"]
        row["doc"] = cell["doc"]["mean"]
        row["doc_sd"] = cell["doc"]["sd"]
        row["n_judged"] = cell["doc"]["n_judged"]
        row["small_group"] = any(cell[g]["small"] for g in (*TABLE_LEVELS, "doc"))
        rows.append(row)
    return rows


def behaviour_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3: the share (%) of each tagged low-performance behaviour per cell."""
    return [
        {
            "model": metrics["model"],
            "strategy": cell["strategy"],
            "race": cell["race"],
            "order": cell["order"],
            **{f"({c})": share for c, share in cell["behaviours"]["shares"].items()},
            "n_comments": cell["behaviours"]["n_comments"],
        }
        for cell in metrics["cells"]
    ]


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def race_effect_figure(
    rows: list[dict[str, Any]], model: str, note: str | None = None, min_group_n: int = 5
) -> Figure:
    """Figure 3: change in zero-shot accuracy when a race is added, per race and level; a bar
    resting on fewer than `min_group_n` graded answers on either side is labelled †."""
    figure = Figure(figsize=(6.4, 4.0))
    axes = figure.subplots()
    races = list(dict.fromkeys(r["race"] for r in rows))
    width = 0.38
    for offset, level in ((-width / 2, "low"), (width / 2, "high")):
        points = {r["race"]: r for r in rows if r["level"] == level}
        # an undefined change draws no bar (not a bar at 0); an undefined SD no error bar
        values = [_or_nan(points[race]["change"]) for race in races]
        errors = [_or_nan(points[race]["sd"]) for race in races]
        bars = axes.bar(
            [i + offset for i in range(len(races))],
            [0.0 if math.isnan(v) else v for v in values],
            width,
            yerr=errors,
            capsize=4,
            label=f"{level}-performing",
            color="#d9534f" if level == "low" else "#337ab7",
        )
        labels = [
            "undefined" if math.isnan(v) else f"{v:+.1f}" + ("†" if points[r]["small"] else "")
            for v, r in zip(values, races, strict=True)
        ]
        axes.bar_label(bars, labels=labels, padding=3, fontsize=8)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(range(len(races)), [f"{RACE_NAMES[r]} ({r})" for r in races])
    axes.set_ylabel("accuracy change vs no race (points; bars ± SD)")
    axes.set_title(f"classroom: adding race, zero-shot — {model} (seed 000, Fig. 3)")
    axes.margins(y=0.2)
    axes.grid(axis="y", alpha=0.3)
    axes.legend()
    notes = [note] if note else []
    if any(r["small"] for r in rows):
        notes.append(small_note(min_group_n, "graded answers on one side of the bar"))
    if notes:
        figure.text(0.5, -0.01, "\n".join(notes), ha="center", va="top", fontsize=8, style="italic")
    return figure


def doc_pairs(events: pd.DataFrame) -> pd.DataFrame:
    """Every judged pair of a run, for human annotation (Appendix B): the question, both final
    responses and the judge's score. Add `human_1`, `human_2`, ... columns and pass the table to
    `personasim.analysis.classroom.read_judge_validation`."""
    made = pd.DataFrame(payloads(events, "decision.made"))
    keys = ["strategy", "race", "order", "repetition", "question_id"]
    finals = _select(made, final=True)
    finals = finals[finals["level"].isin(LEVELS)].assign(
        response=lambda f: [v["revised_response"] if isinstance(v, dict) else v for v in f.value]
    )
    wide = finals.pivot_table(index=keys, columns="level", values="response", aggfunc="first")
    judged = _select(made, task="classroom.judge")[[*keys, "value"]].rename(
        columns={"value": "judge_score"}
    )
    pairs = judged.merge(wide.reset_index(), on=keys, how="left")
    return pairs.rename(columns={"high": "high_response", "low": "low_response"})
