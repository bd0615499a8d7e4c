"""`personasim view` pages in a real browser: headless Chromium (Debian's `chromium` package)
renders every scenario's page, opens an agent by URL fragment, keeps injected markup inert,
compares runs, and opens a 10,000-agent page in a few seconds.

Run with `python -m pytest -q -m browser` (left out of the fast suite)."""

from __future__ import annotations

import html as html_lib
import json
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from test_viewer import INJECTION, SECRET

from personasim.simulation import Event, SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main

pytestmark = pytest.mark.browser

SMALL = {
    "career-chat": {"n_users": 2, "n_items": 1, "judge_samples": 1, "max_turns": 2},
    "classroom": {"n_questions": 2, "repetitions": 1},
    "persona-gym": {"n_personas": 1, "n_environments": 1, "questions_per_task": 1},
    "persona-journey": {"n_personas": 1, "scenes": 1, "n_items": 1, "survey_repeats": 1},
    "trust-beliefs": {"n_personas": 4},
    "trust-conditioning": {"n_personas": 4},
    "trust-forecast": {"n_personas": 1},
    "trust-population": {"n_personas": 6},
}


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("the browser tier needs Chromium: apt-get install -y chromium")
    return found


def dump_dom(page: Path, fragment: str = "", tmp: Path | None = None) -> tuple[str, float]:
    """The DOM after the page's script ran, and the seconds Chromium took (start included)."""
    profile = (tmp or page.parent) / f"profile-{time.monotonic_ns()}"
    command = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom",
        page.resolve().as_uri() + fragment,
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout, time.perf_counter() - start


def view(run_dirs: list[Path], target: Path) -> Path:
    assert main(["view", *map(str, run_dirs), "--output", str(target)]) == 0
    return target


def replies(run_dir: Path) -> dict[str, list[str]]:
    """Each agent's model replies, in log order."""
    out: dict[str, list[str]] = {}
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        for event in store.read(["llm.call"]):
            out.setdefault(event.agent_id, []).append(event.payload["response"]["text"])
    return out


@pytest.mark.parametrize("scenario", sorted(SMALL))
def test_every_scenario_renders_and_an_agent_opens_by_fragment(scenario: str, tmp_path: Path):
    run_dir = tmp_path / "run"
    run_scenario(scenario, SMALL[scenario], out=run_dir, progress=False)
    page = view([run_dir], tmp_path / "page.html")
    dom, _ = dump_dom(page)
    assert 'data-ready="1"' in dom and f"{scenario} — run" in dom
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        agents = [e.agent_id for e in store.read(["agent.created"])]
    shown = min(len(agents), 50)
    assert dom.count("<tr data-agent=") == shown
    agent_id, texts = next(iter(replies(run_dir).items()))
    dom, _ = dump_dom(page, "#agent/" + agent_id)
    text = html_lib.unescape(dom)
    assert 'data-view="agent"' in dom and agent_id in text
    assert all(reply in text for reply in texts), "the agent's replies are on its page"


