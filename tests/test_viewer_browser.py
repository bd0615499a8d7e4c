"""`personasim view` pages in a real browser: headless Chromium (Debian's `chromium` package)
renders every scenario's page, opens an agent by URL fragment, keeps injected markup inert,
compares runs, and opens a 10,000-agent page in a few seconds; a run's results are on its first
screen, and a sweep's run list opens each cell's page.

Run with `python -m pytest -q -m browser` (left out of the fast suite)."""

from __future__ import annotations

import base64
import hashlib
import html as html_lib
import json
import re
import shutil
import sqlite3
import subprocess
import time
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from fake_openai import FakeOpenAIServer
from test_viewer import INJECTION, SECRET, expected_comparison, two_models

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


def dump_dom(
    page: Path, fragment: str = "", tmp: Path | None = None, width: int = 1280
) -> tuple[str, float]:
    """The DOM after the page's script ran, and the seconds Chromium took (start included)."""
    profile = (tmp or page.parent) / f"profile-{time.monotonic_ns()}"
    command = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        f"--user-data-dir={profile}", "--virtual-time-budget=5000", f"--window-size={width},900",
        "--dump-dom", page.resolve().as_uri() + fragment,
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
    assert '<img src="x"' not in dom and "<img src=x" not in dom
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


# What the compare view says: its summary lines, the metrics' differences in table order, and
# whether each shared persona's row is marked changed, in order (changed table, then unchanged).
COMPARE_PROBE = """
(() => {
  const text = (s) => (document.querySelector(s) || {}).textContent || null;
  const number = (s) => +s.replace("−", "-");
  document.body.dataset.probe = JSON.stringify({ changed: text("#compare-changed"),
    task: text("#compare-tasks li"), page: document.documentElement.scrollWidth,
    differences: [...document.querySelectorAll("#compare-metrics tbody td.diff")]
      .map((td) => td.textContent).filter((t) => t !== "—").map(number),
    personas: [...document.querySelectorAll("#compare-changed-personas tbody tr, "
      + "#compare-unchanged-personas tbody tr")].map((tr) => tr.classList.contains("changed")) });
})();
"""


def test_compare_summarises_changed_personas_metrics_and_parameters(tmp_path: Path) -> None:
    """At 1,280 px: the summary states the changed personas and the mean change with its
    interval and n (as worked out from the agents frames), the first metric has the largest
    |B − A|, and changed personas come first."""
    base, drift = two_models(tmp_path)
    want = expected_comparison(base, drift)
    page = view([base, drift], tmp_path / "compare.html")
    shown = probed(page, COMPARE_PROBE, tmp_path, "#compare", 1280)
    print(f"\n{shown['changed']}\n{shown['task']}")
    assert (
        shown["changed"]
        == f"{want['changed']} of 12 shared personas changed a decision between the runs."
    )
    two = lambda v: f"{v:.2f}".replace("-", "−")  # noqa: E731
    assert shown["task"] == (
        f"trust.trustor: {want['changed']} of 12 changed; mean change B − A "
        f"{'+' if want['mean'] > 0 else ''}{two(want['mean'])}, 95% CI [{two(want['low'])}, "
        f"{two(want['high'])}] (t interval), n = {want['pairs']} personas with a number in "
        "both runs"
    )
    assert shown["page"] <= 1280, "the page does not scroll sideways"
    magnitudes = [abs(d) for d in shown["differences"]]
    assert magnitudes and magnitudes[0] == max(magnitudes) > 0
    assert shown["personas"] == [True] * want["changed"] + [False] * (12 - want["changed"])


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
    probe = """(() => { const t0 = performance.now();
      document.querySelector(".add-condition").click();
      const set = (s, v, e) => {
        const n = document.querySelector(s); n.value = v; n.dispatchEvent(new Event(e)); };
      set(".cond-column", "decision:trust.trustor", "change"); set(".cond-op", "≥", "change");
      set(".cond-value", "5", "input");
      document.body.dataset.probe = JSON.stringify({ ms: performance.now() - t0,
        count: document.querySelector(".agent-count").textContent }); })();"""
    shown = probed(page, probe, tmp_path)
    print(f"a condition over 10,000 agents, typed and applied: {shown['ms']:.0f} ms")
    matching = sum(i % 11 >= 5 for i in range(10_000))
    assert shown["count"] == f"page 1 of {-(-matching // 50)} · {matching} matching"
    dom, seconds = dump_dom(page, "#agent/a9999")
    print(f"agent a9999 by fragment: Chromium {seconds:.2f} s")
    assert "Finally, I will give 9 dollars" in dom and 'data-view="agent"' in dom
    with sqlite3.connect(tmp_path / "big" / "events.sqlite") as db:
        assert db.execute("select count(*) from events").fetchone()[0] == 40_003


