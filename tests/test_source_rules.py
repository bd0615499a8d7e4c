"""Rules about dependencies, checked on the source: no private module or attribute of a
third-party package, and no dependency pinned below its next major version.

Private parts of a dependency change without notice in any release, and a pin below the next
major version that protects them keeps users on old releases; a fast path that a public API
cannot give goes through the public API of the layer below (aiohttp rather than the openai
SDK's internals). Checked with `ast`, so an import inside a function or under `TYPE_CHECKING`
counts as much as one at the top of a module. Each checker is first shown a snippet it must
flag, so a checker that finds nothing cannot pass by accident.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import Specifier
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulation", "agents", "environments", "scenarios", "analysis")
OWN = "personasim"


def _private(name: str) -> bool:
    """`_name` is private; `__name__`-style names (`__future__`, `__version__`) are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _third_party(module: str) -> bool:
    top = module.split(".")[0]
    return top != OWN and top not in sys.stdlib_module_names


def private_uses(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for each import of a private module or name of a third-party package,
    and each private attribute read through a third-party module imported by name."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # local name -> third-party module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _third_party(alias.name):
                    continue
                if any(_private(part) for part in alias.name.split(".")):
                    yield node.lineno, f"import {alias.name}"
                local = alias.asname or alias.name.split(".")[0]
                modules[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not _third_party(node.module):
                continue
            if any(_private(part) for part in node.module.split(".")):
                yield node.lineno, f"from {node.module} import ..."
            for alias in node.names:
                if _private(alias.name):
                    yield node.lineno, f"from {node.module} import {alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root: ast.expr = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in modules:
                yield node.lineno, f"{ast.unparse(node)} (of {modules[root.id]})"


def minor_pins(requirement: str) -> list[str]:
    """The specifiers of a requirement that cap it below a major version: `<1.3`, `<=2`,
    `==1.2.*`, `~=1.2.3`, an exact `==` (`<2`, `<4.0`, `~=1.2`, `==2.*` are fine)."""
    found: list[str] = []
    for spec in Requirement(requirement).specifier:
        if _caps_below_major(spec):
            found.append(str(spec))
    return found


def _caps_below_major(spec: Specifier) -> bool:
    operator, version = spec.operator, spec.version
    if operator in (">", ">=", "!="):
        return False
    if operator == "<":
        return any(Version(version).release[1:])
    if operator == "~=":
        return len(Version(version).release) > 2
    if operator == "==" and version.endswith(".*"):
        return len(version[:-2].split(".")) > 1
    return True  # <=, == and === name a last allowed release


def python_files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def dependencies() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    return [*project["dependencies"], *(req for group in extras.values() for req in group)]


SNIPPET = """
from __future__ import annotations
from typing import TYPE_CHECKING
import openai
import langchain_core.runnables as lcr
from openai import __version__
from . import _ours
from personasim.simulation import _kernel_helper
import _thread
if TYPE_CHECKING:
    from langgraph.pregel._write import ChannelWriteTupleEntry
def fast():
    import httpx2._utils
    from langgraph.pregel import _algo
    from openai import _exceptions as errors
    return openai._base_client.make_request_options, lcr._private, openai.lib._parsing
"""


def test_the_private_use_checker_flags_each_kind_of_use() -> None:
    found = sorted(private_uses(SNIPPET))
    assert [line for line, _ in found] == [11, 13, 14, 15, 16, 16, 16]
    what = " ".join(text for _, text in found)
    for expected in (
        "langgraph.pregel._write",
        "import httpx2._utils",
        "from langgraph.pregel import _algo",
        "from openai import _exceptions",
        "openai._base_client (of openai)",
        "lcr._private (of langchain_core.runnables)",
        "openai.lib._parsing",
    ):
        assert expected in what, expected


def test_no_private_module_or_attribute_of_a_dependency() -> None:
    files = python_files()
    assert len(files) > 50  # the walk found the packages
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in files
        for line, what in private_uses(path.read_text(encoding="utf-8"))
    ]
    assert not found, "private parts of dependencies used:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("requirement", "pins"),
    [
        ("langgraph>=1.0,<1.3", ["<1.3"]),
        ("x>=1,<=2", ["<=2"]),
        ("x==1.2.*", ["==1.2.*"]),
        ("x~=1.2.3", ["~=1.2.3"]),
        ("x==1.2", ["==1.2"]),
        ("mesa>=3.1,<4", []),
        ("x<2.0", []),
        ("x~=1.2", []),
        ("x==2.*", []),
        ("openai[aiohttp]>=2.0,!=2.1.0", []),
        ("llama-cpp-python[server]>=0.3.7", []),
    ],
)
def test_the_pin_checker(requirement: str, pins: list[str]) -> None:
    assert minor_pins(requirement) == pins


def test_no_dependency_is_pinned_below_a_major_version() -> None:
    requirements = dependencies()
    assert any(req.startswith("langgraph") for req in requirements)
    found = {req: pins for req in requirements if (pins := minor_pins(req))}
    assert not found, f"pinned below a major version: {found}"
