"""`personasim import persona-gym --format published-scores`: the paper's published scores.

The PersonaGym authors (vsamuel2003/PersonaGym, MIT) released per model the five task scores
and the PersonaScore (`evaluations/<model>/scores.json`; Table 2). `--scores` takes either one
such file (its folder names the model) or a JSON object model → scores, as the six files
gathered in one. The run directory is marked imported and holds aggregates only, so no n;
`--beside` adds persona-gym run directories (or sweep folders holding them) of ours, whose
Table 2 rows are shown beside the paper's models (`scenarios/persona_gym/published.py`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from personasim.environments.persona_gym.place import TASK_ALIASES, TASKS
from personasim.scenarios.persona_gym.tables import table2_rows
from personasim.simulation import (
    ImportedEvent,
    ImportedRun,
    ImportFormat,
    ScenarioError,
    file_identity,
    register_import_format,
)

__all__ = ["PUBLISHED_SCORES", "read_published_scores"]

SCORE_KEYS = (*TASKS, "PersonaScore")


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None


def read_published_scores(path: Path) -> dict[str, dict[str, float]]:
    """Model → the five task scores (the paper's task names) and PersonaScore, each 1–5."""
    data = _load(path)
    if not isinstance(data, dict) or not data:
        raise ScenarioError(f"{path}: expected a JSON object of scores")
    if all(isinstance(v, int | float) for v in data.values()):  # one model's scores.json
        data = {path.parent.name or path.stem: data}
    return {str(model): _scores(path, str(model), scores) for model, scores in data.items()}


def _scores(path: Path, model: str, scores: Any) -> dict[str, float]:
    if not isinstance(scores, dict):
        raise ScenarioError(f"{path}: {model}: expected an object of task scores")
    named = {TASK_ALIASES.get(k, k): v for k, v in scores.items()}
    missing = [k for k in SCORE_KEYS if k not in named]
    unknown = [k for k in named if k not in SCORE_KEYS]
    if missing or unknown:
        what = "; ".join(
            part
            for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"unknown {', '.join(unknown)}" if unknown else "",
            )
            if part
        )
        raise ScenarioError(f"{path}: {model}: {what} (expected {', '.join(SCORE_KEYS)})")
    for key in SCORE_KEYS:
        value = named[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ScenarioError(f"{path}: {model}: {key} is not a number: {value!r}")
        if not math.isfinite(value) or not 1 <= value <= 5:
            raise ScenarioError(f"{path}: {model}: {key} {value} is outside the 1–5 scale")
    return {k: float(named[k]) for k in SCORE_KEYS}


def _beside(paths: str) -> list[ImportedEvent]:
    """One `gym.beside` event per persona-gym run found under the comma-separated paths."""
    events = []
    for given in filter(None, (p.strip() for p in paths.split(","))):
        root = Path(given)
        found = sorted(m.parent for m in root.rglob("metrics.json")) if root.is_dir() else []
        if not found:
            raise ScenarioError(f"--beside {root}: no run directory (metrics.json) there")
        for run_dir in found:
            record = _load(run_dir / "metrics.json")
            if record.get("scenario") != "persona-gym" or "published" in record["metrics"]:
                continue
            row = table2_rows(record["metrics"])[0]
            row |= {
                "source": f"run {run_dir.name}",
                "n": record["metrics"]["n_scored_questions"],
            }
            identity = file_identity(run_dir / "metrics.json")
            events.append(ImportedEvent("gym.beside", {**row, "metrics": identity}))
    return events


def _build(files: Mapping[str, Path], options: Mapping[str, str]) -> ImportedRun:
    path = files["scores"]
    models = read_published_scores(path)
    source = {
        "repository": "vsamuel2003/PersonaGym",
        "files": "evaluations/<model>/scores.json",
        "licence": "MIT",
        **file_identity(path),
    }
    answer = options.get("spread-with-scripted", "no").strip().lower()
    if answer not in {"yes", "no"}:
        raise ScenarioError(f"--spread-with-scripted {answer!r}: expected yes or no")
    published = {"source": source, "models": models, "spread_with_scripted": answer == "yes"}
    events = [ImportedEvent("gym.published", published)]
    events += _beside(options.get("beside", ""))
    model = {
        "backend": "import",
        "model": "published (PersonaGym authors)",
        "note": "the paper's Table 2 scores; no model was called here",
    }
    return ImportedRun({"tasks": list(TASKS)}, model, events)


PUBLISHED_SCORES = register_import_format(
    ImportFormat(
        scenario="persona-gym",
        name="published-scores",
        summary="the paper's published task scores and PersonaScore (vsamuel2003/PersonaGym)",
        files={
            "scores": "one model's evaluations/<model>/scores.json, or a JSON object "
            "model → its scores",
        },
        options={
            "beside": (
                "",
                "persona-gym run or sweep directories (comma-separated) of ours to show "
                "beside the paper's models",
            ),
            "spread-with-scripted": (
                "no",
                "yes: count runs of the scripted double in Table 2's spread row (left out by "
                "default: it is a test double, not a language model)",
            ),
        },
        build=_build,
    )
)