# ---------- layout, filters and links: a probe script run on a copy of the real page ----------

# Measures the rendered page: every card, every scroller inside one, the agents table's outcome
# columns (visible on screen, else reachable by its scroller), and the page's own width.
LAYOUT_PROBE = """
(() => {
  const box = (node) => node.getBoundingClientRect();
  const cards = [...document.querySelectorAll("section.card")].map((c) => ({
    title: (c.querySelector("h2") || {}).textContent || "",
    scroll: c.scrollWidth, client: c.clientWidth, inside: box(c).right <= innerWidth + 1 }));
  const scrollers = [...document.querySelectorAll("section.card *")]
    .filter((n) => n.scrollWidth > n.clientWidth + 1 && getComputedStyle(n).overflowX !== "visible")
    .map((n) => ({ cls: n.className, overflow: getComputedStyle(n).overflowX,
      bar: n.offsetHeight - n.clientHeight > 0 || getComputedStyle(n).overflowX === "scroll" }));
  const wrap = document.querySelector(".scroll.agents");
  const outcomes = [...document.querySelectorAll("table[id^=agents-] th")]
    .filter((th) => th.textContent.includes(":")).map((th) => {
      const visible = box(th).right <= Math.min(innerWidth, box(wrap).right) + 1;
      th.scrollIntoView({ block: "nearest", inline: "end" });  // what the table's scroll bar does
      const reachable = box(th).right <= box(wrap).right + 1 && box(th).left >= box(wrap).left - 1;
      wrap.scrollLeft = 0;
      return { name: th.textContent, visible, reachable };
    });
  document.body.dataset.layout = JSON.stringify({ width: innerWidth,
    page: document.documentElement.scrollWidth, cards, scrollers, outcomes });
})();
"""


def with_script(html: str, script: str) -> str:
    """The page with `script` run after its own, its hash added to the page's CSP (which lets
    no other script run)."""
    allowed = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    html = html.replace("script-src ", f"script-src 'sha256-{allowed}' ", 1)
    return html.replace("</body>", f"<script>{script}</script>\n</body>")


def probed(page: Path, probe: str, tmp: Path, fragment: str = "", width: int = 1280) -> Any:
    """The page with `probe` run after its own script; returns the probe's JSON result."""
    copy = tmp / f"probed-{time.monotonic_ns()}.html"
    html = page.read_text(encoding="utf-8")
    copy.write_text(with_script(html, probe), "utf-8")
    dom, _ = dump_dom(copy, fragment, tmp, width)
    assert 'data-ready="1"' in dom, "the page rendered"
    found = re.search(r'data-(layout|probe)="([^"]*)"', dom)
    assert found, "the probe ran"
    return json.loads(html_lib.unescape(found.group(2)))


def assert_fits(layout: dict[str, Any], width: int) -> None:
    assert layout["width"] == width, "the window is as wide as asked"
    assert layout["page"] <= width, "the page does not scroll sideways"
    for card in layout["cards"]:
        assert card["scroll"] <= card["client"] and card["inside"], card
    for scroller in layout["scrollers"]:  # only a documented table box scrolls, with a bar
        assert "scroll" in scroller["cls"].split() and scroller["overflow"] == "auto", scroller
        assert scroller["bar"], scroller


