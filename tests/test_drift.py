"""The scripted backend's drift mode (real models' habits) and every scenario run under it.

Unit tests pin the spec, the habits and the draws; one run per scenario at `drift=0.3` checks the
framework's invariants on output the parsers were not written against: the run completes,
re-asks and failures happen and are recorded with the model's own reply, a failed decision has no
value and no outcome event, outcomes and decisions pair up, and the metrics recompute from the
log. Each such test also checks that drift did put the habits into the replies.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from personasim.analysis import model_label
from personasim.simulation import (
    ChatRequest,
    ChatResponse,
    Message,
    ModelSpecError,
    RunResult,
    RunSettings,
    Scenario,
    ScriptedBackend,
    SQLiteEventStore,
    TokenLogprob,
    compute_run_metrics,
    events_frame,
    make_backend,
    parse_model_spec,
    run_scenario,
    scripted_behaviour,
    split_list,
)
from personasim.simulation.cli.main import main
from personasim.simulation.llm.drift import (
    HABITS,
    PREAMBLE,
    REFUSAL,
    TRAILING,
    applicable_habits,
    apply_habit,
    round_number,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@scripted_behaviour("test.drift")
def _closing_rule(request: ChatRequest, rng: np.random.Generator) -> str:
    amount = int(rng.integers(0, 11))
    return f"BELIEF: b.\nINTENTION: send {amount}.\nFinally, I will give {amount} dollars"


def request(i: int, reask: bool = False) -> ChatRequest:
    messages = [Message(role="user", content=f"prompt {i}")]
    if reask:
        messages += [
            Message(role="assistant", content="unusable"),
            Message(role="user", content="Your answer could not be used."),
        ]
    return ChatRequest(messages=tuple(messages), task="test.drift")


def answers(backend: ScriptedBackend, requests: list[ChatRequest]) -> list[str]:
    async def ask() -> list[ChatResponse]:
        return await asyncio.gather(*(backend.complete(r, timeout=1.0) for r in requests))

    return [r.text for r in asyncio.run(ask())]


# --- the spec ---------------------------------------------------------------------------------


def test_drift_spec_is_parsed_and_part_of_the_identity() -> None:
    plain, drifting = make_backend("scripted", seed=7), make_backend("scripted:drift=0.15", seed=7)
    assert isinstance(drifting, ScriptedBackend) and drifting.drift == 0.15
    assert drifting.seed == 7 and make_backend("scripted:drift=0.15,seed=3", seed=7).seed == 3
    assert make_backend("scripted:seed=3,drift=1").drift == 1.0
    assert make_backend("scripted:drift=0", seed=7).identity() == plain.identity()
    assert drifting.identity()["drift"] == 0.15 != plain.identity()["drift"]
    assert drifting.cache_key(request(1)) != plain.cache_key(request(1))
    assert "0.15 of its answers drift" in drifting.describe()["note"]
    assert "not a language model" in drifting.describe()["note"]
    assert model_label(drifting.describe()) == "scripted:drift=0.15"
    assert model_label(plain.describe()) == "scripted"
    spec = parse_model_spec("scripted:drift=0.15,seed=3")
    assert (spec.kind, spec.option_dict) == ("scripted", {"drift": 0.15, "seed": 3})
    assert parse_model_spec("scripted:seed=2").option_dict == {"seed": 2}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("scripted:drift=1.5", "drift=1.5 must be a share of answers from 0 to 1"),
        ("scripted:drift=-0.1", "must be a share of answers from 0 to 1"),
        ("scripted:drift=nan", "must be a share of answers from 0 to 1"),
        ("scripted:drift=lots", "must be a share of answers from 0 to 1"),
        ("scripted:temperature=1", "unknown option 'temperature=1'; scripted takes drift=, seed="),
        ("scripted:drift", "unknown option 'drift'"),
        ("scripted:", "unknown option ''"),
        ("scripted:drift=0.1,drift=0.2", "drift is given twice"),
        ("scripted:seed=1.5", "seed=1.5 must be a whole number"),
        ("scripted:seed=-1", "seed=-1 must be a whole number"),
    ],
)
def test_bad_drift_specs_are_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(ModelSpecError, match=re.escape(f"model {spec!r}: ")):
        parse_model_spec(spec)  # read before anything is built
    with pytest.raises(ModelSpecError, match=re.escape(message)):
        make_backend(spec)


def test_bad_spec_on_the_command_line_exits_2_and_writes_nothing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert main(["run", "trust-population", "--model", "scripted:drift=2", "--out", str(out)]) == 2
    assert "drift=2 must be a share of answers from 0 to 1" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(ValueError, match="between 0 and 1"):
        ScriptedBackend(drift=1.2)


def test_comma_lists_keep_a_specs_options_together() -> None:
    assert split_list("scripted:drift=0.1,seed=3, openai:m,scripted") == [
        "scripted:drift=0.1,seed=3",
        "openai:m",
        "scripted",
    ]
    assert split_list("Age,Sex") == ["Age", "Sex"]


# --- the habits -------------------------------------------------------------------------------

CLOSING = "BELIEF: b.\nINTENTION: I will send 7 of my 10 dollars.\nFinally, I will give 7 dollars"


def test_each_habit_on_a_closing_sentence() -> None:
    """What each habit does, as docs/scripted.md shows it."""
    head = "BELIEF: b.\nINTENTION: I will send 7 of my 10 dollars.\n"
    expected = {
        "preamble": PREAMBLE + CLOSING,
        "trailing": CLOSING + TRAILING,
        "bold": head + "**Finally, I will give 7 dollars**",
        "boxed": head + "Finally, I will give \\boxed{7} dollars",
        "final_answer_is": head + "The final answer is 7.",
        "round": CLOSING.replace("7", "5"),
        "refusal": REFUSAL,
        "empty": "",
    }
    response = ChatResponse(text=CLOSING)
    assert applicable_habits(response) == [h for h in HABITS if h != "fence"]
    for habit, text in expected.items():
        assert apply_habit(habit, response).text == text, habit
    one_line = ChatResponse(text="Um... (2) Not sure. I think it is 1,450? Final Answer: 1,450")
    assert apply_habit("bold", one_line).text.endswith("1,450? **Final Answer: 1,450**")
    assert apply_habit("round", one_line).text == (
        "Um... (2) Not sure. I think it is 1,000? Final Answer: 1,000"  # the tag (2) is kept
    )


def test_json_answers_get_fences_and_round_numbers_not_markup() -> None:
    stats = '{"A": {"mean": 4.95, "sd": 1.2}, "B": {"mean": 5.3, "sd": 1.2}}'
    response = ChatResponse(text=stats)
    assert applicable_habits(response) == [
        "fence",
        "preamble",
        "trailing",
        "round",
        "refusal",
        "empty",
    ]
    assert apply_habit("fence", response).text == f"```json\n{stats}\n```"
    tied = apply_habit("round", response).text
    assert tied == '{"A": {"mean": 5.0, "sd": 1.0}, "B": {"mean": 5.0, "sd": 1.0}}'  # a tie
    labels = ChatResponse(text='{"ranking_descending": ["45-64", "65+"], "size": "small"}')
    assert "round" not in applicable_habits(labels)  # numbers in strings are labels, not values
    prose = ChatResponse(text="The 45-64 group and the 65+ group send 7 dollars.")
    assert apply_habit("round", prose).text == "The 45-64 group and the 65+ group send 5 dollars."


def test_round_number_is_the_nearest_of_the_1_2_5_series() -> None:
    series = sorted({m * 10.0**k for k in range(-3, 7) for m in (1, 2, 5)} | {0.0})
    for value in [0, 0.004, 0.3, 1, 1.4, 1.5, 3, 3.5, 4, 7, 7.5, 8, 15, 37, 44, 999, 1450, 6e5]:
        nearest = min(series, key=lambda c: (abs(c - value), c))
        assert math.isclose(round_number(value), nearest), value


def test_answers_with_logprobs_keep_their_tokens() -> None:
    """A fence or a preamble around a survey answer leaves the option token's logprobs as they
    were; habits that would rewrite the answer's own tokens do not apply."""
    top = {"3": -0.2, "2": -1.9, '"': -3.5}
    tokens = [
        TokenLogprob(token='{"option_id":', logprob=0.0),
        TokenLogprob(token=" 3", logprob=-0.2, top=top),
        TokenLogprob(token="}", logprob=0.0),
    ]
    response = ChatResponse(text='{"option_id": 3}', logprobs=tokens)
    names = applicable_habits(response)
    assert names == ["fence", "preamble", "trailing", "refusal", "empty"]
    for name in ("fence", "preamble", "trailing"):
        drifted = apply_habit(name, response)
        assert "".join(t.token for t in drifted.logprobs) == drifted.text
        assert [t.top for t in drifted.logprobs if t.top] == [top]
    assert apply_habit("empty", response).logprobs == []


