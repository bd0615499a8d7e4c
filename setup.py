"""Package discovery for setuptools: every folder with an `__init__.py` under the five source
folders is a sub-package of `personasim` (pyproject's `package-dir` maps each folder to its
name), so a new paper's package needs no edit to a hand-kept list."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup

SOURCE_FOLDERS = ("simulation", "agents", "environments", "scenarios", "analysis")
HERE = Path(__file__).resolve().parent


def discovered_packages(root: Path = HERE) -> list[str]:
    """`personasim.<folder>[.<sub>...]` for each folder holding an `__init__.py`."""
    return sorted(
        ".".join(("personasim", *init.parent.relative_to(root).parts))
        for folder in SOURCE_FOLDERS
        for init in (root / folder).rglob("__init__.py")
    )


if __name__ == "__main__":
    setup(packages=discovered_packages())
