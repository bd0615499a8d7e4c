"""`Simulation`: the Mesa model that holds a run's agents, environments, RNG, log and model."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

import mesa

from personasim.simulation.core.reading import Reading
from personasim.simulation.llm.chat import ChatRequest, ChatResponse, ResponseFormat
from personasim.simulation.llm.client import LLMClient, ModelPool
from personasim.simulation.log.event_log import EventLog

if TYPE_CHECKING:
    from personasim.simulation.core.agent import SimAgent
    from personasim.simulation.core.environment import Environment
    from personasim.simulation.core.offload import Offload

__all__ = ["Simulation"]

T = TypeVar("T")

_IN_UNIT: ContextVar[bool] = ContextVar("personasim_in_unit", default=False)
"""Set inside a unit of `concurrently`: a nested call does not wait for admission again (its
outer unit already holds a place, and waiting could deadlock)."""


class Simulation(mesa.Model):
    """All randomness comes from `self.rng` / `self.random`, seeded once.

    Draw random numbers in sequential code, not inside concurrent work, so a run's outcome
    does not depend on which model call returns first.
    """

    def __init__(
        self,
        *,
        seed: int,
        log: EventLog,
        llm: LLMClient | None = None,
        models: ModelPool | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        response_format: ResponseFormat = "text",
        max_tokens: int | None = None,
        roles: Mapping[str, tuple[str, ...]] | None = None,
        max_active_units: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        if (llm is None) == (models is None):
            raise ValueError("pass either llm (one model) or models (a pool)")
        self.seed = seed
        self.models = models or ModelPool(llm)  # type: ignore[arg-type]
        self.llm = self.models.main
        self.log = log
        self.response_format = response_format
        """How decisions ask for answers: the prompts' text, or JSON constrained by a schema."""
        self.max_tokens = max_tokens
        """A cap on every request's completion tokens (None: each request's own setting)."""
        self.roles: dict[str, tuple[str, ...]] = dict(roles or {})
        """Each role's model specs (a role not bound here is played by the run's model)."""
        self.round: int | None = None
        self.environments: dict[str, Environment] = {}
        self._by_id: dict[str, SimAgent] = {}
        self._on_progress = on_progress or (lambda done, total: None)
        self._done = 0
        self._total = 0
        self.offload: Offload | None = None
        """Worker processes that fresh decisions may run in (`--workers N`; None: here)."""
        self._admission = asyncio.Semaphore(max_active_units) if max_active_units else None
        """At most this many units of `concurrently` under way; the others wait before doing
        anything, so 10,000 agents do not all build their prompts before the first answer is
        read (None: all at once)."""

    def emit(
        self, kind: str, payload: dict[str, Any] | None = None, *, agent_id: str | None = None
    ) -> None:
        """Append an event stamped with the current round."""
        self.log.emit(kind, payload, round=self.round, agent_id=agent_id)

    def record_reading(
        self, agent_id: str | None, reader: str, text: str, reading: Reading, **labels: Any
    ) -> None:
        """Log how model text was read (`reading.made`): the reader's name, the text, the
        reading (status, value, reason, the rule or role that read it) and the labels its
        independent reader needs (an endowment...), so `personasim audit` can re-read it."""
        payload = {"reader": reader, "text": text, **reading.payload(), **labels}
        self.emit("reading.made", payload, agent_id=agent_id)

    async def ask(
        self, request: ChatRequest, *, agent_id: str, role: str = "persona", member: int = 0
    ) -> ChatResponse:
        """One model call on behalf of an agent, by the model bound to `role` (its `member`-th
        model for an ensemble such as evaluators), logged with the current round and role."""
        client = self.models.get(self.model_for(role, member))
        cap = self.max_tokens
        if cap is not None and (request.max_tokens is None or request.max_tokens > cap):
            request = request.model_copy(update={"max_tokens": cap})
        return await client.complete(request, agent_id=agent_id, round=self.round, role=role)

    def model_for(self, role: str, member: int = 0) -> str | None:
        """The spec of the model playing `role` (None: the run's model)."""
        specs = self.roles.get(role)
        if specs is None:
            if self.roles:
                known = ", ".join(self.roles)
                raise KeyError(f"no role {role!r} in this run; its roles are {known}")
            return None
        return specs[member]

    def register_agent_id(self, agent: SimAgent) -> None:
        """Index the agent by its string id; Mesa's `self.agents` (an `AgentSet`) holds it
        already (`mesa.Agent.__init__`): the index makes `agent(id)` O(1) for 100,000 agents."""
        if agent.agent_id in self._by_id:
            raise ValueError(f"two agents share the id {agent.agent_id!r}; ids must be unique")
        self._by_id[agent.agent_id] = agent

    def agent(self, agent_id: str) -> SimAgent:
        return self._by_id[agent_id]

    def add_environment(self, environment: Environment) -> None:
        if environment.name in self.environments:
            raise ValueError(f"an environment named {environment.name!r} already exists")
        self.environments[environment.name] = environment

    def begin_round(self, index: int) -> None:
        self.round = index
        self.emit("round.started")

    def end_round(self) -> None:
        """A round is one Mesa step: `self.steps` counts rounds, as `Model.step` would (rounds
        are coroutines, which Mesa's synchronous `step` cannot run)."""
        self.emit("round.completed")
        self.steps += 1

    async def concurrently(self, work: Mapping[str, Callable[[], Awaitable[T]]]) -> dict[str, T]:
        """Run independent units of work at once, each logged as one unit (see EventLog).

        Names must be unique within the round. If one unit fails the others are cancelled and
        the first error is raised; finished units stay in the log for resume.
        """
        self._total += len(work)
        self._on_progress(self._done, self._total)
        prefix = f"r{self.round}/" if self.round is not None else ""
        try:
            async with asyncio.TaskGroup() as group:
                tasks = {
                    name: group.create_task(self._unit(f"{prefix}{name}", unit))
                    for name, unit in work.items()
                }
        except ExceptionGroup as errors:
            raise _first_error(errors) from None
        return {name: task.result() for name, task in tasks.items()}

    async def _unit(self, scope: str, unit: Callable[[], Awaitable[T]]) -> T:
        admitted = self._admission if not _IN_UNIT.get() else None
        async with admitted or contextlib.nullcontext():
            _IN_UNIT.set(True)
            result = await self.log.branch(scope, unit)
        self._done += 1
        self._on_progress(self._done, self._total)
        return result


def _first_error(errors: BaseExceptionGroup) -> BaseException:
    first = errors.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first
