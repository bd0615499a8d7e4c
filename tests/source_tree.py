"""Reading personasim's own source tree with `ast`: its modules and the imports between them.

Shared by the checks over the source (tests/test_layers.py, tests/test_source_tree.py), so
every rule reads imports the same way. Module names drop the `personasim.` prefix:
`simulation/core/agent.py` is `simulation.core.agent`, and a package's `__init__.py` is the
package itself (`simulation.core`), since that is what importing the package runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulation", "agents", "environments", "scenarios", "analysis")
OWN = "personasim"


@dataclass(frozen=True)
class Import:
    """One import statement's personasim target, as written (absolute, no `personasim.`).

    `names` are the names a `from … import` takes from `target` (empty for `import x.y`);
    `type_checking` is true under `if TYPE_CHECKING:`, where the import never runs.
    """

    line: int
    target: tuple[str, ...]
    names: tuple[str, ...]
    type_checking: bool


def source_files(root: Path = ROOT) -> list[Path]:
    """Every .py file under the five packages, sorted."""
    return [path for package in PACKAGES for path in sorted((root / package).rglob("*.py"))]


def module_name(path: Path, root: Path = ROOT) -> str:
    """`simulation/core/agent.py` → `simulation.core.agent`; `agents/__init__.py` → `agents`."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:`."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _walk(node: ast.AST, type_checking: bool) -> Iterator[tuple[ast.AST, bool]]:
    """Every node with whether it sits under `if TYPE_CHECKING:` (its `else` runs, so not)."""
    yield node, type_checking
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        for child in node.body:
            yield from _walk(child, True)
        for child in node.orelse:
            yield from _walk(child, type_checking)
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk(child, type_checking)


def _imported_by_name(node: ast.AST) -> str | None:
    """The module a call imports by a string written in it, `importlib.import_module("x.y")`
    or `__import__("x.y")`: an import all the same, hidden from the statements' scan. A name
    held in a variable (the kernel's one link to the built-in scenarios) is not read."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0]
    if called not in ("import_module", "__import__") or not isinstance(first, ast.Constant):
        return None
    return first.value if isinstance(first.value, str) else None


def imports(source: str, module: str, is_package: bool = False) -> list[Import]:
    """The personasim imports of one module's source, anywhere in it (inside functions too),
    `importlib.import_module("personasim.…")` with the name written out included.

    `module` is the importing module's name (for resolving relative imports); `is_package` is
    true for an `__init__.py`, whose `from . import x` is relative to the package itself.
    """
    found: list[Import] = []
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node, type_checking in _walk(ast.parse(source), False):
        if (named := _imported_by_name(node)) is not None:
            parts = named.split(".")
            if parts[0] == OWN and len(parts) > 1:
                found.append(Import(node.lineno, tuple(parts[1:]), (), type_checking))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == OWN and len(parts) > 1:
                    found.append(Import(node.lineno, tuple(parts[1:]), (), type_checking))
        elif isinstance(node, ast.ImportFrom):
            written = node.module.split(".") if node.module else []
            if node.level == 0:
                if written[:1] != [OWN]:
                    continue
                target = written[1:]
            else:
                depth = len(here) - (node.level - 1)
                if depth < 0:
                    raise ValueError(f"{module}: relative import above {OWN} on line {node.lineno}")
                target = [*here[:depth], *written]
            names = tuple(alias.name for alias in node.names)
            found.append(Import(node.lineno, tuple(target), names, type_checking))
    return found


def imported_packages(source: str, package_path: tuple[str, ...]) -> set[str]:
    """The top-level personasim packages a module imports, TYPE_CHECKING imports included;
    `package_path` is where the module lives, e.g. ("agents",) for agents/persona.py."""
    found: set[str] = set()
    module = ".".join((*package_path, "_module"))
    for imp in imports(source, module):
        found.update(imp.target[:1] or imp.names)
    return found


def resolve(imp: Import, modules: set[str]) -> set[str]:
    """The modules of `modules` an import loads: `from a.b import c` is `a.b.c` when that is a
    module, else `a.b`; a name that is not a module resolves to the longest module prefix."""
    resolved: set[str] = set()
    candidates = [(*imp.target, name) for name in imp.names] if imp.names else [imp.target]
    for candidate in candidates:
        for end in range(len(candidate), 0, -1):
            name = ".".join(candidate[:end])
            if name in modules:
                resolved.add(name)
                break
    return resolved


def import_graph(
    root: Path = ROOT, *, type_checking: bool = False
) -> dict[str, dict[str, list[int]]]:
    """module → {imported module → lines}; imports under TYPE_CHECKING only if asked for."""
    files = {module_name(path, root): path for path in source_files(root)}
    modules = set(files)
    graph: dict[str, dict[str, list[int]]] = {}
    for module, path in files.items():
        edges: dict[str, list[int]] = {}
        source = path.read_text(encoding="utf-8")
        for imp in imports(source, module, path.name == "__init__.py"):
            if imp.type_checking and not type_checking:
                continue
            for target in resolve(imp, modules) - {module}:
                edges.setdefault(target, []).append(imp.line)
        graph[module] = edges
    return graph
