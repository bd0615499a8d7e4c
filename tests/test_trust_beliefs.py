"""trust-beliefs, trust-conditioning and sweeps on the scripted backend (seed 001, §4, D.1)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from personasim.agents import DecisionParseError, parse_structured
from personasim.scenarios.trust.beliefs import RankingBelief, read_ranking_belief
from personasim.scenarios.trust.conditioning import TrustConditioning, conditioning_text
from personasim.scenarios.trust.traits import TEST_SPLIT_LEVELS
from personasim.simulation import (
    Backend,
    ChatRequest,
    ChatResponse,
    SQLiteEventStore,
    events_frame,
    run_scenario,
    run_sweep,
)
from personasim.simulation.cli.main import main


def events_of(run_dir: Path) -> pd.DataFrame:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return events_frame(store.read())


def behaviour_by_level(
    events: pd.DataFrame, attribute: str, round_index: int = 1, split: str = "test"
) -> dict:
    """Amounts sent per level, computed here from the raw events and Table 5's te levels."""
    wanted = TEST_SPLIT_LEVELS.get(attribute) if split == "test" else None
    traits = {
        r.agent_id: r.payload["persona"]["traits"]
        for r in events.itertuples()
        if r.kind == "agent.created" and "persona" in r.payload
    }
    groups: dict[str, list[float]] = {}
    for r in events.itertuples():
        if r.kind == "trust.transfer" and r.round == round_index:
            level = traits[r.agent_id].get(attribute)
            if level is not None and (wanted is None or level in wanted):
                groups.setdefault(level, []).append(r.payload["sent"])
    return groups


def spearman_of_rankings(a: list[str], b: list[str]) -> float:
    common = [level for level in a if level in b]
    return stats.spearmanr([a.index(x) for x in common], [b.index(x) for x in common]).statistic


def reference_rho(belief: dict[str, Any], means: dict[str, float]) -> float | None:
    """scipy's ρ (average ranks for ties) of the belief's scores with the behavioural means:
    Ctx+$ ranks by its stated means, the other strategies by their stated order."""
    stated = belief.get("stated", {}).get("mean_sd_level_stats")
    if stated:
        scores = {level: s["mean"] for level, s in stated.items()}
    else:
        scores = {level: -i for i, level in enumerate(belief["ranking"])}
    common = [level for level in scores if level in means]
    x, y = [scores[lvl] for lvl in common], [means[lvl] for lvl in common]
    if len(common) < 2 or len(set(x)) == 1 or len(set(y)) == 1:
        return None
    return stats.spearmanr(x, y).statistic


def anova_eta(groups: dict[str, list[float]]) -> float:
    f, _ = stats.f_oneway(*groups.values())
    n = sum(len(v) for v in groups.values())
    df_b, df_w = len(groups) - 1, n - len(groups)
    return f * df_b / (f * df_b + df_w)


@pytest.fixture(scope="module")
def beliefs_run(tmp_path_factory) -> Any:
    out = tmp_path_factory.mktemp("beliefs") / "run"
    return run_scenario("trust-beliefs", {"n_personas": 40}, out=out, progress=False)


def test_every_strategy_and_trait_is_elicited(beliefs_run) -> None:
    metrics = beliefs_run.metrics["metrics"]
    assert set(metrics["beliefs"]) == {"NoCtx+Tr", "Ctx+Tr", "Ctx+$"}
    for per_trait in metrics["beliefs"].values():
        assert len(per_trait) >= 8
    assert metrics["elicitation_failures"] == 0
    assert metrics["behaviour"]["n_decisions"] == 40
    report = beliefs_run.run_dir / "reports" / "table3_consistency.md"
    assert "Median" in report.read_text() and "Ctx+$" in report.read_text()


