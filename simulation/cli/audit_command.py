"""`personasim audit RUN [--sample N] [--role reader=SPEC]`: re-read a seeded sample of a
run's readings with an independent reader (docs/readers.md); exit 3 when the estimated
wrong-read rate of a reader is over the limit."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import (
    COUNT,
    NOT_VALID,
    SEED,
    add_client_arguments,
    client_options,
    out,
)

__all__ = ["add_audit_arguments", "add_audit_command", "audit_options", "unit_interval"]


def add_audit_command(commands: Any) -> None:
    audit = commands.add_parser(
        "audit",
        help="re-read a sample of a run's readings with an independent reader",
        description="Re-read a seeded sample of RUN's readings of model text (numbers, "
        "transfers, refusals...) with an independent reader: the library reader registered "
        "for each, or the model --role reader=SPEC names. Writes reports/readings_audit.md and "
        "the manifest's validity; exit 3 when a reader's wrong-read rate may be over the limit.",
    )
    audit.add_argument("run_dir", type=Path, metavar="RUN", help="a complete run directory")
    audit.add_argument(
        "--sample", type=COUNT, default=200, help="readings re-read per reader (200)"
    )
    add_audit_arguments(audit)
    audit.add_argument(
        "--role",
        metavar="reader=MODEL",
        help="a model that re-reads the texts (default: the library readers)",
    )
    audit.add_argument("--base-url", help="the endpoint of a reader model without its own URL")
    add_client_arguments(audit)
    audit.set_defaults(handler=_audit, no_progress=True)


def unit_interval(text: str) -> float:
    """An argparse type: a rate in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value < 1:  # NaN fails it too
        raise argparse.ArgumentTypeError(f"must be a number from 0 to below 1, got {text!r}")
    return value


def add_audit_arguments(parser: Any) -> None:
    """The audit's seed and limit (shared by `audit` and `run --audit N`)."""
    parser.add_argument("--audit-seed", type=SEED, default=0, help="the sample's seed")
    parser.add_argument(
        "--max-wrong-read-rate",
        type=unit_interval,
        default=0.05,
        help="a reader whose wrong-read rate's upper 95%% bound is above this makes the run "
        "not valid (%(default)s)",
    )


def audit_options(args: argparse.Namespace, sample: int) -> Any:
    from personasim.simulation.runs.lifecycle.reading_audit import AuditOptions

    return AuditOptions(
        sample=sample, seed=args.audit_seed, max_wrong_rate=args.max_wrong_read_rate
    )


def _audit(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.llm.masking import mask_secrets
    from personasim.simulation.runs.lifecycle.reading_audit import audit_summary
    from personasim.simulation.runs.lifecycle.run_config import RunConfig
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.tools.audit_run import audit_run

    reader = None
    if args.role is not None:
        name, _, spec = args.role.partition("=")
        if name != "reader" or not spec:
            shown = repr(mask_secrets(args.role))
            raise RunError(f"--role {shown}: audit binds one role, as reader=MODEL")
        reader = RunConfig.from_options(model=spec, base_url=args.base_url, **client_options(args))
    result = audit_run(args.run_dir, audit_options(args, args.sample), reader)
    audit = result["audit"]
    out.print(f"reading audit of {args.run_dir} by {audit['auditor']}:", markup=False)
    for line in audit_summary(audit):
        out.print(f"  {line}", markup=False)
    out.print(f"report: {args.run_dir / 'reports' / 'readings_audit.md'}", markup=False)
    if not audit["ok"]:
        out.print("RUN NOT VALID: a reader's wrong-read rate may be over the limit", markup=False)
        return NOT_VALID
    return 0
