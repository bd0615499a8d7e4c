"""A griffe extension for the API reference: a package's lazily imported public names.

personasim's package `__init__`s list their public names in an `_EXPORTS` dict (name → the
module that defines it) and import each on first use through a module-level `__getattr__`
(`simulation/core/lazy_exports.py`). Griffe reads source statically, so it sees the names in
`__all__` but no object behind them. This extension reads the `_EXPORTS` literal of every
module and adds each name as an alias of its definition, so `::: personasim.simulation` in
docs/api/ documents `personasim.simulation.Scenario` and the rest under the names users import.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe


class LazyExports(griffe.Extension):
    """Turn `_EXPORTS = {"Name": "package.module", ...}` into aliases of `package.module.Name`."""

    def on_module_members(self, *, node: Any, mod: griffe.Module, **kwargs: Any) -> None:
        if not isinstance(node, ast.Module):
            return
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign):
                target, value = statement.target, statement.value
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            else:
                continue
            if not (isinstance(target, ast.Name) and target.id == "_EXPORTS" and value):
                continue
            exports = ast.literal_eval(value)
            for name, module in exports.items():
                if name not in mod.members:
                    mod.set_member(
                        name, griffe.Alias(name, f"{module}.{name}", parent=mod, analysis="static")
                    )
