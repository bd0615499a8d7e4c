"""The `reader` role: a bound model that reads model text into a value (docs/readers.md).

It answers the `reader` prompt pack (`data/reader.yaml`, one question per reader name) at
temperature 0, through the ordinary model client (cache, retries, limits). Its reply is read
strictly: exactly one line `Value: X`, X a plain number for numeric readers or yes/no for
yes/no readers, or `Value: unreadable`; anything else is asked again once with the reason,
then is no reading (`unreadable`, with the reason) — never a guess. The scripted double
answers it by the reader registered as independent for that name (`register_reader`), so a
scripted audit checks the plumbing, not a model.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import numpy as np

from personasim.simulation.core.reading import Reading, independent_reader, same_value
from personasim.simulation.llm.chat import ChatRequest, ChatResponse, Message
from personasim.simulation.llm.prompts import PromptPack
from personasim.simulation.llm.scripted import scripted_behaviour

if TYPE_CHECKING:
    from personasim.simulation.core.model import Simulation
    from personasim.simulation.llm.client import LLMClient

__all__ = [
    "FOUND_NONE",
    "READER_ROLE",
    "READER_TASK",
    "ROLE_BY",
    "ROLE_OUTCOMES",
    "ROLE_REASKS",
    "SETTLED",
    "RoleReader",
    "confirmed_by_role",
    "read_value_line",
    "read_with_role",
    "reader_pack",
    "reader_request",
    "role_outcome",
    "with_reader_role",
]

READER_ROLE = "reader"
"""The role's name, as a scenario declares it and `--role reader=SPEC` binds it."""

READER_TASK = "reader"
"""The task of a reader request (the scripted double's rule is registered under it)."""

FOUND_NONE = "the reader found no value"
"""The reason of a reading whose model answered `Value: unreadable`: a judgement that the text
gives no value, unlike a reply that broke the format (which judges nothing)."""

ROLE_BY = "reader role"
"""A reading's `by` where the role read it; `+reader role` where it confirmed the rules'."""

SETTLED = "(one of the rules' candidates)"
"""The end of the `by` of an ambiguous reading the role settled on one of its candidates."""

_NOT_CONFIRMED = "(not confirmed;"
"""In the `by` of a value the role could not confirm (its reply broke the format)."""

_DOUBTED = "the reader role"
"""The start of the reason of a value the role made ambiguous (it read another, or none)."""

ROLE_OUTCOMES = ("read", "confirmed", "settled", "made ambiguous", "not confirmed")
"""What the role did to a reading: read one no rule could; confirmed the rules' value; settled
an ambiguous one; made a value ambiguous (it read another or none); could not confirm one
(its reply broke the format)."""

ROLE_REASKS = 1
"""Times a reply that broke the `Value:` format is asked again, with the reason, before it
counts as no reading (a judgement of "unreadable" is an answer, never re-asked)."""

YES_NO_READERS = frozenset({"refusal"})
"""Readers whose value is yes (True) or no (False); the others' values are numbers."""

_VALUE_LINE = re.compile(r"^\s*\**value\**\s*:\s*\**\s*(?P<value>.*?)\s*\**\s*\.?\s*$", re.I | re.M)
_PLAIN_NUMBER = re.compile(r"^-?(?:\d+(?:\.\d+)?|\.\d+)$")


@cache
def reader_pack() -> PromptPack:
    """The shipped prompt pack of the reader role."""
    resource = files("personasim.simulation.runs.tools").joinpath("data/reader.yaml")
    return PromptPack.load(f"personasim:{resource.name}", resource.read_text(encoding="utf-8"))


def read_value_line(reply: str, reader: str) -> Reading:
    """The reader model's value: its one `Value:` line, strictly."""
    lines = _VALUE_LINE.findall(reply)
    by = ROLE_BY
    if len(lines) != 1:
        return Reading.unreadable(f"the reader wrote {len(lines)} 'Value:' lines, not one", by)
    said = lines[0].strip().strip("`'\"")
    if said.lower() == "unreadable":
        return Reading.unreadable(FOUND_NONE, by)
    if reader in YES_NO_READERS:
        if said.lower() in ("yes", "no"):
            return Reading.of(said.lower() == "yes", by)
        return Reading.unreadable(f"the reader wrote {said!r}, not yes or no", by)
    if _PLAIN_NUMBER.match(said):
        return Reading.of(float(said), by)
    return Reading.unreadable(f"the reader wrote {said!r}, not a plain number", by)


def reader_request(reader: str, text: str, context: Mapping[str, Any]) -> ChatRequest | None:
    """The reader role's request for `text` (None: the pack has no question for `reader`, or
    the labels lack one of its placeholders). Where the labels hold the question the text
    answers, the pack's `<reader>_with_question` is asked: a careful grader reads with it."""
    pack = reader_pack()
    usable = [
        name
        for name in (f"{reader}_with_question", reader)
        if name in pack.entries and pack.entries[name].placeholders() <= set(context)
    ]
    if not usable:
        return None
    entry = pack.entries[usable[0]]
    question = pack.render(usable[0], **{key: context[key] for key in entry.placeholders()})
    return ChatRequest(
        messages=(
            Message(role="user", content=pack.render("instruction", question=question, text=text)),
        ),
        temperature=0.0,
        task=READER_TASK,
        hints={"reader": reader, "text": text, "context": dict(context)},
    )