# --- the draws --------------------------------------------------------------------------------


def test_drift_is_seeded_nested_and_rarer_on_reasks() -> None:
    n = 600
    first = [request(i) for i in range(n)]
    reasks = [request(i, reask=True) for i in range(n)]
    plain = answers(ScriptedBackend(seed=1), first)
    low = answers(ScriptedBackend(seed=1, drift=0.15), first)
    high = answers(ScriptedBackend(seed=1, drift=0.3), first)
    assert answers(ScriptedBackend(seed=1, drift=0.3), first[::-1])[::-1] == high  # any order
    assert answers(ScriptedBackend(seed=2, drift=0.3), first) != high
    changed_low = {i for i in range(n) if low[i] != plain[i]}
    changed_high = {i for i in range(n) if high[i] != plain[i]}
    assert changed_low <= changed_high  # a higher rate rewrites a superset
    # ...with the same habits, unless the higher rate made the conversation a persistent refusal
    assert all(low[i] == high[i] or high[i] == REFUSAL for i in changed_low)
    # Rewritten: D/5 persistent refusals, then D of the rest; the round habit can leave an
    # already round number as it was, so the changed share is a little below 0.06 + 0.94 × 0.3.
    assert 0.22 < len(changed_high) / n < 0.42
    retried = answers(ScriptedBackend(seed=1, drift=0.3), reasks)
    retried_plain = answers(ScriptedBackend(seed=1), reasks)
    changed_reasks = {i for i in range(n) if retried[i] != retried_plain[i]}
    assert len(changed_reasks) < len(changed_high) / 2
    stubborn = [i for i in range(n) if high[i] == REFUSAL and retried[i] == REFUSAL]
    assert 12 <= len(stubborn) <= 60  # about 0.06 × 600 refuse at every attempt
    habits = Counter(_habit(t) for i, t in enumerate(high) if i in changed_high)
    assert set(habits) == {h for h in HABITS if h != "fence"}, habits
    one_off = {h: n for h, n in habits.items() if h != "refusal"}  # refusals also persist
    assert habits["round"] == max(one_off.values())  # weighted: ties are common


