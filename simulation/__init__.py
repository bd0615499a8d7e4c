"""The kernel: simulation model, event log, LLM layer, runner, replay, scenario registry.

Names are imported on first use (PEP 562), so importing one light module of the kernel (the
command line reading its arguments) does not import Mesa, LangGraph, pandas or openai.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "SimAgent": "personasim.simulation.core.agent",
    "Environment": "personasim.simulation.core.environment",
    "InvalidActionError": "personasim.simulation.core.environment",
    "Simulation": "personasim.simulation.core.model",
    "Scenario": "personasim.simulation.core.scenario",
    "ScenarioError": "personasim.simulation.core.scenario",
    "ScenarioParams": "personasim.simulation.core.scenario",
    "csv_separator_problem": "personasim.simulation.core.scenario",
    "get_scenario": "personasim.simulation.core.scenario",
    "list_scenarios": "personasim.simulation.core.scenario",
    "read_input": "personasim.simulation.core.scenario",
    "register_scenario": "personasim.simulation.core.scenario",
    "split_list": "personasim.simulation.core.scenario",
    "CacheError": "personasim.simulation.llm.cache",
    "CacheInfo": "personasim.simulation.llm.cache",
    "ResponseCache": "personasim.simulation.llm.cache",
    "cache_info": "personasim.simulation.llm.cache",
    "clear_cache": "personasim.simulation.llm.cache",
    "default_cache_dir": "personasim.simulation.llm.cache",
    "Backend": "personasim.simulation.llm.chat",
    "ChatRequest": "personasim.simulation.llm.chat",
    "ChatResponse": "personasim.simulation.llm.chat",
    "LLMError": "personasim.simulation.llm.chat",
    "Message": "personasim.simulation.llm.chat",
    "PermanentLLMError": "personasim.simulation.llm.chat",
    "ResponseFormat": "personasim.simulation.llm.chat",
    "TokenLogprob": "personasim.simulation.llm.chat",
    "TransientLLMError": "personasim.simulation.llm.chat",
    "Usage": "personasim.simulation.llm.chat",
    "response_format_for": "personasim.simulation.llm.chat",
    "EndpointDownError": "personasim.simulation.llm.client",
    "HedgePolicy": "personasim.simulation.llm.client",
    "LLMCallFailedError": "personasim.simulation.llm.client",
    "LLMClient": "personasim.simulation.llm.client",
    "ModelPool": "personasim.simulation.llm.client",
    "RetryPolicy": "personasim.simulation.llm.client",
    "LangChainBackend": "personasim.simulation.llm.langchain_backend",
    "EndpointLimiter": "personasim.simulation.llm.limiter",
    "BackendKind": "personasim.simulation.llm.model_spec",
    "ModelSpec": "personasim.simulation.llm.model_spec",
    "ModelSpecError": "personasim.simulation.llm.model_spec",
    "backend_kind": "personasim.simulation.llm.model_spec",
    "backend_kinds": "personasim.simulation.llm.model_spec",
    "make_backend": "personasim.simulation.llm.model_spec",
    "parse_model_spec": "personasim.simulation.llm.model_spec",
    "OpenAIBackend": "personasim.simulation.llm.openai_backend",
    "Role": "personasim.simulation.llm.roles",
    "RoleError": "personasim.simulation.llm.roles",
    "bind_roles": "personasim.simulation.llm.roles",
    "ScriptedBackend": "personasim.simulation.llm.scripted",
    "answer_schema": "personasim.simulation.llm.scripted",
    "scripted_behaviour": "personasim.simulation.llm.scripted",
    "EventLog": "personasim.simulation.log.event_log",
    "ResumeMismatchError": "personasim.simulation.log.event_log",
    "ResumeState": "personasim.simulation.log.event_log",
    "Event": "personasim.simulation.log.events",
    "EventStore": "personasim.simulation.log.events",
    "INCIDENT_SCOPE": "personasim.simulation.log.events",
    "MAIN_SCOPE": "personasim.simulation.log.events",
    "SCHEMA_VERSION": "personasim.simulation.log.events",
    "events_frame": "personasim.simulation.log.events",
    "EventStoreError": "personasim.simulation.log.sqlite_store",
    "SQLiteEventStore": "personasim.simulation.log.sqlite_store",
    "events_table": "personasim.simulation.runs.event_data",
    "run_events": "personasim.simulation.runs.event_data",
    "sweep_events": "personasim.simulation.runs.event_data",
    "write_parquet": "personasim.simulation.runs.event_data",
    "ImportFormat": "personasim.simulation.runs.importers",
    "ImportedEvent": "personasim.simulation.runs.importers",
    "ImportedRun": "personasim.simulation.runs.importers",
    "file_identity": "personasim.simulation.runs.importers",
    "import_formats": "personasim.simulation.runs.importers",
    "import_run": "personasim.simulation.runs.importers",
    "register_import_format": "personasim.simulation.runs.importers",
    "RunLock": "personasim.simulation.runs.run_lock",
    "RunLockedError": "personasim.simulation.runs.run_lock",
    "lock_holder": "personasim.simulation.runs.run_lock",
    "RunStopped": "personasim.simulation.runs.run_signals",
    "EVENTS_FILE": "personasim.simulation.runs.runner",
    "RunError": "personasim.simulation.runs.runner",
    "RunResult": "personasim.simulation.runs.runner",
    "RunSettings": "personasim.simulation.runs.runner",
    "arun_scenario": "personasim.simulation.runs.runner",
    "compute_run_metrics": "personasim.simulation.runs.runner",
    "read_manifest": "personasim.simulation.runs.runner",
    "run_scenario": "personasim.simulation.runs.runner",
    "SalvageResult": "personasim.simulation.runs.salvage",
    "salvage_run": "personasim.simulation.runs.salvage",
    "load_scenario_file": "personasim.simulation.runs.scenario_file",
    "resolve_scenario": "personasim.simulation.runs.scenario_file",
    "CellFailure": "personasim.simulation.runs.sweep",
    "SweepResult": "personasim.simulation.runs.sweep",
    "run_sweep": "personasim.simulation.runs.sweep",
}
"""Each public name and the module that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
