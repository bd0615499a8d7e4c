"""What a run's tokens cost: the price table (`data/prices.toml` or `--prices FILE`), and
whether a model is served on this machine, where tokens cost nothing (`run --dry-run`)."""

from __future__ import annotations

import ipaddress
import math
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from urllib.parse import urlsplit

from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.model_spec import parse_model_spec
from personasim.simulation.llm.roles import is_scripted
from personasim.simulation.runs.lifecycle.run_dir import RunError

__all__ = ["Price", "is_local_url", "load_prices", "served_locally"]


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float


def is_local_url(url: str) -> bool:
    """A URL on this machine: a loopback host (127.0.0.0/8, ::1, localhost) or 0.0.0.0, the
    address a llama.cpp server started with `--host 0.0.0.0` prints. Tokens sent there cost
    nothing; a server elsewhere (a GPU box on the network) is priced like any model."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def served_locally(spec: str, base_url: str | Sequence[str] | None = None) -> bool:
    """Whether a model's requests go to this machine: its own `@URL`, else `--base-url` (every
    URL, where several make a pool), else `OPENAI_BASE_URL` for an `openai:` model, as the run
    resolves them. A `langchain:` model sets its endpoint in its own options: not known here."""
    if is_scripted(spec):
        return False
    try:
        parsed = parse_model_spec(spec)
    except ModelSpecError:
        return False
    if parsed.kind == "langchain":
        return False
    if parsed.url is not None:
        urls = [parsed.url]
    elif base_url:
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
    else:
        urls = [os.environ.get("OPENAI_BASE_URL") or ""] if parsed.kind == "openai" else []
    return bool(urls) and all(is_local_url(url) for url in urls)


def load_prices(path: str | Path | None = None) -> tuple[dict[str, Price], str]:
    """The price table (`data/prices.toml`, or `path`) and where it came from."""
    source = files(__package__) / "data" / "prices.toml" if path is None else Path(path)
    where = f"the shipped table ({source})" if path is None else str(path)
    try:
        table = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RunError(f"--prices {where}: cannot read it ({exc})") from None
    models = table.get("models")
    if not isinstance(models, dict):
        raise RunError(f'--prices {where}: no [models."NAME"] tables (see the shipped one)')
    prices = {}
    for name, entry in models.items():
        values = entry if isinstance(entry, dict) else {}
        rates = [values.get("input"), values.get("output")]
        if not all(isinstance(v, int | float) and v >= 0 and math.isfinite(v) for v in rates):
            raise RunError(
                f"--prices {where}: model {name!r} needs input and output prices (USD per "
                "million tokens, numbers of at least 0)"
            )
        prices[name] = Price(float(rates[0]), float(rates[1]))
    return prices, where