def _habit(text: str) -> str:
    for name, sign in HABIT_SIGNS.items():
        if sign(text):
            return name
    return "round"


HABIT_SIGNS: dict[str, Callable[[str], bool]] = {
    "fence": lambda t: "```" in t,
    "empty": lambda t: t == "",
    "refusal": lambda t: t == REFUSAL,
    "preamble": lambda t: t.startswith(PREAMBLE),
    "trailing": lambda t: t.endswith(TRAILING),
    "bold": lambda t: "**" in t,
    "boxed": lambda t: "\\boxed{" in t,
    "final_answer_is": lambda t: "The final answer is" in t,
}
"""How each habit shows in a reply (the round-numbers habit leaves no mark of its own)."""


# --- every scenario under drift ---------------------------------------------------------------

DRIFT = "scripted:drift=0.3"


@dataclass(frozen=True)
class Outcome:
    """Decisions of `tasks` that are followed by an outcome event of `kind` (same `key`)."""

    tasks: frozenset[str]
    kind: str
    key: tuple[str, ...] = ("scope", "agent_id")
    counts: Callable[[dict[str, Any]], bool] = lambda payload: True
    """Which made decisions produce the outcome (e.g. only a student's final answer)."""


def drift_run(tmp_path: Path, scenario: Any, params: dict[str, Any]) -> RunResult:
    return run_scenario(
        scenario, params, out=tmp_path / "run", model=DRIFT, progress=False, use_cache=False
    )


