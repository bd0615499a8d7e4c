"""The `reader` role: a bound model that reads model text into a value (docs/readers.md).

It answers the `reader` prompt pack (`data/reader.yaml`, one question per reader name) at
temperature 0, through the ordinary model client (cache, retries, limits). Its reply is read
strictly: exactly one line `Value: X`, X a plain number for numeric readers or yes/no for
yes/no readers, or `Value: unreadable`; anything else is no reading (`unreadable`, with the
reason) — never a guess. The scripted double answers it by the reader registered as
independent for that name (`register_reader`), so a scripted audit checks the plumbing, not a
model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import numpy as np

from personasim.simulation.core.reading import Reading, independent_reader
from personasim.simulation.llm.chat import ChatRequest, Message
from personasim.simulation.llm.prompts import PromptPack
from personasim.simulation.llm.scripted import scripted_behaviour

if TYPE_CHECKING:
    from personasim.simulation.core.model import Simulation
    from personasim.simulation.llm.client import LLMClient

__all__ = [
    "READER_ROLE",
    "READER_TASK",
    "RoleReader",
    "read_value_line",
    "read_with_role",
    "reader_pack",
    "reader_request",
]

READER_ROLE = "reader"
"""The role's name, as a scenario declares it and `--role reader=SPEC` binds it."""

READER_TASK = "reader"
"""The task of a reader request (the scripted double's rule is registered under it)."""

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
    by = "reader role"
    if len(lines) != 1:
        return Reading.unreadable(f"the reader wrote {len(lines)} 'Value:' lines, not one", by)
    said = lines[0].strip().strip("`'\"")
    if said.lower() == "unreadable":
        return Reading.unreadable("the reader found no value", by)
    if reader in YES_NO_READERS:
        if said.lower() in ("yes", "no"):
            return Reading.of(said.lower() == "yes", by)
        return Reading.unreadable(f"the reader wrote {said!r}, not yes or no", by)
    if _PLAIN_NUMBER.match(said):
        return Reading.of(float(said), by)
    return Reading.unreadable(f"the reader wrote {said!r}, not a plain number", by)


def reader_request(reader: str, text: str, context: Mapping[str, Any]) -> ChatRequest | None:
    """The reader role's request for `text` (None: the pack has no question for `reader`, or
    the labels lack one of its placeholders)."""
    pack = reader_pack()
    entry = pack.entries.get(reader)
    if entry is None or not entry.placeholders() <= set(context):
        return None
    question = pack.render(reader, **{key: context[key] for key in entry.placeholders()})
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
    response = await sim.ask(request, agent_id=agent_id or "reader", role=READER_ROLE)
    return read_value_line(response.text, reader)


class RoleReader:
    """Reads texts with a bound model (`personasim audit --role reader=SPEC`)."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def __call__(self, reader: str, text: str, context: Mapping[str, Any]) -> Reading | None:
        request = reader_request(reader, text, context)
        if request is None:
            return None
        response = await self.client.complete(request, role=READER_ROLE)
        return read_value_line(response.text, reader)


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
