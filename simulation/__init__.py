"""The kernel: simulation model, event log, LLM layer, runner, replay, scenario registry."""

from personasim.simulation.core.agent import SimAgent
from personasim.simulation.core.environment import Environment, InvalidActionError
from personasim.simulation.core.model import Simulation
from personasim.simulation.core.scenario import (
    Scenario,
    ScenarioError,
    ScenarioParams,
    csv_separator_problem,
    get_scenario,
    list_scenarios,
    read_input,
    register_scenario,
    split_list,
)
from personasim.simulation.llm.cache import (
    CacheError,
    CacheInfo,
    ResponseCache,
    cache_info,
    clear_cache,
    default_cache_dir,
)
from personasim.simulation.llm.chat import (
    Backend,
    ChatRequest,
    ChatResponse,
    LLMError,
    Message,
    PermanentLLMError,
    ResponseFormat,
    TokenLogprob,
    TransientLLMError,
    Usage,
    response_format_for,
)
from personasim.simulation.llm.client import (
    EndpointDownError,
    HedgePolicy,
    LLMCallFailedError,
    LLMClient,
    ModelPool,
    RetryPolicy,
)
from personasim.simulation.llm.langchain_backend import LangChainBackend
from personasim.simulation.llm.limiter import EndpointLimiter
from personasim.simulation.llm.openai_backend import OpenAIBackend
from personasim.simulation.llm.roles import Role, RoleError, bind_roles
from personasim.simulation.llm.scripted import ScriptedBackend, answer_schema, scripted_behaviour
from personasim.simulation.log.event_log import EventLog, ResumeMismatchError, ResumeState
from personasim.simulation.log.events import (
    INCIDENT_SCOPE,
    MAIN_SCOPE,
    SCHEMA_VERSION,
    Event,
    EventStore,
    events_frame,
)
from personasim.simulation.log.sqlite_store import EventStoreError, SQLiteEventStore
from personasim.simulation.runs.event_data import (
    events_table,
    run_events,
    sweep_events,
    write_parquet,
)
from personasim.simulation.runs.importers import (
    ImportedEvent,
    ImportedRun,
    ImportFormat,
    file_identity,
    import_formats,
    import_run,
    register_import_format,
)
from personasim.simulation.runs.run_lock import RunLock, RunLockedError, lock_holder
from personasim.simulation.runs.run_signals import RunStopped
from personasim.simulation.runs.runner import (
    EVENTS_FILE,
    MODEL_SPEC_PATTERN,
    RunError,
    RunResult,
    RunSettings,
    arun_scenario,
    compute_run_metrics,
    make_backend,
    read_manifest,
    run_scenario,
)
from personasim.simulation.runs.salvage import SalvageResult, salvage_run
from personasim.simulation.runs.scenario_file import load_scenario_file, resolve_scenario
from personasim.simulation.runs.sweep import CellFailure, SweepResult, run_sweep

__all__ = [
    "EVENTS_FILE",
    "INCIDENT_SCOPE",
    "MAIN_SCOPE",
    "MODEL_SPEC_PATTERN",
    "SCHEMA_VERSION",
    "Backend",
    "CacheError",
    "CacheInfo",
    "CellFailure",
    "ChatRequest",
    "ChatResponse",
    "EndpointDownError",
    "EndpointLimiter",
    "Environment",
    "Event",
    "EventLog",
    "EventStore",
    "EventStoreError",
    "HedgePolicy",
    "ImportFormat",
    "ImportedEvent",
    "ImportedRun",
    "InvalidActionError",
    "LLMCallFailedError",
    "LLMClient",
    "LLMError",
    "LangChainBackend",
    "Message",
    "ModelPool",
    "OpenAIBackend",
    "PermanentLLMError",
    "ResponseCache",
    "ResponseFormat",
    "ResumeMismatchError",
    "ResumeState",
    "RetryPolicy",
    "Role",
    "RoleError",
    "RunError",
    "RunLock",
    "RunLockedError",
    "RunResult",
    "RunSettings",
    "RunStopped",
    "SQLiteEventStore",
    "SalvageResult",
    "Scenario",
    "ScenarioError",
    "ScenarioParams",
    "ScriptedBackend",
    "SimAgent",
    "Simulation",
    "SweepResult",
    "TokenLogprob",
    "TransientLLMError",
    "Usage",
    "answer_schema",
    "arun_scenario",
    "bind_roles",
    "cache_info",
    "clear_cache",
    "compute_run_metrics",
    "csv_separator_problem",
    "default_cache_dir",
    "events_frame",
    "events_table",
    "file_identity",
    "get_scenario",
    "import_formats",
    "import_run",
    "list_scenarios",
    "load_scenario_file",
    "lock_holder",
    "make_backend",
    "read_input",
    "read_manifest",
    "register_import_format",
    "register_scenario",
    "resolve_scenario",
    "response_format_for",
    "run_events",
    "run_scenario",
    "run_sweep",
    "salvage_run",
    "scripted_behaviour",
    "split_list",
    "sweep_events",
    "write_parquet",
]
