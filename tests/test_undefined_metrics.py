"""Every scenario's metrics keep the convention on degenerate runs: an undefined statistic is
null with `<name>_undefined` beside it (never NaN, 0 or a made-up number), small groups are
flagged from the log's `validity.min_group_n`, and reports and tables show both."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from personasim.simulation import (
    Backend,
    ChatRequest,
    ChatResponse,
    RunResult,
    ScriptedBackend,
    SQLiteEventStore,
    events_frame,
    get_scenario,
    run_scenario,
)
from personasim.simulation.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# Not statistics: free text or inputs that may be absent.
NOT_STATISTICS = {"note", "settings"}

TINY = {
    "trust-population": {"n_personas": 1},
    "trust-beliefs": {"n_personas": 3},
    "trust-conditioning": {"n_personas": 3},
    "trust-forecast": {"n_personas": 1, "rounds": 2},
    "classroom": {"n_questions": 2, "repetitions": 1},
    "persona-gym": {"n_personas": 1, "questions_per_task": 1, "n_environments": 1},
    "career-chat": {"n_users": 2, "n_items": 2, "judge_samples": 1},
}


def unexplained_nulls(node: Any, path: str = "") -> list[str]:
    """Paths of null values with no `<key>_undefined` reason beside them."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            reason = node.get(f"{key}_undefined")
            explained = isinstance(reason, str) and reason
            if value is None and key not in NOT_STATISTICS and not explained:
                found.append(f"{path}.{key}")
            found += unexplained_nulls(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += unexplained_nulls(value, f"{path}[{i}]")
    return found


def reasons(node: Any) -> list[str]:
    """Every `_undefined` reason in a metrics tree."""
    if isinstance(node, dict):
        own = [v for k, v in node.items() if isinstance(k, str) and k.endswith("_undefined")]
        return own + [r for v in node.values() for r in reasons(v)]
    if isinstance(node, list):
        return [r for v in node for r in reasons(v)]
    return []


def test_the_walker_finds_an_unexplained_null() -> None:
    assert unexplained_nulls({"a": {"rho": None}, "b": [{"eta": None, "eta_undefined": "x"}]}) == [
        ".a.rho"
    ]
    assert unexplained_nulls({"rho": None, "rho_undefined": ""}) == [".rho"]


def events_of(run_dir: Path) -> pd.DataFrame:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return events_frame(store.read())


@pytest.fixture(scope="module", params=sorted(TINY))
def tiny(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    out = tmp_path_factory.mktemp(request.param) / "run"
    return run_scenario(request.param, TINY[request.param], out=out, progress=False)


def test_tiny_runs_explain_every_null(tiny: RunResult) -> None:
    metrics = tiny.metrics["metrics"]
    assert unexplained_nulls(metrics) == []
    text = (tiny.run_dir / "metrics.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert main(["metrics", str(tiny.run_dir), "--check"]) == 0


def test_tiny_runs_report_and_tables_show_no_nan(tiny: RunResult) -> None:
    missing = re.compile(r"\b(?:None|nan|NaN)\b")
    assert tiny.report and not [line for line in tiny.report if missing.search(line)]
    for table in (tiny.run_dir / "reports").glob("*.md"):
        assert "| nan" not in table.read_text(), table.name


def test_a_single_persona_leaves_sd_and_eta_undefined(tmp_path: Path) -> None:
    result = run_scenario(
        "trust-population", {"n_personas": 1, "split": "all"}, out=tmp_path / "r", progress=False
    )
    metrics = result.metrics["metrics"]
    assert metrics["sd_sent"] is None and metrics["sd_sent_undefined"] == "fewer than 2 values"
    assert metrics["mean_sent"] is not None and "mean_sent_undefined" not in metrics
    for attribute in metrics["attributes"].values():
        assert attribute["eta_squared"] is None
        assert attribute["eta_squared_undefined"].startswith("a single level (")
        assert all(level["small"] for level in attribute["levels"].values())
    assert "SD undefined (it needs at least two values)" in result.report[0]
    single = "eta² undefined, n = 1: every value falls in one group, so there are no groups"
    assert any(single in line for line in result.report)


def test_one_repetition_leaves_the_spreads_undefined(tmp_path: Path) -> None:
    params = {**TINY["classroom"], "strategies": "none,zero-shot", "races": "none,AA"}
    result = run_scenario("classroom", params, out=tmp_path / "r", progress=False)
    metrics = result.metrics["metrics"]
    assert metrics["baseline"]["accuracy"] is not None
    assert metrics["baseline"]["accuracy_sd_undefined"] == "fewer than 2 repetitions"
    for cell in metrics["cells"]:
        assert cell["doc"]["sd_undefined"] == "fewer than 2 repetitions"
        assert cell["low"]["small"] and cell["low"]["n_graded"] == 2  # 2 < 5
    assert all(r["sd_undefined"] == "fewer than 2 repetitions" for r in metrics["race_effect"])
    table = (result.run_dir / "reports" / "table1_level.md").read_text()
    assert "†" in table and "n < 5" in table and "| nan" not in table


class ConstantSender(Backend):
    """Scripted everything, except that every trustor sends the same $5."""

    def __init__(self) -> None:
        self.scripted = ScriptedBackend()

    def identity(self) -> dict[str, Any]:
        return {"backend": "constant-sender"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        if request.task == "trust.trustor":
            return ChatResponse(text="I trust moderately. Finally, I will give 5 dollars")
        return await self.scripted.complete(request, timeout)


@pytest.fixture(scope="module")
def constant_beliefs(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    out = tmp_path_factory.mktemp("constant") / "run"
    return run_scenario(
        "trust-beliefs", {"n_personas": 12}, out=out, progress=False, backend=ConstantSender()
    )


def test_constant_behaviour_gives_no_rho_and_no_eta(constant_beliefs: RunResult) -> None:
    """Everyone sends $5: η² and every ρ against behaviour are undefined, never 0 or ±1
    (alphabetical tie-breaking used to turn this into a ρ of ±1)."""
    metrics = constant_beliefs.metrics["metrics"]
    behaviour = metrics["behaviour"]
    assert behaviour["mean_sent"] == 5.0 and behaviour["sd_sent"] == 0.0
    for attribute in behaviour["attributes"].values():
        assert attribute["eta_squared"] is None
        assert attribute["eta_squared_undefined"].startswith(
            ("constant input (all", "a single level (", "no values: ")
        )
    for per_trait in metrics["beliefs"].values():
        for result in per_trait.values():
            assert result["rho"] is None
            if "missing" in result:  # not asked (a single level in the split): says so
                assert result["rho_undefined"].startswith("not asked: ")
                continue
            assert result["rho_undefined"] == "behaviour: constant input"
            assert result["abs_delta_eta_squared"] is None
            assert result["abs_delta_eta_squared_undefined"].startswith("behaviour: ")
    for summary in metrics["summary"].values():
        assert summary["n_rho_defined"] == 0
        assert summary["median_rho"] is None and summary["mean_rho"] is None
        assert summary["median_rho_undefined"] == "no defined values"
    assert unexplained_nulls(metrics) == []
    assert any("median ρ = undefined (no defined values)" in x for x in constant_beliefs.report)
    table = (constant_beliefs.run_dir / "reports" / "table3_consistency.md").read_text()
    assert "behaviour: constant input" in table and "| nan" not in table
    assert main(["metrics", str(constant_beliefs.run_dir), "--check"]) == 0


def test_small_groups_follow_the_logged_min_group_n(constant_beliefs: RunResult) -> None:
    """The threshold is read from `run.started`'s `validity` (default 5), so the same log
    re-scored with another threshold flags other levels."""
    events = events_of(constant_beliefs.run_dir)
    scenario = get_scenario("trust-beliefs")
    default = scenario.compute_metrics(events)
    assert default["behaviour"]["min_group_n"] == 5
    assert default == constant_beliefs.metrics["metrics"]

    def with_min_group_n(n: int) -> dict[str, Any]:
        patched = events.copy()
        first = patched.index[patched["kind"] == "run.started"][0]
        payload = copy.deepcopy(patched.at[first, "payload"])
        payload["validity"] = {"max_failure_rate": 0.2, "min_group_n": n}
        patched.at[first, "payload"] = payload
        return scenario.compute_metrics(patched)

    levels = [
        level
        for attribute in default["behaviour"]["attributes"].values()
        for level in attribute["levels"].values()
    ]
    for n in (1, 3, 13):
        rescored = with_min_group_n(n)["behaviour"]
        assert rescored["min_group_n"] == n
        flags = [
            level["small"]
            for attribute in rescored["attributes"].values()
            for level in attribute["levels"].values()
        ]
        assert flags == [level["n"] < n for level in levels]
    assert not any(
        with_min_group_n(1)["behaviour"]["attributes"]["Age"]["levels"][k]["small"]
        for k in default["behaviour"]["attributes"]["Age"]["levels"]
    )


def test_coin_guess_example_follows_the_convention(tmp_path: Path) -> None:
    sys.path.insert(0, str(EXAMPLES))
    from coin_guess import CoinGuess

    events_less = CoinGuess.compute_metrics(
        pd.DataFrame(columns=["seq", "round", "agent_id", "kind", "scope", "ts", "payload"])
    )
    assert events_less["accuracy"] is None
    assert events_less["accuracy_undefined"] == "no graded guesses"
    assert CoinGuess.report({"guesses": 0, **events_less}) == [
        "0 guesses, accuracy undefined (no graded guesses)"
    ]
    json.dumps(events_less, allow_nan=False)


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("no values", "there is no value to compute it from"),
        (
            "no values: no level of this trait in the test split",
            "there is no value to compute it from (no level of this trait in the test split)",
        ),
        ("fewer than 2 values", "it needs at least two values"),
        (
            "constant input (all 7 deciders sent $5)",
            "every value is the same, so there is no variation to measure (all 7 deciders sent $5)",
        ),
        (
            "behaviour: constant input",
            "behaviour: every value is the same, so there is no variation to measure",
        ),
        (
            "a single level (High, n=1)",
            "every value falls in one group, so there are no groups to compare (High, n=1)",
        ),
        ("not recorded", "not recorded"),  # no known code: as it is
    ],
)
def test_reasons_said_in_words(reason: str, said: str) -> None:
    from personasim.analysis.undefined import in_words

    assert in_words(reason) == said


def test_reasons_are_short_and_named(constant_beliefs: RunResult) -> None:
    found = reasons(constant_beliefs.metrics["metrics"])
    assert found and all(0 < len(reason) <= 80 for reason in found)


def test_write_table_marks_flagged_rows_and_shows_nulls_as_dashes(tmp_path: Path) -> None:
    from personasim.simulation.runs.lifecycle.tables import write_table

    rows = [
        {"group": "a", "rho": 0.5, "small": False},
        {"group": "b", "rho": None, "rho_undefined": "constant input", "small": True},
    ]
    csv_path, md_path = write_table(rows, tmp_path, "t", flag="small", notes=["† n < 5"])
    frame = pd.read_csv(csv_path)
    assert frame["small"].tolist() == [False, True]  # machine-readable in the CSV
    markdown = md_path.read_text()
    header, _, a, b = (
        [c.strip() for c in line.split("|")[1:-1]] for line in markdown.splitlines()[:4]
    )
    row_a, row_b = dict(zip(header, a, strict=True)), dict(zip(header, b, strict=True))
    assert (row_a["small"], row_b["small"]) == ("", "†")
    assert (row_a["rho"], row_b["rho"]) == ("0.500", "—")  # 3 significant figures
    assert (row_a["rho_undefined"], row_b["rho_undefined"]) == ("—", "constant input")
    assert "nan" not in markdown and markdown.rstrip().endswith("† n < 5")


def test_min_group_n_flag_reaches_the_metrics(tmp_path: Path) -> None:
    """`--min-group-n` is logged in `run.started` and the flags follow it, also on re-scoring."""
    out = tmp_path / "run"
    argv = ["run", "trust-population", "--n-personas", "12", "--min-group-n", "3"]
    assert main([*argv, "--out", str(out), "--no-progress", "--no-cache"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert metrics["min_group_n"] == 3
    levels = [lvl for a in metrics["attributes"].values() for lvl in a["levels"].values()]
    assert any(lvl["small"] for lvl in levels) and not all(lvl["small"] for lvl in levels)
    assert all(lvl["small"] == (lvl["n"] < 3) for lvl in levels)
    assert main(["metrics", str(out), "--check"]) == 0
