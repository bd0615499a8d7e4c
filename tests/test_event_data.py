"""Events as data: `personasim export --format parquet` (one row per event, payload fields
flattened), `load_events` / `load_sweep` (with what each cell ran: `model` and each varied
parameter, typed), and the runnable examples in docs/sweeps.md."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from personasim.analysis import load_events, load_sweep
from personasim.simulation import run_scenario
from personasim.simulation.cli.main import main
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_dir import RunError
from personasim.simulation.runs.sweeps.sweep import run_sweep
from personasim.simulation.runs.tools.agent_data import sweep_agents
from personasim.simulation.runs.tools.event_data import typed_column
from personasim.simulation.runs.tools.sweep_labels import cell_labels, with_cell_labels

DOCS = Path(__file__).resolve().parents[1] / "docs" / "sweeps.md"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "r"
    run_scenario("trust-population", {"n_personas": 5}, out=out, progress=False, use_cache=False)
    return out


def logged(run_dir: Path) -> list:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read())


def test_parquet_export_has_one_row_per_event_and_round_trips(run_dir: Path, capsys) -> None:
    assert main(["export", str(run_dir), "--format", "parquet"]) == 0
    events = logged(run_dir)
    assert f"{len(events)} events written to" in capsys.readouterr().out
    table = pd.read_parquet(run_dir / "events.parquet")
    assert len(table) == len(events)
    assert list(table["seq"]) == [e.seq for e in events]
    assert [json.loads(p) for p in table["payload"]] == [e.payload for e in events]
    by_seq = table.set_index("seq")
    calls = [e for e in events if e.kind == "llm.call"]
    transfers = [e for e in events if e.kind == "trust.transfer"]
    assert calls and transfers
    for event in calls:
        row = by_seq.loc[event.seq]
        assert row["payload.task"] == event.payload["task"]
        assert row["payload.response.text"] == event.payload["response"]["text"]
        usage = event.payload["response"]["usage"]
        assert row["payload.response.usage.prompt_tokens"] == usage["prompt_tokens"]
        assert json.loads(row["payload.messages"]) == event.payload["messages"]
    for event in transfers:
        assert by_seq.loc[event.seq, "payload.sent"] == event.payload["sent"]
        assert by_seq.loc[event.seq, "agent_id"] == event.agent_id
    assert str(table["payload.sent"].dtype) == "Int64"  # integers stay integers
    assert table["payload.cached"].dropna().map(type).eq(bool).all()


def test_load_events_is_the_exported_table_with_payload_as_dicts(
    run_dir: Path, tmp_path: Path
) -> None:
    frame = load_events(run_dir)
    events = logged(run_dir)
    assert len(frame) == len(events)
    assert list(frame["payload"]) == [e.payload for e in events]
    assert list(frame["kind"]) == [e.kind for e in events]
    target = tmp_path / "copy.parquet"
    assert main(["export", str(run_dir), "--format", "parquet", "--output", str(target)]) == 0
    exported = pd.read_parquet(target)
    assert list(exported.columns) == list(frame.columns)
    flat = [c for c in frame.columns if c.startswith("payload.")]
    pd.testing.assert_frame_equal(exported[flat], frame[flat], check_dtype=False)


def test_a_sweeps_events_in_one_file_with_a_cell_column(tmp_path: Path, capsys) -> None:
    sweep = run_sweep(
        "trust-population", ["scripted"], {"n_personas": ["3", "4"]},
        out=tmp_path / "sweep", progress=False,
    )  # fmt: skip
    counts = {run.run_dir.name: len(logged(run.run_dir)) for run in sweep.runs}
    assert main(["export", str(tmp_path / "sweep"), "--format", "parquet"]) == 0
    assert f"{sum(counts.values())} events from 2 runs" in capsys.readouterr().out
    table = pd.read_parquet(tmp_path / "sweep" / "events.parquet")
    assert table["cell"].value_counts().to_dict() == counts
    frame = load_sweep(tmp_path / "sweep")
    assert frame["cell"].value_counts().to_dict() == counts
    assert list(frame.columns) == list(table.columns)
    first = sweep.runs[0].run_dir
    own = frame[frame["cell"] == first.name].reset_index(drop=True)
    assert list(own["payload"]) == [e.payload for e in logged(first)]
    # Types survive the cells: typed from the raw values over all cells, in the frame and file.
    sent = [e.payload["sent"] for r in sweep.runs for e in logged(r.run_dir)
            if e.kind == "trust.transfer"]  # fmt: skip
    for typed in (frame, table):
        assert str(typed["payload.sent"].dtype) == "Int64"
        assert typed["payload.sent"].mean() == pytest.approx(sum(sent) / len(sent))
        assert str(typed["payload.cached"].dtype) == "boolean"
        assert str(typed["payload.latency_s"].dtype) == "float64"
        assert str(typed["payload.task"].dtype) == "string"
        assert str(typed["payload.response.usage.prompt_tokens"].dtype) == "Int64"
        assert str(typed["seq"].dtype) == "int64"
    text = [c for c in frame.columns if c.startswith("payload.") and frame[c].dtype == "string"]
    for column in text:  # a text column is the field's text, or JSON of a list/object/mix
        values = frame[column].dropna()
        raw = [v for v in own_values(frame, column) if v is not None]
        assert len(values) == len(raw)
        if all(isinstance(v, str) for v in raw):
            assert list(values) == raw
        else:
            assert [json.loads(v) for v in values] == raw


def own_values(frame: pd.DataFrame, column: str) -> list:
    """`column`'s field read from each row's payload dict (two levels deep, as flattened)."""
    path = column.removeprefix("payload.").split(".")
    values = []
    for payload in frame["payload"]:
        value = payload
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        values.append(value)
    return values


# --- What each cell ran: `model` and the varied parameters, typed, from each cell's manifest --

MODELS = ["scripted", "scripted:drift=0.15"]
LABELS = ["cell", "model", "n_personas", "temperature"]


@pytest.fixture(scope="module")
def labelled_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 models × 2 `n_personas` × 2 `temperature`, the values given as text (as the CLI's
    `--vary` gives them): the frames' types are the runs', not the text's."""
    out = tmp_path_factory.mktemp("labelled") / "sweep"
    grid = {"n_personas": ["2", "3"], "temperature": ["0.05", "1"]}
    run_sweep("trust-population", MODELS, grid, out=out, progress=False, use_cache=False)
    return out


