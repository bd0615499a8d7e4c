"""A run's requests, tokens, cost and wall time before it is made (`personasim run --dry-run`).

The scenario is played on the scripted double, so its structure (agents, rounds, decisions,
roles) is the real one while no model is called. What depends on the model is given as a
range from the scenario's limits: at least every decision answered at the first try, at most
every decision re-asked `max_repairs` times; and where a scenario declares how many decisions
a role may make (`Scenario.decision_ranges`: a dialogue that ends at once or runs to its turn
limit), from its fewest to its most decisions rather than the scripted run's number. Prompt
tokens are counted with the model's tokenizer where one is at hand offline (`--tokenizer
FILE.gguf` or `FILE.tiktoken`), else estimated, and the output says which and what file would
count them (`token_counts.py`). A completion is not the scripted double's reply: it is the
role's stated length (`Role.reply_tokens`), bounded by `--max-tokens` where given. A model
served on this machine (a loopback `--base-url`) costs nothing.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.core.decision_range import DecisionRange
from personasim.simulation.core.scenario import Scenario, ScenarioParams
from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.model_spec import check_run_options, model_name, parse_model_spec
from personasim.simulation.llm.roles import DEFAULT_REPLY_TOKENS, SCRIPTED, Role, is_scripted
from personasim.simulation.log.events import Event
from personasim.simulation.runs.lifecycle.run_config import ClientLimits, RunConfig, RunSettings
from personasim.simulation.runs.lifecycle.run_dir import RunError
from personasim.simulation.runs.lifecycle.scenario_file import resolve_scenario
from personasim.simulation.runs.runner import arun_scenario
from personasim.simulation.runs.tools.event_data import read_run_log
from personasim.simulation.runs.tools.prices import Price, load_prices, served_locally
from personasim.simulation.runs.tools.token_counts import (
    PROMPT_CHARS_PER_TOKEN,
    TEMPLATE_TOKENS,
    TokenCounter,
    estimated_counter,
    role_counters,
)

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ASSUMED_LATENCY_S",
    "DEFAULT_MAX_REPAIRS",
    "REMINDER_TOKENS",
    "DryRun",
    "RoleEstimate",
    "Span",
    "adry_run",
    "duration",
    "durations",
    "estimate_roles",
    "reply_estimate",
]

REMINDER_TOKENS = 50
"""Tokens assumed for the reminder a re-ask adds (the packs' reminders are one or two lines)."""
ASSUMED_LATENCY_S = 2.0
"""Seconds per request assumed for the wall time unless `--latency` says otherwise."""
DEFAULT_MAX_REPAIRS = 2
"""Re-asks assumed per decision for a scenario without a `max_repairs` parameter (the default
of `DecisionTask`)."""
DECISION_KINDS = ("decision.made", "decision.failed")


@dataclass(frozen=True)
class Span:
    """A count known to lie in [low, high]; `point` is the scripted run's own value. `high` is
    None where nothing bounds it (completions without `--max-tokens`)."""

    low: float
    point: float
    high: float | None

    def scaled(self, factor: float) -> Span:
        return Span(self.low * factor, self.point * factor, _times(self.high, factor))

    def plus(self, other: Span) -> Span:
        high = None if self.high is None or other.high is None else self.high + other.high
        return Span(self.low + other.low, self.point + other.point, high)

    def shown(self, digits: int = 0) -> str:
        def fmt(value: float) -> str:
            return f"{value:,.{digits}f}"

        high = "no upper bound" if self.high is None else fmt(self.high)
        if self.high is not None and fmt(self.low) == fmt(self.high):
            return fmt(self.point)
        return f"{fmt(self.point)} (range {fmt(self.low)} to {high})"


@dataclass(frozen=True)
class RoleEstimate:
    """One role of a run: its requests and estimated tokens, and the model(s) playing it (an
    ensemble's members share its requests equally in the cost)."""

    role: str
    models: tuple[str, ...]
    requests: Span
    prompt_tokens: Span
    completion_tokens: Span
    outside_decisions: int = 0
    """Requests not made by a decision (no re-ask bound): counted as the scripted run made them."""
    decisions: DecisionRange | None = None
    """The scenario's declared fewest and most decisions (None: the scripted run's number)."""
    measured: bool = True
    """False where the scripted run made no request of this role to measure tokens from."""
    tokens: str = "estimated"
    """How its prompt tokens were counted, in words (`TokenCounter.label`)."""
    counted: bool = False
    """True where a tokenizer counted its prompt tokens (`TokenCounter.exact`)."""
    replies: str = ""
    """Where its completion tokens a request come from, in words (`reply_estimate`)."""


@dataclass
class DryRun:
    """What a dry run found, and the assumptions its lines state."""

    scenario: str
    roles: list[RoleEstimate]
    max_repairs: int
    max_repairs_source: str
    concurrency: int
    requests_per_minute: float | None
    latency_s: float
    prices: Mapping[str, Price]
    prices_file: str
    run_dir: Path | None = None
    notes: list[str] = field(default_factory=list)
    local: frozenset[str] = frozenset()
    """The model specs served on this machine (`served_locally`): no charge."""

    @property
    def requests(self) -> Span:
        total = Span(0, 0, 0)
        for role in self.roles:
            total = total.plus(role.requests)
        return total

    def wall_seconds(self) -> Span:
        """requests / min(concurrency / latency, rpm / 60): the rate the limits allow. A lower
        bound where the scenario's steps wait on each other (rounds, dialogue turns)."""
        rate = self.concurrency / self.latency_s
        if self.requests_per_minute is not None:
            rate = min(rate, self.requests_per_minute / 60)
        return self.requests.scaled(1 / rate)

    def cost(self, role: RoleEstimate) -> Span | str:
        """Dollars for one role's tokens, or why there is no price."""
        if all(is_scripted(spec) for spec in role.models):
            return "no cost (the scripted double, no language model)"
        share = 1 / len(role.models)
        total = Span(0, 0, 0)
        for spec in role.models:
            price = self._price(spec)
            if price is None:
                return (
                    f"no price for {model_name(spec)!r} (add it to {self.prices_file} or pass "
                    "--prices FILE)"
                )
            per_in, per_out = price.input / 1e6 * share, price.output / 1e6 * share
            total = total.plus(role.prompt_tokens.scaled(per_in))
            total = total.plus(role.completion_tokens.scaled(per_out))
        return total

    def _price(self, spec: str) -> Price | None:
        """A model's price: none to pay for the scripted double or a local endpoint."""
        if is_scripted(spec) or spec in self.local:
            return Price(0, 0)
        return self.prices.get(model_name(spec))

    def cost_line(self, role: RoleEstimate) -> str:
        """The role's cost as the report prints it, saying where a local endpoint made it 0."""
        cost = self.cost(role)
        if not isinstance(cost, Span):
            return f"  cost (USD): {cost}"
        local = [spec for spec in role.models if spec in self.local]
        if local and all(is_scripted(spec) or spec in self.local for spec in role.models):
            return "  cost (USD): 0 (local endpoint: no charge)"
        shown = cost.shown(4)
        if local:
            shown += f"; local endpoint, no charge: {', '.join(local)}"
        return f"  cost (USD): {shown}"

    def lines(self) -> list[str]:
        """The dry run's report, one fact or assumption a line."""
        lines = [
            f"dry run of {self.scenario}: played on the scripted double, no model called",
            f"re-asks: 0 to {self.max_repairs} per decision ({self.max_repairs_source}); "
            "the first number is the scripted run's, the range spans the limits",
        ]
        for role in self.roles:
            lines += self._role_lines(role)
        lines.append(f"requests in all: {self.requests.shown()}")
        rpm = self.requests_per_minute
        limit = "" if rpm is None else f", at most {rpm:g}/min"
        estimated = any(role.measured and not role.counted for role in self.roles)
        how = (
            f"; an estimate is characters / {PROMPT_CHARS_PER_TOKEN:g} + {TEMPLATE_TOKENS} a "
            "prompt, measured on SmolLM2's tokenizer (docs/dry-run.md gives its error)"
            if estimated
            else ""
        )
        lines += [
            f"tokens: a re-ask resends the conversation plus a reminder of about "
            f"{REMINDER_TOKENS} tokens{how}",
            f"expected wall time: {durations(self.wall_seconds())} at concurrency "
            f"{self.concurrency}{limit}, assuming {self.latency_s:g} s a request (--latency); "
            "longer where the scenario's steps wait on each other",
            f"prices: {self.prices_file}",
            *self.notes,
        ]
        if self.run_dir is not None:
            lines.append(f"the scripted run's directory: {self.run_dir}")
        return lines

    def _role_lines(self, role: RoleEstimate) -> list[str]:
        lines = [
            f"role {role.role} ({', '.join(role.models)}): requests {role.requests.shown()}",
            f"  prompt tokens {role.prompt_tokens.shown()}, completion tokens "
            f"{role.completion_tokens.shown()}",
        ]
        if role.measured:
            lines.append(f"  prompt tokens: {role.tokens}")
        else:
            lines.append("  tokens not estimated: the scripted run made no request of this role")
        if role.replies:
            lines.append(f"  completion tokens: {role.replies}")
        lines.append(self.cost_line(role))
        if role.decisions is not None:
            lines.append(
                f"  decisions {role.decisions.low:,} to {role.decisions.high:,} "
                f"({role.decisions.why})"
            )
        if role.outside_decisions:
            lines.append(
                f"  {role.outside_decisions} of its requests are not decisions (dialogue "
                "turns, fixed steps): counted as the scripted run made them, not as a range"
            )
        return lines


def duration(seconds: float) -> str:
    """A time as a person reads it: seconds below 2 minutes, else minutes, hours and minutes,
    or days and hours past 2 days (a run's time is an estimate: no finer than that)."""
    if seconds < 119.5:
        return "under 1 s" if 0 < seconds < 0.5 else f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(hours + (minutes >= 30), 24)
    return f"{days} d" + (f" {hours} h" if hours else "")


def durations(span: Span) -> str:
    """`about 23 min (12 min – 1 h 5 min)`: the point, and the range where its ends differ."""
    if span.high is None:
        return f"about {duration(span.point)} ({duration(span.low)} – no upper bound)"
    low, high = duration(span.low), duration(span.high)
    return f"about {duration(span.point)}" + ("" if low == high else f" ({low} – {high})")


def reply_estimate(role: Role | None, max_tokens: int | None) -> tuple[int, str]:
    """Tokens a reply is taken to be, and where that comes from: the role's stated length
    (`Role.reply_tokens`, else `DEFAULT_REPLY_TOKENS`), or `--max-tokens` where it is less."""
    stated = role.reply_tokens if role is not None else None
    typical = DEFAULT_REPLY_TOKENS if stated is None else stated
    source = "the role's stated default" if stated is not None else "assumed: the role states none"
    said = f"≈ {typical:,} each ({source})"
    if max_tokens is None:
        return typical, said
    if max_tokens <= typical:
        return max_tokens, f"≤ {max_tokens:,} each (--max-tokens)"
    return typical, f"{said}, ≤ {max_tokens:,} each (--max-tokens)"


def estimate_roles(
    events: Iterable[Event],
    models: Mapping[str, Sequence[str]],
    max_repairs: int,
    max_tokens: int | None,
    counter: TokenCounter | Mapping[str, TokenCounter] | None = None,
    ranges: Mapping[str, DecisionRange] | None = None,
    declared: Mapping[str, Role] | None = None,
) -> list[RoleEstimate]:
    """Requests and tokens per role from a scripted run's log.

    A role makes the scripted run's number of decisions, or `ranges[role].low` to `.high` where
    the scenario declares them; a decision costs 1 to `max_repairs + 1` requests; other requests
    (turns a scenario makes without a decision) are counted as the scripted run made them.
    Prompt tokens scale with the requests at the scripted run's average per request (`counter`:
    one for every role, or one a role). A reply is the role's stated length (`declared[role]`),
    `max_tokens` at most; the i-th re-ask resends the first prompt plus i replies and reminders.
    """
    counter_of = _counter_of(counter)
    calls: Counter[str] = Counter()
    prompt: Counter[str] = Counter()
    task_role: dict[str, str] = {}
    decisions: list[Event] = []
    for event in events:
        if event.kind in DECISION_KINDS:
            decisions.append(event)
            continue
        if event.kind not in ("llm.call", "llm.error"):
            continue
        key = event.payload.get("role") or ""
        task_role.setdefault(event.payload.get("task") or "", key)
        calls[key] += 1
        if event.kind == "llm.call":
            prompt[key] += counter_of(key).prompt(event.payload["messages"])
    n_decisions: Counter[str] = Counter()
    decision_calls: Counter[str] = Counter()
    for event in decisions:
        key = task_role.get(event.payload["task"])
        if key is not None:
            n_decisions[key] += 1
            decision_calls[key] += event.payload["attempts"]
    ranges = ranges or {}
    estimates = []
    for key in sorted(set(calls) | {role for role, r in ranges.items() if r.high}):
        n_calls = calls[key]
        other = n_calls - decision_calls[key]
        declared_range = ranges.get(key)
        fewest, most = (
            (declared_range.low, declared_range.high) if declared_range else (n_decisions[key],) * 2
        )
        low = other + fewest
        high = other + most * (max_repairs + 1)
        p_avg = prompt[key] / n_calls if n_calls else 0
        reply, replies = reply_estimate((declared or {}).get(key), max_tokens)
        resent = sum(i * ((max_tokens or reply) + REMINDER_TOKENS) for i in range(max_repairs + 1))
        estimates.append(
            RoleEstimate(
                role=key,
                models=tuple(models.get(key) or (SCRIPTED,)),
                requests=Span(low, n_calls, high),
                prompt_tokens=Span(p_avg * low, prompt[key], p_avg * high + resent * most),
                completion_tokens=Span(
                    reply * low, reply * n_calls, None if max_tokens is None else max_tokens * high
                ),
                outside_decisions=other,
                decisions=declared_range,
                measured=n_calls > 0,
                tokens=counter_of(key).label,
                counted=counter_of(key).exact,
                replies=replies,
            )
        )
    return estimates


def _counter_of(
    counter: TokenCounter | Mapping[str, TokenCounter] | None,
) -> Callable[[str], TokenCounter]:
    """A role's counter: the one given for every role, or the role's, else the estimate."""
    estimate = estimated_counter()
    if isinstance(counter, TokenCounter):
        return lambda role: counter
    return lambda role: (counter or {}).get(role) or estimate


async def adry_run(
    scenario: str | Path | type[Scenario],
    params: dict[str, Any] | ScenarioParams | None = None,
    *,
    config: RunConfig | None = None,
    latency_s: float = ASSUMED_LATENCY_S,
    prices: str | Path | None = None,
    tokenizer: str | Path | tiktoken.Encoding | None = None,
    **options: Any,
) -> DryRun:
    """Play the scenario on the scripted double (a model spec that is scripted already, such
    as `scripted:drift=0.15`, plays itself) and estimate the run `config` (or the flat
    `options`: `model=`, `roles=`, `concurrency=`, ...; `RunConfig.from_options`) would make.
    Its `base_url` and response format are checked as the real run checks them; its seed,
    settings, prompt pack and concurrency are the scripted run's; its rate limit and
    concurrency set the wall time.

    `tokenizer`: a GGUF file whose tokenizer and chat template count every role's tokens, or
    an OpenAI encoding (its `.tiktoken` file, verified; or a `tiktoken.Encoding` built with
    `tiktoken_file.load_encoding`) that counts the roles whose models use it; the others are
    estimated (`token_counts.role_counters`). Nothing is written unless `config.out` is given:
    the scripted run goes to a temporary directory, removed afterwards, and the response cache
    is not used; nothing is downloaded.
    """
    from personasim.simulation.llm.roles import RoleError, bind_roles

    config = RunConfig.from_options(config, **options)
    model, settings, out = config.model, config.settings, config.out
    price_table, prices_file = load_prices(prices)
    if latency_s <= 0 or not math.isfinite(latency_s):
        raise RunError(f"--latency must be a number greater than 0, got {latency_s}")
    scenario_cls = resolve_scenario(str(scenario)) if isinstance(scenario, str | Path) else scenario
    checked = (
        params if isinstance(params, ScenarioParams) else scenario_cls.parse_params(params or {})
    )
    try:
        for specs in config.roles.values():
            for spec in specs:
                parse_model_spec(spec)
        parse_model_spec(model)
        bound = bind_roles(scenario_cls.roles, model, config.roles, scenario=scenario_cls.name)
        specs = [spec for specs in bound.values() for spec in specs]
        check_run_options(specs, config.endpoint_options())
    except (ModelSpecError, RoleError) as exc:
        raise RunError(str(exc)) from None
    counters = role_counters({name: specs for name, specs in bound.items() if specs}, tokenizer)
    double = model if is_scripted(model) else SCRIPTED
    scripted = RunConfig(
        model=double,
        seed=config.seed,
        use_cache=False,
        limits=ClientLimits(config.limits.concurrency),  # the double needs no pacing
        settings=settings,
        roles={
            name: [spec if is_scripted(spec) else SCRIPTED for spec in specs]
            for name, specs in bound.items()
            if specs
        },
        prompts=config.prompts,
        progress=False,
    )
    if out is not None:
        result = await arun_scenario(scenario_cls, checked, config=replace(scripted, out=out))
        events = read_run_log(result.run_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="personasim-dry-run-") as tmp:
            in_tmp = replace(scripted, out=Path(tmp) / "run")
            result = await arun_scenario(scenario_cls, checked, config=in_tmp)
            events = read_run_log(result.run_dir)
    repairs = getattr(checked, "max_repairs", None)
    source = "the scenario's max_repairs" if repairs is not None else "assumed: no max_repairs"
    max_repairs = int(repairs) if repairs is not None else DEFAULT_MAX_REPAIRS
    return DryRun(
        scenario=scenario_cls.name,
        roles=estimate_roles(
            events,
            bound,
            max_repairs,
            settings.max_tokens,
            counters,
            scenario_cls.decision_ranges(checked, events),
            scenario_cls.roles,
        ),
        max_repairs=max_repairs,
        max_repairs_source=source,
        concurrency=config.limits.concurrency,
        requests_per_minute=config.limits.requests_per_minute,
        latency_s=latency_s,
        prices=price_table,
        prices_file=prices_file,
        run_dir=result.run_dir if out is not None else None,
        notes=_notes(settings),
        local=frozenset(spec for spec in specs if served_locally(spec, config.base_url)),
    )


def _notes(settings: RunSettings) -> list[str]:
    if settings.max_tokens is not None:
        return []
    return ["completion tokens have no upper bound without --max-tokens (a reply may ramble)"]


def _times(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor
