"""A run's fingerprint: everything in its manifest that shapes a request or a verdict.

Resume compares the fingerprint of the run directory with the command's and refuses any
difference, one line per field (`params.temperature: 0.05 → 0.9`), so that a log never mixes
two prompt versions, two scenario versions or two models. Changing only the endpoint URL of the
same model is refused too unless the user says it serves the same model
(`--allow-endpoint-change`).

The files a run reads are in it by content (`inputs`, input_files.py): a persona, question or
profile file, the prompt pack, the endpoints file edited since the run started is refused with
one line naming it (`input_changes`), since the units not yet logged would be asked otherwise
than the ones logged. An endpoints file's change is let through by `--allow-endpoint-change`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["endpoint_change", "fingerprint", "fingerprint_diff", "input_changes"]

_FIELDS = (
    "scenario",
    "scenario_version",
    "params",
    "seed",
    "model",
    "roles",
    "response_format",
    "max_tokens",
    "rescore_of",
)
_MISSING = "(not recorded)"


def fingerprint(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The compared fields of a manifest, flattened to dotted names (`params.n_personas`)."""
    prompts = manifest.get("prompts")
    validity = manifest.get("validity") or {}
    chosen: dict[str, Any] = {name: manifest.get(name, _MISSING) for name in _FIELDS}
    chosen["prompts"] = (
        {k: prompts.get(k, _MISSING) for k in ("scenario", "sha256", "shipped")}
        if isinstance(prompts, Mapping)
        else prompts
    )
    chosen["validity"] = {k: validity.get(k, _MISSING) for k in ("max_failure_rate", "min_group_n")}
    chosen["personasim"] = (manifest.get("packages") or {}).get("personasim", _MISSING)
    return dict(_flatten(chosen))


def fingerprint_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """One `name: old → new` line per field that differs (empty when they are the same)."""
    before, after = fingerprint(old), fingerprint(new)
    return [
        f"{name}: {_show(before.get(name, _MISSING))} → {_show(after.get(name, _MISSING))}"
        for name in sorted(set(before) | set(after))
        if before.get(name, _MISSING) != after.get(name, _MISSING)
    ]


def input_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """Per input (`--persona-file`), `PATH (--flag) changed since the run started (sha256 a… →
    b…)` when its content differs from what the run recorded (under the same or another
    path). A run that recorded no inputs (an older personasim) is not compared."""
    recorded, now = old.get("inputs"), new.get("inputs") or {}
    if not isinstance(recorded, Mapping):
        return {}
    changed = {}
    for flag, before in recorded.items():
        after = now.get(flag)
        if after is None or after.get("sha256") == before.get("sha256"):
            continue
        path, was = after.get("path"), before.get("path")
        hashes = f"sha256 {_short(before.get('sha256'))} → {_short(after.get('sha256'))}"
        changed[flag] = (
            f"{path} ({flag}) changed since the run started ({hashes})"
            if path == was
            else f"{path} ({flag}) is not the file the run started with ({was}; {hashes})"
        )
    return changed


def endpoint_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, str] | None:
    """(old URL, new URL) when the two manifests' models differ only in their `base_url`."""
    before, after = old.get("model") or {}, new.get("model") or {}
    if "base_url" not in before or "base_url" not in after:
        return None
    if before["base_url"] == after["base_url"]:
        return None
    same_otherwise = {k: v for k, v in before.items() if k != "base_url"} == {
        k: v for k, v in after.items() if k != "base_url"
    }
    return (before["base_url"], after["base_url"]) if same_otherwise else None


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        return [
            item
            for key, inner in value.items()
            for item in _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
        ]
    return [(prefix, value)]


def _show(value: Any) -> str:
    if value == _MISSING:
        return value
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def _short(sha256: Any) -> str:
    return f"{sha256[:12]}…" if isinstance(sha256, str) else "no file there"
