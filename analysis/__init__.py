"""Pure functions from event tables to numbers, tables and figures."""

from .consistency import (
    QUALITATIVE_ETA_SQUARED,
    effect_size_value,
    eta_squared_from_group_stats,
    mae_by_horizon,
    median_or_none,
    perturb_ranking,
    ranking_spearman,
)
from .event_tables import agent_payloads, payloads, rounded, shown
from .reports import model_label, save_figure, write_table
from .stats import LevelSummary, eta_squared, rank_levels, summarize_levels

__all__ = [
    "QUALITATIVE_ETA_SQUARED",
    "LevelSummary",
    "agent_payloads",
    "effect_size_value",
    "eta_squared",
    "eta_squared_from_group_stats",
    "mae_by_horizon",
    "median_or_none",
    "model_label",
    "payloads",
    "perturb_ranking",
    "rank_levels",
    "ranking_spearman",
    "rounded",
    "save_figure",
    "shown",
    "summarize_levels",
    "write_table",
]
