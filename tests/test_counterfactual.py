"""`personasim counterfactual`: each persona once per level of one attribute, all else fixed.

On the scripted model: no effect where its rules have none (Sex), the rule's sign and size
where they do (Agreeableness High − Low = +0.30 of the endowment, scenarios/trust/scripted.py);
2 levels × 20 personas = 40 decisions; the run replays, resumes and recomputes its metrics.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer
from scipy import stats

from personasim.agents import Persona, counterfactual_twins, synthetic_population
from personasim.analysis import holm
from personasim.scenarios.trust.scripted import TRUSTOR_EFFECTS
from personasim.simulation import SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main

N = 20


def counterfactual(out: Path, attribute: str, levels: str, **kwargs):
    params = {
        "n_personas": N,
        "counterfactual_attribute": attribute,
        "counterfactual_levels": levels,
        **kwargs.pop("params", {}),
    }
    return run_scenario("trust-population", params, out=out, progress=False, **kwargs)


def events(run_dir: Path) -> list:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read())


def rows(result, subgroup: str = "all") -> list[dict]:
    block = result.metrics["metrics"]["counterfactual"]
    return [r for r in block["rows"] if r["subgroup"] == subgroup]


def test_an_attribute_the_rules_use_moves_every_persona_the_rules_way(tmp_path: Path) -> None:
    result = counterfactual(tmp_path / "r", "Agreeableness", "Low,High")
    logged = events(result.run_dir)
    decisions = [e for e in logged if e.kind in ("decision.made", "decision.failed")]
    assert len(decisions) == 2 * N  # exactly one decision per persona per level
    made = sum(e.kind == "decision.made" for e in decisions)
    (row,) = rows(result)
    block = result.metrics["metrics"]["counterfactual"]
    assert block["personas"] == N and block["agents"] == 2 * N
    assert block["decisions_made"] == made
    assert row["level_a"] == "Low" and row["level_b"] == "High"
    assert row["n"] + row["n_missing"] == N and row["n"] >= N - 2
    rule = TRUSTOR_EFFECTS["Agreeableness"]
    expected = (rule["High"] - rule["Low"]) * 10  # dollars of a 10-dollar endowment
    assert 0 < row["ci_low"] <= row["mean_difference"] <= row["ci_high"]
    assert row["mean_difference"] == pytest.approx(expected, abs=0.5)  # clipping at 0 and 10
    assert row["changed"] > 0.8 and row["p_holm"] < 0.01
    assert (
        row["test"] == "Wilcoxon signed-rank, zero differences dropped" and row["interval"] == "t"
    )
    table = (result.run_dir / "reports" / "counterfactual.csv").read_text().splitlines()
    assert table[0].startswith("decision,subgroup,level_a,level_b,n,n_missing,mean_difference")
    assert len(table) == 2 and (result.run_dir / "reports" / "counterfactual.png").stat().st_size


def test_an_attribute_the_rules_ignore_changes_no_decision(tmp_path: Path) -> None:
    """Common draws: the twins' noise is the same, so Sex (no rule) changes nothing at all."""
    assert "Sex" not in TRUSTOR_EFFECTS
    result = counterfactual(tmp_path / "r", "Sex", "Male,Female")
    (row,) = rows(result)
    assert row["n"] >= N - 2 and row["mean_difference"] == 0.0 and row["changed"] == 0.0
    assert row["ci_low"] is None and row["ci_low_undefined"].startswith("every value is the same")
    assert row["p"] is None and row["p_undefined"] == "all differences are zero"
    assert "all differences are zero" in row["note"]


def test_twins_differ_in_one_prompt_line_and_share_their_persona(tmp_path: Path) -> None:
    result = counterfactual(tmp_path / "r", "Sex", "Male,Female", params={"n_personas": 4})
    logged = events(result.run_dir)
    twins = {
        e.agent_id: e.payload["persona"]
        for e in logged
        if e.kind == "agent.created" and "persona" in e.payload
    }
    assert len(twins) == 8
    prompts: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for e in logged:
        if e.kind == "llm.call" and len(e.payload["messages"]) == 1:
            twin = twins[e.agent_id]["counterfactual"]
            prompts[twin["of"]][twin["level"]] = e.payload["messages"][0]["content"].splitlines()
    assert len(prompts) == 4
    for by_level in prompts.values():
        male, female = by_level["Male"], by_level["Female"]
        changed = [(a, b) for a, b in zip(male, female, strict=True) if a != b]
        assert changed == [("Sex: Male", "Sex: Female")]
    # the same personas as the plain run with the same seed: the design adds no draw
    plain = run_scenario("trust-population", {"n_personas": 4}, out=tmp_path / "p", progress=False)
    sampled = {e.agent_id for e in events(plain.run_dir) if e.kind == "agent.created"}
    assert {t["counterfactual"]["of"] for t in twins.values()} <= sampled


