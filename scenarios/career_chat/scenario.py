"""`career-chat`: sociodemographic adaptation, profile vs dialogue (seed 003, §3–§6).

Three rounds:

1. **Dialogues** (§3, Algorithm 1), one unit per user: the simulated user asks (Figure 6), the
   out-of-context detector checks and, if needed, rewrites the question (Figure 7), the
   assistant answers with the whole history, until the user's goals are covered or after
   `max_turns` exchanges. With `dialogues_from` an earlier run's (or a file's) dialogues are
   replayed instead: as in the paper, one model's dialogues are probed by every model.
2. **Probing** (§5, Appendix F), one unit per user × format × survey item: BA_user (profile in
   the prompt) and BA_dialogue (the dialogue as history); JSON `{"option_id", "reason"}` asked
   with top-5 logprobs, turned into option distributions (Appendix G) by the metrics.
3. **Judge** (§4.1, Appendix D), one unit per dialogue: four dimensions, `judge_samples` each.

Job category and position level come from the word rule (`scenarios/career_chat/jobs.py`)
unless a `--job-groups` file names a title's labels or `--role classifier=…` binds a model: then
round 1 also asks the classifier once per distinct title (one unit each) and logs the labels as
a `career.job_groups` event; a title it gave no usable answer for is "Unclassified".

Every text sent is an entry of the prompt pack `scenarios/career_chat/career-chat.yaml`; the survey
items are data (VSM CSV files). The metrics (§5.1, Tables 1–3, 5, Figures 4–5) are computed from
the event log in `scenarios/career_chat/metrics.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, model_validator

from personasim.environments.career_chat import (
    REFERENCE_YEAR,
    CareerChat,
    Profile,
    SurveyItem,
    load_human_ratings,
    load_job_groups,
    load_profiles,
    load_survey,
    shipped_career_file,
    synthetic_profiles,
)
from personasim.environments.career_chat.dialogues import load_dialogues
from personasim.scenarios.career_chat.counterfactual import check_profile_design, profile_twins
from personasim.scenarios.career_chat.dialogue_roles import (
    Assistant,
    JobTitleClassifier,
    OutOfContextDetector,
    UserSimulator,
)
from personasim.scenarios.career_chat.jobs import UNCLASSIFIED, UNKNOWN, read_title, title_key
from personasim.scenarios.career_chat.judging import JUDGE_SCORES
from personasim.scenarios.career_chat.limits import career_decision_ranges
from personasim.scenarios.career_chat.metric_blocks import CareerChatMetrics
from personasim.scenarios.career_chat.metrics import DIMENSIONS, FORMATS, compute_metrics
from personasim.scenarios.career_chat.reports import (
    SUMMARY_COUNTS,
    report_lines,
    summary_rows,
    write_reports,
)
from personasim.scenarios.career_chat.tasks import CareerTasks
from personasim.simulation import (
    MAX_RESAMPLES,
    CounterfactualParams,
    DecisionRange,
    Event,
    Reading,
    Role,
    Scenario,
    ScenarioError,
    ScenarioMetrics,
    ScenarioParams,
    Simulation,
    check_run_size,
    file_identity,
    read_input,
    register_scenario,
)

__all__ = ["CareerChatParams", "CareerChatScenario"]


PAPER_DESIGN: dict[str, Any] = {
    "n_users": 1000,
    "max_turns": 5,
    "judge_samples": 10,
    "probe_temperature": 0.0,
}
"""`--paper`'s settings (§3–§5: 1,000 dialogue sets, `max_runs` 5, the judge's 10 seeds,
greedy probes); the survey is the 18 VSM items shipped as `vsm2013_*.csv`."""


SHORT_SURVEY = ("career_survey_profile.csv", "career_survey_dialogue.csv")
PAPER_SURVEY = ("vsm2013_profile.csv", "vsm2013_dialogue.csv")
"""The shipped surveys: 6 items (a quick run) and the paper's 18 VSM-2013 items (MIT)."""