def test_a_journeys_moves_show_as_moves_on_the_personas_page(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_scenario("persona-journey", SMALL["persona-journey"], out=run_dir, progress=False)
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        (persona,) = [e.agent_id for e in store.read(["journey.assigned"])]
    dom, _ = dump_dom(view([run_dir], tmp_path / "page.html"), "#agent/" + persona)
    text = html_lib.unescape(dom)
    for step in ("moved — → trust", "moved trust → survey", "moved survey → gym"):
        assert step in text, step


def test_injected_markup_in_a_reply_stays_inert(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIServer(responder=lambda body: INJECTION) as server:
        run_scenario(
            "trust-population", {"n_personas": 2}, model="openai:fake-model",
            base_url=server.base_url, out=tmp_path / "run", progress=False,
        )  # fmt: skip
    page = view([tmp_path / "run"], tmp_path / "page.html")
    assert SECRET not in page.read_text()
    agent_id = next(iter(replies(tmp_path / "run")))
    dom, _ = dump_dom(page, "#agent/" + agent_id)
    assert "<title>personasim — trust-population (run)</title>" in dom  # not 'pwned'
    assert 'data-pwned="1"' not in dom
    assert "<img src=\"x\"" not in dom and "<img src=x" not in dom
    assert "&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    assert "&lt;img src=x onerror=" in dom
    assert SECRET not in dom


def test_compare_marks_the_replies_that_differ(tmp_path: Path) -> None:
    base, drift = tmp_path / "base", tmp_path / "drift"
    run_scenario("trust-population", {"n_personas": 6}, out=base, progress=False)
    run_scenario(
        "trust-population", {"n_personas": 6}, model="scripted:drift=0.6,seed=3", out=drift,
        progress=False,
    )  # fmt: skip
    a, b = replies(base), replies(drift)
    differing = [agent for agent in a if a[agent] != b.get(agent)]
    same = [agent for agent in a if a[agent] == b.get(agent)]
    assert differing, "drift 0.6 changes some reply among 6 personas"
    page = view([base, drift], tmp_path / "compare.html")
    dom, _ = dump_dom(page, "#compare")
    assert 'id="compare-metrics"' in dom and "run 2: drift" in dom
    dom, _ = dump_dom(page, "#compare/" + differing[0])
    assert 'data-view="compare"' in dom and 'class="difflabel">differs from run 2<' in dom
    assert "differs from run 1" in dom
    if same:  # a persona answered alike under both models: no step is marked
        dom, _ = dump_dom(page, "#compare/" + same[0])
        assert 'id="compare-outcomes"' in dom and 'class="difflabel"' not in dom


def synthetic_run(run_dir: Path, n_agents: int) -> None:
    """A valid log of a one-round trust game with `n_agents` personas, written through the
    event store (a scripted run of this size would take minutes on 2 cores)."""
    run_dir.mkdir()
    prompt = "You are playing with the following persona:\n" + "Trait: value\n" * 30
    events = [
        Event("run.started", {"scenario": "synthetic", "seed": 0, "params": {}}),
        Event("env.created", {"env": "trust_game", "kind": "trust_game", "settings": {}}),
    ]
    for i in range(n_agents):
        attributes = {"age": 18 + i % 60, "sex": "MF"[i % 2], "job_title": f"job {i % 37}"}
        persona = {"id": f"p{i:05d}", "attributes": attributes, "traits": {}}
        created = {"type": "PersonaAgent", "persona": persona}
        events.append(Event("agent.created", created, agent_id=f"a{i}"))
    for i in range(n_agents):
        reply = f"I trust this stranger somewhat. Finally, I will give {i % 11} dollars"
        usage = {"prompt_tokens": 300, "completion_tokens": 12}
        call = {
            "task": "trust.trustor", "source": "model", "attempts": 1, "latency_s": 0.01,
            "cached": False, "messages": [{"role": "user", "content": prompt + f"Name: p{i}"}],
            "response": {"text": reply, "usage": usage},
        }  # fmt: skip
        made = {"task": "trust.trustor", "value": i % 11, "attempts": 1}
        sent = {"env": "trust_game", "trustee": "t", "sent": i % 11, "received": 3 * (i % 11)}
        events += [
            Event("llm.call", call, round=1, agent_id=f"a{i}"),
            Event("decision.made", made, round=1, agent_id=f"a{i}"),
            Event("trust.transfer", sent, round=1, agent_id=f"a{i}"),
        ]
    events.append(Event("run.completed", {}))
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        store.append(events)
    manifest = {"status": "complete", "scenario": "synthetic", "seed": 0, "params": {}}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


KEYS = ("render", "open")


def test_ten_thousand_agents_open_in_a_few_seconds(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "big", 10_000)
    page = view([tmp_path / "big"], tmp_path / "big.html")
    dom, seconds = dump_dom(page)
    render_ms, open_ms = (int(dom.split(f'data-{k}-ms="')[1].split('"')[0]) for k in KEYS)
    size_mib = page.stat().st_size / 2**20
    print(
        f"\n10,000 agents: page {size_mib:.1f} MiB; rendered {open_ms} ms after navigation "
        f"({render_ms} ms in the script); Chromium start to DOM dump {seconds:.2f} s"
    )
    assert dom.count("<tr data-agent=") == 50 and "page 1 of 200" in dom
    assert open_ms < 5000 and seconds < 60  # the wall time includes a 13 MiB DOM dump
    dom, seconds = dump_dom(page, "#agent/a9999")
    print(f"agent a9999 by fragment: Chromium {seconds:.2f} s")
    assert "Finally, I will give 9 dollars" in dom and 'data-view="agent"' in dom
    with sqlite3.connect(tmp_path / "big" / "events.sqlite") as db:
        assert db.execute("select count(*) from events").fetchone()[0] == 40_003
