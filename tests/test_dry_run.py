"""`personasim run ... --dry-run`: requests, tokens, cost and wall time from a scripted run in
memory (simulation/runs/tools/dry_run.py), checked against the scripted run's own log."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from personasim.simulation import DecisionRange, SQLiteEventStore
from personasim.simulation.cli.main import main
from personasim.simulation.llm.roles import DEFAULT_REPLY_TOKENS, Role
from personasim.simulation.runs.lifecycle.run_dir import RunError
from personasim.simulation.runs.runner import RunSettings
from personasim.simulation.runs.tools.dry_run import (
    DryRun,
    RoleEstimate,
    Span,
    adry_run,
    duration,
    durations,
    reply_estimate,
)
from personasim.simulation.runs.tools.prices import Price, is_local_url, load_prices, served_locally

PRICES = """
[models."my-model"]
input = 1.5    # USD per million prompt tokens
output = 6.0
"""


def dry(**kwargs: Any) -> DryRun:
    return asyncio.run(adry_run("trust-population", **kwargs))


def test_trust_population_counts_are_fixed_and_match_the_log(tmp_path: Path) -> None:
    """One trustor decision per persona and no re-ask allowed: one count, no range; the token
    estimate is characters / 3.75 + 28 (chat template) a request of what the logged requests
    hold, and a reply is the persona role's stated 150 tokens, not the scripted reply's."""
    out = tmp_path / "run"
    estimate = dry(params={"n_personas": 6, "max_repairs": 0}, out=out)
    (role,) = estimate.roles
    assert (role.role, role.models) == ("persona", ("scripted",))
    assert role.requests == Span(6, 6, 6)
    with SQLiteEventStore(out / "events.sqlite") as store:
        calls = [e.payload for e in store.read(kinds=("llm.call",))]
    assert len(calls) == 6
    prompt = sum(
        math.ceil(sum(len(m["content"]) for m in c["messages"]) / 3.75) + 28 for c in calls
    )
    assert role.prompt_tokens.point == prompt
    assert role.completion_tokens == Span(6 * 150, 6 * 150, None)  # None: no --max-tokens
    assert role.replies == "≈ 150 each (the role's stated default)"
    assert role.tokens == "estimate (SmolLM2's ratio)"  # the scripted double has no tokenizer


def test_reasks_give_a_range_from_max_repairs() -> None:
    """The drifting double re-asks some decisions; the range runs from none re-asked to every
    one re-asked twice, and the scripted run's own count lies inside it."""
    estimate = dry(params={"n_personas": 30, "max_repairs": 2}, model="scripted:drift=0.3", seed=1)
    (role,) = estimate.roles
    assert (role.requests.low, role.requests.high) == (30, 90)
    assert 30 < role.requests.point < 90  # drift 0.3 re-asks at least one of 30
    assert role.prompt_tokens.low < role.prompt_tokens.point < role.prompt_tokens.high
    assert "requests 3" in estimate.lines()[2] and "(range 30 to 90)" in estimate.lines()[2]


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_known_price_unknown_price_and_scripted(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    settings_args = {"params": {"n_personas": 4, "max_repairs": 1}, "prices": prices}
    known = dry(model="openai:my-model", settings=RunSettings(max_tokens=20), **settings_args)
    (role,) = known.roles
    cost = known.cost(role)
    assert isinstance(cost, Span)
    expected = role.prompt_tokens.point * 1.5e-6 + role.completion_tokens.point * 6e-6
    assert cost.point == pytest.approx(expected)
    assert cost.high == pytest.approx(role.prompt_tokens.high * 1.5e-6 + 20 * 8 * 6e-6)
    unknown = dry(model="openai:other-model", **settings_args)
    assert "no price for 'other-model'" in unknown.cost(unknown.roles[0])
    assert "no cost" in dry(**settings_args).cost(dry(**settings_args).roles[0])


def test_shipped_price_table_reads() -> None:
    prices, where = load_prices()
    assert prices["gpt-4o-mini"].input > 0 and "prices.toml" in where


@pytest.mark.parametrize(
    "text", ["[models.x]\ninput = 1\n", "models = 3\n", "[models.x\n", "[models.x]\ninput=-1\n"]
)
def test_a_bad_price_table_is_an_error(text: str, tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(text)
    with pytest.raises(RunError, match="--prices"):
        load_prices(prices)


def test_wall_time_follows_concurrency_rpm_and_latency() -> None:
    estimate = dry(params={"n_personas": 6, "max_repairs": 0}, concurrency=2, latency_s=3.0)
    assert estimate.wall_seconds().point == pytest.approx(6 / (2 / 3.0))
    estimate.requests_per_minute = 6  # 0.1 requests a second, below 2 / 3
    assert estimate.wall_seconds().point == pytest.approx(60.0)


def test_cli_dry_run_writes_nothing_and_exits_0(
    tmp_path: Path,
    clean_tmp: Path,
    isolated_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    args = ["run", "trust-population", "--dry-run", "--n-personas", "5", "--max-repairs", "0"]
    code = main([*args, "--model", "openai:gpt-4o-mini", "--concurrency", "4", "--rpm", "60"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "role persona (openai:gpt-4o-mini): requests 5\n" in printed
    assert (
        "  prompt tokens: estimate (SmolLM2's ratio; give --tokenizer o200k_base.tiktoken for "
        "exact counts)\n" in printed
    )
    assert "  completion tokens: ≈ 150 each (the role's stated default)\n" in printed
    assert "an estimate is characters / 3.75 + 28 a prompt, measured on SmolLM2's" in printed
    assert "expected wall time: about 5 s at concurrency 4, at most 60/min" in printed
    assert "assuming 2 s a request" in printed
    assert list(work.iterdir()) == [] and list(clean_tmp.iterdir()) == []
    assert not isolated_cache.exists()


def test_cli_dry_run_with_out_keeps_the_scripted_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert (
        main(["run", "trust-population", "--dry-run", "--n-personas", "3", "--out", str(out)]) == 0
    )
    assert (out / "events.sqlite").is_file()
    assert f"the scripted run's directory: {out}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--resume"], "cannot --resume"),
        (["--base-url", "http://127.0.0.1:9/v1"], "--base-url"),
        (["--prices", "missing.toml"], "--prices missing.toml"),
    ],
)
def test_cli_dry_run_errors(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "trust-population", "--dry-run", *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("flag", [("--prices", "p.toml"), ("--latency", "3")])
def test_dry_run_flags_without_dry_run_are_an_error(
    flag: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", "trust-population", "--out", str(out), *flag]) == 2
    assert f"{flag[0]} is used only with --dry-run" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--dry-run", "--tokenizer", "missing.gguf"], "--tokenizer missing.gguf: no such file"),
        (["--tokenizer", "model.gguf"], "--tokenizer is used only with --dry-run"),
    ],
)
def test_a_tokenizer_that_cannot_count_is_an_error(
    extra: list[str], said: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["run", "trust-population", "--n-personas", "2", *extra])
    assert code == 2
    assert said in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_gguf_is_named(tmp_path: Path, capsys) -> None:
    pytest.importorskip("llama_cpp")
    bogus = tmp_path / "notes.gguf"
    bogus.write_text("not a model")
    code = main(["run", "trust-population", "--dry-run", "--tokenizer", str(bogus)])
    assert code == 2
    assert f"--tokenizer {bogus}: not a GGUF model file" in capsys.readouterr().err


def career(out: Path, **params: Any) -> tuple[DryRun, dict[str, int]]:
    """A small career-chat dry run kept in `out`, and its log's requests per role."""
    base = {"n_users": 3, "n_items": 2, "judge_samples": 1, "max_repairs": 1}
    base |= {"bootstrap": 0, "permutations": 0, "emd_repeats": 1}  # metrics kept quick
    estimate = asyncio.run(adry_run("career-chat", {**base, **params}, out=out))
    with SQLiteEventStore(out / "events.sqlite") as store:
        roles = [e.payload["role"] for e in store.read(kinds=("llm.call",))]
    return estimate, {role: roles.count(role) for role in set(roles)}


@pytest.fixture(scope="module")
def five_turns(tmp_path_factory: pytest.TempPathFactory) -> tuple[DryRun, dict[str, int]]:
    return career(tmp_path_factory.mktemp("career") / "run", max_turns=5)


def test_career_chat_dialogue_lengths_are_ranged_from_the_turn_limit(
    five_turns: tuple[DryRun, dict[str, int]],
) -> None:
    """3 users, 2 items, 1 judge sample, 1 re-ask: by hand, a dialogue asks the user 1 to
    max_turns times and the detector and assistant 0 to max_turns times; every profile is
    probed on each item, each usable dialogue (0 to 3) once more and judged 4 x 1 times; each
    decision takes 1 or 2 requests. The scripted run's own count lies inside each range."""
    estimate, logged = five_turns
    users, turns, items, tries = 3, 5, 2, 2
    expected = {
        "user": (users, users * turns * tries),
        "detector": (0, users * turns * tries),
        "assistant": (0, users * turns * tries),
        "respondent": (users * items, 2 * users * items * tries),
        "judge": (0, users * 4 * 1 * tries),
    }
    got = {r.role: (r.requests.low, r.requests.high) for r in estimate.roles}
    assert got == expected
    for role in estimate.roles:
        assert role.requests.point == logged[role.role]
        assert role.requests.low <= role.requests.point <= role.requests.high
        assert role.prompt_tokens.low <= role.prompt_tokens.point <= role.prompt_tokens.high
    text = "\n".join(estimate.lines())
    assert "decisions 3 to 15 (3 dialogues of 1 to --max-turns 5 questions)" in text
    assert "not as a range" not in text  # every career-chat request is a decision


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_shorter_turn_limit_moves_the_top_of_the_range(
    five_turns: tuple[DryRun, dict[str, int]], tmp_path: Path
) -> None:
    short, logged = career(tmp_path / "run", max_turns=2)
    five = {r.role: r.requests for r in five_turns[0].roles}
    for role in short.roles:
        if role.role in ("user", "detector", "assistant"):
            assert (role.requests.high, five[role.role].high) == (3 * 2 * 2, 3 * 5 * 2)
            assert role.requests.low == five[role.role].low
        assert role.requests.low <= logged[role.role] <= role.requests.high
    assert short.requests.high < five_turns[0].requests.high


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_reasoning_pass_doubles_the_respondents_top(tmp_path: Path) -> None:
    estimate, logged = career(tmp_path / "run", reasoning_pass=True, judge_samples=0, max_turns=2)
    (respondent,) = [r for r in estimate.roles if r.role == "respondent"]
    assert (respondent.requests.low, respondent.requests.high) == (6, 2 * 2 * 6 * 2)
    assert respondent.requests.low <= logged["respondent"] <= respondent.requests.high
    assert "judge" not in {r.role for r in estimate.roles}


def test_a_decision_range_must_be_ordered() -> None:
    with pytest.raises(ValueError, match="0 <= low <= high"):
        DecisionRange(3, 2, "backwards")


# --- completions: the role's stated length, or --max-tokens -----------------------------------


@pytest.mark.parametrize(
    ("max_tokens", "each", "high", "said"),
    [
        (None, 150, None, "≈ 150 each (the role's stated default)"),
        (256, 150, 256, "≈ 150 each (the role's stated default), ≤ 256 each (--max-tokens)"),
        (100, 100, 100, "≤ 100 each (--max-tokens)"),
    ],
)
def test_completions_come_from_the_role_or_max_tokens(
    max_tokens: int | None, each: int, high: int | None, said: str
) -> None:
    """Not the scripted double's reply length: the persona role states 150 tokens a reply, and
    --max-tokens bounds it (the top of the range; the estimate where it is less)."""
    estimate = dry(
        params={"n_personas": 5, "max_repairs": 1}, settings=RunSettings(max_tokens=max_tokens)
    )
    (role,) = estimate.roles
    requests = role.requests
    assert role.completion_tokens == Span(
        each * requests.low, each * requests.point, None if high is None else high * requests.high
    )
    assert role.replies == said
    assert f"  completion tokens: {said}\n" in "\n".join(estimate.lines()) + "\n"


def test_a_role_that_states_no_length_takes_the_default() -> None:
    assert reply_estimate(Role("a part"), None) == (
        DEFAULT_REPLY_TOKENS,
        f"≈ {DEFAULT_REPLY_TOKENS} each (assumed: the role states none)",
    )
    assert reply_estimate(Role("a part", reply_tokens=40), 30) == (
        30,
        "≤ 30 each (--max-tokens)",
    )


def test_every_built_in_role_states_its_reply_length() -> None:
    from personasim.simulation.core.scenario import list_scenarios

    for scenario in list_scenarios().values():
        if scenario.__module__.startswith("personasim.scenarios."):
            for name, role in scenario.roles.items():
                assert role.reply_tokens, f"{scenario.name}: role {name} states no reply_tokens"


def test_career_chat_roles_state_their_own_lengths(
    five_turns: tuple[DryRun, dict[str, int]],
) -> None:
    replies = {role.role: role.replies for role in five_turns[0].roles}
    assert replies["assistant"] == "≈ 400 each (the role's stated default)"
    assert replies["respondent"] == "≈ 60 each (the role's stated default)"


# --- local endpoints cost nothing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.0.0.2:8080/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://LOCALHOST/v1", True),
        ("http://llama.localhost:8080/v1", True),
        ("http://[::1]:8080/v1", True),
        ("http://0.0.0.0:8080/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        ("http://192.168.1.20:8080/v1", False),
        ("http://localhost.example.com/v1", False),
        ("pool:gpus", False),
        ("", False),
    ],
)
def test_local_urls(url: str, local: bool) -> None:
    assert is_local_url(url) is local