def manifests(sweep_dir: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sweep_dir.glob("*/manifest.json")}


def test_a_sweeps_frames_have_a_typed_column_per_varied_parameter_and_the_model(
    labelled_sweep: Path,
) -> None:
    recorded = manifests(labelled_sweep)
    assert len(recorded) == 8
    assert main(["export", str(labelled_sweep), "--format", "parquet"]) == 0
    exported = [pd.read_parquet(labelled_sweep / f) for f in ("events.parquet", "agents.parquet")]
    for frame in (load_sweep(labelled_sweep), sweep_agents(labelled_sweep), *exported):
        assert list(frame.columns[: len(LABELS)]) == LABELS
        assert not {"seed", "endowment", "trustee"} & set(frame.columns)  # not varied
        assert str(frame["n_personas"].dtype) == "Int64"  # given as "2", run as 2
        assert str(frame["temperature"].dtype) == "float64"  # given as "1", run as 1.0
        assert str(frame["model"].dtype) == "string"
        cells = frame[LABELS].drop_duplicates()
        assert len(cells) == 8 and cells["cell"].is_unique
        for row in cells.itertuples(index=False):
            manifest = recorded[row.cell]
            assert row.model == manifest["model_spec"] == manifest["roles"]["persona"][0]
            assert row.n_personas == manifest["params"]["n_personas"]
            assert row.temperature == manifest["params"]["temperature"]
        assert sorted(cells["model"].unique()) == MODELS  # the spec, not the folder's name
        assert sorted(cells["n_personas"].unique()) == [2, 3]
        assert sorted(cells["temperature"].unique()) == [0.05, 1.0]
    events = load_sweep(labelled_sweep)
    for cell, manifest in recorded.items():  # every row of a cell carries its labels
        rows = events[events["cell"] == cell]
        assert len(rows) == len(logged(labelled_sweep / cell))
        assert set(rows["n_personas"]) == {manifest["params"]["n_personas"]}
    agents = sweep_agents(labelled_sweep)
    persons = agents[agents["type"] == "PersonaAgent"].groupby("cell")
    assert (persons.size() == persons["n_personas"].first()).all()  # n_personas in each cell