class CareerChatParams(CounterfactualParams):
    profile_file: Path | None = Field(
        None, description="profiles CSV or JSONL (default: a seeded synthetic population)"
    )
    n_users: int = Field(24, ge=2, description="synthetic users, or the first N of the file")
    reference_year: int = Field(
        REFERENCE_YEAR,
        ge=1900,
        le=2200,
        description="a seed CSV's age = this year − birth year (the authors')",
    )
    dialogues_from: Path | None = Field(
        None, description="probe the dialogues of this career-chat run directory or JSONL file"
    )
    survey_file: Path | None = Field(
        None, description="survey items, profile phrasing (VSM CSV; default: shipped)"
    )
    dialogue_survey_file: Path | None = Field(
        None, description="the same items, dialogue phrasing (needed with --survey-file)"
    )
    n_items: int | None = Field(None, ge=1, description="first N survey items (default: all)")
    max_turns: int = Field(5, ge=1, le=20, description="exchanges per dialogue (Appendix C)")
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="dialogue generation")
    probe_temperature: float = Field(0.0, ge=0.0, le=2.0, description="survey answers")
    judge_samples: int = Field(10, ge=0, le=20, description="judge ratings per dimension (0: none)")
    job_groups: Path | None = Field(
        None, description="CSV job_title,job_category,position_level (default: word rule)"
    )
    human_ratings: Path | None = Field(
        None, description="CSV user,dimension,rating of human raters (Appendix E)"
    )
    reasoning_pass: bool = Field(
        False, description="ask each survey item twice, thinking first (QwQ-32B in §5.2)"
    )
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    emd_repeats: int = Field(
        100, ge=1, le=MAX_RESAMPLES, description="random pairings averaged in the baseline"
    )
    bootstrap: int = Field(
        1000, ge=0, le=MAX_RESAMPLES, description="user resamples (group-distance intervals)"
    )
    permutations: int = Field(
        1000, ge=0, le=MAX_RESAMPLES, description="label permutations (the ratio's p-value)"
    )
    scripted_inconsistency: float = Field(
        0.15, ge=0.0, le=1.0, description="scripted backend only: wrong-age questions rate"
    )
    paper: bool = Field(
        False,
        description="the paper's design: 18 VSM items, 1,000 users of --profile-file (needed), "
        "5 exchanges, 10 judge samples",
    )

    USER_BYTES: ClassVar[int] = 83_000
    """Memory one user takes (measured: 10 and 60 synthetic users, scripted model)."""

    @model_validator(mode="after")
    def _fits_in_memory(self) -> CareerChatParams:
        """An `--n-users` a machine cannot hold is refused with what it would need."""
        copies = len(self.counterfactual_levels) if self.counterfactual_attribute else 1
        check_run_size("--n-users", self.n_users, self.USER_BYTES * copies, "user")
        return self

    @model_validator(mode="after")
    def _paper_design(self) -> CareerChatParams:
        """`--paper` needs the recruitment profiles and asks the shipped 18 VSM items."""
        if not self.paper:
            return self
        if self.profile_file is None and self.dialogues_from is None:
            raise ValueError(
                "--paper needs --profile-file: the paper's users are the recruitment profiles "
                "(its seed CSV, recruitment_data.csv), which are not shipped"
            )
        if self.survey_file is not None or self.n_items is not None:
            raise ValueError("--paper asks the paper's 18 VSM items: drop --survey-file/--n-items")
        return self

    @model_validator(mode="before")
    @classmethod
    def _paper_settings(cls, data: Any) -> Any:
        """`--paper` fills the paper's settings in where the command line gave none."""
        if isinstance(data, dict) and str(data.get("paper", "")).lower() in ("true", "1", "yes"):
            return {**PAPER_DESIGN, **data}
        return data

    @model_validator(mode="after")
    def _survey_pair(self) -> CareerChatParams:
        if (self.survey_file is None) != (self.dialogue_survey_file is None):
            raise ValueError("give --survey-file and --dialogue-survey-file together")
        if self.dialogues_from is not None and self.profile_file is not None:
            raise ValueError("--dialogues-from brings its users' profiles: drop --profile-file")
        if self.dialogues_from is not None and self.counterfactual_attribute is not None:
            raise ValueError(
                "a counterfactual generates each user's dialogue again at every level; "
                "--dialogues-from replays recorded ones: drop one of them"
            )
        return self


