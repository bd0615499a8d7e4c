"""The reading audit: a seeded sample re-read by an independent reader, a Wilson interval on
the wrong-read rate, validity and exit 3, the report; on real runs over a fake server whose
truth is known (a deliberately naive reader with a known wrong-read rate)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_openai import FakeOpenAIServer
from pydantic import Field
from scipy.stats import binomtest

from personasim.agents import DecisionTask, PersonaAgent, parse_nonempty, synthetic_population
from personasim.simulation import (
    ChatRequest,
    Message,
    Reading,
    Scenario,
    ScenarioParams,
    Simulation,
    register_reader,
    run_scenario,
)
from personasim.simulation.cli.main import main
from personasim.simulation.runs.lifecycle.reading_audit import (
    audit_summary,
    reading_counts,
    wilson_interval,
)
from personasim.simulation.runs.lifecycle.validity import (
    ValidityLimits,
    validity_from_events,
    validity_summary,
    with_readings,
)
from personasim.simulation.runs.tools.reader_role import read_value_line

N_PERSONAS = 200
WRONG_EVERY = 4
"""Every 4th persona's reply puts another number before its answer: the naive reader reads
that one, so the true wrong-read rate is exactly 1/4."""


def truth(index: int) -> int:
    return 10 + index % 7


def reply_for(index: int) -> str:
    decoy = f"I weighed {40 + index % 5} options. " if index % WRONG_EVERY == 0 else ""
    return f"{decoy}My final number: {truth(index)}."


def naive_first_number(text: str) -> Reading:
    """The kind of reader the issue removes: the first number of the reply."""
    found = re.search(r"\d+", text)
    if found is None:
        return Reading.unreadable("no number")
    return Reading.of(float(found.group()), "first number")


def after_marker(text: str, context: Any) -> Reading:
    """An independent reader: the number after 'final number:'."""
    found = re.search(r"final number:\s*(\d+)", text, re.IGNORECASE)
    if found is None:
        return Reading.unreadable("no 'final number:'", "marker")
    return Reading.of(float(found.group(1)), "marker")


register_reader("test-final-number", after_marker)


class NumberParams(ScenarioParams):
    n_personas: int = Field(N_PERSONAS, ge=1)
    reader: str = "test-final-number"


class NumberGame(Scenario):
    """Each persona says a number; the scenario reads it with the naive reader and logs it."""

    name = "test-number-game"
    summary = "personas say a number (reading-audit test)"
    Params = NumberParams
    params: NumberParams

    def setup(self, sim: Simulation) -> None:
        personas = synthetic_population(self.params.n_personas, sim.rng)
        self.players = [PersonaAgent(sim, p) for p in personas]

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        decisions = await sim.concurrently(
            {p.agent_id: (lambda p=p: p.decide(self._task(p))) for p in self.players}
        )
        for player in self.players:
            reply = decisions[player.agent_id].value
            sim.record_reading(
                player.agent_id, self.params.reader, reply, naive_first_number(reply)
            )

    def _task(self, player: PersonaAgent) -> DecisionTask:
        index = self.players.index(player)
        prompt = f"Persona {index}: say your number."
        return DecisionTask(
            name="number.say",
            request=ChatRequest(messages=(Message(role="user", content=prompt),), task="say"),
            parse=parse_nonempty,
            reminder=lambda error: error,
        )

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        return {"readings": int((events["kind"] == "reading.made").sum())}

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return [f"{metrics['readings']} readings"]


def persona_reply(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if prompt.startswith("Persona "):
        return reply_for(int(prompt.split()[1].rstrip(":")))
    text = prompt.split("----------\n", 1)[1].rsplit("\n----------", 1)[0]
    return f"Value: {after_marker(text, {}).value:g}"  # the reader role knows the truth


def number_run(tmp_path: Path, server: FakeOpenAIServer, reader: str) -> Path:
    out = tmp_path / reader
    run_scenario(
        NumberGame,
        {"reader": reader},
        model="openai:fake",
        base_url=server.base_url,
        out=out,
        use_cache=False,
        progress=False,
    )
    return out


def test_wilson_interval_matches_scipy_and_is_undefined_at_n_0() -> None:
    for k, n in ((0, 20), (20, 20), (3, 60), (1, 1)):
        expected = binomtest(k, n).proportion_ci(method="wilson")
        assert wilson_interval(k, n) == pytest.approx((expected.low, expected.high))
    assert wilson_interval(0, 0) is None
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.15 < high < 0.17  # a boundary proportion keeps a width


def test_the_library_audit_finds_the_known_wrong_read_rate(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=persona_reply) as server:
        run_dir = number_run(tmp_path, server, "test-final-number")
    code = main(["audit", str(run_dir), "--sample", "80", "--audit-seed", "3"])
    printed = capsys.readouterr().out
    audit = json.loads((run_dir / "reports" / "readings_audit.json").read_text())
    result = audit["readers"]["test-final-number"]
    assert result["sampled"] == 80 and result["unconfirmed"] == 0
    assert result["agree"] + result["disagree"] == 80
    low, high = result["interval"]
    assert low <= 1 / WRONG_EVERY <= high  # the truth lies in the reported interval
    assert result["disagree"] > 0 and not result["ok"] and code == 3
    assert "RUN NOT VALID" in printed and "wrong-read rate" in printed
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["validity"]["overall"]["ok"] is False
    assert manifest["validity"]["readings"]["test-final-number"]["read"] == N_PERSONAS
    report = (run_dir / "reports" / "readings_audit.md").read_text()
    assert "test-final-number: disagreements" in report and "I weighed" in report
    for row in result["disagreements"]:
        assert row["logged"] != row["auditor"]


def test_the_reader_role_audits_over_http_and_the_truth_is_in_the_interval(
    tmp_path: Path, capsys
) -> None:
    with FakeOpenAIServer(responder=persona_reply) as server:
        run_dir = number_run(tmp_path, server, "math_answer")
        code = main(
            ["audit", str(run_dir), "--sample", "50", "--no-cache",
             "--role", f"reader=openai:fake@{server.base_url}"]
        )  # fmt: skip
        asked = [b for b in server.requests if "careful grader" in b["messages"][-1]["content"]]
    capsys.readouterr()
    audit = json.loads((run_dir / "reports" / "readings_audit.json").read_text())
    result = audit["readers"]["math_answer"]
    assert len(asked) == 50 and all(b["temperature"] == 0.0 for b in asked)
    assert audit["auditor"].startswith("the reader role")
    low, high = result["interval"]
    assert low <= 1 / WRONG_EVERY <= high and code == 3


def test_a_correct_reader_passes_the_audit(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=lambda body: "My final number: 12.") as server:
        run_dir = number_run(tmp_path, server, "test-final-number")
    assert main(["audit", str(run_dir), "--sample", "40"]) == 3  # 0 of 40: up to 8.8 %
    assert main(["audit", str(run_dir), "--sample", "100"]) == 0  # 0 of 100: up to 3.7 %
    audit = json.loads((run_dir / "reports" / "readings_audit.json").read_text())
    result = audit["readers"]["test-final-number"]
    assert result["disagree"] == 0 and result["interval"][1] < 0.05 and result["ok"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["validity"]["overall"]["ok"] is True  # the later audit replaces the first


def test_readers_without_an_independent_reader_are_listed_as_not_audited(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=lambda body: "My final number: 12.") as server:
        run_dir = number_run(tmp_path, server, "test-unregistered-reader")
    assert main(["audit", str(run_dir), "--sample", "10"]) == 0
    audit = json.loads((run_dir / "reports" / "readings_audit.json").read_text())
    assert audit["readers"]["test-unregistered-reader"] == {
        "audited": False,
        "readings": N_PERSONAS,
        "ok": True,
        "reason": "no independent reader is registered for it",
    }


def test_reading_counts_per_status_and_rule() -> None:
    counts = reading_counts(
        [
            {"reader": "r", "status": "read", "by": "a"},
            {"reader": "r", "status": "read", "by": "b"},
            {"reader": "r", "status": "ambiguous"},
            {"reader": "r", "status": "unreadable"},
        ]
    )
    assert counts == {
        "r": {"n": 4, "read": 2, "unreadable": 1, "ambiguous": 1, "by": {"a": 1, "b": 1}}
    }


@pytest.mark.parametrize(
    ("reply", "reader", "status", "value"),
    [
        ("Value: 42", "math_answer", "read", 42.0),
        ("**Value:** -3.5", "math_answer", "read", -3.5),
        ("Value: unreadable", "math_answer", "unreadable", None),
        ("Value: 1,000", "math_answer", "unreadable", None),
        ("Value: 4\nValue: 5", "math_answer", "unreadable", None),
        ("The value is 4", "transfer", "unreadable", None),
        ("Value: yes", "refusal", "read", True),
        ("Value: No.", "refusal", "read", False),
        ("Value: maybe", "refusal", "unreadable", None),
    ],
)
def test_the_reader_role_reply_is_read_strictly(
    reply: str, reader: str, status: str, value: object
) -> None:
    reading = read_value_line(reply, reader)
    assert reading.status == status and reading.value == value


def test_too_many_unreadable_texts_make_a_run_not_valid_and_say_why() -> None:
    limits = ValidityLimits(max_failure_rate=0.2)
    decisions = validity_from_events([], limits)
    decisions["overall"].update(ok=True, failure_rate=0.0, decisions=10)
    counts = reading_counts(
        [{"reader": "math_answer", "status": "read", "by": "g"}] * 7
        + [{"reader": "math_answer", "status": "unreadable"}] * 2
        + [{"reader": "math_answer", "status": "ambiguous"}]
    )
    checked = with_readings(decisions, counts, limits)
    entry = checked["readings"]["math_answer"]
    assert entry["unread_rate"] == 0.3 and entry["ok"] is False
    assert checked["overall"]["ok"] is False
    line = validity_summary(checked)
    assert line.startswith("RUN NOT VALID: more texts than the limit of 20% could not be read")
    assert "math_answer 2 unreadable and 1 ambiguous of 10 (30%)" in line
    assert with_readings(decisions, {}, limits)["overall"]["ok"] is True


def test_a_run_without_readings_says_so() -> None:
    assert audit_summary({"readers": {}, "max_wrong_rate": 0.05}) == [
        "no reading was logged in this run (a run made before readings were logged)"
    ]
