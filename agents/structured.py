"""Structured answers: JSON validated against a pydantic schema (seed 001, Appendix E).

The format instructions and the parser are LangChain's `PydanticOutputParser`, which is what
the seed paper's prompts show ("The output should be formatted as a JSON instance that conforms
to the JSON schema below...").
"""

from __future__ import annotations

from typing import TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.output_parsers import PydanticOutputParser
from pydantic import BaseModel

from .decision import DecisionParseError

__all__ = ["format_instructions", "parse_structured"]

M = TypeVar("M", bound=BaseModel)


def format_instructions(schema: type[BaseModel]) -> str:
    """The instruction block that asks for a JSON instance of `schema`."""
    return PydanticOutputParser(pydantic_object=schema).get_format_instructions()


def parse_structured(reply: str, schema: type[M]) -> M:
    """The reply's JSON object as a validated `schema`, or `DecisionParseError` saying why.

    LangChain's parser reads a JSON object in a code fence, or one followed by text; a sentence
    before an unfenced object ("Sure! Here it is: {...}") is skipped here too.
    """
    parser = PydanticOutputParser(pydantic_object=schema)
    try:
        return parser.parse(reply)
    except OutputParserException as exc:
        error = str(exc)
    start = reply.find("{")
    if start > 0 and "```" not in reply:
        try:
            return parser.parse(reply[start:])
        except OutputParserException:
            pass
    first_line = error.splitlines()[0] if error else "invalid JSON"
    raise DecisionParseError(f"the answer is not a valid {schema.__name__}: {first_line}")