def test_consistency_pinned_to_independent_computation(beliefs_run) -> None:
    events = events_of(beliefs_run.run_dir)
    metrics = beliefs_run.metrics["metrics"]
    beliefs = [
        p
        for p in events[events.kind == "decision.made"].payload
        if p["task"].startswith("trust.belief.")
    ]
    stated = [
        (s, a) for s, v in metrics["beliefs"].items() for a, r in v.items() if "missing" not in r
    ]
    assert len(beliefs) == len(stated)
    for belief in beliefs:
        groups = behaviour_by_level(events, belief["attribute"])
        means = {level: np.mean(v) for level, v in groups.items()}
        behaviour_ranking = sorted(means, key=lambda lvl: (-means[lvl], lvl))
        result = metrics["beliefs"][belief["strategy"]][belief["attribute"]]
        assert result["behaviour_ranking"] == behaviour_ranking
        expected_rho = reference_rho(belief["value"], means)
        if expected_rho is None:
            assert result["rho"] is None and result["rho_undefined"]
        else:
            assert result["rho"] == pytest.approx(expected_rho, abs=1e-6)
        expected_eta = anova_eta(groups)
        assert result["behaviour_eta_squared"] == pytest.approx(expected_eta, abs=1e-6)
        assert result["abs_delta_eta_squared"] == pytest.approx(
            abs(belief["value"]["eta_squared"] - expected_eta), abs=1e-5
        )
    for strategy, per_trait in metrics["beliefs"].items():
        rhos = [v["rho"] for v in per_trait.values() if v["rho"] is not None]
        assert metrics["summary"][strategy]["median_rho"] == pytest.approx(
            np.median(rhos), abs=1e-6
        )
        assert metrics["summary"][strategy]["n_rho_defined"] == len(rhos)


def test_tied_scores_share_average_ranks_as_in_scipy() -> None:
    """ρ on tied level means is scipy's average-rank Spearman, not an alphabetical tie-break;
    a constant side is undefined with a reason, never ±1."""
    from personasim.analysis import Undefined, ranking_spearman

    rng = np.random.default_rng(11)
    for _ in range(200):
        k = int(rng.integers(3, 8))
        levels = [f"L{i}" for i in range(k)]
        behaviour = dict(zip(levels, rng.integers(0, 3, k).astype(float), strict=True))
        belief = dict(zip(levels, rng.integers(0, 3, k).astype(float), strict=True))
        got = ranking_spearman(belief, behaviour)
        x, y = list(belief.values()), list(behaviour.values())
        if len(set(x)) == 1 or len(set(y)) == 1:
            assert isinstance(got, Undefined) and "constant" in got.reason
        else:
            assert got == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    tied = {"A": 5.0, "B": 5.0, "C": 1.0}
    assert ranking_spearman(["A", "B", "C"], tied) == pytest.approx(
        stats.spearmanr([3, 2, 1], [2.5, 2.5, 1]).statistic
    )
    assert ranking_spearman(["A", "B", "C"], tied) != 1.0


def test_dollar_beliefs_eta_from_stated_means_and_sds(beliefs_run) -> None:
    """Ctx+$: η̂² from 100 people per level with the stated means and SDs (Appendix C.1.3)."""
    events = events_of(beliefs_run.run_dir)
    dollars = [
        p
        for p in events[events.kind == "decision.made"].payload
        if p["task"] == "trust.belief.dollars"
    ]
    assert dollars
    for belief in dollars:
        stated = belief["value"]["stated"]["mean_sd_level_stats"]
        means = np.array([s["mean"] for s in stated.values()])
        sds = np.array([s["sd"] for s in stated.values()])
        between = 100 * ((means - means.mean()) ** 2).sum()
        within = (99 * sds**2).sum()
        assert belief["value"]["eta_squared"] == pytest.approx(between / (between + within))
        assert belief["value"]["ranking"][0] == max(stated, key=lambda k: stated[k]["mean"])


def test_ranking_beliefs_map_words_to_eta(beliefs_run) -> None:
    events = events_of(beliefs_run.run_dir)
    words = {"negligible": 0.005, "small": 0.035, "medium": 0.10, "large": 0.20}
    for p in events[events.kind == "decision.made"].payload:
        if p["task"] == "trust.belief.ranking":
            stated = p["value"]["stated"]["omnibus_effect_size"]
            assert p["value"]["eta_squared"] == words[stated]


def test_prompts_follow_the_strategies(beliefs_run) -> None:
    events = events_of(beliefs_run.run_dir)
    prompts = {}
    for r in events[events.kind == "llm.call"].itertuples():
        if r.agent_id == "researcher":
            prompts.setdefault(r.payload["task"], []).append(r.payload["messages"][0]["content"])
    ranking = prompts["trust.belief.ranking"]
    without_game = [p for p in ranking if "TRUST GAME" not in p]
    with_game = [p for p in ranking if "TRUST GAME" in p]
    assert len(without_game) == len(with_game) > 0  # NoCtx+Tr and Ctx+Tr
    assert all('For the trait "' in p for p in without_game)
    assert all('For the attribute "' in p for p in with_game)
    assert all("ranking_descending" in p and "JSON schema" in p for p in ranking)
    dollars = prompts["trust.belief.dollars"]
    assert all("100 individuals" in p and "$10 AS YOUR INITIAL AMOUNT" in p for p in dollars)


