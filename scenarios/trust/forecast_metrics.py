"""Metrics, tables and figures of trust-forecast (seed 001, §5.2–5.3, Figure 1): MAE between
forecast and actual send per horizon, and Tables 6–8's rounds, from a run's event table alone."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from personasim.analysis.event_tables import agent_payloads, min_group_n, payloads
from personasim.analysis.reports import model_label, save_figure, small_note
from personasim.analysis.stats import mean_of, sample_sd
from personasim.analysis.undefined import Undefined, shown_stat, stat_fields
from personasim.scenarios.trust.metric_blocks import ForecastStatistics
from personasim.scenarios.trust.metrics import human_note
from personasim.simulation import run_header
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.tables import write_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FORECAST_SUMMARY_COUNTS",
    "explanation_rows",
    "forecast_metrics",
    "forecast_report",
    "forecast_summary_rows",
    "game_name",
    "mae_by_horizon",
    "mae_figure",
    "mae_rows",
    "write_explanation_reports",
    "write_forecast_reports",
    "write_forecast_sweep_reports",
]


def game_name(archetype: str) -> str:
    """The Trust Game played against `archetype` (one per archetype); metrics find its
    trustors by this environment name."""
    return f"trust_game_{archetype}"


def forecast_metrics(events: pd.DataFrame) -> ForecastStatistics:
    header = run_header(events)
    params = header["params"]
    forecasts = _forecasts(events)
    sends = _sends(events)
    failed = payloads(events, "decision.failed")
    smallest = min_group_n(events)
    return {
        "model": header["model"],
        "model_label": model_label(header["model"]),
        "rounds": params["rounds"],
        "design": params.get("design", "per-round"),
        "reasks": len(payloads(events, "decision.reask")),
        "min_group_n": smallest,
        "archetypes": {
            archetype: _archetype_metrics(
                archetype, params["rounds"], forecasts, sends, failed, events, smallest
            )
            for archetype in params["archetypes"]
        },
        "explanations": explanation_rows(events),
    }


def _forecasts(events: pd.DataFrame) -> dict[tuple[str, int, int], tuple[str, int]]:
    """(trustor, forecast round, horizon) → (archetype, forecast) for every parsed forecast.
    The per-round design forecasts each round just before it (the horizon is the round, as
    Figure 1's x axis); the horizons design records its `steps_ahead` from the state."""
    return {
        (
            row["agent_id"],
            row["payload"]["horizon"],
            row["payload"].get("steps_ahead", row["payload"]["horizon"]),
        ): (row["payload"]["archetype"], row["payload"]["value"])
        for row in agent_payloads(events, "decision.made")
        if row["payload"].get("kind") == "forecast"
    }


def _sends(events: pd.DataFrame) -> dict[tuple[str, int], int]:
    """(trustor, round) → the amount the game recorded as sent."""
    transfers = events.loc[events["kind"] == "trust.transfer", ["agent_id", "round", "payload"]]
    return {(row.agent_id, int(row.round)): row.payload["sent"] for row in transfers.itertuples()}


def _archetype_metrics(
    archetype: str,
    rounds: int,
    forecasts: dict[tuple[str, int, int], tuple[str, int]],
    sends: dict[tuple[str, int], int],
    failed: list[dict[str, Any]],
    events: pd.DataFrame,
    smallest: int,
) -> dict[str, Any]:
    """§5.2 for one archetype: MAE per horizon over the forecast–action pairs, and overall; a
    round with fewer than `smallest` pairs is flagged `small`."""
    pairs = [
        (horizon, forecast, sends[(agent, target)])
        for (agent, target, horizon), (faced, forecast) in forecasts.items()
        if faced == archetype and (agent, target) in sends
    ]
    by_horizon = mae_by_horizon(pairs)
    none = Undefined("no forecast–action pairs")
    overall = [abs(forecast - actual) for _, forecast, actual in pairs]
    return {
        "n_trustors": _trustors_in(events, game_name(archetype)),
        "n_pairs": len(pairs),
        **stat_fields("mae", mean_of(overall, none.reason)),
        "forecast_failures": _failures(failed, "forecast", archetype),
        "action_failures": _failures(failed, "action", archetype),
        "by_horizon": [
            {
                "horizon": h,
                **_horizon_fields(by_horizon.get(h, _empty_round(h, archetype, failed)), smallest),
                **stat_fields(
                    "sd_abs_error", sample_sd([abs(f - a) for k, f, a in pairs if k == h])
                ),
            }
            for h in range(1, rounds + 1)
        ],
    }


def _empty_round(h: int, archetype: str, failed: list[dict[str, Any]]) -> dict[str, Any]:
    """A horizon without forecast–action pairs, and why: the failures of that round."""
    forecasts = sum(
        1
        for p in failed
        if p.get("kind") == "forecast"
        and p.get("archetype") == archetype
        and p.get("steps_ahead", p.get("horizon")) == h
    )
    actions = sum(
        1
        for p in failed
        if p.get("kind") == "action" and p.get("archetype") == archetype and p.get("round") == h
    )
    none = Undefined(f"no forecast–action pairs ({forecasts} forecasts, {actions} actions failed)")
    return {"n": 0, "mae": none, "mean_forecast": none, "mean_actual": none}


def _trustors_in(events: pd.DataFrame, env: str) -> int:
    personas = {
        r["agent_id"] for r in agent_payloads(events, "agent.created") if "persona" in r["payload"]
    }
    entered = {
        r["agent_id"] for r in agent_payloads(events, "env.entered") if r["payload"]["env"] == env
    }
    return len(personas & entered)


def _failures(failed: list[dict[str, Any]], kind: str, archetype: str) -> int:
    return sum(1 for p in failed if p.get("kind") == kind and p.get("archetype") == archetype)


def _horizon_fields(summary: dict[str, Any], smallest: int) -> dict[str, Any]:
    fields: dict[str, Any] = {"n": summary["n"]}
    for key in ("mae", "mean_forecast", "mean_actual"):
        fields.update(stat_fields(key, summary[key]))
    return {**fields, "small": summary["n"] < smallest}


def forecast_report(metrics: dict[str, Any]) -> list[str]:
    rounds = metrics["rounds"]
    axis = "horizon" if metrics.get("design") == "horizons" else "round"
    lines = [
        f"{metrics['model_label']}: forecast vs actual send over {rounds} rounds "
        f"({metrics['reasks']} re-asks)"
    ]
    for archetype, result in metrics["archetypes"].items():
        first, last = result["by_horizon"][0], result["by_horizon"][-1]
        lines.append(
            f"  {archetype}: MAE {shown_stat(result, 'mae')} overall; {axis} 1 "
            f"{shown_stat(first, 'mae')} → {axis} {rounds} {shown_stat(last, 'mae')}; mean "
            f"sent {shown_stat(first, 'mean_actual')} → {shown_stat(last, 'mean_actual')} "
            f"({result['n_trustors']} personas, {result['forecast_failures']} forecast and "
            f"{result['action_failures']} action failures)"
        )
    return lines


def mae_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The `mae_by_horizon` table: one row per model, archetype and horizon."""
    return [
        {"model": metrics["model_label"], "archetype": archetype, **row}
        for archetype, result in metrics["archetypes"].items()
        for row in result["by_horizon"]
    ]


def forecast_summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """MAE per archetype and horizon; a sweep labels each row with its model."""
    return [{k: v for k, v in row.items() if k != "model"} for row in mae_rows(metrics)]


FORECAST_SUMMARY_COUNTS = {
    stat: SummaryCount("n", "pairs")
    for stat in ("mae", "mean_forecast", "mean_actual", "sd_abs_error")
}
"""Each statistic of `forecast_summary_rows` is over the row's forecast–action pairs (`n`)."""


def mae_figure(rows: list[dict[str, Any]], rounds: int, note: str | None = None) -> Figure:
    """Figure 1 of §5.3 as the paper draws it: per model–archetype, MAE at each horizon as a
    point (bar: SD of the absolute errors; label: n pairs) and a least-squares line through
    the points, so MAE's trend with the horizon is read off the slope."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.2))
    axes = figure.subplots()
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row["mae"] is not None:
            groups.setdefault((row["model"], row["archetype"]), []).append(row)
    for (model, archetype), points in groups.items():
        points = sorted(points, key=lambda r: r["horizon"])
        h = np.array([r["horizon"] for r in points], dtype=float)
        mae = np.array([r["mae"] for r in points], dtype=float)
        sd = np.array([r.get("sd_abs_error") or 0.0 for r in points], dtype=float)
        bars = axes.errorbar(h, mae, yerr=sd, fmt="o", capsize=3, label=f"{model} – {archetype}")
        if len(h) >= 2:
            slope, intercept = np.polyfit(h, mae, 1)
            axes.plot(h, slope * h + intercept, color=bars[0].get_color(), alpha=0.7)
        for x, y, r in zip(h, mae, points, strict=True):
            axes.annotate(
                f"n={r['n']}", (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points"
            )
    axes.set_xticks(range(1, rounds + 1))
    axes.set_xlabel("forecast horizon (rounds)")
    axes.set_ylabel("MAE ($); bar: SD of |error|")
    axes.set_ylim(bottom=0)
    axes.set_title("trust-forecast: forecast vs actual send (seed 001, §5.3 Fig. 1)")
    axes.grid(alpha=0.3)
    if groups:
        axes.legend(fontsize=7)
    else:
        axes.text(0.5, 0.5, "no data: no forecast was paired with an action", ha="center",
                  va="center", transform=axes.transAxes)  # fmt: skip
    if note:
        figure.text(0.5, -0.01, note, ha="center", va="top", fontsize=8, style="italic")
    return figure


_CLOSING = re.compile(
    r"\s*finally,?\s+i\s+will\s+(?:give|send|transfer)\b.*$", re.IGNORECASE | re.DOTALL
)
PAPER_TABLE_OF = {"M1": 6, "M3": 7, "M5": 8}
"""Appendix C.4's tables of per-round forecasts and explanations, one per archetype."""


def explanation_rows(events: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Tables 6–8's shape: for the run's first persona, per archetype and round, the forecast
    of that round (one step ahead), its explanation (the accepted reply less its closing
    sentence) and what the persona then sent."""
    first = next(
        (
            r["agent_id"]
            for r in agent_payloads(events, "agent.created")
            if "persona" in r["payload"]
        ),
        None,
    )
    if first is None:
        return {}
    persona = first.split("@")[0]
    sends = _sends(events)
    last_reply: dict[str, str] = {}
    tables: dict[str, list[dict[str, Any]]] = {}
    for row in events.itertuples():
        agent = row.agent_id
        if not isinstance(agent, str) or agent.split("@")[0] != persona:
            continue
        if row.kind == "llm.call" and row.payload.get("task") == "trust.forecast":
            last_reply[agent] = row.payload["response"]["text"]
        elif row.kind == "decision.made" and row.payload.get("kind") == "forecast":
            p = row.payload
            if p.get("steps_ahead", 1) != 1:
                continue
            tables.setdefault(p["archetype"], []).append(
                {
                    "round": p["horizon"],
                    "forecast": p["value"],
                    **_sent_fields(sends.get((agent, p["horizon"]))),
                    "explanation": _explanation(last_reply.get(agent, "")),
                }
            )
    return _every_round(tables, events, persona, sends)


def _sent_fields(sent: int | None) -> dict[str, Any]:
    if sent is None:
        return {"sent": None, "sent_undefined": "no transfer that round (the action failed)"}
    return {"sent": sent}


def _every_round(
    tables: dict[str, list[dict[str, Any]]],
    events: pd.DataFrame,
    persona: str,
    sends: dict[tuple[str, int], int],
) -> dict[str, list[dict[str, Any]]]:
    """Tables 6–8 with a row for every archetype and round: a forecast that failed keeps its
    row, with the reason, and what was sent that round."""
    params = run_header(events)["params"]
    failed = {
        (r["agent_id"], r["payload"]["horizon"]): r["payload"]
        for r in agent_payloads(events, "decision.failed")
        if r["payload"].get("kind") == "forecast" and r["payload"].get("steps_ahead", 1) == 1
    }
    for archetype in params.get("archetypes", []):
        agent = f"{persona}@{archetype}"
        rows = tables.setdefault(archetype, [])
        have = {row["round"] for row in rows}
        for round_index in range(1, params.get("rounds", 0) + 1):
            if round_index in have:
                continue
            failure = failed.get((agent, round_index))
            reason = (
                f"the forecast failed after {failure['attempts']} attempts"
                if failure
                else "no forecast recorded (the run did not reach this round)"
            )
            rows.append(
                {
                    "round": round_index,
                    "forecast": None,
                    "forecast_undefined": reason,
                    **_sent_fields(sends.get((agent, round_index))),
                    "explanation": "",
                }
            )
        rows.sort(key=lambda row: row["round"])
    return tables


def _explanation(reply: str) -> str:
    """The reasoning of a forecast reply: JSON's `reasoning`, else the text before "Finally"."""
    try:
        parsed = json.loads(reply)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("reasoning"), str):
        return parsed["reasoning"].strip()
    return " ".join(_CLOSING.sub("", reply).split())


def write_explanation_reports(
    explanations: dict[str, list[dict[str, Any]]], directory: Path
) -> list[Path]:
    """Tables 6–8 (M1, M3, M5; other archetypes unnumbered) from `explanation_rows`."""
    written: list[Path] = []
    for archetype, rows in explanations.items():
        table = PAPER_TABLE_OF.get(archetype)
        name = f"table{table}_explanations_{archetype}" if table else f"explanations_{archetype}"
        written += write_table(sorted(rows, key=lambda r: r["round"]), directory, name)
    return written


def write_forecast_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    rows = mae_rows(metrics)
    figure = mae_figure(rows, metrics["rounds"], metrics["model"].get("note"))
    note = small_note(metrics["min_group_n"], "forecast–action pairs in the round")
    humans = human_note(metrics.get("human_reference", []))
    if humans:
        humans += " (one-shot games; here each round restarts from the full endowment)"
    return [
        *write_table(rows, directory, "mae_by_horizon", flag="small", notes=[note, humans]),
        save_figure(figure, directory, "mae_by_horizon"),
        *write_explanation_reports(metrics.get("explanations", {}), directory),
    ]


def write_forecast_sweep_reports(
    rows: list[dict[str, Any]], varied: list[str], directory: Path
) -> list[Path]:
    """Figure 1 across the sweep's models: one line per model–archetype."""
    rounds = max(row["horizon"] for row in rows) if rows else 1
    return [save_figure(mae_figure(rows, rounds), directory, "mae_by_horizon")]


def mae_by_horizon(
    rows: Iterable[tuple[int, float, float]],
) -> dict[int, dict[str, float | int]]:
    """Per forecast horizon, MAE = mean |forecast − actual| and the two means (§5.2, Fig. 1).

    `rows` are (horizon, forecast, actual); the result is keyed by horizon in ascending
    order, each with {"n", "mae", "mean_forecast", "mean_actual"}, so MAE's growth with the
    horizon can be read off directly.
    """
    grouped: dict[int, list[tuple[float, float]]] = {}
    for horizon, forecast, actual in rows:
        grouped.setdefault(int(horizon), []).append((float(forecast), float(actual)))
    result: dict[int, dict[str, float | int]] = {}
    for horizon in sorted(grouped):
        pairs = np.asarray(grouped[horizon], dtype=float)
        result[horizon] = {
            "n": len(pairs),
            "mae": float(np.abs(pairs[:, 0] - pairs[:, 1]).mean()),
            "mean_forecast": float(pairs[:, 0].mean()),
            "mean_actual": float(pairs[:, 1].mean()),
        }
    return result