def test_by_splits_the_personas_into_subgroups(tmp_path: Path) -> None:
    result = counterfactual(
        tmp_path / "r", "Agreeableness", "Low,Medium,High", params={"counterfactual_by": "Sex"}
    )
    overall = rows(result)
    assert [(r["level_a"], r["level_b"]) for r in overall] == [
        ("Low", "Medium"),
        ("Low", "High"),
        ("Medium", "High"),
    ]
    groups = Counter(r["subgroup"] for r in result.metrics["metrics"]["counterfactual"]["rows"])
    assert set(groups) == {"all", "Sex=Female", "Sex=Male"} and set(groups.values()) == {3}
    for pair in range(3):
        sizes = [
            r["n"] + r["n_missing"]
            for r in result.metrics["metrics"]["counterfactual"]["rows"][pair::3]
        ]
        assert sizes[0] == sum(sizes[1:]) == N
    adjusted = holm([r["p"] for r in overall])  # p kept at full precision: Holm's exactly
    assert [r["p_holm"] for r in overall] == adjusted


def test_drifting_model_counts_its_failures(tmp_path: Path) -> None:
    result = counterfactual(
        tmp_path / "r", "Agreeableness", "Low,High", model="scripted:drift=0.15"
    )
    logged = events(result.run_dir)
    decisions = [e for e in logged if e.kind in ("decision.made", "decision.failed")]
    assert len(decisions) == 2 * N
    block = result.metrics["metrics"]["counterfactual"]
    failed = sum(e.kind == "decision.failed" for e in decisions)
    assert sum(block["decisions_failed"].values()) == failed
    (row,) = rows(result)
    made = defaultdict(set)
    for e in logged:
        if e.kind == "decision.made":
            made[e.agent_id.rsplit("@", 1)[0]].add(e.agent_id)
    assert row["n"] == sum(len(v) == 2 for v in made.values())
    assert row["mean_difference"] > 0