class BrokenBeliefs(Backend):
    """Answers trustor prompts properly but never gives valid belief JSON."""

    def identity(self) -> dict[str, Any]:
        return {"backend": "broken-beliefs"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        if "Finally, I will give" in request.messages[0].content:
            return ChatResponse(text="Finally, I will give 5 dollars")
        return ChatResponse(text='{"ranking_descending": ["nobody"], "omnibus_effect_size": 2}')


def test_belief_parsers_read_what_a_careful_reader_would() -> None:
    """A sentence before the JSON, a fence, or the prompt's own "A > B" ranking format."""
    levels = ["High", "Low"]
    ranking = '{"ranking_descending": ["High", "Low"], "omnibus_effect_size": "small"}'
    for reply in (
        ranking,
        f"Sure! Here is my answer.\n\n{ranking}",
        f"```json\n{ranking}\n```",
        f"{ranking}\n\nI hope this helps!",
        '{"ranking_descending": "High > Low", "omnibus_effect_size": "small"}',
        ranking.replace('"small"', '"0.03 (small)"'),
        ranking.replace('"small"', '"small to moderate"'),
    ):
        belief = read_ranking_belief(parse_structured(reply, RankingBelief), levels)
        assert belief["ranking"] == ["High", "Low"], reply
        assert 0.03 <= belief["eta_squared"] <= 0.07, reply
    for ambiguous in ('"small or large"', '"0.5 (small)"'):
        with pytest.raises(DecisionParseError):
            reply = ranking.replace('"small"', ambiguous)
            read_ranking_belief(parse_structured(reply, RankingBelief), levels)
    for bad in ("", "I'm sorry, but I can't help.", "High > Low", "Sure: {not json}"):
        with pytest.raises(DecisionParseError):
            parse_structured(bad, RankingBelief)


def test_invalid_beliefs_are_counted_never_defaulted(tmp_path: Path) -> None:
    result = run_scenario(
        "trust-beliefs",
        {"n_personas": 12, "strategies": "Ctx+Tr", "max_repairs": 1},
        backend=BrokenBeliefs(),
        out=tmp_path / "r",
        progress=False,
    )
    metrics = result.metrics["metrics"]
    assert metrics["elicitation_failures"] >= 5
    asked = metrics["beliefs"]["Ctx+Tr"]
    failed_rows = [r for r in asked.values() if r["missing"].startswith("the elicitation failed")]
    assert len(failed_rows) == metrics["elicitation_failures"]  # every failure keeps its row
    assert all(r["rho"] is None and "after 2 attempts" in r["rho_undefined"] for r in failed_rows)
    assert metrics["summary"]["Ctx+Tr"]["n_rho_defined"] == 0
    events = events_of(result.run_dir)
    failed = [p for p in events[events.kind == "decision.failed"].payload]
    assert all(p["attempts"] == 2 for p in failed)
    assert "exactly once" in failed[0]["error"] or "valid" in failed[0]["error"]


@pytest.fixture(scope="module")
def conditioning_run(tmp_path_factory) -> Any:
    out = tmp_path_factory.mktemp("conditioning") / "run"
    return run_scenario("trust-conditioning", {"n_personas": 30}, out=out, progress=False)


def closest_attainable(k: int, target: float) -> float:
    rhos = {
        round(stats.spearmanr(range(k), p).statistic, 9) for p in itertools.permutations(range(k))
    }
    return min(abs(r - target) for r in rhos)


def test_imposed_priors_hit_their_target_rho(conditioning_run) -> None:
    events = events_of(conditioning_run.run_dir)
    imposed = list(events[events.kind == "belief.imposed"].payload)
    elicited = {
        p["attribute"]: p["value"]["ranking"]
        for p in events[events.kind == "decision.made"].payload
        if p["task"].startswith("trust.belief.")
    }
    assert {p["condition"] for p in imposed} == {"self", "weak", "strong"}
    for p in imposed:
        original = elicited[p["attribute"]]
        assert sorted(p["ranking"]) == sorted(original)
        achieved = spearman_of_rankings(p["ranking"], original)
        assert p["rho_with_elicited"] == pytest.approx(achieved)
        target = {"self": 1.0, "weak": 0.8, "strong": 0.2}[p["condition"]]
        if len(original) <= 7:
            assert abs(achieved - target) == pytest.approx(
                closest_attainable(len(original), target), abs=1e-9
            )


def test_each_condition_is_a_round_with_its_own_prompt(conditioning_run) -> None:
    events = events_of(conditioning_run.run_dir)
    calls = events[(events.kind == "llm.call") & (events.agent_id != "researcher")]
    by_round = calls.groupby("round").payload.apply(
        lambda ps: [p["messages"][0]["content"] for p in ps]
    )
    assert sorted(by_round.index) == [2, 3, 4, 5]
    assert not any("Follow the following correlations" in p for p in by_round[2])
    for round_index in (3, 4, 5):
        assert all("Follow the following correlations" in p for p in by_round[round_index])
    transfers = events[events.kind == "trust.transfer"].groupby("round").size()
    assert (transfers <= 30).all() and (transfers >= 28).all()


def test_table4_pinned_to_independent_computation(conditioning_run) -> None:
    events = events_of(conditioning_run.run_dir)
    metrics = conditioning_run.metrics["metrics"]
    imposed = {
        (p["condition"], p["attribute"]): p["ranking"]
        for p in events[events.kind == "belief.imposed"].payload
    }
    for index, condition in enumerate(("unconditioned", "self", "weak", "strong"), start=2):
        rhos = []
        for attribute, belief in metrics["elicited"].items():
            groups = behaviour_by_level(events, attribute, round_index=index)
            means = {level: np.mean(v) for level, v in groups.items()}
            prior = imposed.get((condition, attribute))
            rho = reference_rho({"ranking": prior} if prior else belief, means)
            per_trait = metrics["conditions"][condition]["attributes"][attribute]
            if rho is None:
                assert per_trait["rho"] is None and per_trait["rho_undefined"]
            else:
                assert per_trait["rho"] == pytest.approx(rho, abs=1e-6)
                rhos.append(rho)
        assert metrics["conditions"][condition]["median_rho"] == pytest.approx(
            np.median(rhos), abs=1e-6
        )
    table = (conditioning_run.run_dir / "reports" / "table4_conditioning.csv").read_text()
    assert table.count("\n") == 5 and "strong" in table


def test_scripted_conditioning_follows_the_prior(conditioning_run) -> None:
    """The scripted rule leans towards the stated ranking, so ρ(prior, behaviour) rises."""
    conditions = conditioning_run.metrics["metrics"]["conditions"]
    assert conditions["self"]["median_rho"] > conditions["unconditioned"]["median_rho"]


def test_conditioning_text_matches_appendix_c23() -> None:
    rankings = {"Conscientiousness": ["High", "Moderate", "Low"]}
    text = conditioning_text(rankings, TrustConditioning.shipped_prompts())
    assert text == (
        "Follow the following correlations while making your decision:\n"
        "For Conscientiousness: Highs are more interpersonal trusting than Moderates, and "
        "Moderates are more interpersonal trusting than Lows."
    )


def test_metrics_recomputed_for_both(beliefs_run, conditioning_run) -> None:
    for run in (beliefs_run, conditioning_run):
        assert main(["metrics", str(run.run_dir), "--check"]) == 0


def test_sweep_writes_combined_and_table9(tmp_path: Path) -> None:
    result = run_sweep(
        "trust-beliefs",
        ["scripted"],
        {"endowment": [10, 44]},
        {"n_personas": 20},
        out=tmp_path / "sweep",
        progress=False,
    )
    assert len(result.runs) == 2
    combined = pd.read_csv(tmp_path / "sweep" / "combined.csv")
    medians = combined[combined.attribute == "Median"]
    assert len(medians) == 6 and set(combined.endowment) == {10, 44}
    without = combined[combined.attribute == "Median without 2-level traits"]
    assert len(without) == 6  # beside each median, the one over traits with more than 2 levels
    for run in result.runs:  # a row per strategy and trait besides the medians
        n_beliefs = sum(len(v) for v in run.metrics["metrics"]["beliefs"].values())
        endowment = run.manifest["params"]["endowment"]
        mine = combined[combined.endowment == endowment]
        assert (~mine.attribute.str.startswith("Median")).sum() == n_beliefs
        for strategy, summary in run.metrics["metrics"]["summary"].items():
            row = without[(without.endowment == endowment) & (without.strategy == strategy)]
            expected = summary["median_rho_without_two_level"]
            assert expected is not None  # 20 personas: traits of 3+ levels have a ρ
            assert row["rho"].iloc[0] == pytest.approx(expected)
    wide = pd.read_csv(tmp_path / "sweep" / "table3_wide.csv")
    assert {"scripted ρ", "scripted abs Δη²"} <= set(wide.columns)
    for run in result.runs:
        endowment = run.manifest["params"]["endowment"]
        for strategy, per_trait in run.metrics["metrics"]["beliefs"].items():
            for attribute, cell in per_trait.items():
                row = wide[
                    (wide.endowment == endowment)
                    & (wide.strategy == strategy)
                    & (wide.attribute == attribute)
                ].iloc[0]
                if cell["rho"] is None:
                    assert pd.isna(row["scripted ρ"])
                else:
                    assert row["scripted ρ"] == pytest.approx(cell["rho"])
    table9 = pd.read_csv(tmp_path / "sweep" / "table9_mean_spearman_by_endowment.csv")
    assert list(table9.columns) == ["model", "strategy", "$10", "$44"]
    for run in result.runs:
        endowment = run.manifest["params"]["endowment"]
        for strategy, summary in run.metrics["metrics"]["summary"].items():
            row = table9[table9.strategy == strategy].iloc[0]
            assert row[f"${endowment}"] == pytest.approx(summary["mean_rho"])
    again = run_sweep(
        "trust-beliefs",
        ["scripted"],
        {"endowment": [10, 44]},
        {"n_personas": 20},
        out=tmp_path / "sweep",
        progress=False,
    )
    assert [r.metrics for r in again.runs] == [r.metrics for r in result.runs]
    assert all(r.report == ["already complete; nothing to resume"] for r in again.runs)


def test_conditioning_sweep_over_endowments_writes_its_combined_table(tmp_path: Path) -> None:
    """Conditioning rows have no mean ρ: no Table 9 (trust-beliefs' sweep table) is made."""
    result = run_sweep(
        "trust-conditioning",
        ["scripted"],
        {"endowment": [10, 44]},
        {"n_personas": 6, "attributes": "Age,Religion"},
        out=tmp_path / "sweep",
        progress=False,
    )
    assert len(result.runs) == 2
    combined = pd.read_csv(tmp_path / "sweep" / "combined.csv")
    assert len(combined) == 2 * 4 and set(combined.endowment) == {10, 44}
    assert set(combined.condition) == {"unconditioned", "self", "weak", "strong"}
    assert not (tmp_path / "sweep" / "table9_mean_spearman_by_endowment.csv").exists()


def test_sweep_cli_and_its_errors(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s"
    assert (
        main(
            [
                "sweep",
                "trust-conditioning",
                "--vary",
                "strong-rho=0.2,-0.5",
                "--out",
                str(out),
                "--no-progress",
                "--n-personas",
                "10",
                "--conditions",
                "unconditioned,strong",
            ]
        )
        == 0
    )
    assert "2 runs under" in capsys.readouterr().out
    combined = pd.read_csv(out / "combined.csv")
    assert set(combined.condition) == {"unconditioned", "strong"}
    assert main(["sweep", "trust-beliefs", "--vary", "endowment", "--out", str(out)]) == 2
    assert (
        main(
            ["sweep", "trust-beliefs", "--vary", "endowment=10,-1", "--out", str(tmp_path / "bad")]
        )
        == 2
    )
    assert not (tmp_path / "bad").exists()  # every combination is checked before any run
    assert (
        json.loads(
            (out / next(p.name for p in out.iterdir() if p.is_dir()) / "manifest.json").read_text()
        )["status"]
        == "complete"
    )


class ConstantModel(Backend):
    """Every persona sends $5; every ranking repeats the order the levels were shown in, and
    Ctx+$ states the same mean for every level — the issue's tie-inflation case."""

    def identity(self) -> dict[str, Any]:
        return {"backend": "constant"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        if request.task == "trust.belief.ranking":
            levels = request.hints["levels"]
            answer = {"ranking_descending": levels, "omnibus_effect_size": "small"}
        elif request.task == "trust.belief.dollars":
            stats_ = {lvl: {"mean": 5, "sd": 2} for lvl in request.hints["levels"]}
            answer = {"mean_sd_level_stats": stats_}
        else:
            return ChatResponse(text="Finally, I will give 5 dollars")
        return ChatResponse(text=json.dumps(answer))


def _numbers_in(value: Any, key: str = "") -> list[str]:
    """Paths of every numeric ρ anywhere in a metrics tree."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _numbers_in(v, f"{key}/{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _numbers_in(v, f"{key}/{i}")]
    leaf = key.rsplit("/", 1)[-1]
    is_rho = leaf in {"rho", "median_rho", "mean_rho"}
    return [key] if is_rho and isinstance(value, int | float) else []


def test_constant_model_gives_no_numeric_rho_anywhere(tmp_path: Path) -> None:
    params = {"n_personas": 24, "max_repairs": 0}
    beliefs = run_scenario(
        "trust-beliefs", params, backend=ConstantModel(), out=tmp_path / "b", progress=False
    )
    metrics = beliefs.metrics["metrics"]
    assert sum(len(v) for v in metrics["beliefs"].values()) >= 3 * 5
    assert _numbers_in(metrics) == []
    for per_trait in metrics["beliefs"].values():
        for result in per_trait.values():
            if "missing" not in result:  # a trait not asked about says why instead
                assert "constant input" in result["rho_undefined"]
    table = pd.read_csv(beliefs.run_dir / "reports" / "table3_consistency.csv")
    assert table["rho"].isna().all() and table["rho_undefined"].notna().all()
    conditioning = run_scenario(
        "trust-conditioning", params, backend=ConstantModel(), out=tmp_path / "c", progress=False
    )
    assert _numbers_in(conditioning.metrics["metrics"]) == []
    table4 = pd.read_csv(conditioning.run_dir / "reports" / "table4_conditioning.csv")
    assert table4["median_rho"].isna().all()


def test_levels_are_shown_in_a_recorded_seeded_order(beliefs_run) -> None:
    events = events_of(beliefs_run.run_dir)
    (recorded,) = events[events.kind == "trust.levels"].payload
    assert recorded["split"] == "test"
    order = recorded["shown_order"]
    assert any(v != sorted(v) for v in order.values() if len(v) > 2)  # not alphabetical
    for attribute, levels in order.items():
        assert sorted(levels) == recorded["levels"][attribute]
        assert set(levels) <= set(TEST_SPLIT_LEVELS[attribute])
    shown = [
        re.findall(r"^\d+\. (.+)$", call["messages"][0]["content"], re.MULTILINE)
        for call in events[events.kind == "llm.call"].payload
        if call["task"] == "trust.belief.ranking"
    ]
    # the game rules (Ctx+Tr) follow as a second numbered list
    assert shown and all(any(lv[: len(v)] == v for v in order.values()) for lv in shown)
    again = events_of(
        run_scenario(
            "trust-beliefs",
            {"n_personas": 40},
            out=beliefs_run.run_dir.parent / "again",
            progress=False,
        ).run_dir
    )
    assert next(iter(again[again.kind == "trust.levels"].payload))["shown_order"] == order


def test_achieved_prior_rho_reported_per_trait_and_condition(conditioning_run) -> None:
    events = events_of(conditioning_run.run_dir)
    metrics = conditioning_run.metrics["metrics"]
    imposed = list(events[events.kind == "belief.imposed"].payload)
    for condition in ("weak", "strong"):
        logged = {
            p["attribute"]: p["rho_with_elicited"] for p in imposed if p["condition"] == condition
        }
        cell = metrics["conditions"][condition]
        assert cell["median_imposed_rho"] == pytest.approx(np.median(list(logged.values())))
        for attribute, rho in logged.items():
            assert cell["attributes"][attribute]["imposed_rho"] == pytest.approx(rho)
        assert cell["unperturbed"] == sorted(a for a, r in logged.items() if r == 1.0)
    assert metrics["conditions"]["unconditioned"]["median_imposed_rho"] is None
    assert metrics["conditions"]["unconditioned"]["median_imposed_rho_undefined"]
    table = pd.read_csv(conditioning_run.run_dir / "reports" / "table4_achieved_prior_rho.csv")
    assert set(table.condition) == {"weak", "strong"}
    assert len(table) == sum(1 for p in imposed if p["condition"] in {"weak", "strong"})
    table4 = pd.read_csv(conditioning_run.run_dir / "reports" / "table4_conditioning.csv")
    assert {"median_imposed_rho", "unperturbed"} <= set(table4.columns)