def test_served_locally_follows_the_runs_own_url_resolution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert served_locally("openai:m@http://localhost:8080/v1")
    assert not served_locally("openai:m@https://api.openai.com/v1", "http://127.0.0.1:1/v1")
    assert served_locally("openai:m", "http://127.0.0.1:8080/v1")
    assert served_locally("openai:m", ["http://127.0.0.1:1/v1", "http://localhost:2/v1"])
    assert not served_locally("openai:m", ["http://127.0.0.1:1/v1", "http://10.0.0.2/v1"])
    assert not served_locally("openai:m")  # OpenAI's own API
    assert not served_locally("scripted")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    assert served_locally("openai:m")


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_local_endpoint_costs_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model with no price at a loopback URL: 0 and why, not 'no price'."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    args = ["run", "trust-population", "--dry-run", "--n-personas", "3", "--model"]
    local = ["openai:my-model", "--base-url", "http://127.0.0.1:8080/v1"]
    assert main([*args, *local]) == 0
    printed = capsys.readouterr().out
    assert "  cost (USD): 0 (local endpoint: no charge)\n" in printed
    assert "no price" not in printed
    assert "give --tokenizer MODEL.gguf, the file its server serves, for exact counts" in printed
    assert main([*args, "openai:my-model@http://10.1.2.3:8080/v1"]) == 0
    assert "no price for 'my-model'" in capsys.readouterr().out