@pytest.mark.parametrize("width", [1280, 1920])
@pytest.mark.parametrize("scenario", sorted(SMALL))
def test_no_card_is_clipped_and_outcomes_are_on_screen(scenario: str, width: int, tmp_path: Path):
    run_dir = tmp_path / "run"
    run_scenario(scenario, SMALL[scenario], out=run_dir, progress=False)
    page = view([run_dir], tmp_path / "page.html")
    layout = probed(page, LAYOUT_PROBE, tmp_path, width=width)
    assert_fits(layout, width)
    titles = [card["title"] for card in layout["cards"]]
    assert "Validity" in titles and any(t.startswith("Agents") for t in titles)
    assert layout["outcomes"], "the agents table has outcome columns"
    for column in layout["outcomes"]:
        assert column["visible"] or column["reachable"], column
    assert all(c["visible"] for c in layout["outcomes"][:4]), "the first outcomes are on screen"
    agent = next(iter(replies(run_dir)))  # an agent that asked a model: its page has replies
    assert_fits(probed(page, LAYOUT_PROBE, tmp_path, f"#agent/{agent}", width), width)


@pytest.mark.parametrize("width", [1280, 1920])
def test_agent_and_compare_pages_fit(width: int, tmp_path: Path) -> None:
    base, drift = tmp_path / "base", tmp_path / "drift"
    run_scenario("trust-population", {"n_personas": 4}, out=base, progress=False)
    run_scenario(
        "trust-population", {"n_personas": 4}, model="scripted:drift=0.6,seed=3", out=drift,
        progress=False,
    )  # fmt: skip
    page = view([base, drift], tmp_path / "compare.html")
    agent = next(iter(replies(base)))
    for fragment in ("#run/1", f"#agent/0/{agent}", "#compare", f"#compare/{agent}"):
        assert_fits(probed(page, LAYOUT_PROBE, tmp_path, fragment, width), width)


# The filters, driven as a user would: choose, type, read the rows shown (one page: < 50 agents).
FILTER_PROBE = """
(() => {
  const rows = () => [...document.querySelectorAll("tr[data-agent]")].map((tr) => tr.dataset.agent);
  const set = (selector, value, event) => {
    const node = [...document.querySelectorAll(selector)].pop();
    node.value = value; node.dispatchEvent(new Event(event));
  };
  const out = { all: rows() };
  set(".agent-failed", "failed", "change"); out.failed = rows();
  set(".agent-failed", "ok", "change"); out.ok = rows(); set(".agent-failed", "", "change");
  set(".agent-type", "PersonaAgent", "change"); out.type = rows(); set(".agent-type", "", "change");
  set(".agent-role", "ROLE", "change"); out.role = rows(); set(".agent-role", "", "change");
  document.querySelector(".add-condition").click();
  set(".cond-column", "decision:trust.trustor", "change"); set(".cond-op", "≥", "change");
  set(".cond-value", "5", "input"); out.decision = rows();
  document.querySelector(".add-condition").click();
  set(".cond-column", "TRAIT", "change"); set(".cond-value", "VALUE", "input"); out.both = rows();
  document.querySelector(".cond button").click(); out.trait = rows();
  set(".agent-search", "SEARCH", "input"); out.search = rows();
  document.body.dataset.probe = JSON.stringify(out);
})();
"""


def answer_some(body: dict[str, Any]) -> str:
    """A trustor whose prompt hashes to 0 mod 3 never gives a readable amount (it fails after
    its re-asks); the others give 0-10 dollars, by the same hash."""
    crc = zlib.crc32(body["messages"][0]["content"].encode())
    return "I would rather not say." if crc % 3 == 0 else f"Finally, I will give {crc % 11} dollars"


def test_filters_narrow_the_agents_to_the_expected_ones(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=answer_some) as server:
        run_scenario(
            "trust-population", {"n_personas": 12}, model="openai:fake-model",
            base_url=server.base_url, out=tmp_path / "run", progress=False,
        )  # fmt: skip
    with SQLiteEventStore(tmp_path / "run" / "events.sqlite") as store:
        created = {e.agent_id: e.payload for e in store.read(["agent.created"])}
        failed = {e.agent_id for e in store.read(["decision.failed"])}
        sent = {
            e.agent_id: e.payload["value"]
            for e in store.read(["decision.made"])
            if e.payload["task"] == "trust.trustor"
        }
        roles = {e.agent_id: e.payload["role"] for e in store.read(["llm.call"])}
    personas = {a: p["persona"]["attributes"] for a, p in created.items() if p.get("persona")}
    assert failed and set(personas) - failed, "some trustors fail, others decide"
    trait = next(
        name
        for name, value in next(iter(personas.values())).items()
        if isinstance(value, str) and len({str(p.get(name)) for p in personas.values()}) > 1
    )
    value = next(iter(personas.values()))[trait]
    role = sorted(set(roles.values()))[0]
    search = next(iter(personas))
    probe = FILTER_PROBE.replace("ROLE", role).replace("TRAIT", trait)
    probe = probe.replace("VALUE", json.dumps(value)[1:-1]).replace("SEARCH", search)
    page = view([tmp_path / "run"], tmp_path / "page.html")
    shown = probed(page, probe, tmp_path)
    assert shown["all"] == list(created)
    assert set(shown["failed"]) == failed
    assert set(shown["ok"]) == set(created) - failed
    assert set(shown["type"]) == {a for a, p in created.items() if p["type"] == "PersonaAgent"}
    assert set(shown["role"]) == {a for a, r in roles.items() if r == role}
    high = {a for a, v in sent.items() if v is not None and v >= 5}
    assert high and set(shown["decision"]) == high
    with_trait = {a for a, p in personas.items() if p.get(trait) == value}
    assert set(shown["trait"]) == with_trait and set(shown["both"]) == high & with_trait
    assert search in shown["search"] and len(shown["search"]) < len(created)


