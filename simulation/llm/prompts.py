"""Prompt packs: a scenario's texts as data, each with where it comes from.

Prompt wording is what this field studies (paraphrase sensitivity, a paper's exact released
texts), so a scenario's templates, reminders, rubrics and demonstrations live in one YAML file
per scenario rather than in code. Each entry says its source (a paper's section or figure, a
released repository file) and whether it is `verbatim`, `adapted` or `ours`. `personasim
prompts SCENARIO` writes the shipped pack; `--prompts FILE` runs with an edited one, checked
first against the shipped pack: every entry present, the same `${placeholders}`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from personasim.simulation.log.input_checks import unstorable, utf8_problem

__all__ = ["PromptEntry", "PromptPack", "PromptPackError"]

Kind = Literal["verbatim", "adapted", "ours"]


class PromptPackError(ValueError):
    """A pack that cannot be used; the message names the file, the entry and what is wrong."""


class PromptEntry(BaseModel):
    """One text of a pack and its provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    source: str
    kind: Kind
    note: str | None = None
    order: str | None = None
    """How the items a verbatim text lists are ordered, where that differs from the source
    (e.g. shuffled per run, seeded); recorded in the manifest."""

    def bare_dollar(self) -> str | None:
        """The text around the first '$' that `string.Template` cannot read, if any."""
        for match in Template.pattern.finditer(self.text):
            if match.group("invalid") is not None:
                start = match.start("invalid")
                return self.text[max(0, start - 10) : start + 10]
        return None

    def placeholders(self) -> set[str]:
        return {
            groups["named"] or groups["braced"]
            for groups in (m.groupdict() for m in Template.pattern.finditer(self.text))
            if groups["named"] or groups["braced"]
        }


class _PackFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str
    licence: str | None = None
    prompts: dict[str, PromptEntry]


_PACK_SHAPE = "a mapping of scenario: NAME and prompts: {entry: {text, source, kind}}"


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """`, line 3: found a tab...`: PyYAML's message, on one line."""
    mark = getattr(exc, "problem_mark", None)
    where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{where} ({problem})"


@dataclass(frozen=True)
class PromptPack:
    """A scenario's texts by name; `render` fills a template's placeholders."""

    scenario: str
    entries: Mapping[str, PromptEntry]
    path: str
    sha256: str
    from_package: bool = False
    """True for the pack a scenario ships (its manifest names it by scenario and hash, never by
    the install path it was read from)."""

    @classmethod
    def load(cls, path: str | Path, text: str | None = None) -> PromptPack:
        """Read and validate a pack file (or its `text`, read from `path` when None)."""
        where = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8") if text is None else text
        except OSError as exc:
            message = f"{where}: cannot read the prompt pack ({exc.strerror})"
            raise PromptPackError(message) from None
        except UnicodeDecodeError as exc:
            line, problem = utf8_problem(exc)
            raise PromptPackError(f"{where}, line {line}: {problem}") from None
        try:
            data = yaml.safe_load(text)
            parsed = _PackFile.model_validate(data)
        except yaml.YAMLError as exc:
            raise PromptPackError(f"{where}: not valid YAML{_yaml_problem(exc)}") from None
        except RecursionError:
            raise PromptPackError(f"{where}: not a prompt pack (nested too deeply)") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            if not first["loc"]:  # a list, a number, an empty file
                raise PromptPackError(f"{where}: not a prompt pack ({_PACK_SHAPE})") from None
            loc = ".".join(str(part) for part in first["loc"])
            raise PromptPackError(f"{where}: {loc}: {first['msg']}") from None
        if problem := unstorable(data):  # a "\ud800" escape: not text a model or log takes
            raise PromptPackError(f"{where}: {problem}")
        for name, entry in parsed.prompts.items():
            if bare := entry.bare_dollar():
                raise PromptPackError(
                    f"{where}: entry {name!r} has a '$' that is not a placeholder near "
                    f"{bare!r}; write '$$' for a dollar sign, '${{name}}' for a placeholder"
                )
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return cls(parsed.scenario, parsed.prompts, where, digest)

    def text(self, name: str) -> str:
        return self.entries[name].text

    def render(self, name: str, **values: Any) -> str:
        """The entry's text with its `${placeholders}` filled (all of them must be given)."""
        return Template(self.entries[name].text).substitute(values)

    def check_against(self, shipped: PromptPack) -> None:
        """Refuse a pack that lacks an entry of the shipped one or changes its placeholders."""
        if self.scenario != shipped.scenario:
            raise PromptPackError(
                f"{self.path}: a pack for {self.scenario!r}, not {shipped.scenario!r}"
            )
        for name, entry in shipped.entries.items():
            mine = self.entries.get(name)
            if mine is None:
                raise PromptPackError(f"{self.path}: entry {name!r} is missing")
            missing = sorted(entry.placeholders() - mine.placeholders())
            extra = sorted(mine.placeholders() - entry.placeholders())
            if missing or extra:
                said = [f"lacks ${{{p}}}" for p in missing]
                said += [f"has unknown ${{{p}}}" for p in extra]
                raise PromptPackError(
                    f"{self.path}: entry {name!r} {' and '.join(said)}; its placeholders must "
                    f"be {', '.join(sorted(entry.placeholders())) or 'none'}"
                )
        unknown = sorted(set(self.entries) - set(shipped.entries))
        if unknown:
            raise PromptPackError(
                f"{self.path}: unknown entries {', '.join(unknown)}; this scenario's entries "
                f"are {', '.join(shipped.entries)}"
            )

    def describe(self) -> dict[str, Any]:
        """For the manifest: the scenario whose texts these are, their hash, whether they are the
        shipped pack or an edited file (named as given on the command line), and the entries
        whose listed items are ordered otherwise than in their source (`order`)."""
        orders = {name: entry.order for name, entry in self.entries.items() if entry.order}
        described: dict[str, Any] = {
            "scenario": self.scenario,
            "sha256": self.sha256,
            "shipped": self.from_package,
        }
        if not self.from_package:
            described["file"] = self.path
        if orders:
            described["order"] = orders
        return described
