"""One round of N LLM agents under mesa-llm's parallel stepping; run by bench_round.py.

Why a separate file: mesa-llm needs another Mesa version than personasim, so this runs with the
Python of mesa-llm's own venv and imports nothing from personasim. It prints one JSON line
(round wall and CPU seconds, answered calls, peak memory) like bench_round.py's own workers.

    python mesa_llm_worker.py N C BASE_URL   (OPENAI_API_KEY set to a dummy value)
"""

from __future__ import annotations

import inspect
import json
import os
import resource
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no download at import

import mesa
from mesa_llm.module_llm import ModuleLLM
from mesa_llm.parallel_stepping import enable_automatic_parallel_stepping

PROMPT = (
    "You are a participant in an investment game. You have 10 dollars. You may give any part "
    "of it to another participant; the amount you give is tripled, and the other participant "
    "decides how much of it to return to you. " * 4
)


class Trustor(mesa.Agent):
    """Asks the model once per step through mesa-llm's async LLM module."""

    def __init__(self, model: mesa.Model, llm: ModuleLLM) -> None:
        super().__init__(model)
        self.llm = llm
        self.reply = ""

    async def astep(self) -> None:
        response = await self.llm.agenerate(f"Participant {self.unique_id}. {PROMPT}")
        self.reply = response.choices[0].message.content or ""

    def step(self) -> None:  # parallel stepping calls astep; this is the sequential fallback
        raise RuntimeError("expected mesa-llm's parallel stepping to call astep")


class Round(mesa.Model):
    def __init__(self, n: int, url: str) -> None:
        super().__init__()
        self.parallel_stepping = True
        llm = ModuleLLM(llm_model="openai/fake-model", api_base=url)
        for _ in range(n):
            Trustor(self, llm)

    def step(self) -> None:
        self.agents.shuffle_do("step")


def main() -> int:
    n, c, url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    # Some mesa-llm versions do not pass api_base on to litellm; litellm reads these instead.
    os.environ["OPENAI_BASE_URL"] = os.environ["OPENAI_API_BASE"] = url
    # Newer mesa-llm versions cap concurrent steps; older ones (0.2.x) step every agent at once.
    options = inspect.signature(enable_automatic_parallel_stepping).parameters
    capped = "max_concurrent" in options
    if capped:
        enable_automatic_parallel_stepping(mode="asyncio", max_concurrent=c, request_timeout=3600)
    else:
        enable_automatic_parallel_stepping(mode="asyncio")
    model = Round(n, url)
    wall, cpu = time.perf_counter(), time.process_time()
    model.step()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    calls = sum(1 for agent in model.agents if agent.reply)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"round_s": wall, "cpu_s": cpu, "calls": calls, "peak_rss_mb": peak, "capped": capped}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
