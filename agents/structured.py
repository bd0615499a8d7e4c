"""Format instructions for JSON answers validated against a pydantic schema (seed 001, App. E).

The instructions are LangChain's `PydanticOutputParser`'s, which is what the seed paper's prompts
show ("The output should be formatted as a JSON instance that conforms to the JSON schema
below..."); the matching parser is `parse_structured` in `decision`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from personasim.agents.decision import DecisionTask, parse_structured
from personasim.simulation import ChatRequest

__all__ = ["format_instructions", "json_parser", "json_task"]


def format_instructions(schema: type[BaseModel]) -> str:
    """The instruction block that asks for a JSON instance of `schema`."""
    from langchain_core.output_parsers import PydanticOutputParser  # 0.3 s: only when used

    return PydanticOutputParser(pydantic_object=schema).get_format_instructions()


def json_parser(schema: type[BaseModel], read: Callable[[Any], Any]) -> Callable[[str], Any]:
    """The text-format parser of a task whose prompt itself asks for JSON: the reply read into
    `schema`, then by `read`, as a structured response format reads it too."""
    return lambda reply: read(parse_structured(reply, schema))


def json_task(
    name: str,
    request: ChatRequest,
    schema: type[BaseModel],
    read: Callable[[Any], Any],
    reminder: Callable[[str], str],
    **options: Any,
) -> DecisionTask:
    """A task whose prompt asks for a JSON `schema` in text (read by `json_parser`); under a
    structured response format the request carries the same schema. `options`: the rest of
    `DecisionTask`'s fields (max_repairs, details, role...)."""
    return DecisionTask(
        name=name,
        request=request,
        parse=json_parser(schema, read),
        reminder=reminder,
        schema=schema,
        read=read,
        **options,
    )
