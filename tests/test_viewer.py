"""`personasim view`: the page's embedded data matches the log, model text cannot break out of
its JSON block, no key reaches the page, bad input is one error line, and --serve answers; a
folder of runs gives a run list that serves only its own runs and never runs their code."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_openai import FakeOpenAIServer
from scipy import stats

from personasim.simulation import Event, SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main
from personasim.simulation.core import scenario as scenario_module
from personasim.simulation.llm import scripted
from personasim.simulation.runs.tools.agent_data import run_agents
from personasim.simulation.runs.tools.replay import agent_events
from personasim.simulation.runs.tools.run_list import find_runs
from personasim.simulation.runs.viewer.viewer import collect_run, render_page
from personasim.simulation.runs.viewer.viewer_compare import NO_SPREAD, ONE_PAIR, mean_interval
from personasim.simulation.runs.viewer.viewer_list import FolderServer
from personasim.simulation.runs.viewer.viewer_server import ViewServer

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"

SECRET = "sk-personasim-viewer-SECRET-51d2e0"
INJECTION = (
    "</script><script>document.title='pwned'</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"> {{agents}} "
    "Finally, I will give 4 dollars"
)


def embedded(html: str, element_id: str):
    """The JSON of one `<script type="application/json">` block, parsed."""
    match = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', html)
    assert match, element_id
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view") / "run"
    run_scenario("trust-population", {"n_personas": 4}, out=out, progress=False)
    return out


def test_page_holds_every_agent_and_its_events_as_the_log_has_them(scripted_run: Path) -> None:
    target = scripted_run.parent / "page.html"
    assert main(["view", str(scripted_run), "--output", str(target)]) == 0
    html = target.read_text()
    assert "<script src" not in html and "http://" not in html and "https://" not in html
    run = embedded(html, "runs")[0]
    with SQLiteEventStore(scripted_run / "events.sqlite") as store:
        created = [e.agent_id for e in store.read(["agent.created"])]
        assert [row[0] for row in run["agents"]["rows"]] == created
        for agent_id in created:
            events = embedded(html, run["blocks"][agent_id])
            assert [e[0] for e in events] == [e.seq for e in agent_events(store, agent_id)]
        sources = Counter(e.payload["source"] for e in store.read(["llm.call"]))
    assert run["sources"] == dict(sources) and sum(sources.values()) == 4
    columns = run["agents"]["columns"]
    persona_rows = [r for r in run["agents"]["rows"] if r[columns.index("persona")]]
    assert len(persona_rows) == 4
    assert all(r[columns.index("decisions")] == 1 for r in persona_rows)
    assert all(r[columns.index("trust.transfer:sent")] is not None for r in persona_rows)


def test_model_text_stays_inside_its_json_block(tmp_path: Path, monkeypatch) -> None:
    """A reply carrying `</script>`, an onerror handler and a template placeholder is escaped
    in the page and reads back unchanged; the API key is nowhere in the page."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIServer(responder=lambda body: INJECTION) as server:
        run_scenario(
            "trust-population",
            {"n_personas": 2},
            model="openai:fake-model",
            base_url=server.base_url,
            out=tmp_path / "run",
            progress=False,
        )
    with SQLiteEventStore(tmp_path / "run" / "events.sqlite") as store:
        html = render_page([collect_run(tmp_path / "run", store)])
    assert SECRET not in html
    assert "</script><script>document.title" not in html
    assert "<img src=x" not in html
    run = embedded(html, "runs")[0]
    replies = [
        event[4]["response"]["text"]
        for block in run["blocks"].values()
        for event in embedded(html, block)
        if event[2] == "llm.call"
    ]
    assert replies and all(reply == INJECTION for reply in replies)
    assert html.count('<script type="application/json"') == 1 + len(run["blocks"])


