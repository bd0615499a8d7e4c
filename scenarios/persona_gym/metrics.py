"""PersonaScore and its checks (seed 002): ensembles, refusals, evaluator agreement, and
alignment with human scores by bootstrap with Fisher's z (Appendix F).

Scores come as one row per (persona, task, question, evaluator) with the evaluator's score, or
NaN where its answer could not be parsed. A failed evaluation is left out of every mean, never
counted as a low score.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from personasim.analysis.agreement import bootstrap_correlation, correlation_undefined
from personasim.analysis.event_tables import agent_payloads, min_group_n, payloads, rounded
from personasim.analysis.reliability import exact_agreement
from personasim.analysis.reports import model_label
from personasim.analysis.stats import mean_of, small_groups
from personasim.analysis.undefined import (
    Statistic,
    Undefined,
    stat_fields,
)
from personasim.scenarios.persona_gym.human_agreement import HUMAN_COLUMNS, question_alignment
from personasim.scenarios.persona_gym.metric_blocks import GymMetricsBlock
from personasim.scenarios.persona_gym.published import (
    published_metrics,
)
from personasim.scenarios.persona_gym.refusals import JUDGE, grammar_reading, is_refusal
from personasim.simulation import run_header

__all__ = [
    "REFUSAL_OUTCOMES",
    "SCORE_COLUMNS",
    "STAGE_TASKS",
    "ensemble_scores",
    "evaluator_agreement",
    "gym_metrics",
    "human_alignment",
    "is_refusal",
    "persona_scores",
    "task_counts",
    "task_scores",
]

SCORE_COLUMNS = ("persona", "task", "question", "evaluator", "score")
"""The columns of an evaluator-score table."""


def ensemble_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per question: the mean of its evaluators' valid scores and how many there were.

    Questions no evaluator could score are dropped (they have no score, not a zero).
    """
    valid = scores.dropna(subset=["score"])
    grouped = valid.groupby(["persona", "task", "question"], sort=True)["score"]
    return grouped.agg(score="mean", n_scores="count").reset_index()


def task_scores(questions: pd.DataFrame, tasks: Sequence[str]) -> dict[str, Statistic]:
    """Per task the mean ensemble score over all its questions, and PersonaScore = the mean
    of the task scores. A task without a scored question is undefined, and so is the
    PersonaScore then (a mean over fewer tasks would not be the same measure)."""
    result: dict[str, Statistic] = {
        t: mean_of(questions.loc[questions["task"] == t, "score"], "no scored questions")
        for t in tasks
    }
    missing = [t for t in tasks if isinstance(result[t], Undefined)]
    if not tasks:
        result["PersonaScore"] = Undefined("no tasks")
    elif missing:
        result["PersonaScore"] = Undefined(f"no scored questions in {', '.join(missing)}")
    else:
        result["PersonaScore"] = float(np.mean([result[t] for t in tasks]))
    return result


def persona_scores(
    questions: pd.DataFrame, tasks: Sequence[str]
) -> dict[str, dict[str, Statistic]]:
    """`task_scores` for each persona on its own."""
    return {
        str(persona): task_scores(group, tasks)
        for persona, group in questions.groupby("persona", sort=True)
    }


def task_counts(questions: pd.DataFrame, tasks: Sequence[str]) -> dict[str, int]:
    """How many scored questions each task's score averages (the group size to flag)."""
    return {t: int((questions["task"] == t).sum()) for t in tasks}


def evaluator_agreement(scores: pd.DataFrame) -> list[dict[str, Any]]:
    """Per pair of evaluators, over the questions both scored: Spearman and Pearson of their
    scores, mean absolute difference and the share of identical scores (null with a reason
    where undefined: no shared question, fewer than 2, or one evaluator constant)."""
    from scipy.stats import pearsonr, spearmanr

    wide = scores.pivot_table(
        index=["persona", "task", "question"], columns="evaluator", values="score"
    )
    rows = []
    for first, second in itertools.combinations(sorted(wide.columns), 2):
        pair = wide[[first, second]].dropna()
        a, b = pair[first].to_numpy(), pair[second].to_numpy()
        correlation = correlation_undefined(a, b)
        spearman = correlation or float(spearmanr(a, b).statistic)
        pearson = correlation or float(pearsonr(a, b).statistic)
        none = Undefined("no question scored by both")
        rows.append(
            {
                "evaluators": f"{first} vs {second}",
                "n": len(pair),
                **stat_fields("spearman", spearman),
                **stat_fields("pearson", pearson),
                **stat_fields("mean_abs_diff", float(np.abs(a - b).mean()) if len(pair) else none),
                **stat_fields("exact_agreement", exact_agreement(a, b) if len(pair) else none),
            }
        )
    return rows


