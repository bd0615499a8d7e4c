"""How career chat groups its users (seed 003, §6.1, Appendix H): age bins, a country's
development group, the grouping of a profile for each of the paper's attributes, and where
each title's job labels came from (a `--job-groups` file, a classifier, the word rule)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from personasim.analysis.event_tables import payloads
from personasim.environments.career_chat import education_label
from personasim.scenarios.career_chat.countries import development_level
from personasim.scenarios.career_chat.jobs import classify_title, job_category, position_level

__all__ = ["AGE_BINS", "GROUPINGS", "age_bin", "country_group", "job_labels"]

AGE_BINS = ("<30", "30-40", "40-50", "50-60", ">60")
"""10-year brackets; 30 falls in 30-40 and 60 in >60 (the paper leaves the edges open)."""


def age_bin(age: int) -> str:
    if age < 30:
        return "<30"
    if age >= 60:
        return ">60"
    low = age // 10 * 10
    return f"{low}-{low + 10}"


def country_group(country: str) -> str:
    """The authors' development level of the country (`career_countries`; "Unknown" else)."""
    return development_level(country)


GROUPINGS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "age": lambda p: age_bin(int(p["age"])),
    "education": lambda p: education_label(str(p["education"])),
    "country": lambda p: country_group(str(p["country"])),
    "job": lambda p: p.get("job_category") or job_category(str(p["job_title"])),
    "position": lambda p: p.get("position_level") or position_level(str(p["job_title"])),
}
"""How a profile is grouped for each of the paper's attributes (the paper's education labels
and ours are the same groups); job category and position level come from the run's
`--job-groups` file or bound classifier where it names the title, else from the word rule
(`jobs.py`), whose "Unknown" is a group of its own."""


def job_labels(events: pd.DataFrame, profiles: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Where the job groups came from: a `--job-groups` file, a bound classifier, or the word
    rule for every title neither labelled; with the titles a classifier left "Unclassified" and
    how many users they hold, and a row per distinct title (its n, labels and their source)."""
    given = payloads(events, "career.job_groups")
    by_classifier = [p for p in given if p.get("source") == "classifier"]
    unclassified = sorted({t for p in by_classifier for t in p["unclassified"]})
    return {
        "sources": [*(p.get("source", "file") for p in given), "word rule"],
        "classifier": by_classifier[0]["classifier"] if by_classifier else [],  # no model bound
        "titles_asked": sum(p["asked"] for p in by_classifier),
        "unclassified_titles": unclassified,
        "unclassified_users": sum(p["job_title"] in unclassified for p in profiles.values()),
        "titles": _title_rows(given, profiles),
    }


def _title_rows(
    given: Sequence[Mapping[str, Any]], profiles: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Each distinct title with its users' n, the labels the metrics use, whose they are
    (`file`, `classifier`, `unclassified`, `word rule`; `file and word rule` where the file
    left a label empty) and, for the word rule's labels, the rule that decided each."""
    source: dict[str, str] = {}
    for event in given:
        for title, labels in event["titles"].items():
            if event.get("source") == "classifier":
                unusable = title in event["unclassified"]
                source[title] = "unclassified" if unusable else "classifier"
            else:
                source[title] = "file" if len(labels) == 2 else "file and word rule"
    counts = Counter(str(p["job_title"]) for p in profiles.values())
    first = {str(p["job_title"]): p for p in profiles.values()}
    return [
        {
            "job_title": title,
            "job_category": GROUPINGS["job"](first[title]),
            "position_level": GROUPINGS["position"](first[title]),
            "source": source.get(title, "word rule"),
            "n": n,
            **_rules_fired(title, first[title], source.get(title, "word rule")),
        }
        for title, n in sorted(counts.items())
    ]


def _rules_fired(title: str, profile: Mapping[str, Any], source: str) -> dict[str, str]:
    """The word rule's pattern behind each label it gave (empty where another source did)."""
    if "word rule" not in source:
        return {"category_rule": "", "level_rule": ""}
    labels = classify_title(title)
    return {
        "category_rule": "" if profile.get("job_category") else labels.category_rule or "none",
        "level_rule": "" if profile.get("position_level") else labels.level_rule or "none",
    }