def test_view_refuses_what_is_not_a_run(tmp_path: Path, capsys) -> None:
    assert main(["view", str(tmp_path / "missing")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "manifest.json").write_text('{"status": "interrupted"}')
    assert main(["view", str(tmp_path / "half")]) == 2
    assert "no events.sqlite" in capsys.readouterr().err
    assert not (tmp_path / "half" / "view.html").exists()


def test_default_output_and_compare_of_two_runs(scripted_run: Path, capsys) -> None:
    assert main(["view", str(scripted_run), str(scripted_run)]) == 0
    html = (scripted_run / "view.html").read_text()
    runs = embedded(html, "runs")
    assert len(runs) == 2 and runs[0]["agents"] == runs[1]["agents"]
    assert "10 agents" in capsys.readouterr().out


def two_models(root: Path) -> tuple[Path, Path]:
    """Two trust-population runs, same seed and personas: the scripted model, and the scripted
    model with drift (which changes some decisions and leaves some unreadable)."""
    base, drift = root / "base", root / "drift"
    run_scenario("trust-population", {"n_personas": 12}, out=base, progress=False)
    run_scenario(
        "trust-population", {"n_personas": 12}, model="scripted:drift=0.6,seed=3", out=drift,
        progress=False,
    )  # fmt: skip
    return base, drift


def expected_comparison(base: Path, drift: Path) -> dict[str, Any]:
    """The compare summary worked out from each run's agents frame, apart from the viewer:
    changed personas (a failed decision is a change), and the paired mean with its t interval."""
    a, b = (
        run_agents(d).dropna(subset=["persona_id"]).set_index("persona_id") for d in (base, drift)
    )
    shared = a.index.intersection(b.index)
    x, y = a.loc[shared, "trust.trustor"], b.loc[shared, "trust.trustor"]
    changed = int(
        sum(
            (p is pd.NA) != (q is pd.NA) or (p is not pd.NA and p != q)
            for p, q in zip(x, y, strict=True)
        )
    )
    both = x.notna() & y.notna()
    d = (y[both] - x[both]).astype(float).to_numpy()
    low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    return {"shared": len(shared), "changed": changed, "pairs": len(d), "mean": d.mean(),
            "low": low, "high": high}  # fmt: skip


def flat_metrics(run_dir: Path) -> dict[str, Any]:
    """metrics.json's `metrics`, flattened to `a.b.c` → value."""
    pending, flat = [("", json.loads((run_dir / "metrics.json").read_text())["metrics"])], {}
    while pending:
        prefix, value = pending.pop()
        if isinstance(value, dict):
            pending += [(f"{prefix}.{k}" if prefix else k, v) for k, v in value.items()]
        else:
            flat[prefix] = value
    return flat


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_compare_summarises_what_changed_between_two_runs(tmp_path: Path) -> None:
    """The compare block: changed personas and the mean change as the agents frames give them,
    only the differing parameters, metrics with B − A largest first, changed personas first."""
    base, drift = two_models(tmp_path)
    assert main(["view", str(base), str(drift), "--output", str(tmp_path / "page.html")]) == 0
    (shown,) = embedded((tmp_path / "page.html").read_text(), "compare")
    want = expected_comparison(base, drift)
    (task,) = shown["tasks"]
    assert task["task"] == "trust.trustor" and task["undefined"] is None
    assert (shown["shared"], shown["changed"], task["changed"]) == (
        12,
        want["changed"],
        want["changed"],
    )
    assert 0 < want["changed"] < 12 and task["pairs"] == want["pairs"] < 12
    for key in ("mean", "low", "high"):
        assert task[key] == pytest.approx(want[key])
    params = shown["parameters"]
    assert [row[0] for row in params["differ"]] == ["model", "roles.persona"]
    assert params["differ"][0][1:] == ["scripted", "scripted:drift=0.6,seed=3"]
    assert (
        params["equal"] == len(json.loads((base / "manifest.json").read_text())["params"]) + 6
    )  # 8 settings
    fa, fb = flat_metrics(base), flat_metrics(drift)
    both = fa.keys() & fb.keys()
    numeric = [abs(fb[k] - fa[k]) for k in both if all(map(is_number, (fa[k], fb[k])))]
    first = shown["metrics"]["differ"][0]
    assert abs(first[3]) == max(numeric) > 0 and first[3] == fb[first[0]] - fa[first[0]]
    differences = [abs(row[3]) for row in shown["metrics"]["differ"] if row[3] is not None]
    assert differences == sorted(differences, reverse=True)
    metrics = shown["metrics"]
    assert metrics["total"] == metrics["equal"] + len(metrics["differ"]) and metrics["equal"] > 0
    flags = [p["changed"] for p in shown["personas"]]
    assert flags == sorted(flags, reverse=True) and sum(flags) == want["changed"]


def test_the_mean_change_is_undefined_without_two_differences_that_vary() -> None:
    assert mean_interval([2.0])["undefined"] == ONE_PAIR
    assert mean_interval([1.0, 1.0, 1.0]) == {
        "pairs": 3, "mean": 1.0, "low": None, "high": None, "undefined": NO_SPREAD,
    }  # fmt: skip
    assert mean_interval([])["mean"] is None
    low, _ = stats.t.interval(0.95, 2, loc=2.0, scale=stats.sem([1.0, 2.0, 3.0]))
    assert mean_interval([1.0, 2.0, 3.0])["low"] == pytest.approx(low)


def test_served_page_is_the_written_page(scripted_run: Path) -> None:
    with SQLiteEventStore(scripted_run / "events.sqlite") as store:
        html = render_page([collect_run(scripted_run, store)])
    with ViewServer(html, port=0) as server:
        server.serve_in_background()
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url + "#agent/x", timeout=5) as response:
            assert response.read().decode() == html
        server.shutdown()


