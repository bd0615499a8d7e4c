"""Pure functions from event tables to numbers, tables and figures."""

from .stats import LevelSummary, eta_squared, rank_levels, summarize_levels

__all__ = ["LevelSummary", "eta_squared", "rank_levels", "summarize_levels"]