def events_of(result: RunResult) -> pd.DataFrame:
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        return events_frame(store.read())


def check_drift_run(
    result: RunResult,
    outcomes: list[Outcome],
    scenario: type[Scenario] | None = None,
    habits: int = 3,
) -> pd.DataFrame:
    """The invariants every scenario keeps on drifting output; returns the events. A scenario
    outside the registry (an example) is given, and its metrics recomputed from Python;
    `habits`: how many habits must show in the replies."""
    assert result.manifest["status"] == "complete"
    assert result.manifest["model"]["drift"] == 0.3
    events = events_of(result)
    kinds = Counter(events["kind"])
    assert kinds["decision.reask"] > 0 and kinds["decision.failed"] > 0, kinds
    _drift_shows(events, habits)
    _validity_counts_the_events(result.manifest["validity"], events)
    _failures_keep_the_models_reply(events)
    for outcome in outcomes:
        _outcomes_pair_with_decisions(events, outcome)
    if scenario is None:
        assert main(["metrics", str(result.run_dir), "--check"]) == 0
    else:
        with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
            recomputed = compute_run_metrics(store, scenario)
        assert recomputed == json.loads((result.run_dir / "metrics.json").read_text())
    return events


def _drift_shows(events: pd.DataFrame, habits: int) -> None:
    """Drift did rewrite replies: several habits, in at least a tenth of the replies."""
    replies = [p["response"]["text"] for p in events.loc[events["kind"] == "llm.call", "payload"]]
    seen = Counter(name for t in replies for name, sign in HABIT_SIGNS.items() if sign(t))
    assert len(seen) >= habits and sum(seen.values()) >= len(replies) / 10, seen


def _validity_counts_the_events(validity: dict[str, Any], events: pd.DataFrame) -> None:
    """The manifest's validity, per task and overall, is the count of the decision events."""
    counts = Counter(
        (p["task"], kind)
        for kind in ("decision.made", "decision.failed", "decision.reask")
        for p in events.loc[events["kind"] == kind, "payload"]
    )
    tasks = sorted({task for task, _ in counts})
    assert sorted(validity["tasks"]) == tasks
    for name in [*tasks, None]:
        entry = validity["overall"] if name is None else validity["tasks"][name]
        made, failed, reasks = (
            sum(n for (task, k), n in counts.items() if k == kind and name in (None, task))
            for kind in ("decision.made", "decision.failed", "decision.reask")
        )
        assert (entry["parsed"], entry["failed"], entry["reasks"]) == (made, failed, reasks)
        assert entry["decisions"] == made + failed
        assert math.isclose(entry["failure_rate"], failed / (made + failed), abs_tol=1e-6)
        assert entry["ok"] == (entry["failure_rate"] <= entry["max_failure_rate"]) or name is None
    overall_ok = validity["overall"]["failure_rate"] <= validity["overall"]["max_failure_rate"]
    assert validity["overall"]["ok"] == (
        overall_ok and all(t["ok"] for t in validity["tasks"].values())
    )


def _failures_keep_the_models_reply(events: pd.DataFrame) -> None:
    """A failure has no value; its `last_reply` is the reply of its own last model call."""
    calls = events[events["kind"] == "llm.call"]
    for failed in events[events["kind"] == "decision.failed"].itertuples():
        payload = failed.payload
        assert "value" not in payload and payload["error"]
        own = calls[
            (calls["scope"] == failed.scope)
            & (calls["agent_id"] == failed.agent_id)
            & (calls["seq"] < failed.seq)
            & calls["payload"].map(lambda p, task=payload["task"]: p["task"] == task)
        ]
        assert payload["last_reply"] == own.iloc[-1]["payload"]["response"]["text"]


