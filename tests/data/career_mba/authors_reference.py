"""Reference numbers from the authors' own code (FerdinandZhong/model_behavior_adaption, MIT).

Not part of the package or the test suite: it documents how `reference.json` was made. It
imports the authors' `value_measurement` modules from a checkout of their repository and runs
`ValuesComparison.inner_dataset_groups_comparison` (group distances and baseline) and
`cross_datasets_divergences_id_based` (consistency EMD) on released answer files. Modules the
measured functions never call (the zero-shot job classifier's `transformers`, the continent
lookup's `pycountry_convert`, the dialogue templating's `jinja2`) are replaced by empty stubs.

Groupings, as their code makes them: age = reference year − birth year (their
`calculate_age` parses the month as minutes, so only the year counts), binned by
`_get_index_list_for_groups_age`; development level by `get_development_level` (pycountry
lookup + their DEVELOPMENT_LEVEL table); education by the raw "Education Level" label.

usage: python authors_reference.py AUTHORS_REPO PROFILES_CSV PROFILE_ANSWERS DIALOGUE_ANSWERS
           N_USERS REFERENCE_YEAR OUT_JSON
"""

from __future__ import annotations

import json
import sys
import types

import pandas as pd

for name in ("transformers", "pycountry_convert", "jinja2"):
    stub = types.ModuleType(name)
    stub.pipeline = stub.Template = None  # type: ignore[attr-defined]
    sys.modules[name] = stub


def main(repo: str, profiles: str, direct: str, dialogue: str, n: int, year: int, out: str) -> None:
    sys.path.insert(0, repo)
    from llm_behavior_adaptation.value_measurement import values_comparison as vc
    from llm_behavior_adaptation.value_measurement.measurement_utils import get_development_level

    frame = pd.read_csv(profiles)[:n].copy()
    answers = {
        "profile": vc.load_jsonl_file(direct, "user_idx", 0, n),
        "dialogue": vc.load_jsonl_file(dialogue, "user_idx", 0, n),
    }
    comparison = vc.ValuesComparison(frame, answers["profile"], None, answers["dialogue"])
    frame["Age"] = year - pd.to_datetime(frame["Date of Birth"], format="%d-%m-%Y").dt.year
    groupings = {
        "age": comparison._get_index_list_for_groups_age(),
        "country": frame.groupby(frame["Country"].map(get_development_level))
        .apply(lambda x: x.index.tolist())
        .to_dict(),
        "education": frame.groupby("Education Level").apply(lambda x: x.index.tolist()).to_dict(),
    }
    result: dict = {"n_users": n, "reference_year": year, "adaptation": {}}
    for fmt, rows in answers.items():
        result["adaptation"][fmt] = {}
        for grouping, groups in groupings.items():
            groups = {str(k): v for k, v in groups.items()}
            pairs, _, _, baseline = comparison.inner_dataset_groups_comparison(
                grouping, rows, groups=groups
            )
            result["adaptation"][fmt][grouping] = {
                "groups": {k: len(v) for k, v in groups.items()},
                "baseline": float(baseline),
                "pairs": {
                    p["compared_groups"]: float(p["compared_details"]["average_divergence"])
                    for p in pairs
                },
            }
    emd = comparison.cross_datasets_divergences_id_based()
    result["consistency_emd_authors_bins"] = float(emd["avg_divergence"])
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1, sort_keys=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], int(a[4]), int(a[5]), a[6])