def test_agents_table_has_roles_calls_and_short_text_decisions(scripted_run, tmp_path) -> None:
    """`role` is the model role of the agent's calls, `calls` maps each call's seq to its agent
    (so `#call/SEQ` opens without parsing every agent), and a text decision is a column only
    while every value is short text; a long reply stays on the agent's page alone."""
    with SQLiteEventStore(scripted_run / "events.sqlite") as store:
        run = collect_run(scripted_run, store)
        calls = list(store.read(["llm.call"]))
    columns, rows = run["agents"]["columns"], run["agents"]["rows"]
    roles = {e.agent_id: e.payload["role"] for e in calls}
    assert {r[0]: r[columns.index("role")] for r in rows if r[0] in roles} == roles
    assert run["calls"] == {str(e.seq): e.agent_id for e in calls}
    events = [Event("run.started", {"scenario": "synthetic", "seed": 0, "params": {}})]
    for agent, (pick, say) in {"a": ("B", "short"), "b": ("C", "x" * 41)}.items():
        events += [
            Event("agent.created", {"type": "T"}, agent_id=agent),
            Event("decision.made", {"task": "pick", "value": pick}, agent_id=agent),
            Event("decision.made", {"task": "pick", "value": "A"}, agent_id=agent),
            Event("decision.made", {"task": "say", "value": say}, agent_id=agent),
        ]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text('{"status": "complete"}')
    with SQLiteEventStore(tmp_path / "run" / "events.sqlite") as store:
        store.append(events)
        table = collect_run(tmp_path / "run", store)["agents"]
    assert "decision:say" not in table["columns"]
    picks = [row[table["columns"].index("decision:pick")] for row in table["rows"]]
    assert picks == ["B, A", "C, A"]


# -- a folder of runs: the run list ----------------------------------------------------------


