"""What a persona carries between the places of its journey (persona-journey, `--memory`).

A place builds its request as if the persona arrived fresh; `with_memory` then puts in what the
persona did before: `summary` prefixes the last user turn with one line per earlier place,
`full` inserts the earlier exchanges themselves before it. Keeping this out of the places means
a new place gets memory for free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from personasim.agents.decision import DecisionTask
from personasim.agents.persona_agent import PersonaAgent
from personasim.simulation import ChatRequest, Message
from personasim.simulation.llm.prompts import PromptPack

__all__ = ["MemoryMode", "Traveller", "keep_exchange", "with_memory"]

MemoryMode = Literal["none", "summary", "full"]


@dataclass
class Traveller:
    """A persona on its journey: its memory mode and what it did where."""

    agent: PersonaAgent
    memory: MemoryMode
    summaries: list[str] = field(default_factory=list)
    exchanges: list[Message] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    """The route rule's draws: seeded from the run in setup, so the order of play is moot."""
    ended: bool = False


def with_memory(t: Traveller, request: ChatRequest, prompts: PromptPack) -> ChatRequest:
    """The place's request with the persona's memory of earlier places put in (`prompts` is
    the journey's pack: its `memory_summary` entry frames the summary lines)."""
    *head, last = request.messages
    if t.memory == "summary" and t.summaries:
        recalled = prompts.render("memory_summary", lines="\n".join(t.summaries))
        last = Message(role="user", content=f"{recalled}\n\n{last.content}")
    elif t.memory == "full" and t.exchanges:
        head = [*head, *t.exchanges]
    return request.model_copy(update={"messages": (*head, last)})


def keep_exchange(t: Traveller, task: DecisionTask, reply: str | None) -> None:
    """Keep the place's own last user turn and the persona's accepted reply, for `full`."""
    if reply is None or t.memory != "full":
        return
    asked = task.request.messages[-1].content  # in `full` mode, the place's own text
    t.exchanges.extend(
        [Message(role="user", content=asked), Message(role="assistant", content=reply)]
    )
