"""Trust tables say what they hold: a row per analysed trait with its n, a reason where a value
is missing, medians that count what they are over, and the human benchmark beside the amounts
sent (issue: seed 001's Tables 3 and 4 silently lost Family Structure At 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from personasim.environments import human_reference
from personasim.scenarios.trust.traits import TABLE3_TRAITS
from personasim.simulation import RunResult, run_scenario


@pytest.fixture(scope="module")
def beliefs(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """trust-beliefs as a new user runs it: the shipped bank, 50 personas, every strategy."""
    out = tmp_path_factory.mktemp("beliefs") / "run"
    return run_scenario("trust-beliefs", {}, out=out, progress=False)


def test_table3_has_every_trait_and_the_median_for_each_strategy(beliefs: RunResult) -> None:
    table = pd.read_csv(beliefs.run_dir / "reports" / "table3_consistency.csv")
    for strategy, rows in table.groupby("strategy", sort=False):
        assert list(rows["attribute"]) == [*TABLE3_TRAITS, "Median"], strategy
        assert rows["n"].notna().all()
        traits = rows[rows["attribute"] != "Median"]
        with_rho = traits[traits["rho"].notna()]
        assert (with_rho["n"] >= 2).all()
        missing = traits[traits["rho"].isna()]
        assert list(missing["attribute"]) == ["Family Structure At 16"]
        assert missing["rho_undefined"].str.contains("no level of this trait in the test").all()
        median = rows[rows["attribute"] == "Median"].iloc[0]
        assert median["n"] == len(with_rho) == 8
        assert median["rho"] == pytest.approx(with_rho["rho"].median())


def test_table3_n_is_the_deciders_at_the_traits_levels(beliefs: RunResult) -> None:
    """The test split is applied per level, so a trait's n is smaller than the population."""
    metrics = beliefs.metrics["metrics"]
    table = pd.read_csv(beliefs.run_dir / "reports" / "table3_consistency.csv")
    for attribute, result in metrics["behaviour"]["attributes"].items():
        n = sum(level["n"] for level in result["levels"].values())
        assert set(table.loc[table["attribute"] == attribute, "n"]) == {n}
    political = table.loc[table["attribute"] == "Political Views", "n"].iloc[0]
    assert 0 < political < metrics["behaviour"]["n_decisions"]


def test_console_counts_the_traits_with_a_rho_and_names_the_rest(beliefs: RunResult) -> None:
    lines = [line for line in beliefs.report if "median ρ" in line]
    assert len(lines) == 3 and all("over 8 of 9 traits" in line for line in lines)
    named = [line for line in beliefs.report if line.strip().startswith("no ρ for")]
    assert len(named) == 3
    assert all("Family Structure At 16: not asked: no level" in line for line in named)


def test_population_eta_lines_say_why_and_give_n(beliefs: RunResult) -> None:
    result = run_scenario(
        "trust-population", {"n_personas": 20}, out=beliefs.run_dir.parent / "p", progress=False
    )
    family = [line for line in result.report if "Family Structure At 16" in line]
    assert family == [
        "  Family Structure At 16: eta² undefined, n = 0: there is no value to compute it from "
        "(no level of this trait in the test split); the test split holds the levels the "
        "paper reports, --split all every level"
    ]
    assert all("n = " in line for line in result.report if "eta²" in line)


def test_rankings_say_how_many_levels_are_not_shown() -> None:
    from personasim.scenarios.trust.metrics import shown_ranking

    assert shown_ranking(["a", "b", "c", "d", "e"]) == "a > b > c > … and 2 more"
    assert shown_ranking(["a", "b", "c"]) == "a > b > c"
    assert shown_ranking(["a"]) == "a"


def test_table4_has_n_and_names_the_traits_without_rho(tmp_path: Path) -> None:
    result = run_scenario(
        "trust-conditioning",
        {"n_personas": 30, "conditions": "unconditioned,strong"},
        out=tmp_path / "c",
        progress=False,
    )
    table = pd.read_csv(result.run_dir / "reports" / "table4_conditioning.csv")
    assert list(table["condition"]) == ["unconditioned", "strong"]
    assert (table["n"] == 30).all()
    assert table["traits_without_rho"].str.contains("Family Structure At 16: not asked").all()
    by_trait = pd.read_csv(result.run_dir / "reports" / "table4_by_trait.csv")
    assert len(by_trait) == 2 * len(TABLE3_TRAITS)
    assert by_trait["n"].notna().all()
    assert (by_trait["rho"].notna() | by_trait["rho_undefined"].notna()).all()
    assert sum("over 8 of 9 traits" in line for line in result.report) == 2


def test_the_human_benchmark_is_shipped_data_with_its_citation() -> None:
    reference = {r["id"]: r for r in human_reference()}
    assert reference["berg1995"]["mean_sent"] == 5.16 and reference["berg1995"]["endowment"] == 10
    assert reference["johnson_mislin2011"]["share_sent"] == 0.5
    assert "162 replications" in reference["johnson_mislin2011"]["what"]
    assert all("(19" in r["citation"] or "(20" in r["citation"] for r in reference.values())


def test_amounts_sent_are_shown_beside_the_human_benchmark(beliefs: RunResult) -> None:
    table = pd.read_csv(beliefs.run_dir / "reports" / "amount_sent.csv")
    assert list(table["who"]) == [
        "this run",
        "Berg, Dickhaut & McCabe (1995)",
        "Johnson & Mislin (2011), meta-analysis",
    ]
    behaviour = beliefs.metrics["metrics"]["behaviour"]
    assert table["n"].tolist() == [behaviour["n_decisions"], 32, 162]
    assert table["share_sent"][0] == pytest.approx(behaviour["mean_sent"] / 10, abs=1e-4)
    assert any("humans: Berg, Dickhaut & McCabe (1995) 51.6%" in x for x in beliefs.report)
    metrics = json.loads((beliefs.run_dir / "metrics.json").read_text())["metrics"]
    assert metrics["human_reference"] == human_reference()