@pytest.fixture(scope="module")
def folder(scripted_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/{one, sweep/a, sweep/b, broken}, and a run beside the folder (outside it)."""
    root = tmp_path_factory.mktemp("folder")
    base = root / "runs"
    for name, created in (("one", "01"), ("sweep/a", "02"), ("sweep/b", "03")):
        shutil.copytree(scripted_run, base / name, ignore=shutil.ignore_patterns("view.html"))
        data = json.loads((base / name / "manifest.json").read_text())
        data["created_at"] = f"2026-01-{created}T10:00:00Z"
        (base / name / "manifest.json").write_text(json.dumps(data))
    (base / "broken").mkdir()
    (base / "broken" / "manifest.json").write_text("{")
    shutil.copytree(scripted_run, root / "outside", ignore=shutil.ignore_patterns("view.html"))
    return base


def get(server: FolderServer, path: str) -> tuple[int, str]:
    """GET `path` sent as written (no client normalises `..` away)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read().decode()


@pytest.fixture
def served(folder: Path) -> Iterator[FolderServer]:
    with FolderServer(folder, port=0) as server:
        server.serve_in_background()
        yield server
        server.shutdown()


def test_run_list_endpoint_lists_the_folder_newest_first(folder: Path, served) -> None:
    status, text = get(served, "/runs.json")
    listed = json.loads(text)
    assert status == 200 and listed["dir"] == str(folder)
    rows = listed["runs"]
    assert [r["path"] for r in rows] == [r.path for r in find_runs(folder)]
    dated = [r["path"] for r in rows if r["path"] in ("one", "sweep/a", "sweep/b")]
    assert dated == ["sweep/b", "sweep/a", "one"]  # newest first
    by_path = {r["path"]: r for r in rows}
    assert by_path["one"]["status"] == "complete" and by_path["one"]["n"] == "4 personas"
    assert by_path["one"]["validity"] == "valid" and by_path["one"]["model"] == "scripted"
    assert by_path["sweep/a"]["href"] == "/run/sweep/a/"
    assert by_path["broken"]["status"] == "damaged" and by_path["broken"]["href"] is None
    status, page = get(served, "/")
    assert status == 200 and embedded(page, "run-list")["rows"] == rows
    assert embedded(page, "runs") == []


def test_each_listed_run_opens_with_a_link_back(folder: Path, served) -> None:
    for href in ("/run/sweep/a/", "/run/sweep/a", "/run/one/"):
        status, page = get(served, href)
        assert status == 200, href
        (run,) = embedded(page, "runs")
        assert run["list"] == "/" and run["manifest"]["scenario"] == "trust-population"
        assert len(run["agents"]["rows"]) == 5  # 4 personas and the trustee


@pytest.mark.parametrize(
    "path",
    [
        "/run/../outside/", "/run/%2e%2e/outside/", "/run/sweep/../../outside/",
        "/run/%2E%2E%2Foutside/", "/run//etc/", "/run/.", "/run/./one/", "/run/broken/",
        "/run/sweep/", "/run/link/", "/../outside/manifest.json", "/one/manifest.json",
        "/run/one/events.sqlite", "/run/OUTSIDE/",
    ],
)  # fmt: skip
def test_the_server_serves_only_the_runs_of_its_folder(folder: Path, served, path: str) -> None:
    """Nothing outside the list answers: `..` in any spelling, absolute paths, a folder that
    is not a run, a damaged run, a link out of the folder, the run's own files."""
    link = folder / "link"
    if not link.exists():
        link.symlink_to(folder.parent / "outside", target_is_directory=True)
    assert "link" in {r.path for r in find_runs(folder)}  # listed, but it resolves outside
    status, text = get(served, path)
    assert status == 404 and "not found" in text and "manifest" not in text


def test_opening_a_run_from_the_list_never_loads_its_scenario_file(tmp_path: Path) -> None:
    """A run of a scenario file whose file now writes a marker when loaded: the list, the
    served page and the written pages show the run, and the marker never appears."""
    scenario_module.list_scenarios()  # built-ins imported before the snapshot
    script = tmp_path / "coin_guess.py"
    script.write_text(EXAMPLE.read_text())
    with scenario_module.SCENARIOS.scoped(), scripted.RULES.scoped():
        args = ["--n-personas", "2", "--rounds", "1", "--no-progress"]
        assert main(["run", str(script), *args, "--out", str(tmp_path / "runs" / "coin")]) == 0
    marker = tmp_path / "executed"
    script.write_text(script.read_text() + f"\nopen({str(marker)!r}, 'w').close()\n")
    with FolderServer(tmp_path / "runs", port=0) as server:
        server.serve_in_background()
        assert get(server, "/")[0] == 200
        status, page = get(server, "/run/coin/")
        server.shutdown()
    (run,) = embedded(page, "runs")
    assert status == 200 and run["metrics"]["metrics"]["guesses"] == 2  # the stored metrics
    assert "--scenario-file" in run["summary"][0] and "not shown" in run["summary"][0]
    assert main(["view", str(tmp_path / "runs")]) == 0
    assert (tmp_path / "runs" / "coin" / "view.html").is_file()
    assert not marker.exists()


def test_view_of_a_folder_writes_the_list_and_each_runs_page(folder: Path, capsys) -> None:
    """No --serve: DIR/view.html lists the runs, linked to RUN/view.html, which links back."""
    assert main(["view", str(folder / "sweep")]) == 0
    assert "the run list, and 2 run page(s)" in capsys.readouterr().out
    listing = embedded((folder / "sweep" / "view.html").read_text(), "run-list")
    assert [(r["path"], r["href"]) for r in listing["rows"]] == [
        ("b", "b/view.html"), ("a", "a/view.html"),
    ]  # fmt: skip
    (run,) = embedded((folder / "sweep" / "a" / "view.html").read_text(), "runs")
    assert run["list"] == "../view.html" and run["dir"] == "a"