def _outcomes_pair_with_decisions(events: pd.DataFrame, outcome: Outcome) -> None:
    """Each counted decision.made is followed by exactly one outcome before the next decision
    of its tasks (same key); a decision.failed by none. So outcomes = made, failures have none."""
    decided = events["kind"].isin(["decision.made", "decision.failed"]) & events["payload"].map(
        lambda p: p.get("task") in outcome.tasks
    )
    relevant = events[decided | (events["kind"] == outcome.kind)]
    made = failed = outcomes = 0
    for _, group in relevant.groupby(list(outcome.key), dropna=False):
        state = None
        for row in group.sort_values("seq").itertuples():
            if row.kind == outcome.kind:
                assert state == "open", f"{outcome.kind} without a decision: {row.payload}"
                state, outcomes = "closed", outcomes + 1
                continue
            assert state != "open", f"decision without {outcome.kind}: {row.payload}"
            if row.kind == "decision.failed":
                state, failed = "failed", failed + 1
            elif outcome.counts(row.payload):
                state, made = "open", made + 1
        assert state != "open", f"decision without {outcome.kind} at the end of {group}"
    assert made == outcomes > 0 and failed >= 0


def test_trust_population_under_drift(tmp_path: Path) -> None:
    result = drift_run(tmp_path, "trust-population", {"n_personas": 60})
    events = check_drift_run(result, [Outcome(frozenset({"trust.trustor"}), "trust.transfer")])
    metrics, kinds = result.metrics["metrics"], Counter(events["kind"])
    assert metrics["n_decisions"] == kinds["trust.transfer"] == kinds["decision.made"]
    assert metrics["parse_failures"] == kinds["decision.failed"] > 0
    assert metrics["reasks"] == kinds["decision.reask"]


def test_trust_beliefs_under_drift(tmp_path: Path) -> None:
    result = drift_run(tmp_path, "trust-beliefs", {"n_personas": 60})
    events = check_drift_run(result, [Outcome(frozenset({"trust.trustor"}), "trust.transfer")])
    failed = [p for p in events.loc[events["kind"] == "decision.failed", "payload"]]
    beliefs = [p for p in failed if p["task"].startswith("trust.belief.")]
    assert result.metrics["metrics"]["elicitation_failures"] == len(beliefs)
    beliefs_of = result.metrics["metrics"]["beliefs"].values()
    elicited = sum(1 for v in beliefs_of for r in v.values() if "missing" not in r)
    made = events.loc[events["kind"] == "decision.made", "payload"]
    assert elicited == sum(p["task"].startswith("trust.belief.") for p in made)


def test_trust_conditioning_under_drift(tmp_path: Path) -> None:
    result = drift_run(tmp_path, "trust-conditioning", {"n_personas": 20})
    check_drift_run(result, [Outcome(frozenset({"trust.trustor"}), "trust.transfer")])


def test_trust_forecast_under_drift(tmp_path: Path) -> None:
    result = drift_run(tmp_path, "trust-forecast", {"n_personas": 4, "rounds": 4})
    events = check_drift_run(result, [Outcome(frozenset({"trust.react"}), "trust.transfer")])
    failed = Counter(p["task"] for p in events.loc[events["kind"] == "decision.failed", "payload"])
    per_archetype = result.metrics["metrics"]["archetypes"].values()
    assert sum(a["forecast_failures"] for a in per_archetype) == failed["trust.forecast"]


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_classroom_under_drift(tmp_path: Path) -> None:
    params = {
        "n_questions": 8,
        "repetitions": 2,
        "strategies": "none,zero-shot,self-refine,two-stage",
        "races": "none,AA",
        "orders": "before",
    }
    result = drift_run(tmp_path, "classroom", params)
    answers = frozenset({"classroom.answer", "classroom.refine", "classroom.rewrite"})
    events = check_drift_run(
        result, [Outcome(answers, "classroom.graded", counts=lambda p: p["final"])]
    )
    metrics = result.metrics["metrics"]
    failed = Counter(p["task"] for p in events.loc[events["kind"] == "decision.failed", "payload"])
    assert metrics["judge_failures"] == failed["classroom.judge"] > 0
    assert metrics["answer_failures"] == sum(failed.values()) - failed["classroom.judge"]
    graded = events.loc[events["kind"] == "classroom.graded", "payload"]
    unstated = sum(g["status"] == "unreadable" for g in graded)
    assert metrics["unreadable_answers"] == unstated > 0


