"""Work a run hands to other processes (`personasim run --workers N`), as the core sees it.

Why a protocol here: the decision graph (agents/) decides whether a decision may run elsewhere,
and the worker processes are started by the runner (simulation/runs/workers/decision_workers.py);
the core only carries the handle between them, on `Simulation.offload`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Offload"]


class Offload(Protocol):
    """Runs a job in a worker process, in the caller's unit of work."""

    async def run(self, target: str, job: Any, answer: Callable[[Any], Any]) -> Any:
        """Run `target` ("module:function", called as `function(sim, job, ask)` in the worker
        with the worker's own `Simulation`) and return its result. The events it emitted are
        written into the caller's unit of work, in their order; `answer` replies, in this
        process, to each question the job sends back with `await ask(question)`."""
        ...
