"""`personasim view`: the page's embedded data matches the log, model text cannot break out of
its JSON block, no key reaches the page, bad input is one error line, and --serve answers."""

from __future__ import annotations

import json
import re
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation import Event, SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main
from personasim.simulation.runs.replay import agent_events
from personasim.simulation.runs.viewer import ViewServer, collect_run, render_page

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
