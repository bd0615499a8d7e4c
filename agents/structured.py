"""Format instructions for JSON answers validated against a pydantic schema (seed 001, App. E).

The instructions are LangChain's `PydanticOutputParser`'s, which is what the seed paper's prompts
show ("The output should be formatted as a JSON instance that conforms to the JSON schema
below..."); the matching parser is `parse_structured` in `decision`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.output_parsers import PydanticOutputParser
from pydantic import BaseModel

from .decision import parse_structured

__all__ = ["format_instructions", "json_parser"]


def format_instructions(schema: type[BaseModel]) -> str:
    """The instruction block that asks for a JSON instance of `schema`."""
    return PydanticOutputParser(pydantic_object=schema).get_format_instructions()


def json_parser(schema: type[BaseModel], read: Callable[[Any], Any]) -> Callable[[str], Any]:
    """The text-format parser of a task whose prompt itself asks for JSON: the reply read into
    `schema`, then by `read`, as a structured response format reads it too."""
    return lambda reply: read(parse_structured(reply, schema))