def test_persona_gym_under_drift(tmp_path: Path) -> None:
    params = {
        "n_personas": 3,
        "n_environments": 2,
        "questions_per_task": 3,
    }  # the drifting double plays every role, both evaluator seats included
    result = drift_run(tmp_path, "persona-gym", params)
    events = check_drift_run(
        result,
        [
            Outcome(frozenset({"persona_gym.select"}), "gym.placed", key=("scope",)),
            Outcome(frozenset({"persona_gym.questions"}), "gym.questions", key=("scope",)),
        ],
    )
    failed = Counter(p["task"] for p in events.loc[events["kind"] == "decision.failed", "payload"])
    metrics = result.metrics["metrics"]
    assert sum(metrics["failures"].values()) == sum(failed.values())
    assert metrics["refusals"]["n"] > 0  # drifted refusals are counted as the paper's refusals


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_career_chat_under_drift(tmp_path: Path) -> None:
    params = {"n_users": 8, "n_items": 3, "judge_samples": 1, "emd_repeats": 10}
    params |= {"bootstrap": 50, "permutations": 50}
    result = drift_run(tmp_path, "career-chat", params)
    events = check_drift_run(
        result,
        [
            Outcome(frozenset({"career.ooc"}), "career.question", key=("scope",)),
            Outcome(frozenset({"career.assistant"}), "career.answer", key=("scope",)),
        ],
    )
    failed = Counter(p["task"] for p in events.loc[events["kind"] == "decision.failed", "payload"])
    counted = result.metrics["metrics"]["failures"]
    assert counted == {name: failed[f"career.{name}"] for name in counted}


def test_coin_guess_example_under_drift(tmp_path: Path) -> None:
    sys.path.insert(0, str(EXAMPLES))
    from coin_guess import CoinGuess

    result = drift_run(tmp_path, CoinGuess, {"n_personas": 30, "rounds": 3})
    guesses = Outcome(frozenset({"coin.guess"}), "coin.graded", key=("round", "agent_id"))
    events = check_drift_run(result, [guesses], CoinGuess)
    assert result.metrics["metrics"]["parse_failures"] == Counter(events["kind"])["decision.failed"]


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_trust_population_under_drift_with_a_json_response_format(tmp_path: Path) -> None:
    """Constrained decoding keeps the JSON valid: drift only rounds numbers or empties replies
    (a refusal arrives as empty content), and the failures are still counted, not defaulted."""
    result = run_scenario(
        "trust-population",
        {"n_personas": 60},
        out=tmp_path / "run",
        model=DRIFT,
        progress=False,
        use_cache=False,
        settings=RunSettings(response_format="json_schema"),
    )
    transfers = Outcome(frozenset({"trust.trustor"}), "trust.transfer")
    events = check_drift_run(result, [transfers], habits=1)  # empty replies; rounding below
    replies = [p["response"]["text"] for p in events.loc[events["kind"] == "llm.call", "payload"]]
    empty = [t for t in replies if t == ""]
    assert empty and all(json.loads(t) for t in replies if t), "only JSON or empty replies"
    plain = run_scenario(
        "trust-population",
        {"n_personas": 60},
        out=tmp_path / "plain",
        progress=False,
        use_cache=False,
        settings=RunSettings(response_format="json_schema"),
    )
    sent = dict(zip(*_transfers(events), strict=True))
    plain_sent = dict(zip(*_transfers(events_of(plain)), strict=True))
    rounded = {a for a, s in sent.items() if s != plain_sent[a]}
    assert rounded and all(sent[a] in (0, 1, 2, 5, 10) for a in rounded)  # the round habit


def _transfers(events: pd.DataFrame) -> tuple[list[str], list[int]]:
    rows = events[events["kind"] == "trust.transfer"]
    return rows["agent_id"].tolist(), [p["sent"] for p in rows["payload"]]