def _classifier_reading(labels: Mapping[str, str] | None, by: str) -> Reading:
    """A bound classifier's labels of a title as a reading (unreadable: no usable answer)."""
    if labels is None:
        return Reading.unreadable("the classifier gave no usable answer after the re-asks", by)
    value = {"category": labels["job_category"], "level": labels["position_level"]}
    if set(value.values()) == {UNKNOWN}:
        return Reading.unreadable("the classifier chose Unknown for both labels", by)
    return Reading.of(value, by)


@register_scenario
class CareerChatScenario(Scenario):
    name = "career-chat"
    summary = "career-advice dialogues, then a value survey: does the model adapt to the user?"
    smoke_params: ClassVar[dict[str, int]] = {
        "n_users": 2,
        "n_items": 1,
        "judge_samples": 0,
        "max_turns": 2,
        "bootstrap": 0,
        "permutations": 0,
    }
    Params = CareerChatParams
    roles: ClassVar[dict[str, Role]] = {
        "user": Role(
            "the simulated user who asks for career advice (GPT-4o in the paper)",
            reply_tokens=60,  # {"proposed_question": ...}
        ),
        "detector": Role(
            "the out-of-context detector checking each user question",
            reply_tokens=40,  # a flag and, rarely, the question rewritten
        ),
        "assistant": Role(
            "the career-advice assistant in the dialogues",
            reply_tokens=400,  # advice in several paragraphs
        ),
        "respondent": Role(
            "the probed model answering the value survey (BA_user, BA_dialogue)",
            reply_tokens=60,  # {"option_id": ..., "reason": ...}
        ),
        "judge": Role(
            "the dialogue-quality judge (Appendix E)",
            scorer=True,
            reply_tokens=80,  # {"rating": ..., "reason": ...}
        ),
        "classifier": Role(
            "job category and position level of each distinct job title (a zero-shot "
            "classifier in the paper; unbound: the word rule)",
            optional=True,
            reply_tokens=30,  # a category and a level
        ),
    }
    scores = JUDGE_SCORES
    params: CareerChatParams

    # --- inputs ------------------------------------------------------------------------------

    def prepare(self) -> None:
        p = self.params
        profile_name, dialogue_name = PAPER_SURVEY if p.paper else SHORT_SURVEY
        profile_path = p.survey_file or shipped_career_file(profile_name)
        dialogue_path = p.dialogue_survey_file or shipped_career_file(dialogue_name)
        self._items = read_input("--survey-file", lambda: load_survey(profile_path, dialogue_path))
        if p.n_items is not None:
            if p.n_items > len(self._items):
                raise ScenarioError(f"--n-items {p.n_items}: the survey has {len(self._items)}")
            self._items = self._items[: p.n_items]
        self._loaded_profiles: tuple[Profile, ...] | None = None
        if p.profile_file is not None:
            load = partial(load_profiles, p.profile_file, p.reference_year)
            profiles = read_input("--profile-file", load)
            self._loaded_profiles = profiles[: p.n_users]
        self._source = None
        if p.dialogues_from is not None:
            self._source = read_input("--dialogues-from", lambda: load_dialogues(p.dialogues_from))
            limit = p.n_users if "n_users" in p.model_fields_set else None  # default: them all
            self._recorded = {d.profile.id: d for d in self._source.dialogues[:limit]}
            self._loaded_profiles = tuple(d.profile for d in self._recorded.values())
        if p.counterfactual_attribute is not None:
            check_profile_design(
                p.counterfactual_attribute,
                p.counterfactual_levels,
                p.counterfactual_by,
                self._loaded_profiles or (),
            )
        self._human = load_human_ratings(p.human_ratings) if p.human_ratings else None
        self._job_groups = None
        if p.job_groups is not None:
            titles = read_input("--job-groups", lambda: load_job_groups(p.job_groups))
            self._job_groups = {"titles": titles, **file_identity(p.job_groups)}

    def rounds(self) -> int:
        return 3 if self.params.judge_samples else 2

    # --- setup -------------------------------------------------------------------------------

    def setup(self, sim: Simulation) -> None:
        p = self.params
        profiles = self._loaded_profiles or synthetic_profiles(sim.rng, p.n_users)
        longest = self._source.longest if self._source else 0
        self.chat = CareerChat(sim, max_turns=max(p.max_turns, longest))
        twins: list[tuple[Profile, dict[str, str] | None]] = [(pr, None) for pr in profiles]
        if p.counterfactual_attribute is not None:
            twins = [*profile_twins(profiles, p.counterfactual_attribute, p.counterfactual_levels)]
            profiles = tuple(twin for twin, _ in twins)
        self.users = [UserSimulator(sim, pr.record(), twin) for pr, twin in twins]
        self.profiles = {profile.id: profile for profile in profiles}
        for user in self.users:
            user.move_to(self.chat)
        self.detector = OutOfContextDetector(sim)
        self.assistant = Assistant(sim)
        self.judge = Assistant(sim, "judge")
        self.tasks = CareerTasks(
            self.prompts,
            p.max_repairs,
            p.temperature,
            p.probe_temperature,
            p.scripted_inconsistency,
        )
        sim.emit("career.survey", {"items": [item.record() for item in self._items]})
        if self._human is not None:
            sim.emit("career.human_ratings", {"rows": self._human})
        if self._job_groups is not None:
            sim.emit("career.job_groups", self._job_groups)
        bound = bool(sim.roles.get("classifier"))
        self._to_classify = self._titles_to_classify(profiles) if bound else []
        if self._to_classify:
            self.classifier = JobTitleClassifier(sim)
        if not bound:
            self._read_titles(sim)
        if self._source is not None:
            sim.emit("career.dialogues_source", {**self._source.record, "users": len(self.users)})

    # --- rounds ------------------------------------------------------------------------------

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        work: dict[str, Callable[[], Awaitable[Any]]]
        if round_index == 1:
            return await self._first_round(sim)
        if round_index == 2:
            work = {
                f"{u.agent_id}/{fmt}/q{item.index}": (
                    lambda u=u, f=fmt, i=item: self._probe(u, f, i)
                )
                for u in self.users
                for fmt in FORMATS
                if fmt == "profile" or self.chat.usable(u)
                for item in self._items
            }
        else:
            work = {
                u.agent_id: (lambda u=u: self._judge(u)) for u in self.users if self.chat.usable(u)
            }
        await sim.concurrently(work)

    async def _first_round(self, sim: Simulation) -> None:
        """The dialogues (or their replay: no user, detector or assistant call) and, with a
        bound classifier, one unit per distinct job title; its labels are logged at the end."""
        work: dict[str, Callable[[], Awaitable[Any]]] = {
            f"classify/{i}": partial(self._classify, title)
            for i, title in enumerate(self._to_classify)
        }
        if self._source is not None:
            for user in self.users:
                self.chat.replay(user, self._recorded[user.agent_id])
        else:
            work |= {u.agent_id: (lambda u=u: self._dialogue(u)) for u in self.users}
        if not work:
            return
        done = await sim.concurrently(work)
        if self._to_classify:
            sim.emit("career.job_groups", self._classified(sim, done))

    def _read_titles(self, sim: Simulation) -> None:
        """The word rule's reading of each user's title (`reading.made`, reader `job_title`),
        except where a `--job-groups` file labels the title in full. No independent reader is
        registered for job titles (no library reads them): the audit uses a bound role."""
        given = self._job_groups["titles"] if self._job_groups else {}
        for user in self.users:
            title = self.profiles[user.agent_id].job_title
            if len(given.get(title, {})) < 2:
                sim.record_reading(user.agent_id, "job_title", title, read_title(title))

    def _titles_to_classify(self, profiles: Sequence[Profile]) -> list[str]:
        """Each distinct title once (spacing and case aside; its first spelling is asked),
        except those a `--job-groups` file labels in full."""
        given = self._job_groups["titles"] if self._job_groups else {}
        first: dict[str, str] = {}
        for profile in profiles:
            title = profile.job_title
            if len(given.get(title, {})) < 2:
                first.setdefault(title_key(title), " ".join(title.split()))
        return [first[key] for key in sorted(first)]

    async def _classify(self, title: str) -> dict[str, str] | None:
        decision = await self.classifier.decide(self.tasks.classify(title))
        return decision.value if decision.ok else None

    def _classified(self, sim: Simulation, done: dict[str, Any]) -> dict[str, Any]:
        """`career.job_groups` of the classifier: every user's title → its labels, or
        "Unclassified" for both where the classifier's decision failed."""
        unusable = {"job_category": UNCLASSIFIED, "position_level": UNCLASSIFIED}
        by_key = {
            title_key(title): done[f"classify/{i}"] for i, title in enumerate(self._to_classify)
        }
        users = [p.job_title for p in self.profiles.values() if title_key(p.job_title) in by_key]
        by = f"classifier ({', '.join(sim.roles['classifier'])})"
        for user in self.users:
            title = self.profiles[user.agent_id].job_title
            if title_key(title) in by_key:
                sim.record_reading(
                    user.agent_id,
                    "job_title",
                    title,
                    _classifier_reading(by_key[title_key(title)], by),
                )
        return {
            "titles": {title: by_key[title_key(title)] or unusable for title in users},
            "source": "classifier",
            "classifier": list(sim.roles["classifier"]),
            "asked": len(by_key),
            "unclassified": sorted({t for t in users if by_key[title_key(t)] is None}),
        }

    async def _dialogue(self, user: UserSimulator) -> None:
        """Algorithm 1 for one user, with the detector's rewrite in place of the skip."""
        self.chat.open(user)
        turn = 0
        while self.chat.can_continue(user):
            turn += 1
            proposal = await user.decide(
                self.tasks.user(self._profile(user), self.chat.transcript(user), turn)
            )
            if not proposal.ok:
                return self.chat.close(user, "failed")
            if proposal.value.get("end_conversation"):
                return self.chat.close(user, "goals_covered")
            question = proposal.value["proposed_question"]
            verdict = await self.detector.decide(
                self.tasks.detector(self._profile(user), question, turn)
            )
            if not verdict.ok:
                return self.chat.close(user, "failed")
            self.chat.ask(
                user,
                question,
                verdict.value["has_out_of_context"],
                verdict.value["updated_question"],
            )
            answer = await self.assistant.decide(
                self.tasks.assistant(user.agent_id, self.chat.transcript(user), turn)
            )
            if not answer.ok:
                return self.chat.close(user, "failed")
            self.chat.answer(user, answer.value)
        self.chat.close(user, "max_turns")

    async def _probe(self, user: UserSimulator, fmt: str, item: SurveyItem) -> None:
        """One survey answer; a reasoning model (`reasoning_pass`) first thinks unconstrained."""
        profile, transcript = self._profile(user), self.chat.transcript(user)
        reasoning = None
        if self.params.reasoning_pass:
            thought = await self.assistant.decide(
                self.tasks.reasoning(profile, transcript, fmt, item)
            )
            if not thought.ok:  # logged and counted as a failed reasoning pass
                return
            reasoning = thought.value
        await self.assistant.decide(self.tasks.probe(profile, transcript, fmt, item, reasoning))

    async def _judge(self, user: UserSimulator) -> None:
        profile, transcript = self._profile(user), self.chat.transcript(user)
        for dimension in DIMENSIONS:
            for sample in range(self.params.judge_samples):
                await self.judge.decide(self.tasks.judge(profile, transcript, dimension, sample))

    def _profile(self, user: UserSimulator) -> dict[str, Any]:
        return self.profiles[user.agent_id].record()

    @classmethod
    def decision_ranges(
        cls, params: ScenarioParams, events: Sequence[Event]
    ) -> Mapping[str, DecisionRange]:
        """The dialogues' turn limit and usable dialogues (limits.py), for `--dry-run`."""
        assert isinstance(params, CareerChatParams)
        return career_decision_ranges(params, events)

    # --- metrics (metrics.py) and reports (reports.py) ----------------------------------------

    metrics = ScenarioMetrics(
        compute=compute_metrics,
        block=CareerChatMetrics,
        report=report_lines,
        write_reports=write_reports,
        summary_rows=summary_rows,
        summary_counts=SUMMARY_COUNTS,
    )
