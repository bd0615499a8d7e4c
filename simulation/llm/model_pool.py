"""`ModelPool`: the models of a run, each behind its own `LLMClient` (re-exported by
client.py, where it was first defined)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from personasim.simulation.llm.chat import LLMError

if TYPE_CHECKING:
    from personasim.simulation.llm.client import LLMClient

__all__ = ["ModelPool"]


class ModelPool:
    """The run's main model and any other model its roles are bound to (judges, evaluators).

    Other models are built on first use from their spec (`openai:NAME`...) and share the run's
    cache, limits and log; their answers have their own cache entries because the backend's
    identity is part of every key. `main_spec` is the spec the main model was built from.
    """

    def __init__(
        self,
        main: LLMClient,
        build: Callable[[str], LLMClient] | None = None,
        main_spec: str | None = None,
    ) -> None:
        self.main = main
        self.main_spec = main_spec
        self._build = build
        self._others: dict[str, LLMClient] = {}

    def endpoint_reports(self) -> list[dict[str, Any]]:
        """Per model served by a pool of replicas, its endpoints' counts (for the manifest)."""
        pools = sys.modules.get("personasim.simulation.llm.endpoint_pool")
        if pools is None:  # no pool was made (and aiohttp, 0.13 s, is left unimported)
            return []
        clients = (self.main, *self._others.values())
        return [c.backend.report() for c in clients if isinstance(c.backend, pools.EndpointPool)]

    def get(self, spec: str | None = None) -> LLMClient:
        if spec is None or spec == self.main_spec:
            return self.main
        if spec not in self._others:
            if self._build is None:
                raise LLMError(f"this run cannot reach other models (asked for {spec!r})")
            self._others[spec] = self._build(spec)
        return self._others[spec]

    async def aclose(self) -> None:
        for client in (self.main, *self._others.values()):
            await client.aclose()
