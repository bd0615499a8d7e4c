"""Scripted runs of one scenario in every response format, for the structured-answer tests.

A run in `json_object` or `json_schema` must measure exactly what the `text` run of the same seed
measures: that holds only if each task's schema, its `read` and the scripted rule's JSON agree
with the text prompt, parser and rule. The requests are recorded where the scripted backend
receives them (every model of the run, judges and evaluators included), so the response format
that was actually sent is checked, not only what the log says.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from personasim.simulation import (
    ChatRequest,
    RunResult,
    ScriptedBackend,
    SQLiteEventStore,
    response_format_for,
    run_scenario,
)
from personasim.simulation.runs.runner import RunSettings

FORMATS = ("text", "json_object", "json_schema")

Schemas = Mapping[str, type[BaseModel] | Callable[[ChatRequest], type[BaseModel]]]
"""Each task's answer schema, or a function of the request where it depends on it."""


@dataclass
class FormatRun:
    result: RunResult
    calls: list[tuple[ChatRequest, str]] = field(default_factory=list)
    """Every request the scripted backends answered, with the reply text."""

    def events(self, kind: str) -> list[dict[str, Any]]:
        with SQLiteEventStore(self.result.run_dir / "events.sqlite") as store:
            return [{"agent_id": e.agent_id, **e.payload} for e in store.read([kind])]


def run_in_every_format(
    scenario: str, params: dict[str, Any], out: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> dict[str, FormatRun]:
    """The same scripted run (no cache) in text, json_object and json_schema."""
    calls: list[tuple[ChatRequest, str]] = []
    original = ScriptedBackend.complete

    async def recording(self: ScriptedBackend, request: ChatRequest, timeout: float) -> Any:
        response = await original(self, request, timeout)
        calls.append((request, response.text))
        return response

    monkeypatch.setattr(ScriptedBackend, "complete", recording)
    runs = {}
    for fmt in FORMATS:
        calls.clear()
        result = run_scenario(
            scenario,
            params,
            seed=seed,
            out=out / fmt,
            progress=False,
            use_cache=False,
            settings=RunSettings(response_format=fmt),  # type: ignore[arg-type]
        )
        runs[fmt] = FormatRun(result, list(calls))
    return runs


def decided(run: FormatRun, written: Callable[[dict], bool] = lambda p: True) -> list[str]:
    """Every decision's agent, task, details and value (and every failure), order-free; a
    decision for which `written` is false is compared without its value (its text may be
    written differently in JSON while it decides and grades the same)."""
    made = run.events("decision.made") + run.events("decision.failed")
    shown = (p if written(p) else {k: v for k, v in p.items() if k != "value"} for p in made)
    return sorted(json.dumps(p, sort_keys=True) for p in shown)


def assert_same_as_text(
    runs: dict[str, FormatRun], written: Callable[[dict], bool] = lambda p: True
) -> None:
    """Structured runs decide and measure exactly what the text run does."""
    text = runs["text"]
    for fmt in ("json_object", "json_schema"):
        assert runs[fmt].result.metrics["metrics"] == text.result.metrics["metrics"], fmt
        assert decided(runs[fmt], written) == decided(text, written), fmt
        assert runs[fmt].result.manifest["validity"] == text.result.manifest["validity"], fmt


def schema_of(schemas: Schemas, request: ChatRequest) -> type[BaseModel]:
    found = schemas[request.task]
    return found if isinstance(found, type) else found(request)


def assert_formats_sent(runs: dict[str, FormatRun], schemas: Schemas) -> None:
    """Text requests carry no response format; structured ones carry their task's schema in the
    run's form, every reply is a JSON object with exactly the schema's fields, and each reply
    the schema rejects was re-asked. `llm.call` is checked too where it logs the format."""
    assert runs["text"].calls and all(r.response_format is None for r, _ in runs["text"].calls)
    for fmt in ("json_object", "json_schema"):
        run = runs[fmt]
        logged = run.events("llm.call")
        assert len(logged) == len(run.calls)  # the recording saw every call of the run
        assert {r.task for r, _ in run.calls} == set(schemas)
        rejected, sent = 0, Counter[tuple[str, str]]()
        for request, reply in run.calls:
            schema = schema_of(schemas, request)
            assert request.response_format == response_format_for(fmt, schema), request.task
            sent[(request.task, json.dumps(request.response_format, sort_keys=True))] += 1
            answer = json.loads(reply)
            assert set(answer) == set(schema.model_json_schema()["properties"]), reply
            try:
                schema.model_validate(answer)
            except ValidationError:
                rejected += 1
        if all("response_format" in call for call in logged):
            formats = Counter(
                (c["task"], json.dumps(c["response_format"], sort_keys=True)) for c in logged
            )
            assert formats == sent
        reasks = [r["error"] for r in run.events("decision.reask")]
        assert rejected == sum("not a valid " in error for error in reasks)


def reasks_by_task(run: FormatRun) -> Counter[str]:
    return Counter(r["task"] for r in run.events("decision.reask"))
