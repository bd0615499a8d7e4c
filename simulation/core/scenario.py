"""`Scenario`: the class users subclass to define an experiment, and the registry of them.

A scenario declares typed parameters (a pydantic model), builds agents and environments in
`setup`, plays rounds in `play_round`, and computes its metrics from the event table alone, so
`personasim metrics RUN_DIR` can recompute them without any model call.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from personasim.simulation.base.registry import Registry
from personasim.simulation.core.decision_range import DecisionRange
from personasim.simulation.core.scoring import ScoreItems
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.llm.prompts import PromptPack
from personasim.simulation.llm.roles import Role
from personasim.simulation.log.input_checks import unstorable

if TYPE_CHECKING:
    import pandas as pd

    from personasim.simulation.core.counterfactual import Twins
    from personasim.simulation.core.model import Simulation
    from personasim.simulation.log.events import Event

__all__ = [
    "SCENARIOS",
    "Scenario",
    "ScenarioError",
    "ScenarioMetrics",
    "ScenarioParams",
    "csv_separator_problem",
    "did_you_mean",
    "get_scenario",
    "list_scenarios",
    "read_input",
    "register_scenario",
    "split_list",
]

BUILTIN_MODULE = "personasim.scenarios"
ENTRY_POINT_GROUP = "personasim.scenarios"

T = TypeVar("T")


class ScenarioError(ValueError):
    """Unknown scenario or invalid parameters; the message says what to change."""


class ScenarioParams(BaseModel):
    """Base of every scenario's parameters: unknown names are errors, values are validated.

    A tuple- or list-typed parameter also accepts a comma-separated string, as typed on the
    command line.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    """`allow_inf_nan=False`: a float parameter is finite (`--temperature nan` is refused)."""

    @model_validator(mode="before")
    @classmethod
    def _split_lists(cls, values: Any) -> Any:
        if not isinstance(values, dict):
            return values
        split = dict(values)
        for name, info in cls.model_fields.items():
            if isinstance(split.get(name), str) and get_origin(info.annotation) in (tuple, list):
                split[name] = tuple(split_list(split[name]))
        return split

    @model_validator(mode="after")
    def _storable(self) -> ScenarioParams:
        """Parameters are recorded in the run's log, which holds UTF-8 text: a byte on the
        command line that is not UTF-8 arrives as a lone surrogate and is refused here."""
        if problem := unstorable(self.model_dump(mode="python")):
            field, _, why = problem.partition(": ")
            raise ValueError(f"--{field.replace('_', '-')}: {why}")
        return self


_LIST_COMMA = re.compile(r",(?![A-Za-z_]+=)")


def split_list(text: str) -> list[str]:
    """A comma-separated list as typed on the command line. A comma that starts `name=` belongs
    to the item before it, so a model spec's options stay together: `scripted:drift=0.1,seed=3,
    openai:m` is two items."""
    return [item.strip() for item in _LIST_COMMA.split(text)]


@dataclasses.dataclass(frozen=True)
class ScenarioMetrics:
    """A scenario's metrics hooks, declared once (`metrics = ScenarioMetrics(...)` on the class)
    instead of forwarding each `Scenario` classmethod by hand: `compute` makes the metrics from
    the event table alone; the others are optional, and a missing one keeps the base default."""

    compute: Callable[[pd.DataFrame], dict[str, Any]]
    report: Callable[[dict[str, Any]], list[str]] | None = None
    write_reports: Callable[[dict[str, Any], Path], list[Path]] | None = None
    summary_rows: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None
    write_sweep_reports: Callable[[list[dict[str, Any]], list[str], Path], list[Path]] | None = None
    summary_counts: Mapping[str, SummaryCount] | None = None
    """Per statistic of `summary_rows`, the column with its n: the sweep's combined.md shows
    each value with it (docs/sweeps.md); a statistic left out shows its value alone."""
    kinds: tuple[str, ...] | None = None
    """The event kinds `compute` reads (`run.started`, `run.completed` are always read); None:
    all. Declared, a 100,000-agent run's metrics skip its `llm.call` texts (docs/performance.md)."""
    block: type | UnionType | None = None
    """The TypedDict of `compute`'s result (or a union of them, one per shape it can take): its
    top-level keys and their types, a key present only sometimes `NotRequired`, an undefined
    statistic `X | None` beside its `*_undefined` reason. The tests check every built-in
    scenario's real metrics against it; the metrics extensions' blocks are not part of it."""


