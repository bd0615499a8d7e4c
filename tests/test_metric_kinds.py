"""Metrics read only the event kinds a scenario declares, with shared strings: same metrics as
from the whole log (what keeps a 100,000-agent run's metrics in memory; docs/performance.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from personasim.scenarios.trust.population import TrustPopulation
from personasim.simulation import SQLiteEventStore, run_scenario
from personasim.simulation.log.event_log import latest_attempts
from personasim.simulation.log.events import events_frame
from personasim.simulation.runs.lifecycle.run_dir import metric_events


def test_declared_kinds_give_the_metrics_of_the_whole_log(tmp_path: Path) -> None:
    result = run_scenario(
        "trust-population",
        {"n_personas": 40, "population": "synthetic"},
        model="scripted:drift=0.5",  # re-asks and failed decisions, so those kinds count
        out=tmp_path / "r",
        use_cache=False,
        progress=False,
    )
    metrics = result.metrics["metrics"]
    assert metrics["reasks"] > 0 and metrics["parse_failures"] > 0
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        whole = events_frame(latest_attempts(store.read()))
        declared = metric_events(store, TrustPopulation.metric_kinds())
    assert "llm.call" in set(whole["kind"]) and "llm.call" not in set(declared["kind"])
    assert len(declared) <= len(whole) / 2  # the decisions stay: the counterfactual reads them
    assert TrustPopulation.compute_metrics(declared) == TrustPopulation.compute_metrics(whole)
    assert TrustPopulation.compute_metrics(whole) == metrics


def test_a_subclass_computing_its_own_metrics_reads_every_kind() -> None:
    class Counted(TrustPopulation):
        @classmethod
        def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
            return {"llm_calls": int((events["kind"] == "llm.call").sum())}

    assert TrustPopulation.metric_kinds() is not None
    assert Counted.metric_kinds() is None


def test_shared_strings_keep_payloads_equal(tmp_path: Path) -> None:
    result = run_scenario(
        "trust-population",
        {"n_personas": 5, "population": "synthetic"},
        out=tmp_path / "r",
        use_cache=False,
        progress=False,
    )
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        events = list(store.read())
    plain, shared = events_frame(events), events_frame(events, shared=True)
    assert plain["payload"].tolist() == shared["payload"].tolist()
    traits = [p["persona"]["traits"] for p in shared["payload"] if "persona" in p]
    keys = [next(iter(t)) for t in traits]
    assert len(keys) == 5 and all(k is keys[0] for k in keys)  # one object, not five
