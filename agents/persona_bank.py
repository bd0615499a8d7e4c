"""Persona banks: loading a persona file, validated, each persona with its derived traits.

Personas come from a bank such as the GenAgents GSS bank (Park et al., 2024); their traits
are derived as `persona_traits` says, where Big-Five levels are drawn too; a synthetic
population and selection from a bank are in `persona_sampling`.

File format accepted by :func:`load_personas` (chosen by extension):

* ``.jsonl`` / ``.ndjson`` / ``.json`` - JSON Lines: one JSON object per line.
* ``.csv`` - a header row, then one persona per row (UTF-8, an optional BOM is fine).

Each persona may carry an ``"id"`` field; without one its id is ``"{file stem}-{line}"``.
Every other field is an attribute whose value must be a scalar (string, number, boolean).
``null`` values and empty CSV cells mean "missing" and are dropped. Blank lines are skipped.
In CSV files ``age`` becomes an int when it parses as one; all other cells stay strings.

What a run records is checked here, with the file and line: numbers are finite (no ``NaN``,
``Infinity`` or ``1e400``) and whole numbers fit 64 bits; an ``age`` that is a number is from 0
to 130 (``"89 or older"`` stays text); text is UTF-8 without lone surrogates (``"\\ud800"``);
a CSV cell is at most 131,072 characters; the file is at most 1 GB (docs/personas.md,
"Limits").
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from personasim.agents.persona import AttributeValue, Persona
from personasim.agents.persona_traits import derive_traits
from personasim.simulation import csv_problem, csv_separator_problem, unstorable, utf8_problem

__all__ = [
    "PersonaFileError",
    "load_personas",
    "sample_personas",
]


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


class PersonaFileError(ValueError):
    """A persona file that cannot be used, with the file and (1-based) line to fix."""

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.line = line
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


MAX_AGE = 130
"""The oldest age a persona may have: above the oldest verified human (122 years)."""
MAX_FILE_BYTES = 10**9
"""A persona file is read whole: 1 GB holds 1,000,000 personas of 1 KB, the most a run takes."""
_WHOLE_NUMBERS = range(-(2**63), 2**63)
"""Whole numbers a run records and exports (64-bit integers, as in the Parquet export)."""

_JSON_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
_CSV_SUFFIXES = frozenset({".csv"})
_FORMAT_HINT = (
    "each line must be one JSON object of scalar fields, "
    'e.g. {"id": "p1", "age": 34, "sex": "Female"}'
)

# (line number, raw fields) for each persona in a file.
_Row = tuple[int, dict[str, Any]]


def _reject_duplicate_keys(
    path: Path, line: int
) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise PersonaFileError(
                    path, f"field {key!r} appears twice in one object; keep only one", line
                )
            seen[key] = value
        return seen

    return hook


def _read_jsonl(path: Path, text: str) -> Iterator[_Row]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw, object_pairs_hook=_reject_duplicate_keys(path, number))
        except json.JSONDecodeError as exc:
            raise PersonaFileError(
                path, f"not a JSON object ({exc.msg} at column {exc.colno}); {_FORMAT_HINT}", number
            ) from None
        except PersonaFileError:  # a field named twice
            raise
        except RecursionError:  # [[[[...]]]]
            raise PersonaFileError(path, "not a JSON object (nested too deeply)", number) from None
        except ValueError:  # a number of more than 4,300 digits
            problem = "not a JSON object (a number too long to read)"
            raise PersonaFileError(path, problem, number) from None
        if not isinstance(record, dict):
            raise PersonaFileError(
                path,
                f"expected a JSON object, got a {type(record).__name__}; {_FORMAT_HINT}",
                number,
            )
        yield number, record


def _csv_cell(field: str, cell: str) -> AttributeValue:
    if field == "age":
        try:
            return int(cell.strip())
        except ValueError:
            return cell
    return cell


def _read_csv(path: Path, text: str) -> Iterator[_Row]:
    reader = csv.DictReader(text.splitlines(keepends=True))
    try:
        yield from _csv_records(path, reader)
    except csv.Error as exc:  # a cell over the CSV reader's limit
        # DictReader's own line_num is set after a row is read; its reader's is the line now
        raise PersonaFileError(path, csv_problem(exc), reader.reader.line_num) from None


def _csv_records(path: Path, reader: csv.DictReader[str]) -> Iterator[_Row]:
    header = reader.fieldnames or []
    if problem := csv_separator_problem(header):
        raise PersonaFileError(path, problem, 1)
    if any(not name.strip() for name in header):
        raise PersonaFileError(path, "the header row has an empty column name; name it", 1)
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise PersonaFileError(
            path, f"the header row repeats column(s) {', '.join(duplicates)}; rename them", 1
        )
    for row in reader:
        number = reader.line_num
        if None in row:
            raise PersonaFileError(
                path,
                f"row has more values than the {len(header)} header columns; "
                "quote values that contain commas",
                number,
            )
        yield (
            number,
            {name: _csv_cell(name, cell) for name, cell in row.items() if cell not in (None, "")},
        )


def _row_to_persona(path: Path, number: int, fields: dict[str, Any]) -> Persona:
    raw_id = fields.pop("id", None)
    if raw_id is None:
        persona_id = f"{path.stem}-{number}"
    elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool) and str(raw_id).strip():
        persona_id = str(raw_id).strip()
    else:
        raise PersonaFileError(
            path, f"'id' must be a non-empty string or integer, got {raw_id!r}", number
        )
    if problem := unstorable({"id": persona_id}):
        raise PersonaFileError(path, f"field {problem}", number)
    attributes: dict[str, AttributeValue] = {}
    for key, value in fields.items():
        if value is None:
            continue
        if not isinstance(value, str | int | float | bool):
            raise PersonaFileError(
                path,
                f"field {key!r} has a {type(value).__name__} value; persona fields must be "
                "scalars (string, number, boolean), so flatten it into separate fields",
                number,
            )
        if problem := _field_problem(key, value):
            raise PersonaFileError(path, problem, number)
        attributes[key] = value
    return Persona(id=persona_id, attributes=attributes, traits=derive_traits(attributes))


def _field_problem(key: str, value: AttributeValue) -> str | None:
    """What a run could not record, or an age no one has; None for a usable field."""
    if not key.strip():
        return "a field has an empty name; name it"
    if problem := unstorable(key):
        return f"a field's name: {problem}"
    if problem := unstorable(value):
        return f"field {key}: {problem}"
    if isinstance(value, int) and not isinstance(value, bool) and value not in _WHOLE_NUMBERS:
        return f"field {key}: the whole number does not fit 64 bits; give it as text"
    if key == "age" and (age := _number(value)) is not None and not 0 <= age <= MAX_AGE:
        return f"field age: {value} is not an age; give a number from 0 to {MAX_AGE}"
    return None


def _number(value: AttributeValue) -> float | None:
    """The number a value is or spells (`"34"`, `"nan"`), else None (`"89 or older"`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except (ValueError, OverflowError):
        return None


def _read_rows(path: Path) -> Iterator[_Row]:
    suffix = path.suffix.lower()
    if suffix not in _JSON_SUFFIXES | _CSV_SUFFIXES:
        raise PersonaFileError(
            path,
            f"unknown persona file type {suffix or '(no extension)'!r}; "
            "use .jsonl (one JSON object per line) or .csv (header row)",
        )
    if path.is_file() and (size := path.stat().st_size) > MAX_FILE_BYTES:
        raise PersonaFileError(
            path,
            f"the file is {size / 10**9:,.1f} GB; a persona file is at most "
            f"{MAX_FILE_BYTES // 10**9} GB (read whole into memory, several times its size): "
            "take a sample of it first",
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        line, problem = utf8_problem(exc)
        raise PersonaFileError(path, problem, line) from None
    return _read_csv(path, text) if suffix in _CSV_SUFFIXES else _read_jsonl(path, text)


def load_personas(path: str | Path) -> list[Persona]:
    """Load a persona bank (JSON Lines or CSV, see the module docstring), deriving traits.

    Raises :class:`PersonaFileError` naming the file and line for anything malformed, and
    :class:`FileNotFoundError` when the file does not exist.
    """
    path = Path(path)
    personas: list[Persona] = []
    first_line: dict[str, int] = {}
    for number, fields in _read_rows(path):
        persona = _row_to_persona(path, number, fields)
        if persona.id in first_line:
            raise PersonaFileError(
                path,
                f"duplicate id {persona.id!r} (first used on line {first_line[persona.id]}); "
                "ids must be unique - rename one, or drop 'id' to get generated ids",
                number,
            )
        first_line[persona.id] = number
        personas.append(persona)
    if not personas:
        raise PersonaFileError(path, "the file holds no personas; add at least one record")
    return personas


def sample_personas() -> list[Persona]:
    """The 120-persona GSS sample shipped with the package (see ``agents/data/README.md``)."""
    resource = resources.files("personasim.agents").joinpath("data", "gss_sample.jsonl")
    with resources.as_file(resource) as path:
        return load_personas(path)