class Scenario(ABC):
    """Subclass, set the class attributes, implement the three methods (or declare `metrics`
    in place of `compute_metrics`), decorate with `@register_scenario`."""

    name: ClassVar[str]
    summary: ClassVar[str]
    Params: ClassVar[type[ScenarioParams]]
    version: ClassVar[int] = 1
    """Bumped when the scenario's prompts or rules change what it sends or how it reads
    answers: a run started under another version is not resumed (its fingerprint differs)."""
    roles: ClassVar[dict[str, Role]] = {
        "persona": Role("the persona agents' decisions", reply_tokens=150)  # a reasoned paragraph
    }
    """The parts models play; `--role NAME=SPEC` binds one, `--model` the others."""
    scores: ClassVar[ScoreItems | None] = None
    """What its scorer roles (`Role(scorer=True)`) score, for `personasim rescore` (None: it has
    no scorer to compare). Declared, a rescored run's metrics get the `rescore` agreement block
    (the `rescore` metrics extension, `core/metric_extensions.py`)."""
    twins: ClassVar[Twins | None] = None
    """What a counterfactual run compares between twins (`core/counterfactual.py`). None: the
    decisions, where `Params` derives from `CounterfactualParams`; declared by a scenario that
    makes twins of its own (the classroom's races) or compares outcomes besides decisions."""
    metrics: ClassVar[ScenarioMetrics | None] = None
    """The metrics hooks in one declaration; the classmethods below call them. A scenario may
    override the classmethods instead (as a scenario file usually does)."""
    smoke_params: ClassVar[Mapping[str, Any] | None] = None
    """The smallest parameters that still run setup, every round and every report, summary
    and table (undefined values included): the tests run each registered scenario with them,
    so a new paper is tested without editing a shared list. None: not declared."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class that declares `metrics` has its `compute_metrics`: the abstract method is
        filled in here, before `ABC` counts what is missing, so a scenario with neither stays
        abstract and is reported as missing `compute_metrics`."""
        super().__init_subclass__(**kwargs)
        if cls.metrics is not None and getattr(cls.compute_metrics, "__isabstractmethod__", False):
            cls.compute_metrics = Scenario.__dict__["_declared_metrics"]  # type: ignore[method-assign]

    @classmethod
    def _declared_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        assert cls.metrics is not None
        return cls.metrics.compute(events)

    @classmethod
    def metric_kinds(cls) -> tuple[str, ...] | None:
        """The event kinds `compute_metrics` reads (None: all): those `metrics` declares, unless
        a subclass computes its metrics otherwise than through `metrics`."""
        declared = Scenario.__dict__["_declared_metrics"].__func__
        if cls.metrics is None or getattr(cls.compute_metrics, "__func__", None) is not declared:
            return None
        return cls.metrics.kinds

    def __init__(self, params: ScenarioParams, prompts: PromptPack | None = None) -> None:
        self.params = params
        self.prompts = prompts or self.shipped_prompts()
        """The texts this run sends (the shipped pack unless `--prompts FILE`)."""

    @classmethod
    def shipped_prompts(cls) -> PromptPack | None:
        """The pack `<name>.yaml` (or `packs/<name>.yaml`) beside the scenario's module, or beside
        a base class's module for a subclass defined elsewhere (None: no pack)."""
        for klass in cls.__mro__:
            if issubclass(klass, Scenario) and klass is not Scenario:
                folder = Path(inspect.getfile(klass)).parent
                for path in (folder / f"{cls.name}.yaml", folder / "packs" / f"{cls.name}.yaml"):
                    if path.is_file():
                        return dataclasses.replace(PromptPack.load(path), from_package=True)
        return None

    def rounds(self) -> int:
        """How many rounds the runner plays; a `rounds` parameter if the scenario has one."""
        return int(getattr(self.params, "rounds", 1))

    def prepare(self) -> None:  # noqa: B027 - optional hook
        """Load and check inputs (data files...) before anything is written; raise
        `ScenarioError` with a message naming the problem."""

    @abstractmethod
    def setup(self, sim: Simulation) -> None:
        """Create agents and environments (draw all persona randomness here)."""

    @abstractmethod
    async def play_round(self, sim: Simulation, round_index: int) -> None:
        """Play round `round_index` (1-based); use `sim.concurrently` for independent calls."""

    @classmethod
    @abstractmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        """The run's metrics as a pure function of its events (JSON-ready)."""

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        """A few human-readable lines for the end of a run."""
        hook = cls.metrics.report if cls.metrics else None
        return hook(metrics) if hook else []

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows this run contributes to a sweep's combined table (default: its top-level
        numbers)."""
        if cls.metrics and cls.metrics.summary_rows:
            return cls.metrics.summary_rows(metrics)
        return [{k: v for k, v in metrics.items() if isinstance(v, int | float | str | None)}]

    @classmethod
    def write_sweep_reports(
        cls, rows: list[dict[str, Any]], varied: list[str], directory: Path
    ) -> list[Path]:
        """Tables and figures a sweep writes from its combined rows (`varied`: the parameters
        the sweep varies), e.g. a paper's table across models; returns the files written."""
        hook = cls.metrics.write_sweep_reports if cls.metrics else None
        return hook(rows, varied, directory) if hook else []

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        """Tables (CSV and Markdown) and figures (PNG) made from the metrics alone, written
        into `directory` (the run's `reports/`); returns the files written."""
        hook = cls.metrics.write_reports if cls.metrics else None
        return hook(metrics, directory) if hook else []

    @classmethod
    def decision_ranges(
        cls, params: ScenarioParams, events: Sequence[Event]
    ) -> Mapping[str, DecisionRange]:
        """Per role, how many decisions a run with `params` may make, where that depends on the
        model (a dialogue that ends early or runs to its turn limit); `events` is a scripted
        run's log, for the units it played. A role left out (default: all) makes as many
        decisions as the scripted run made (`personasim run --dry-run`, docs/dry-run.md)."""
        return {}

    @classmethod
    def parse_params(cls, values: dict[str, Any]) -> ScenarioParams:
        """Validate raw values (strings from the command line are coerced)."""
        try:
            return cls.Params.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                _param_problem(err, cls.Params.model_fields) for err in exc.errors()
            )
            raise ScenarioError(
                f"{cls.name}: invalid parameters: {problems}. "
                f"`personasim list` shows the parameters of each scenario."
            ) from None


