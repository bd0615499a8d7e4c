"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

- Before the build, lay out `build/griffe/personasim/` as links to the repository's package
  folders (`simulation/` is `personasim.simulation`, ...; pyproject's `package-dir`), so griffe,
  which reads the source statically and cannot follow setuptools' editable finder, finds the
  package for the API reference (docs/api/).
- The pages (and the README, the home page) link to repository files outside docs/, such as
  `../examples/coin_guess.py`: links that work on GitHub, where the file is beside the page, but
  point nowhere on the site. Each such link is written as the file's path in code (a link to it
  under `repo_url` when mkdocs.yml sets one); every other link is left to MkDocs' checks.
- A real-model figure (`figures/<page>/real/*.png`, drawn by `docs/gen_figures.py --real-model`,
  which needs the `realmodel` extra) that was not drawn is replaced by a line saying how to draw
  it, so a site built after the scripted half alone still builds with --strict. A missing
  scripted figure stays a broken link: that half needs nothing beyond the `docs` extra.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority

GRIFFE_ROOT = Path("build", "griffe")

_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]+(?:\n[^\]\n]+)*)\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_REAL_FIGURE = re.compile(
    r"!\[(?P<alt>[^\]\n]*)\]\((?P<target>figures/[^)\s]+/real/[^)\s/]+\.png)\)"
)


def _package_dirs(root: Path) -> dict[str, str]:
    with (root / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["tool"]["setuptools"]["package-dir"]


@event_priority(100)  # before mkdocstrings sets up its handler
def on_config(config, **kwargs):
    root = Path(config.config_file_path).resolve().parent
    base = root / GRIFFE_ROOT
    for package, folder in _package_dirs(root).items():
        link = base.joinpath(*package.split("."))
        link.parent.mkdir(parents=True, exist_ok=True)
        target = os.path.relpath(root / folder, link.parent)
        if link.is_symlink() and os.readlink(link) == target:
            continue
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target, target_is_directory=True)
    return config


def _outside_link(match: re.Match[str], page_dir: Path, docs_dir: Path, root: Path, repo_url):
    target = match.group("target")
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
        return match.group(0)
    path = (page_dir / target.split("#", 1)[0]).resolve()
    if path == docs_dir or docs_dir in path.parents or root not in path.parents:
        return match.group(0)
    relative = path.relative_to(root).as_posix()
    text = match.group("text")
    shown = f"`{relative}`" if text.strip("`") == relative else f"{text} (`{relative}`)"
    if repo_url:
        return f"[{shown}]({repo_url.rstrip('/')}/blob/HEAD/{relative})"
    return shown


def _undrawn_real_figures(text: str, page_dir: Path) -> str:
    def replace(match: re.Match[str]) -> str:
        if (page_dir / match.group("target")).is_file():
            return match.group(0)
        return (
            f"*({match.group('alt')}: not drawn for this build; `python docs/gen_figures.py "
            "--real-model` draws it, with the `realmodel` extra installed.)*"
        )

    return _REAL_FIGURE.sub(replace, text)


def on_page_markdown(markdown, page, config, files, **kwargs):
    docs_dir = Path(config.docs_dir).resolve()
    root = Path(config.config_file_path).resolve().parent
    page_dir = Path(page.file.abs_src_path).resolve().parent
    # Rewrite outside code fences only: split the text into fenced and unfenced runs.
    runs, current, fenced = [], [], False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            if not fenced:
                runs.append((False, "".join(current)))
                current = [line]
            else:
                current.append(line)
                runs.append((True, "".join(current)))
                current = []
            fenced = not fenced
            continue
        current.append(line)
    runs.append((fenced, "".join(current)))
    return "".join(
        text
        if is_code
        else _LINK.sub(
            lambda m: _outside_link(m, page_dir, docs_dir, root, config.repo_url),
            _undrawn_real_figures(text, page_dir),
        )
        for is_code, text in runs
    )
