"""Public names of a package, imported on first use (PEP 562).

A package's `__init__` that imports all its modules makes every import of one of them pay for
all: importing the Trust Game's scenario would import the career chat's, and with it scipy,
matplotlib and LangChain's parsers. A package lists its names and where each is defined
instead, and a name's module is imported when the name is first read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package`, whose public names are the
    keys of `exports` (name → module that defines it)."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