def test_metrics_check_replay_and_resume_of_a_complete_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    args = ["counterfactual", "trust-population", "--attribute", "Sex", "--levels", "Male,Female"]
    args += ["--n-personas", "5", "--out", str(out), "--no-progress"]
    assert main(args) == 0
    assert "counterfactual Sex: 2 levels x 5 personas" in capsys.readouterr().out
    before = (out / "events.sqlite").read_bytes()
    assert main(["metrics", str(out), "--check"]) == 0
    assert "identical to the recomputed metrics" in capsys.readouterr().out
    assert main([*args, "--resume"]) == 0
    assert (out / "events.sqlite").read_bytes() == before
    assert main(["replay", str(out)]) == 0
    assert "@Female" in capsys.readouterr().out


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_lost_calls_are_counted_then_asked_again_on_resume(tmp_path: Path, monkeypatch) -> None:
    """A twin whose call ran out of attempts is a counted failure that leaves its persona out
    of the pair; `--resume --retry-failed` asks it again and gives the uninterrupted numbers."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    down = {"Agreeableness: High"}  # the first call (a Low twin) succeeds

    def reply(body: dict) -> str:
        if any(line in body["messages"][0]["content"] for line in down):
            raise RuntimeError("the endpoint is down for this prompt")
        return trustor_reply(body)

    def cli(server: FakeOpenAIServer, out: Path) -> list[str]:
        return [
            "counterfactual", "trust-population", "--attribute", "Agreeableness",
            "--levels", "Low,High", "--n-personas", "6", "--model", "openai:fake-model",
            "--base-url", server.base_url, "--max-attempts", "1", "--concurrency", "1",
            "--out", str(out),
            "--no-progress",
        ]  # fmt: skip

    with FakeOpenAIServer(responder=reply) as server:
        out = tmp_path / "r"
        assert main(cli(server, out)) == 3  # finished, but half its decisions failed
        first = json.loads((out / "metrics.json").read_text())["metrics"]["counterfactual"]
        assert first["decisions_failed"] == {"High": 6} and first["decisions_made"] == 6
        (row,) = first["rows"]
        assert row["n"] == 0 and row["n_missing"] == 6 and row["mean_difference"] is None
        assert "there is no value to compute it from" in row["note"]
        down.clear()
        assert main([*cli(server, out), "--resume", "--retry-failed"]) == 0
        monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "fresh-cache"))
        assert main(cli(server, tmp_path / "straight")) == 0
    resumed = json.loads((out / "metrics.json").read_text())["metrics"]["counterfactual"]
    straight = json.loads((tmp_path / "straight" / "metrics.json").read_text())
    assert resumed == straight["metrics"]["counterfactual"]
    assert resumed["decisions_made"] == 12 and resumed["rows"][0]["n"] == 6


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["trust-population", "--attribute", "Agreeablenes", "--levels", "Low,High"],
         "did you mean 'Agreeableness'?"),
        (["trust-population", "--attribute", "Agreeableness", "--levels", "Low,Hihg"],
         "'Hihg' is not a level of 'Agreeableness' (did you mean 'High'?); its known levels: "
         "High, Low, Medium"),
        (["trust-population", "--attribute", "Sex", "--levels", "Male"],
         "name two or more distinct levels"),
        (["trust-population", "--attribute", "Sex", "--levels", "Male,Female", "--by", "Sexx"],
         "--by 'Sexx': no such persona attribute (did you mean 'Sex'?)"),
        (["persona-gym", "--attribute", "Sex", "--levels", "Male,Female"],
         "persona-gym takes no counterfactual design: its personas are free text"),
        (["trust-population", "--attribute", "Sex", "--levels", "Male,Female",
          "--counterfactual-by", "Race"], "give the design as --attribute, --levels, --by"),
    ],
)  # fmt: skip
def test_bad_designs_fail_before_anything_is_written(tmp_path, capsys, argv, says) -> None:
    out = tmp_path / "r"
    assert main(["counterfactual", *argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and says in " ".join(err.split())
    assert not out.exists()


def test_twins_of_a_trait_set_its_raw_field_and_derive_it_again() -> None:
    import numpy as np

    (persona,) = synthetic_population(1, np.random.default_rng(3))
    low, high = counterfactual_twins(
        [persona], "Total Wealth", ["Less than $20,000", "Above $5 million"]
    )
    assert low.attributes["total_wealth"] == "Less than $20,000"
    assert high.traits["Total Wealth"] == "Above $5 million"
    assert {k: v for k, v in low.traits.items() if k != "Total Wealth"} == {
        k: v for k, v in persona.traits.items() if k != "Total Wealth"
    }
    assert Persona.from_record(high.to_record()) == high
    assert high.counterfactual == {
        "of": persona.id,
        "attribute": "Total Wealth",
        "level": "Above $5 million",
    }


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_career_chat_profiles_take_the_design(tmp_path: Path) -> None:
    """The scripted respondent shifts its answer with education when it sees the profile, and
    cannot when it sees a one-exchange dialogue, which states only age and job
    (scenarios/career_chat/scripted.py): a change in the first format, none in the second."""
    params = {
        "n_users": 3,
        "n_items": 2,
        "max_turns": 1,
        "judge_samples": 0,
        "bootstrap": 0,
        "permutations": 0,
        "emd_repeats": 1,
        "counterfactual_attribute": "education",
        "counterfactual_levels": "High School,PhD",
        "counterfactual_by": "gender",
    }
    result = run_scenario("career-chat", params, out=tmp_path / "r", progress=False)
    block = result.metrics["metrics"]["counterfactual"]
    assert block["personas"] == 3 and block["agents"] == 6
    probes = {
        r["decision"]: r
        for r in block["rows"]
        if r["subgroup"] == "all" and r["decision"].startswith("career.probe")
    }
    assert len(probes) == 4 and all(r["n"] == 3 for r in probes.values())
    for name, row in probes.items():
        if '"format": "profile"' in name:
            assert row["changed"] == 1.0 and row["mean_difference"] != 0
        else:
            assert row["changed"] == 0.0 and row["p"] is None
    assert {r["subgroup"] for r in block["rows"]} - {"all"} <= {"gender=Female", "gender=Male"}


def test_career_chat_names_its_profile_attributes(tmp_path: Path, capsys) -> None:
    argv = ["counterfactual", "career-chat", "--attribute", "contry", "--levels", "Japan,Peru"]
    assert main([*argv, "--out", str(tmp_path / "r")]) == 2
    assert "did you mean 'country'?" in capsys.readouterr().err
    argv = ["counterfactual", "career-chat", "--attribute", "country", "--levels", "Japan,Peru"]
    assert main([*argv, "--out", str(tmp_path / "r")]) == 2
    assert "'Peru' is not a level of 'country'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_the_classroom_pairs_its_races(tmp_path: Path) -> None:
    """The classroom keeps its race design; each grade is paired over races for the same
    student level, question, strategy, order and repetition."""
    params = {
        "n_questions": 3,
        "repetitions": 1,
        "strategies": "zero-shot,two-stage",
        "races": "none,AA,WA",
        "orders": "before",
    }
    result = run_scenario("classroom", params, out=tmp_path / "r", progress=False)
    block = result.metrics["metrics"]["counterfactual"]
    assert block["attribute"] == "race" and block["levels"] == ["none", "AA", "WA"]
    rows = {(r["decision"], r["level_a"], r["level_b"]): r for r in block["rows"]}
    assert len(rows) == 2 * 3
    graded = [e for e in events(result.run_dir) if e.kind == "classroom.graded"]
    for (decision, a, b), row in rows.items():
        strategy = "two-stage" if "two-stage" in decision else "zero-shot"
        at = Counter(e.payload["race"] for e in graded if e.payload["strategy"] == strategy)
        if strategy == "two-stage" and "none" in (a, b):  # two-stage always names a race
            assert row["n"] == 0 and "no value" in row["note"]
        else:
            assert row["n"] == at[a] == at[b] == 2 * 3  # 2 levels x 3 questions
            assert row["test"] == "exact McNemar" and row["interval"] == "paired proportions"
            assert row["ci_low"] < row["ci_high"]  # never [0, 0], even when nothing changed
            by_unit: dict[str, dict[str, float]] = defaultdict(dict)
            for value in block["values"]:
                if value["decision"] == decision:
                    by_unit[value["persona"]][value["level"]] = value["value"]
            pairs = [(at_[a], at_[b]) for at_ in by_unit.values() if {a, b} <= set(at_)]
            up = sum(x == 0 and y == 1 for x, y in pairs)
            down = sum(x == 1 and y == 0 for x, y in pairs)
            if up + down:  # the p the test gave, not rounded
                assert row["p"] == stats.binomtest(up, up + down, 0.5).pvalue


def _block(values: list[dict], rows: list[dict] | None = None) -> dict:
    decisions = sorted({v["decision"] for v in values})
    return {
        "attribute": "race",
        "levels": ["none", "AA", "WA"],
        "values": values,
        "rows": rows if rows is not None else [{"decision": d} for d in decisions],
    }


def _axes_text(ax) -> str:
    return " ".join([ax.get_xlabel(), ax.get_title(), *(t.get_text() for t in ax.texts)])


def test_the_figure_has_short_titles_axis_labels_and_n_on_every_panel() -> None:
    """A 0/1 outcome labelled with JSON details and a numeric decision: short titles, both
    axes labelled, n on every panel; the 0/1 panel is a stacked bar of the transitions."""
    from personasim.analysis.counterfactual_figure import counterfactual_figure

    graded = 'classroom.graded correct ({"order": "after", "strategy": "zero-shot"})'
    values = [
        {"decision": graded, "persona": f"s|q{i}", "level": level, "value": (i + k) % 2}
        for i in range(9)
        for k, level in enumerate(["none", "AA", "WA"])
    ] + [
        {"decision": "trust.send", "persona": f"p{i}", "level": level, "value": i + k}
        for i in range(5)
        for k, level in enumerate(["none", "AA", "WA"])
    ]
    figure = counterfactual_figure(_block(values))
    panels = [ax for ax in figure.axes if ax.get_visible()]
    assert len(panels) == 2
    for ax in panels:
        assert ax.get_xlabel() and ax.get_ylabel(), ax.get_title()
        assert "n = " in _axes_text(ax), ax.get_title()
        assert "{" not in ax.get_title()
        assert all(len(line) <= 30 for line in ax.get_title().splitlines())
    bars, lines = panels
    assert bars.get_title() == "correct: order after, strategy\nzero-shot"
    assert bars.get_ylabel() == "share of paired units" and len(bars.patches) == 4 * 2
    assert [t.get_text() for t in bars.texts] == ["n = 9", "n = 9"]
    assert lines.get_ylabel() == "value of the decision" and "n = 5" in lines.get_xlabel()


def test_a_figure_without_numbers_says_why_in_words() -> None:
    from personasim.analysis.counterfactual_figure import counterfactual_figure, short_decision

    text_only = counterfactual_figure(_block([], rows=[{"decision": "persona-gym answer"}]))
    (ax,) = text_only.axes
    assert ax.texts[0].get_text().startswith("no data: the decisions are text, not numbers")
    nothing = counterfactual_figure(_block([], rows=[]))
    assert "no data: the twins recorded no decision" in nothing.axes[0].texts[0].get_text()
    assert short_decision('survey.answer ({"item": "q1"}) #2') == "survey.answer: item q1 #2"
    assert short_decision("trust.send") == "trust.send"
