"""What each cell of a sweep ran, as typed columns of a sweep's frames.

A sweep's frames (`sweep_events`, `sweep_agents`) name each row's run by its directory, `cell`
(`scripted-drift=0.15__endowment=44`): a name made for the file system, untyped, with the
model spec's `:` replaced, that analysis would have to parse. What it wants is what EDSL's
`results.to_pandas()` and Mesa's `batch_run` give: one typed column per varied parameter and
one for the model, to group and filter by (`frame.groupby(["model", "endowment"])`).
`cell_labels` reads them from each cell's `manifest.json` (its validated `params`, its
`model_spec`, its `seed`), never from the name; `with_cell_labels` puts them after `cell`.
docs/sweeps.md ("What each cell ran") is the layout.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.simulation.runs.lifecycle.run_dir import MANIFEST_FILE, RunError, read_manifest
from personasim.simulation.runs.tools.typed_columns import typed_column

__all__ = ["cell_labels", "with_cell_labels"]

SWEEP_COLUMNS = ("cell", "model", "seed")
PARAM_PREFIX = "param."
"""A varied parameter named like one of SWEEP_COLUMNS, or like a column the frame has of its
own (`round`), is `param.<name>`."""
SWEEP_PREFIX = "sweep."
"""`model` or `seed` where the frame has a column of that name of its own (an agent field) is
`sweep.model` / `sweep.seed`."""


def cell_labels(cells: Sequence[Path]) -> pd.DataFrame:
    """One row per cell, indexed by its directory's name: `model` (the spec the cell ran), one
    column per parameter whose value differs between cells (named as the parameter, in the
    manifest's order), and `seed` when the cells' seeds differ. Each column is typed over all
    cells by `typed_column`'s rule (int → Int64, float → float64, bool → boolean, text →
    string, anything else → JSON text). A parameter a cell's manifest lacks (a run of an
    older scenario) is missing there and does not count as a different value."""
    manifests = [_labelled_manifest(cell) for cell in cells]
    params = [manifest["params"] for manifest in manifests]
    names = dict.fromkeys(name for values in params for name in values)
    varied = [name for name in names if _distinct(p[name] for p in params if name in p) > 1]
    columns: dict[str, pd.Series] = {"model": typed_column(_model_spec(m) for m in manifests)}
    columns.update({_own(name): typed_column(p.get(name) for p in params) for name in varied})
    if _distinct(m.get("seed") for m in manifests) > 1:
        columns["seed"] = typed_column(m.get("seed") for m in manifests)
    labels = pd.DataFrame(columns)
    labels.index = pd.Index([cell.name for cell in cells], name="cell")
    return labels


def with_cell_labels(frame: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """`frame` (its first column `cell`) with each row's cell labels right after `cell`, renamed
    where the frame has a column of that name (`param.<name>`, `sweep.model`)."""
    taken = set(frame.columns)
    renamed = {name: name if name not in taken else _prefixed(name) for name in labels.columns}
    rows = labels.loc[frame["cell"]].rename(columns=renamed).set_axis(frame.index, axis=0)
    return pd.concat([frame[["cell"]], rows, frame.drop(columns="cell")], axis=1)


def _own(parameter: str) -> str:
    """A parameter's column: `param.<name>` where the name is one of the sweep's own."""
    return PARAM_PREFIX + parameter if parameter in SWEEP_COLUMNS else parameter


def _prefixed(name: str) -> str:
    return SWEEP_PREFIX + name if name in SWEEP_COLUMNS else PARAM_PREFIX + name


def _labelled_manifest(cell: Path) -> dict[str, Any]:
    """The cell's manifest (`read_manifest`'s errors name the file), with its `params`."""
    manifest = read_manifest(cell)
    if not isinstance(manifest.get("params"), dict):
        raise RunError(f"{cell / MANIFEST_FILE}: records no params; not a run of a scenario")
    return manifest


def _model_spec(manifest: dict[str, Any]) -> str | None:
    """The spec the run was started with (`model_spec`, recorded since sweeps are labelled);
    for an older run, the one spec its roles were bound to, else `role=spec` for each role."""
    if isinstance(manifest.get("model_spec"), str):
        return manifest["model_spec"]
    roles = {name: specs for name, specs in (manifest.get("roles") or {}).items() if specs}
    specs = {spec for bound in roles.values() for spec in bound}
    if len(specs) == 1:
        return specs.pop()
    return "; ".join(f"{name}={','.join(bound)}" for name, bound in roles.items()) or None


def _distinct(values: Any) -> int:
    """How many different values (lists and objects compared as JSON)."""
    return len({json.dumps(value, sort_keys=True) for value in values})
