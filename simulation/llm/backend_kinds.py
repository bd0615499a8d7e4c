"""The built-in backend kinds: `scripted`, `openai` and `langchain` (see `backend_kind`).
`model_spec` imports this module, so they are registered whenever a spec is read.

Each imports its backend only when it builds one, so reading a spec imports nothing heavy.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from personasim.simulation.llm.backend_kind import (
    BackendKind,
    ModelSpec,
    ModelSpecError,
    backend_kind,
    check_no_secret,
    shown_spec,
)
from personasim.simulation.llm.masking import mask_secrets

if TYPE_CHECKING:
    from personasim.simulation.llm.chat import Backend

__all__ = ["SCRIPTED_OPTIONS", "LangChainKind", "OpenAIKind", "ScriptedKind"]

SCRIPTED_OPTIONS = {"drift": "a share of answers from 0 to 1", "seed": "a whole number"}
"""Options of a `scripted:` spec and what each takes."""


@backend_kind("scripted")
class ScriptedKind(BackendKind):
    """`scripted`, `scripted:drift=D,seed=S` (either option or both): the behaviour model."""

    usage = "scripted[:drift=D,seed=S]"
    accepts = frozenset({"response_format"})  # it writes JSON answers; it has no endpoint

    def parse(self, text: str, rest: str | None) -> ModelSpec:
        options: dict[str, Any] = {}
        for item in rest.split(",") if rest is not None else []:
            name, sep, value = item.partition("=")
            if name not in SCRIPTED_OPTIONS or not sep:
                known = ", ".join(f"{k}=" for k in SCRIPTED_OPTIONS)
                raise ModelSpecError(
                    f"model {shown_spec(text)}: unknown option {shown_spec(item)}; scripted "
                    f"takes {known}"
                )
            if name in options:
                raise ModelSpecError(f"model {shown_spec(text)}: {name} is given twice")
            options[name] = _scripted_value(text, name, value)
        return ModelSpec(text, "scripted", options=tuple(options.items()))

    def build(self, spec: ModelSpec, *, base_url: str | None, seed: int) -> Backend:
        from personasim.simulation.llm.scripted import ScriptedBackend

        return ScriptedBackend(**{"seed": seed, **spec.option_dict})


def _scripted_value(text: str, name: str, value: str) -> float | int:
    try:
        number = float(value) if name == "drift" else int(value)
    except ValueError:
        number = None
    if number is None or (name == "drift" and not 0.0 <= number <= 1.0) or number < 0:
        raise ModelSpecError(
            f"model {shown_spec(text)}: {name}={value} must be {SCRIPTED_OPTIONS[name]}"
        )
    return number


@backend_kind("openai")
class OpenAIKind(BackendKind):
    """`openai:NAME` (at `--base-url`, else OpenAI), `openai:NAME@BASE_URL` (its own URL) or
    `openai:NAME@pool:POOL` (the replicas of a pool of the run's `--endpoints` file)."""

    usage = "openai:MODEL_NAME[@BASE_URL or @pool:POOL] (key from OPENAI_API_KEY)"
    takes_options = False

    def uses(self, option: str, spec: ModelSpec) -> bool:
        """`--base-url` serves only specs without their own `@URL`."""
        return option != "base_url" or spec.url is None

    def build(self, spec: ModelSpec, *, base_url: str | None, seed: int) -> Backend:
        from personasim.simulation.llm.chat import PermanentLLMError
        from personasim.simulation.llm.openai_backend import OpenAIBackend

        if not (spec.url or base_url) and (env_url := os.environ.get("OPENAI_BASE_URL")):
            check_no_secret(env_url, f"OPENAI_BASE_URL {mask_secrets(env_url)}")
        try:
            return OpenAIBackend(spec.name, base_url=spec.url or base_url)
        except PermanentLLMError as exc:  # no key, or a URL that cannot work: bad input
            raise ModelSpecError(str(exc)) from None

    def build_endpoint(self, spec: ModelSpec, url: str, key_env: str, seed: int) -> Backend:
        """One replica of `openai:NAME@pool:POOL` (or of repeated `--base-url`s)."""
        from personasim.simulation.llm.chat import PermanentLLMError
        from personasim.simulation.llm.openai_backend import OpenAIBackend

        try:
            return OpenAIBackend(spec.name, base_url=url, api_key_env=key_env)
        except PermanentLLMError as exc:
            raise ModelSpecError(str(exc)) from None


@backend_kind("langchain")
class LangChainKind(BackendKind):
    """`langchain:MODULE:CLASS[?NAME=VALUE&...]`: a LangChain chat model class, built with the
    options as keyword arguments (values read as JSON when they parse, else as text)."""

    usage = "langchain:MODULE:CLASS[?NAME=VALUE&...]"
    accepts: frozenset[str] = frozenset()  # the class's own options set its URL and format

    def parse(self, text: str, rest: str | None) -> ModelSpec:
        spec = super().parse(text, rest)
        module, colon, cls = spec.name.partition(":")
        if not (module and colon and cls.isidentifier()) or spec.url is not None:
            raise ModelSpecError(
                f"model {shown_spec(text)}: use {self.usage}, e.g. "
                "langchain:langchain_openai:ChatOpenAI?model=gpt-4o-mini&temperature=0"
            )
        return spec

    def build(self, spec: ModelSpec, *, base_url: str | None, seed: int) -> Backend:
        from langchain_core.language_models.chat_models import BaseChatModel

        from personasim.simulation.llm.langchain_backend import LangChainBackend

        module_name, _, class_name = spec.name.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as exc:
            reason = f"cannot import {spec.name} ({mask_secrets(str(exc))})"
            raise ModelSpecError(f"model {shown_spec(spec.text)}: {reason}") from None
        if not (isinstance(cls, type) and issubclass(cls, BaseChatModel)):
            raise ModelSpecError(
                f"model {shown_spec(spec.text)}: {spec.name} is not a LangChain chat model"
            )
        options = spec.option_dict
        if "max_retries" in getattr(cls, "model_fields", {}):
            options.setdefault("max_retries", 0)  # LLMClient stays the one retry layer
        try:
            model = cls(**options)
        except Exception as exc:  # pydantic's ValidationError, or the class's own checks
            failed = f"{class_name}(...) failed: {mask_secrets(str(exc))}"
            raise ModelSpecError(f"model {shown_spec(spec.text)}: {failed}") from None
        return LangChainBackend(model, name=_model_name(spec, model), spec=spec.text)


def _model_name(spec: ModelSpec, model: Any) -> str:
    name = spec.option_dict.get("model") or getattr(model, "model_name", None)
    return str(name or spec.name.partition(":")[2])
