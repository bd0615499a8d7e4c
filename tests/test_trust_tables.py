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
    medians = ["Median", "Median without 2-level traits"]
    for strategy, rows in table.groupby("strategy", sort=False):
        assert list(rows["attribute"]) == [*TABLE3_TRAITS, *medians], strategy
        assert rows["n"].notna().all()
        traits = rows[~rows["attribute"].isin(medians)]
        with_rho = traits[traits["rho"].notna()]
        assert (with_rho["n"] >= 2).all()
        missing = traits[traits["rho"].isna()]
        assert list(missing["attribute"]) == ["Family Structure At 16"]
        assert missing["rho_undefined"].str.contains("no level of this trait in the test").all()
        median = rows[rows["attribute"] == "Median"].iloc[0]
        assert median["n"] == len(with_rho) == 8
        assert median["rho"] == pytest.approx(with_rho["rho"].median())
        # US citizenship has 2 levels: its ρ is ±1 by construction, marked, and the second
        # median leaves it out
        two_level = with_rho[with_rho["by_construction"]]
        assert list(two_level["attribute"]) == ["Us Citizenship Status"]
        assert set(two_level["rho"].abs()) == {1.0}
        without = rows[rows["attribute"] == medians[1]].iloc[0]
        informative = with_rho[~with_rho["by_construction"]]
        assert without["n"] == len(informative) == 7
        assert without["rho"] == pytest.approx(informative["rho"].median())
    markdown = (beliefs.run_dir / "reports" / "table3_consistency.md").read_text()
    citizenship = [line for line in markdown.splitlines() if "Us Citizenship Status" in line]
    assert len(citizenship) == 3 and all("1.00 ‡" in line for line in citizenship)
    assert "‡ ρ = ±1 by construction" in markdown


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
    assert all("over the 7 with more than 2 levels" in line for line in lines)
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
    # Table 4 by trait marks a small group as Table 3 does, and a 2-level trait's ρ
    conditions = result.metrics["metrics"]["conditions"]
    small = {
        (c, a)
        for c, m in conditions.items()
        for a, v in m["attributes"].items()
        if v["small_levels"]
    }
    assert small  # the 30 personas leave some levels with fewer than 5 deciders
    marked = by_trait[by_trait["small_group"]]
    flagged = set(zip(marked["condition"], marked["attribute"], strict=True))
    assert flagged == small
    markdown = (result.run_dir / "reports" / "table4_by_trait.md").read_text()
    assert markdown.count(" † |") == len(small) and "† n < 5" in markdown
    assert set(by_trait.loc[by_trait["by_construction"], "attribute"]) <= {"Us Citizenship Status"}
    sent = pd.read_csv(result.run_dir / "reports" / "amount_sent.csv")
    assert list(sent["who"][:2]) == ["scripted, unconditioned", "scripted, strong"]
    assert sent["sd_sent"][:2].notna().all()


def test_the_human_benchmark_is_shipped_data_with_its_citation() -> None:
    reference = {r["id"]: r for r in human_reference()}
    assert reference["berg1995"]["mean_sent"] == 5.16 and reference["berg1995"]["endowment"] == 10
    assert reference["johnson_mislin2011"]["share_sent"] == 0.5
    assert "162 replications" in reference["johnson_mislin2011"]["what"]
    assert all("(19" in r["citation"] or "(20" in r["citation"] for r in reference.values())


def test_amounts_sent_are_shown_beside_the_human_benchmark(beliefs: RunResult) -> None:
    table = pd.read_csv(beliefs.run_dir / "reports" / "amount_sent.csv")
    assert list(table["who"]) == [
        "scripted",  # the model, never "this run"
        "Berg, Dickhaut & McCabe (1995)",
        "Johnson & Mislin (2011), meta-analysis",
    ]
    assert list(table["source"]) == ["simulated", "human benchmark", "human benchmark"]
    behaviour = beliefs.metrics["metrics"]["behaviour"]
    assert table["n"].tolist() == [behaviour["n_decisions"], 32, 162]
    assert table["share_sent"][0] == pytest.approx(behaviour["mean_sent"] / 10, abs=1e-4)
    assert table["sd_sent"][0] == pytest.approx(behaviour["sd_sent"], abs=1e-6)
    simulated = (beliefs.run_dir / "reports" / "amount_sent.md").read_text().splitlines()[2]
    assert (
        f"| {behaviour['mean_sent']:.2f} (SD {behaviour['sd_sent']:.2f}), "
        f"n={behaviour['n_decisions']} deciders" in simulated
    )
    assert f"{100 * behaviour['mean_sent'] / 10:.1f}%" in simulated
    assert any("humans: Berg, Dickhaut & McCabe (1995) 51.6%" in x for x in beliefs.report)
    metrics = json.loads((beliefs.run_dir / "metrics.json").read_text())["metrics"]
    assert metrics["human_reference"] == human_reference()