def test_an_ensemble_with_a_local_member_pays_for_the_other() -> None:
    role = RoleEstimate(
        role="evaluator",
        models=("openai:gpt-4o-mini", "openai:mine@http://localhost:8000/v1"),
        requests=Span(10, 10, 10),
        prompt_tokens=Span(1e6, 1e6, 1e6),
        completion_tokens=Span(0, 0, 0),
    )
    prices = {"gpt-4o-mini": Price(0.15, 0.60)}
    run = DryRun("x", [role], 0, "", 1, None, 2.0, prices, "p", local=frozenset(role.models[1:]))
    assert run.cost(role) == Span(0.075, 0.075, 0.075)  # half the requests at 0.15 / million
    assert run.cost_line(role) == (
        "  cost (USD): 0.0750; local endpoint, no charge: openai:mine@http://localhost:8000/v1"
    )


# --- wall time in minutes and hours --------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0 s"),
        (0.2, "under 1 s"),
        (45, "45 s"),
        (119, "119 s"),
        (120, "2 min"),
        (1394, "23 min"),
        (3599, "1 h"),
        (3900, "1 h 5 min"),
        (7200, "2 h"),
        (47 * 3600, "47 h"),
        (3 * 86400 + 2 * 3600 + 10 * 60, "3 d 2 h"),
    ],
)
def test_durations_read_as_a_person_reads_them(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_the_wall_time_is_a_point_and_its_range() -> None:
    assert durations(Span(720, 1394, 3900)) == "about 23 min (12 min – 1 h 5 min)"
    assert durations(Span(30, 30, 30)) == "about 30 s"
    estimate = dry(params={"n_personas": 60, "max_repairs": 2}, concurrency=1, latency_s=20)
    line = next(x for x in estimate.lines() if x.startswith("expected wall time"))
    point = duration(estimate.wall_seconds().point)  # 60 requests or a few more (re-asks)
    assert line.startswith(f"expected wall time: about {point} (20 min – 1 h) at concurrency 1")