def test_a_sweep_of_one_cell_has_its_model_and_no_parameter_column(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(
        "trust-population", ["scripted:drift=0.15"], {"n_personas": ["2"]},
        out=out, progress=False, use_cache=False,
    )  # fmt: skip
    for frame in (load_sweep(out), sweep_agents(out)):
        assert list(frame.columns[:2]) == ["cell", "model"]
        assert "n_personas" not in frame.columns  # one value: not varied
        assert set(frame["model"]) == {"scripted:drift=0.15"}


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_seeds_of_a_sweep_are_a_seed_column(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(
        "trust-population", ["scripted"], None, {"n_personas": 2},
        out=out, progress=False, use_cache=False, seeds=[0, 3],
    )  # fmt: skip
    frame = load_sweep(out)
    assert list(frame.columns[:3]) == ["cell", "model", "seed"]
    assert str(frame["seed"].dtype) == "Int64"
    by_cell = frame.groupby("cell")["seed"].first().to_dict()
    assert by_cell == {cell: m["seed"] for cell, m in manifests(out).items()}
    assert sorted(by_cell.values()) == [0, 3]


def test_a_parameter_named_like_a_column_is_param_dot_name() -> None:
    labels = pd.DataFrame(
        {"model": ["m"], "param.seed": [7], "round": [2]}, index=pd.Index(["c"], name="cell")
    )
    frame = pd.DataFrame({"cell": ["c", "c"], "round": [1, 2], "model": ["a", "b"]})
    labelled = with_cell_labels(frame, labels)
    assert list(labelled.columns) == ["cell", "sweep.model", "param.seed", "param.round",
                                      "round", "model"]  # fmt: skip
    assert labelled["param.round"].tolist() == [2, 2] and labelled["round"].tolist() == [1, 2]


def test_a_run_recorded_before_model_spec_is_labelled_by_its_roles(
    labelled_sweep: Path, tmp_path: Path
) -> None:
    copy = shutil.copytree(labelled_sweep, tmp_path / "old")
    for path in copy.glob("*/manifest.json"):
        manifest = json.loads(path.read_text())
        del manifest["model_spec"]
        path.write_text(json.dumps(manifest))
    labels = cell_labels(sorted(p.parent for p in copy.glob("*/manifest.json")))
    expected = {cell: m["model_spec"] for cell, m in manifests(labelled_sweep).items()}
    assert labels["model"].to_dict() == expected


@pytest.mark.parametrize("damage", ["unreadable", "missing"])
def test_a_cell_with_a_damaged_manifest_is_an_error_naming_the_file(
    labelled_sweep: Path, tmp_path: Path, capsys, damage: str
) -> None:
    copy = shutil.copytree(labelled_sweep, tmp_path / "damaged")
    manifest = copy / "scripted__n_personas=3__temperature=1" / "manifest.json"
    assert manifest.is_file()
    if damage == "missing":
        manifest.unlink()
    else:
        manifest.write_text('{"status": "complete", "params": ')
    for load in (load_sweep, sweep_agents):
        with pytest.raises(RunError, match=re.escape(str(manifest))):
            load(copy)
    assert main(["export", str(copy), "--format", "parquet"]) == 2
    assert str(manifest) in capsys.readouterr().err


@pytest.mark.parametrize(
    ("values", "dtype", "expected"),
    [
        ([np.int64(3), 4, None], "Int64", [3, 4, pd.NA]),
        ([np.bool_(True), False, pd.NA], "boolean", [True, False, pd.NA]),
        ([1, np.float32(2.5), float("nan"), None], "float64", [1.0, 2.5, np.nan, np.nan]),
        ([np.float64(0.5), 0.25], "float64", [0.5, 0.25]),
        (["a", None, "b"], "string", ["a", pd.NA, "b"]),
        # anything else mixed is JSON text, every value (text too) encoded
        ([True, 1], "string", ["true", "1"]),
        (["5", 5], "string", ['"5"', "5"]),
        ([[1, np.int64(2)], {"b": 1, "a": None}], "string", ["[1, 2]", '{"a": null, "b": 1}']),
        ([2**63, 1], "string", [str(2**63), "1"]),
    ],
)
def test_one_type_per_column_by_the_documented_rule(
    values: list, dtype: str, expected: list
) -> None:
    column = typed_column(values)
    assert str(column.dtype) == dtype
    pd.testing.assert_series_equal(column, pd.Series(expected).astype(dtype))


@pytest.mark.parametrize(
    ("target", "flags", "message"),
    [
        ("run", ["--output", "-"], "Parquet is binary; name a file"),
        ("empty", [], "not a sweep directory (no run directories in it)"),
        ("missing", [], "nothing: not a run directory (no manifest.json)"),
    ],
)
def test_bad_parquet_exports_exit_2(
    run_dir: Path, tmp_path: Path, capsys, target: str, flags: list[str], message: str
) -> None:
    path = {"run": run_dir, "empty": tmp_path, "missing": tmp_path / "nothing"}[target]
    assert main(["export", str(path), "--format", "parquet", *flags]) == 2
    assert message in capsys.readouterr().err


def run_docs_example(name: str, folder: Path) -> dict[str, Any]:
    """The namespace docs/sweeps.md's example `name` leaves, run as written in `folder`."""
    text = DOCS.read_text(encoding="utf-8")
    (example,) = re.findall(rf"<!-- example: {name} -->\n```python\n(.*?)```", text, re.S)
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        namespace: dict[str, Any] = {}
        exec(compile(example, str(DOCS), "exec"), namespace)
    finally:
        os.chdir(cwd)
    return namespace


def test_the_docs_example_runs(tmp_path: Path) -> None:
    """docs/sweeps.md's `load_events` example, as written, in a fresh folder."""
    namespace = run_docs_example("load_events", tmp_path)
    assert len(namespace["events"]) == len(logged(tmp_path / "runs" / "example"))


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_load_sweep_docs_example_runs(tmp_path: Path) -> None:
    """docs/sweeps.md's `load_sweep` example ("What each cell ran"), as written."""
    namespace = run_docs_example("load_sweep", tmp_path)
    events = namespace["events"]
    assert list(events.columns[:3]) == ["cell", "model", "endowment"]
    assert str(events["endowment"].dtype) == "Int64"
    assert sorted(events["model"].unique()) == ["scripted", "scripted:drift=0.15"]