async def read_with_role(
    sim: Simulation, agent_id: str | None, reader: str, text: str, context: Mapping[str, Any]
) -> Reading | None:
    """In a run whose `reader` role is bound: the bound model's reading of a text a rule could
    not read (None: the role is not bound, or the pack has no question for `reader`). Its call
    is logged under the role; the reading's `by` says "reader role"."""
    if not sim.roles.get(READER_ROLE):
        return None
    request = reader_request(reader, text, context)
    if request is None:
        return None

    async def complete(asked: ChatRequest) -> ChatResponse:
        return await sim.ask(asked, agent_id=agent_id or "reader", role=READER_ROLE)

    return await _answered(request, reader, complete)


async def _answered(
    request: ChatRequest, reader: str, complete: Callable[[ChatRequest], Awaitable[ChatResponse]]
) -> Reading:
    """The role's reading of its reply, re-asked with the reason (`ROLE_REASKS` times) while
    the reply breaks the `Value:` format."""
    reading = Reading.unreadable("not asked", ROLE_BY)
    for _ in range(ROLE_REASKS + 1):
        reply = (await complete(request)).text
        reading = read_value_line(reply, reader)
        if reading.ok or reading.reason == FOUND_NONE:
            return reading
        request = request.with_reply(reply, reader_pack().render("reask", reason=reading.reason))
    return Reading.unreadable(f"{reading.reason} (asked {ROLE_REASKS + 1} times)", reading.by)


def confirmed_by_role(rules: Reading, role: Reading) -> Reading:
    """The rules' reading, re-read by the bound reader role (a second, independent reader
    that judges). A value stands where the role reads the same; the role reading another
    value, or judging that the text gives none, makes it *ambiguous*, never one side's guess.
    A role reply that broke the format judged nothing: the rules' value stands, marked so.
    An ambiguous reading is settled where the role reads one of its candidates (both readers
    then agree on it), and stays ambiguous otherwise."""
    if rules.status == "ambiguous":
        if role.ok and any(same_value(role.value, c) for c in rules.candidates):
            return Reading.of(role.value, f"{rules.by}+{role.by} {SETTLED}")
        return rules
    if not rules.ok:
        return rules
    if role.ok:
        if same_value(rules.value, role.value):
            return Reading.of(rules.value, f"{rules.by}+{role.by}")
        reason = f"{_DOUBTED} reads {role.value!r}, the rules {rules.value!r}"
        return Reading.ambiguous(reason, f"{rules.by}|{role.by}", (rules.value, role.value))
    if role.reason == FOUND_NONE:
        reason = f"{_DOUBTED} finds no value where the rules read {rules.value!r}"
        return Reading.ambiguous(reason, f"{rules.by}|{role.by}", (rules.value,))
    return Reading.of(rules.value, f"{rules.by} {_NOT_CONFIRMED} {role.by}: {role.reason})")


def role_outcome(status: str, by: str | None, reason: str | None) -> str | None:
    """What the role did to one logged reading (one of `ROLE_OUTCOMES`), or None where it left
    no mark (not asked, or it found no value in a text no rule could read either)."""
    by, reason = by or "", reason or ""
    if status == "read" and by == ROLE_BY:
        return "read"
    if _NOT_CONFIRMED in by:
        return "not confirmed"
    if status == "read" and by.endswith(SETTLED):
        return "settled"
    if status == "read" and by.endswith(f"+{ROLE_BY}"):
        return "confirmed"
    if status == "ambiguous" and reason.startswith(_DOUBTED):
        return "made ambiguous"
    return None


async def with_reader_role(
    rules: Reading, ask_role: Callable[[], Awaitable[Reading | None]], confirm: bool = False
) -> Reading:
    """The reading a run grades: the rules' own; the reader role's where the rules found the
    text unreadable (not where they found it ambiguous: a model alone choosing between stated
    values could guess). With `confirm` the role re-reads the rest too (`confirmed_by_role`):
    a value the rules read stands only where the role reads it, and an ambiguous reading is
    settled where the role reads one of its candidates. `ask_role`: the role's reading (None:
    no role is bound)."""
    second_reader = confirm and (rules.ok or bool(rules.candidates))
    if not (rules.status == "unreadable" or second_reader):
        return rules
    role = await ask_role()
    if role is None:
        return rules
    if rules.status == "unreadable":
        return role if role.ok else rules
    return confirmed_by_role(rules, role)


class RoleReader:
    """Reads texts with a bound model (`personasim audit --role reader=SPEC`)."""

    def __init__(self, client: LLMClient, max_tokens: int | None = None) -> None:
        self.client = client
        self.max_tokens = max_tokens
        """A reply's length limit (None: the client's), for a model that rambles on."""

    async def __call__(self, reader: str, text: str, context: Mapping[str, Any]) -> Reading | None:
        request = reader_request(reader, text, context)
        if request is None:
            return None
        if self.max_tokens is not None:
            request = request.model_copy(update={"max_tokens": self.max_tokens})

        async def complete(asked: ChatRequest) -> ChatResponse:
            return await self.client.complete(asked, role=READER_ROLE)

        return await _answered(request, reader, complete)


@scripted_behaviour(READER_TASK)
def _scripted_reader(request: ChatRequest, rng: np.random.Generator) -> str:
    """The scripted double as a reader: the independent reader registered for the name."""
    hints = request.hints
    independent = independent_reader(str(hints.get("reader")))
    if independent is None:
        return "Value: unreadable"
    reading = independent(str(hints.get("text", "")), hints.get("context") or {})
    if not reading.ok:
        return "Value: unreadable"
    value = reading.value
    if isinstance(value, bool):
        return f"Value: {'yes' if value else 'no'}"
    if not isinstance(value, int | float):
        return "Value: unreadable"
    return "Value: " + (f"{float(value):.6f}".rstrip("0").rstrip("."))
