"""The documentation site's configuration (mkdocs.yml), checked without building it.

CI builds the site with `mkdocs build --strict` (.ci/run), which fails on a broken link or a nav
entry that names no page, but not on a page the nav leaves out: such a page is built and
reachable from nowhere. These checks are cheap and need none of the `docs` extra.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGES = ("simulation", "analysis", "agents", "environments", "scenarios")


class _Loader(yaml.SafeLoader):
    """mkdocs.yml names a Python callable (`!!python/object/apply:` for the toc's slugify)."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _config() -> dict:
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def _nav_pages(node: object) -> list[str]:
    """Every page a nav (a list of pages, `{title: page}` and `{title: [...]}`) names."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_the_nav_lists_every_page_and_only_pages_that_exist() -> None:
    listed = _nav_pages(_config()["nav"])
    pages = sorted(
        path.relative_to(DOCS).as_posix()
        for path in DOCS.rglob("*.md")
        if "figures" not in path.relative_to(DOCS).parts
    )
    assert len(listed) == len(set(listed)), "a page is listed twice in mkdocs.yml's nav"
    assert sorted(set(pages) - set(listed)) == [], "docs pages missing from mkdocs.yml's nav"
    assert sorted(set(listed) - set(pages)) == [], "nav entries with no page in docs/"
    assert "index.md" in listed and "tutorial.md" in listed


def test_each_public_package_has_its_api_page() -> None:
    for package in PACKAGES:
        page = DOCS / "api" / f"{package}.md"
        assert f"::: personasim.{package}\n" in page.read_text(encoding="utf-8"), page


def _gen_figures() -> Any:
    spec = importlib.util.spec_from_file_location("gen_figures", DOCS / "gen_figures.py")
    assert spec is not None and spec.loader is not None
    gen_figures = importlib.util.module_from_spec(spec)
    sys.modules["gen_figures"] = gen_figures  # its dataclass looks its module up there
    try:
        spec.loader.exec_module(gen_figures)
    finally:
        del sys.modules["gen_figures"]
    return gen_figures


def _figure_runs() -> tuple:
    return _gen_figures().RUNS


def test_only_draws_and_clears_the_named_pages_of_the_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--only persona-gym` (what CI draws of the real-model half) runs that page's real-model
    run alone and removes only that page's old real-model figures."""
    gen_figures = _gen_figures()
    assert [run.name for run in gen_figures.selected(True, ["persona-gym"])] == ["persona-gym/real"]
    assert {run.page for run in gen_figures.selected(False, ["persona-gym"])} == {"persona-gym"}
    assert len(gen_figures.selected(False, ["persona-gym"])) == 2  # the page and its sweep
    assert gen_figures.selected(True, None) == gen_figures.REAL_RUNS
    monkeypatch.setattr(gen_figures, "FIGURES", tmp_path)
    for page in ("persona-gym", "classroom"):
        (tmp_path / page / "real").mkdir(parents=True)
        (tmp_path / page / "real" / "old.png").write_bytes(b"png")
        (tmp_path / page / "scripted.png").write_bytes(b"png")
    gen_figures.clear(True, ["persona-gym"])
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.png")) == [
        "classroom/real/old.png",
        "classroom/scripted.png",
        "persona-gym/scripted.png",
    ]
    gen_figures.clear(False, None)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.png")) == [
        "classroom/real/old.png"
    ]


def test_the_pages_embed_exactly_the_figures_the_script_draws() -> None:
    drawn = {
        f"{run.name.removesuffix('-sweep')}/{figure}"
        for run in _figure_runs()
        for figure in run.figures
    }
    embedded = {
        match
        for page in DOCS.rglob("*.md")
        for match in re.findall(r"\]\(figures/([^)\s]+\.png)\)", page.read_text(encoding="utf-8"))
    }
    assert embedded - drawn == set(), "pages embed figures docs/gen_figures.py does not draw"
    assert drawn - embedded == set(), "docs/gen_figures.py draws figures no page shows"


def test_each_figure_s_page_names_the_command_that_drew_it() -> None:
    """A caption that names another command than the script runs would describe another run."""
    for run in _figure_runs():
        args = [arg.replace(f"{ROOT}/", "") for arg in run.args]
        command = " ".join(["personasim", *args])
        name = run.name.removesuffix("-sweep")
        pages = [
            page
            for page in DOCS.glob("*.md")
            if f"](figures/{name}/{run.figures[0]})" in page.read_text(encoding="utf-8")
        ]
        assert len(pages) == 1, (run.name, pages)
        text = " ".join(pages[0].read_text(encoding="utf-8").split())
        assert command in text, f"{pages[0].name} does not name `{command}`"
