"""Pure functions from event tables to numbers, tables and figures."""

from .reports import save_figure, write_table
from .stats import LevelSummary, eta_squared, rank_levels, summarize_levels

__all__ = [
    "LevelSummary",
    "eta_squared",
    "rank_levels",
    "save_figure",
    "summarize_levels",
    "write_table",
]
