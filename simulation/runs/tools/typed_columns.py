"""One type for a column of values: the rule every frame of runs and sweeps is typed by
(docs/sweeps.md, "Events as data"). A module of its own so that a sweep's cell labels
(`sweep_labels.py`), which the event frames (`event_data.py`, which re-exports it) put in
their frames, are typed by it too without the two importing each other.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["typed_column"]


def typed_column(values: Iterable[Any]) -> pd.Series:
    """One type for a column of values (None, NaN and pd.NA are missing and fit any type):

    all booleans → `boolean`; all integers → `Int64`; integers and numbers → `float64`;
    all text → `string`; anything else — lists, objects, integers beyond 64 bits, booleans
    mixed with numbers, text mixed with anything — → `string` holding each value as JSON
    (`json.loads` reads any of them back). NumPy scalars count as their Python kinds.
    """
    values = [None if _missing(v) else v for v in values]
    kinds = {_kind(v) for v in values if v is not None}
    if kinds == {"bool"}:
        return pd.Series(pd.array(values, dtype="boolean"))
    if kinds == {"int"}:
        return pd.Series(pd.array([None if v is None else int(v) for v in values], "Int64"))
    if kinds == {"int", "float"} or kinds == {"float"}:
        return pd.Series([np.nan if v is None else float(v) for v in values], dtype="float64")
    if kinds == {"str"}:
        return pd.Series(pd.array(values, dtype="string"))
    encoded = [None if v is None else json.dumps(v, sort_keys=True, default=_plain) for v in values]
    return pd.Series(pd.array(encoded, dtype="string"))


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int" if -(2**63) <= int(value) < 2**63 else "json"
    if isinstance(value, numbers.Real):
        return "float"
    return "str" if isinstance(value, str) else "json"


def _plain(value: Any) -> Any:
    """NumPy scalars as Python ones, so `json.dumps` can write them."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