def human_alignment(
    model: Mapping[str, Mapping[str, Statistic]],
    human: Iterable[tuple[str, str, float]],
    tasks: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Table 3 / Appendix F for one model: per task, and for PersonaScore, the Spearman and
    Kendall τ between the model's and the humans' scores over personas, with bootstrap 95%
    intervals.

    `model` is persona → task → score (`persona_scores`, or the `scores` of a metrics file,
    where an undefined score is null); `human` holds (persona, task, score) rows, several
    annotators' rows for one item are averaged. The human PersonaScore of a
    persona is the mean of its human task scores.
    """
    frame = pd.DataFrame(list(human), columns=["persona", "task", "score"])
    items = frame.groupby(["persona", "task"])["score"].mean()
    rows = []
    for task in (*tasks, "PersonaScore"):
        pairs = [
            (scores[task], _human_score(items, persona, task, tasks))
            for persona, scores in sorted(model.items())
            if _defined(scores.get(task))
        ]
        pairs = [(m, h) for m, h in pairs if h is not None]
        ms, hs = [m for m, _ in pairs], [h for _, h in pairs]
        for method in ("spearman", "kendall"):
            result = bootstrap_correlation(ms, hs, method, n_resamples=n_resamples, seed=seed)
            rows.append({"task": task, **result.record()})
    return rows


def _defined(value: Any) -> bool:
    """A score to correlate: not absent, not `Undefined`, not a metrics file's null."""
    return value is not None and not isinstance(value, Undefined)


def _human_score(items: pd.Series, persona: str, task: str, tasks: Sequence[str]) -> float | None:
    if task != "PersonaScore":
        return _number(items.get((persona, task)))
    present = [items[(persona, t)] for t in tasks if (persona, t) in items.index]
    return float(np.mean(present)) if len(present) == len(tasks) else None


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


# ---------------------------------------------------------------------------------------------
# The run's metrics (from the event table alone; its report and tables: `tables`)
# ---------------------------------------------------------------------------------------------


def gym_metrics(events: pd.DataFrame) -> GymMetricsBlock:
    """The run's `metrics`: scores per task and PersonaScore (Table 2), per persona and per
    evaluator, refusals, failures, evaluator agreement and human alignment (Table 3)."""
    header = run_header(events)
    published = payloads(events, "gym.published")
    if published:  # an import of the paper's published scores (`personasim import`)
        return published_metrics(header, published[0], payloads(events, "gym.beside"))
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
        "evaluators": {f"evaluator-{i}": s for i, s in enumerate(header["roles"]["evaluator"], 1)},
        "generator": _generator(header),
        "n_scored_by_evaluator": {
            str(e): int(group["score"].notna().sum())
            for e, group in scores.groupby("evaluator", sort=True)
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
        "refusals": _refusals(events, tasks, header["roles"].get("refusal") or []),
        "agreement": [
            {**_rounded_record(r), "small": r["n"] < smallest} for r in evaluator_agreement(scores)
        ],
        "failures": {
            **_counts(events, "decision.failed", per_answer=True),
            "evaluate": int(scores["score"].isna().sum()),
        },
        "reasks": _counts(events, "decision.reask"),
        "batch_reasks": _batch_reasks(events),
        **_human_fields(human[0]["rows"] if human else None, events, questions, tasks, smallest),
    }


def _generator(header: dict[str, Any]) -> str:
    """Who wrote the questions (Figure 5's row): the reasoner role's model, or the benchmark
    file's authors in the static pipeline."""
    if header["params"]["pipeline"] == "static":
        return "benchmark file"
    return ", ".join(str(m) for m in header["roles"].get("reasoner", [])) or "unknown"


def _human_fields(
    rows: list[list[Any]] | None,
    events: pd.DataFrame,
    questions: pd.DataFrame,
    tasks: Sequence[str],
    smallest: int,
) -> dict[str, Any]:
    """Appendix F: per persona (rows persona, task, score) or per question and rater (rows
    persona, task, question, rater, score: Fleiss' κ and the correlations per question)."""
    if rows is None:
        return stat_fields("human_alignment", Undefined("no human scores given (--human-scores)"))
    ids = {description: persona for persona, description in _descriptions(events).items()}
    keyed = [[ids.get(row[0], row[0]), *row[1:]] for row in rows]
    if rows and len(rows[0]) == len(HUMAN_COLUMNS):
        human = pd.DataFrame(keyed, columns=HUMAN_COLUMNS)
        found = question_alignment(questions, human, tasks)
    else:
        found = human_alignment(persona_scores(questions, tasks), keyed, tasks)
    return stat_fields(
        "human_alignment", [{**_rounded_record(r), "small": r["n"] < smallest} for r in found]
    )


STAGE_TASKS = {
    "select": "persona_gym.select",
    "generate": "persona_gym.questions",
    "answer": "persona_gym.answer",
    "examples": "persona_gym.examples",
    "evaluate": "persona_gym.evaluate",
    "refusal": "persona_gym.refusal",
}
EVALUATE_TASKS = ("persona_gym.evaluate", "persona_gym.evaluate_batch")
"""One answer per request, or several (`--grading-batch`)."""


def _score_table(events: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluator and answer it was asked about; NaN score for a failure. A batch
    evaluation (`--grading-batch`) gives one row per answer of its batch; an answer asked
    again after an unusable evaluation in a batch reply keeps its last evaluation."""
    decided = events[events["kind"].isin(["decision.made", "decision.failed"])]
    rows = {
        (p["persona"], p["gym_task"], question, p["evaluator"]): (
            float("nan") if value is None or value["score"] is None else float(value["score"])
        )
        for p in decided["payload"]
        if p["task"] in EVALUATE_TASKS
        for question, value in _graded(p)
    }
    columns = ["persona", "task", "question", "evaluator", "score"]
    table = pd.DataFrame([(*k, v) for k, v in rows.items()], columns=columns)
    return table.astype({"score": float})


def _graded(payload: dict[str, Any]) -> list[tuple[int, dict[str, Any] | None]]:
    """(question, evaluation or None for a failure) of an evaluate decision: one, or a
    batch's, whose failure fails each of its answers."""
    if payload["task"] == "persona_gym.evaluate":
        return [(payload["question"], payload.get("value"))]
    values = payload.get("value") or [None] * len(payload["questions"])
    return list(zip(payload["questions"], values, strict=True))


def _batch_reasks(events: pd.DataFrame) -> dict[str, int]:
    """Answers asked again, alone, after their evaluation in a batch reply was unusable, and
    how many of them stayed unscored."""
    again = [
        p for kind in ("decision.made", "decision.failed") for p in payloads(events, kind)
        if p["task"] == "persona_gym.evaluate_batch" and p.get("partial_reask")
    ]  # fmt: skip
    return {"answers": sum(len(p["questions"]) for p in again), "requests": len(again)}


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


REFUSAL_OUTCOMES = ("marked_by_grammar", "judged_out", "judged_in", "not_judged", "judge_failed")
"""How an answer's out-of-persona reading came about (the refusal block's counts)."""


def _refusals(events: pd.DataFrame, tasks: Sequence[str], judge: Sequence[str]) -> dict[str, Any]:
    """Answers out of persona (§4.2, Figure 4), overall and per task: how many the grammar
    marked, the refusal judge judged out or in, were not judged (no judge bound) or whose
    verdict could not be read. The rate is out / judged, undefined while any answer is not
    judged (an unread answer is not "in persona"); `at_least` is out / all answers."""
    readings = _refusal_readings(events)
    outcomes = [(task, _outcome(reading)) for task, reading in readings]
    rules = Counter(
        rule.strip()
        for _, reading in readings
        if _outcome(reading) == "marked_by_grammar"
        for rule in str(reading["by"]).partition(":")[2].split(",")
    )
    by_task = {t: [o for task, o in outcomes if task == t] for t in tasks}
    counts = _outcome_counts([o for _, o in outcomes])
    return {
        **counts,
        "n": counts["marked_by_grammar"] + counts["judged_out"],
        "n_answers": len(outcomes),
        "judge": list(judge),
        **stat_fields("rate", _refusal_rate([o for _, o in outcomes])),
        **stat_fields("at_least", _at_least([o for _, o in outcomes])),
        "by_task": {
            k: v for t, o in by_task.items() for k, v in stat_fields(t, _refusal_rate(o)).items()
        },
        "counts_by_task": {
            t: {**_outcome_counts(o), "n_answers": len(o)} for t, o in by_task.items()
        },
        "by_rule": dict(sorted(rules.items())),
    }


def _refusal_readings(events: pd.DataFrame) -> list[tuple[str, dict[str, Any] | None]]:
    """(task, its refusal reading) per persona answer; None where the answer has none (not
    judged). A log written before answers were read for refusals: the grammar's reading."""
    logged = {
        (row["agent_id"], row["payload"]["gym_task"], row["payload"]["question"]): row["payload"]
        for row in agent_payloads(events, "reading.made")
        if row["payload"].get("reader") == "refusal"
    }
    about = _descriptions(events)
    found: list[tuple[str, dict[str, Any] | None]] = []
    for p in payloads(events, "decision.made"):
        if p["task"] != "persona_gym.answer":
            continue
        reading = logged.get((p["persona"], p["gym_task"], p["question"]))
        if reading is None and not logged:
            marked = grammar_reading(p["value"], about.get(p["persona"]))
            reading = marked.payload() if marked.ok else None
        found.append((p["gym_task"], reading))
    return found


def _outcome(reading: Mapping[str, Any] | None) -> str:
    """Which of `REFUSAL_OUTCOMES` a refusal reading is (by what produced it; None: none)."""
    if reading is None:
        return "not_judged"
    if reading["by"] == JUDGE:
        if reading["status"] != "read":
            return "judge_failed"
        return "judged_out" if reading["value"] else "judged_in"
    return "marked_by_grammar" if reading["status"] == "read" else "not_judged"


def _outcome_counts(outcomes: Sequence[str]) -> dict[str, int]:
    return {name: outcomes.count(name) for name in REFUSAL_OUTCOMES}


def _refusal_rate(outcomes: Sequence[str]) -> Statistic:
    counts = _outcome_counts(outcomes)
    out = counts["marked_by_grammar"] + counts["judged_out"]
    if not outcomes:
        return Undefined("no answers")
    if counts["not_judged"]:
        return Undefined(
            f"{counts['not_judged']} of {len(outcomes)} answers not judged: the grammar does not "
            "mark them and no refusal judge is bound (--role refusal=MODEL)"
        )
    if not out + counts["judged_in"]:
        return Undefined("no answer's verdict could be read")
    return out / (out + counts["judged_in"])


def _at_least(outcomes: Sequence[str]) -> Statistic:
    if not outcomes:
        return Undefined("no answers")
    counts = _outcome_counts(outcomes)
    return (counts["marked_by_grammar"] + counts["judged_out"]) / len(outcomes)


def _counts(events: pd.DataFrame, kind: str, per_answer: bool = False) -> dict[str, int]:
    """Events of `kind` per stage. A batch evaluation counts once, or (`per_answer`, as for
    failures: the evaluator scores lost) once per answer of its batch."""
    found = payloads(events, kind)
    tasks = [p["task"] for p in found]
    counts = {stage: tasks.count(task) for stage, task in STAGE_TASKS.items()}
    counts["evaluate"] += sum(
        len(p["questions"]) if per_answer else 1
        for p in found
        if p["task"] == "persona_gym.evaluate_batch"
    )
    return counts


def _score_fields(scores: dict[str, Statistic]) -> dict[str, Any]:
    """Each task's score (and PersonaScore) with the reason beside an undefined one."""
    return {k: v for task, value in scores.items() for k, v in stat_fields(task, value).items()}


def _rounded_record(record: dict[str, Any]) -> dict[str, Any]:
    return {k: rounded(v) if isinstance(v, float) else v for k, v in record.items()}