def _param_problem(error: Any, known: Iterable[str]) -> str:
    """`--n-personas: Input should be ... (got '0')`; a check of several parameters at once (a
    model validator) names them itself."""
    message = str(error["msg"]).removeprefix("Value error, ")
    if not error["loc"]:
        return message
    flag = f"--{'.'.join(str(p) for p in error['loc']).replace('_', '-')}"
    if error["type"] == "extra_forbidden":
        return f"{flag}: {message}{did_you_mean(str(error['loc'][0]), known)}"
    shown = repr(error["input"])
    shown = shown if len(shown) <= 60 else f"{shown[:60]}... ({len(shown):,} characters)"
    return f"{flag}: {message} (got {shown})"


def did_you_mean(name: str, known: Iterable[str], flag: str = "--") -> str:
    """` (did you mean --n-personas?)` for a close known name, else nothing."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if not close:
        return ""
    shown = f"{flag}{close[0].replace('_', '-')}" if flag else repr(close[0])
    return f" (did you mean {shown}?)"


def read_input(flag: str, load: Callable[[], T]) -> T:
    """Run a loader of user-given input (a file named by `flag`), turning its failure into one
    `ScenarioError` that names the flag; loaders raise ValueErrors naming file and line."""
    try:
        return load()
    except FileNotFoundError as exc:
        raise ScenarioError(f"{flag}: {exc.filename}: no such file") from None
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"{flag}: {exc}") from None


_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "'|'"}


def csv_separator_problem(columns: Sequence[str] | None) -> str | None:
    """What is wrong when a CSV header, read as comma-separated, is one column that holds
    another separator (a spreadsheet's ';' export): None when the header looks fine."""
    if not columns or len(columns) != 1:
        return None
    for separator, name in _SEPARATORS.items():
        if separator in columns[0]:
            return (
                f"the header row reads as the single column {columns[0]!r}: the file is "
                f"separated by {name}, but CSV input must be comma-separated; re-save it "
                "with commas"
            )
    return None


SCENARIOS: Registry[type[Scenario]] = Registry(
    "scenario", ENTRY_POINT_GROUP, builtin_prefix=BUILTIN_MODULE + ".", error=ScenarioError
)
"""Every scenario by name, from the entry-point group: the built-in papers' (personasim's
`pyproject.toml`) as any outside package's, each module imported when its name is first asked
for (simulation/base/registry.py)."""


def register_scenario(cls: type[Scenario]) -> type[Scenario]:
    """Class decorator that makes a scenario runnable by name. Another class under a taken
    name is refused; the same class loaded again (a scenario file edited) replaces it."""
    SCENARIOS.register(cls.name, cls)
    return cls


def list_scenarios(builtin: bool = True) -> dict[str, type[Scenario]]:
    """Every registered scenario by name; `builtin=False` leaves the built-in ones unimported
    (`personasim list` reads their cards, `simulation/core/catalog.py`)."""
    return SCENARIOS.items(builtin)


def get_scenario(name: str) -> type[Scenario]:
    """The scenario registered as `name`; a built-in one imports only its own module."""
    found = SCENARIOS.get(name)
    if found is not None:
        return found
    scenarios = SCENARIOS.names(strict=False)
    hint = did_you_mean(name, scenarios, flag="")
    raise ScenarioError(
        f"unknown scenario {name!r}{hint}; known scenarios: {', '.join(scenarios) or 'none'}. "
        f"Run a scenario of your own from its file (personasim run path/to/scenario.py), "
        f"or declare its package under the entry-point group {ENTRY_POINT_GROUP!r}"
        f"{SCENARIOS.failure_note()}"
    )