# A link survives a reload: open it, reload the page, read what the reloaded page shows.
RELOAD_PROBE = """
(() => {
  if (!sessionStorage.getItem("reloaded")) {
    sessionStorage.setItem("reloaded", "1");
    FIRST;
    setTimeout(() => location.reload(), 50);
    return;
  }
  const focus = document.querySelector(".ev.focus");
  document.body.dataset.probe = JSON.stringify({
    hash: location.hash, view: document.body.dataset.view,
    title: (document.getElementById("agent-title") || {}).textContent || null,
    call: document.body.dataset.call || null, focused: focus ? focus.dataset.seq : null,
    open: focus ? [...focus.querySelectorAll("details")].every((d) => d.open) : null });
})();
"""


def test_agent_and_call_links_survive_a_reload(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_scenario("trust-population", {"n_personas": 3}, out=run_dir, progress=False)
    page = view([run_dir], tmp_path / "page.html")
    agent = list(replies(run_dir))[1]
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        seq = next(e.seq for e in store.read(["llm.call"]) if e.agent_id == agent)
    first = f'location.hash = "agent={agent}"'
    shown = probed(page, RELOAD_PROBE.replace("FIRST", first), tmp_path)
    assert shown["hash"] == f"#agent={agent}" and shown["view"] == "agent"
    label = html_lib.unescape(dump_dom(page, f"#agent/{agent}")[0]).split('id="agent-title">')[1]
    assert shown["title"] == label.split("<")[0]
    click = 'document.querySelector("#trajectory a.seq").click()'  # the call's own link
    shown = probed(page, RELOAD_PROBE.replace("FIRST", click), tmp_path, f"#agent/{agent}")
    assert shown["hash"] == f"#call/{seq}" and shown["view"] == "agent"
    assert shown["call"] == shown["focused"] == str(seq) and shown["open"] is True
    shown = probed(page, RELOAD_PROBE.replace("FIRST", f'location.hash = "call={seq}"'), tmp_path)
    assert shown["focused"] == str(seq) and shown["title"] == label.split("<")[0]


def test_a_rescore_shows_the_two_judges_side_by_side(tmp_path: Path) -> None:
    """`personasim view NEW` of a rescore: the two judges' scores of each item in one table,
    the largest change first (docs/rescore.md)."""
    source, new = tmp_path / "RUN", tmp_path / "NEW"
    params = {"n_questions": 2, "repetitions": 2, "strategies": "zero-shot,self-refine"}
    run_scenario("classroom", params, out=source, progress=False, roles={"judge": ["scripted"]})
    args = ["rescore", str(source), "--role", "judge=scripted:drift=0.5", "--out", str(new)]
    assert main([*args, "--no-progress"]) == 0
    dom, _ = dump_dom(view([new], tmp_path / "new.html"), tmp=tmp_path)
    match = re.search(r"Two judges, item by item \((\d+) items, (\d+) scored differently\)", dom)
    assert match, dom[:2000]
    rescored = json.loads((new / "metrics.json").read_text())["metrics"]["rescore"]
    assert int(match[1]) == rescored["n_items_first"]
    assert int(match[2]) >= len(rescored["agreement"]["most_different"]) > 0
    assert "rescored run (judge: scripted)" in dom and "this run (judge: scripted:drift=0.5)" in dom
    dom, _ = dump_dom(view([source], tmp_path / "source.html"), tmp=tmp_path)
    assert not re.search(r"Two judges, item by item \(\d", dom)  # (the script holds the words)


# ---------- results first, and a sweep's run list ----------

# Where the first result (the summary lines, a figure or the metrics) starts, whether the page
# or any fitted table scrolls sideways, and how persona ids are shown.
RESULTS_PROBE = """
(() => {
  const first = document.querySelector("#results-summary, #results figure, #results-metrics");
  const fitted = [...document.querySelectorAll("table.fit")].map((t) => t.parentElement)
    .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => box.className);
  const ids = [...document.querySelectorAll("table[id^=agents-] .short-id")]
    .map((n) => [n.textContent, n.title]);
  const page = document.documentElement;
  document.body.dataset.probe = JSON.stringify({ what: first ? first.id || first.tagName : null,
    top: first ? first.getBoundingClientRect().top : null, fitted, ids,
    scrollWidth: page.scrollWidth, clientWidth: page.clientWidth,
    validity: !!document.querySelector("#run-details section.card h2") });
})();
"""


@pytest.mark.parametrize("scenario", ["trust-population", "classroom"])
def test_results_come_first_and_the_run_page_never_scrolls_sideways(scenario: str, tmp_path: Path):
    """At 1,280 px the first result is on the first screen (not below Manifest/Validity/Cost),
    the page and its fitted tables (validity, metrics, report CSVs) have no sideways scroll, and
    a persona's UUID is shown as its first 8 characters with the whole id as the tooltip."""
    run_dir = tmp_path / "run"
    run_scenario(scenario, SMALL[scenario], out=run_dir, progress=False)
    shown = probed(view([run_dir], tmp_path / "page.html"), RESULTS_PROBE, tmp_path, width=1280)
    widths = f"scrollWidth {shown['scrollWidth']}, clientWidth {shown['clientWidth']}"
    print(f"{scenario}: first result ({shown['what']}) at y = {shown['top']:.0f} px; {widths}")
    assert shown["top"] is not None and 0 < shown["top"] < 1000
    assert shown["scrollWidth"] <= shown["clientWidth"], "the page scrolls sideways"
    assert shown["fitted"] == [], "a fitted table scrolls sideways"
    assert shown["validity"], "validity is further down the page, not gone"
    assert shown["ids"] or scenario != "trust-population", "its personas have UUIDs"
    for text, title in shown["ids"]:
        assert len(title) > 12 and text == title[:8] + "…"


def test_a_sweeps_run_list_lists_every_cell_and_opens_each(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    args = ["sweep", "trust-population", "--models", "scripted,scripted:drift=0.15"]
    assert main([*args, "--n-personas", "4", "--out", str(sweep), "--no-progress"]) == 0
    cells = sorted(p.name for p in sweep.iterdir() if (p / "manifest.json").is_file())
    assert len(cells) == 2
    assert main(["view", str(sweep)]) == 0
    listing = sweep / "view.html"
    dom, _ = dump_dom(listing, tmp=tmp_path)
    assert 'data-view="list"' in dom and dom.count("<tr data-run=") == len(cells)
    for cell in cells:
        link = re.search(f'<a href="([^"]*)" class="run-link">{re.escape(cell)}</a>', dom)
        assert link and unquote(html_lib.unescape(link[1])) == f"{cell}/view.html"
    for n, cell in enumerate(cells):  # a click on the list opens the cell's run page
        links = '[...document.querySelectorAll("a.run-link")]'
        click = f"{links}.find((a) => a.textContent === {json.dumps(cell)}).click()"
        copy = sweep / f"probe-{n}.html"  # beside the list, so its relative links resolve
        copy.write_text(with_script(listing.read_text(), click))
        dom, _ = dump_dom(copy, tmp=tmp_path)
        opened = re.search(r"<h1>([^<]*)</h1>", dom)
        assert 'data-view="run"' in dom and opened and opened[1] == f"trust-population — {cell}"
        assert re.search(r'<a href="\.\./view\.html" class="back-to-list">← all runs</a>', dom)
        assert 'id="results"' in dom
        copy.unlink()
