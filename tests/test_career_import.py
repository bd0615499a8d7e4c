"""`personasim import career-chat --format model-behavior-adaption`: structure, errors, and the
authors' numbers.

Most tests read synthetic inputs in the released files' formats (`tests/data/career_mba/synthetic/`,
made by `tests/career_synthetic.py`; our own data). The comparison with the authors' own metric
code needs their released DeepSeek-V3 answers and seed CSV, which this project does not carry:
it reads them from the folder named by `PERSONASIM_CAREER_MBA_DATA` and is skipped without it.
`tests/data/career_mba/reference.json` holds the numbers their code computed (see that folder's
README for how, and how to run the comparison).
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
from pathlib import Path

import pytest
from career_synthetic import N_ITEMS, N_USERS, synthetic_files

from personasim.scenarios.career_chat.jobs import job_category, position_level
from personasim.simulation import import_formats, import_run, run_events
from personasim.simulation.cli.main import main

DATA = Path(__file__).parent / "data" / "career_mba"
SYNTHETIC = DATA / "synthetic"
FLAGS = {
    "profile-answers": "profile_answers.jsonl",
    "dialogue-answers": "dialogue_answers.jsonl",
    "profiles": "profiles.csv",
}
FILES = {flag: SYNTHETIC / name for flag, name in FLAGS.items()}
RELEASED_DATA = "PERSONASIM_CAREER_MBA_DATA"
pytestmark = pytest.mark.timeout(600)  # ~800 JS centroids; slow only on a loaded machine

ALIASES = {"Bachelor's Degree": "Bachelor's", "Master's Degree": "Master's"}


def _label(name: str) -> str:
    return ALIASES.get(name.replace("_", " "), name.replace("_", " "))


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("imp") / "run"
    import_run("career-chat", "model-behavior-adaption", FILES, {"model-name": "synthetic"}, out)
    return out


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The authors' released files imported: their first `reference.json` n_users users."""
    folder = os.environ.get(RELEASED_DATA)
    if not folder:
        pytest.skip(
            f"{RELEASED_DATA} is unset: name a folder holding the authors' released "
            "profile_answers.jsonl, dialogue_answers.jsonl and profiles.csv to compare with "
            "their numbers (tests/data/career_mba/README.md)"
        )
    files = {flag: Path(folder) / name for flag, name in FLAGS.items()}
    if missing := [str(path) for path in files.values() if not path.is_file()]:
        pytest.fail(f"{RELEASED_DATA}={folder}: no such file: {', '.join(missing)}")
    n_users = json.loads((DATA / "reference.json").read_text())["n_users"]
    options = {"model-name": "DeepSeek-V3", "n-users": str(n_users)}
    options |= {"bootstrap": "0", "permutations": "0"}  # the reference has point values only
    out = tmp_path_factory.mktemp("released") / "run"
    import_run("career-chat", "model-behavior-adaption", files, options, out)
    return out


def test_the_synthetic_inputs_are_what_the_script_makes() -> None:
    """The committed synthetic files equal a fresh run of tests/career_synthetic.py."""
    for name, text in synthetic_files().items():
        assert (SYNTHETIC / name).read_text(encoding="utf-8") == text, name


@pytest.mark.slow
def test_metrics_equal_the_authors_code(released: Path) -> None:
    reference = json.loads((DATA / "reference.json").read_text())
    metrics = json.loads((released / "metrics.json").read_text())["metrics"]
    assert metrics["n_users"] == reference["n_users"] == 25
    compared = 0
    for fmt, groupings in reference["adaptation"].items():
        for grouping, ref in groupings.items():
            ours = metrics["adaptation"][fmt][grouping]
            assert ours["groups"] == {_label(g): n for g, n in ref["groups"].items()}
            assert ours["baseline"] == pytest.approx(ref["baseline"], abs=1e-4)
            pairs = {frozenset((p["group_a"], p["group_b"])): p for p in ours["pairs"]}
            for name, distance in ref["pairs"].items():
                a, b = name.split("--")
                assert pairs[frozenset((_label(a), _label(b)))]["distance"] == pytest.approx(
                    distance, abs=1e-4
                )
                compared += 1
    assert compared == 2 * (10 + 6 + 6)  # pairs of 5 age bins, 4 degrees, 4 development levels
    consistency = metrics["consistency"]["distance"]
    assert consistency == pytest.approx(reference["consistency_emd_authors_bins"], abs=1e-4)
    assert metrics["probes"]["profile"]["n"] == 25 * 18
    assert metrics["probes"]["profile"]["one_hot_fallback"] == 0
    table2 = (released / "reports" / "table2_adaptation.md").read_text()
    baseline = reference["adaptation"]["dialogue"]["age"]["baseline"]
    assert f"{baseline:.3g}" in table2  # three significant figures, not 0.01


@pytest.mark.slow
def test_import_metrics_have_every_group_and_pair(imported: Path) -> None:
    """On the synthetic inputs: every user in one group per grouping, every pair of groups
    compared once, each probe read from its released distribution."""
    metrics = json.loads((imported / "metrics.json").read_text())["metrics"]
    assert metrics["n_users"] == N_USERS
    for fmt in ("profile", "dialogue"):
        for grouping in ("age", "country", "education"):
            ours = metrics["adaptation"][fmt][grouping]
            assert sum(ours["groups"].values()) == N_USERS, (fmt, grouping)
            expected = {frozenset(p) for p in itertools.combinations(ours["groups"], 2)}
            assert {frozenset((p["group_a"], p["group_b"])) for p in ours["pairs"]} == expected
            assert all(p["distance"] >= 0 for p in ours["pairs"])
            assert ours["baseline"] > 0
        probes = metrics["probes"][fmt]
        assert probes["n"] == N_USERS * N_ITEMS and probes["one_hot_fallback"] == 0
        assert probes["confidence_top"] >= probes["confidence"]
    assert metrics["consistency"]["distance"] > 0


@pytest.mark.slow
def test_imported_run_is_marked_and_checkable(imported: Path) -> None:
    manifest = json.loads((imported / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["llm"]["calls"] == 0
    sources = manifest["import"]["sources"]
    for flag, path in FILES.items():
        assert sources[flag]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert sources[flag]["file"] == path.name  # a name, never the machine's directory
    assert main(["metrics", str(imported), "--check"]) == 0
    assert main(["replay", str(imported), "--agent", "user3"]) == 0
    table2 = (imported / "reports" / "table2_adaptation.md").read_text()
    metrics = json.loads((imported / "metrics.json").read_text())["metrics"]
    baseline = metrics["adaptation"]["dialogue"]["age"]["baseline"]
    assert f"{baseline:.3g}" in table2  # three significant figures, not 0.01
    assert [f.name for f in import_formats("career-chat")] == ["model-behavior-adaption"]


def _cli(tmp_path: Path, **files: Path) -> list[str]:
    paths = {**FILES, **files}
    args = ["import", "career-chat", "--format", "model-behavior-adaption"]
    args += [item for flag, path in paths.items() for item in (f"--{flag}", str(path))]
    return [*args, "--out", str(tmp_path / "run")]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "invalid JSON"),
        ('{"user_idx": 1}', "needs user_idx"),
        ('{"user_idx": 0, "value_selections": []}', "appears twice"),
        (
            '{"user_idx": 1, "value_selections": [{"question_index": 0, '
            '"selected_option_id": 2, "normalized_probs": [0.5, 0.4, 0, 0, 0]}]}',
            "sum to",
        ),
        (
            '{"user_idx": 1, "value_selections": [{"question_index": 0, '
            '"selected_option_id": 7, "normalized_probs": [1, 0, 0, 0, 0]}]}',
            "not 1–5",
        ),
    ],
)
def test_malformed_answers_name_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, problem: str
) -> None:
    bad = tmp_path / "answers.jsonl"
    good = FILES["profile-answers"].read_text().splitlines()[0]
    bad.write_text(f"{good}\n{line}\n")
    assert main(_cli(tmp_path, **{"profile-answers": bad})) == 2
    err = capsys.readouterr().err
    assert "answers.jsonl:2: " in " ".join(err.split()) and problem in err
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_bad_profiles_and_unknown_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "seed.csv"
    bad.write_text("Date of Birth,Country\n01-01-1990,India\n")
    assert main(_cli(tmp_path, profiles=bad)) == 2
    assert "missing columns" in capsys.readouterr().err
    args = ["import", "career-chat", "--format", "nope", "--out", str(tmp_path / "r")]
    assert main(args) == 2
    assert "model-behavior-adaption" in capsys.readouterr().err


@pytest.mark.slow
def test_job_groups_from_a_file_and_the_resampling_options(tmp_path: Path) -> None:
    """Titles the file names take its labels (the authors' classifier output, say); the others
    the keyword rule; `--bootstrap 0 --permutations 0` leave intervals and p-values undefined."""
    with FILES["profiles"].open(newline="", encoding="utf-8") as handle:
        seed = list(csv.DictReader(handle))
    named = {row["Job Title"] for row in seed[:5]}
    groups = tmp_path / "groups.csv"
    with groups.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["job_title", "job_category", "position_level"])
        writer.writerows([title, "Science", "C-Suite"] for title in sorted(named))
    options = {"job-groups": str(groups), "bootstrap": "0", "permutations": "0"}
    out = tmp_path / "run"
    import_run("career-chat", "model-behavior-adaption", FILES, options, out)
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    events = run_events(out)
    users = [p["persona"] for p in events["payload"] if p.get("type") == "UserSimulator"]
    titles = [user["attributes"]["job_title"] for user in users]
    by_file = sum(title in named for title in titles)
    by_rule = [title for title in titles if title not in named]
    assert by_file >= 5 and by_rule
    job, position = (metrics["adaptation"]["profile"][g] for g in ("job", "position"))
    rule_science = sum(job_category(t) == "Science" for t in by_rule)
    rule_csuite = sum(position_level(t) == "C-Suite" for t in by_rule)
    assert job["groups"].get("Science", 0) == by_file + rule_science
    assert position["groups"].get("C-Suite", 0) == by_file + rule_csuite
    assert job["baseline_ci"] is None and job["baseline_ci_undefined"]
    (given,) = [p for p in events["payload"] if "titles" in p]
    assert given["sha256"] == hashlib.sha256(groups.read_bytes()).hexdigest()
    assert main(["metrics", str(out), "--check"]) == 0


def test_bad_job_groups_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    groups = tmp_path / "groups.csv"
    groups.write_text("job_title,job_category,position_level\nNurse,Health,\nNurse,Health,\n")
    assert main([*_cli(tmp_path), "--job-groups", str(groups)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--job-groups" in err and "groups.csv:3" in err and "appears twice" in err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_seed_csv_is_a_profile_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`run career-chat --profile-file` reads a CSV in the paper's seed format as the import
    does: row i is user i, age = the reference year − the birth year, the paper's education
    labels (our synthetic profiles, in that format)."""
    out = tmp_path / "run"
    args = ["run", "career-chat", "--profile-file", str(FILES["profiles"]), "--n-users", "3"]
    args += ["--n-items", "1", "--judge-samples", "0", "--reference-year", "2030"]
    assert main([*args, "--out", str(out), "--no-progress", "--no-cache"]) == 0
    users = [p["persona"] for p in run_events(out)["payload"] if p.get("type") == "UserSimulator"]
    assert [u["id"] for u in users] == ["user0", "user1", "user2"]
    first = users[0]["attributes"]  # synthetic row 0: 28-12-1977, PhD, Greenland
    assert (first["age"], first["education"], first["country"]) == (53, "PhD", "Greenland")
    assert users[1]["attributes"]["education"] == "Bachelor's"  # "Bachelor's Degree"
    bad = tmp_path / "seed.csv"
    rows = FILES["profiles"].read_text().splitlines()
    assert rows[2].startswith("28-05-1993,")  # the header, then users 0 and 1
    bad.write_text("\n".join([rows[0], rows[1], rows[2].replace("-1993", "/1993")]) + "\n")
    assert (
        main(["run", "career-chat", "--profile-file", str(bad), "--out", str(tmp_path / "b")]) == 2
    )
    err = " ".join(capsys.readouterr().err.split())
    assert "seed.csv:3" in err and "dd-mm-yyyy" in err


@pytest.mark.slow
def test_table2_shows_group_sizes_chance_and_holm(imported: Path) -> None:
    """Issue 25, items 2–3: every pair row carries both groups' n, the permutation null's
    central 95% (where chance puts the ratio; the paper's line is 1) and a Holm-corrected p
    over the table's pairs; every group, "Unknown" included, has a row with its n."""
    from personasim.analysis import holm
    from personasim.scenarios.career_chat.reports import figure5, figure5_null

    reports = imported / "reports"
    metrics = json.loads((imported / "metrics.json").read_text())["metrics"]
    table = list(csv.DictReader((reports / "table2_adaptation.csv").open()))
    groups = list(csv.DictReader((reports / "table2_groups.csv").open()))
    sizes = {(r["scenario"], r["grouping"], r["group"]): int(r["n"]) for r in groups}
    country = metrics["adaptation"]["profile"]["country"]["groups"]
    assert country["Unknown"] == sizes[("BA_user", "country", "Unknown")] > 0
    assert len(groups) == sum(
        len(r["groups"]) for per in metrics["adaptation"].values() for r in per.values()
    )
    for row in table:
        assert int(row["n_a"]) == sizes[(row["scenario"], row["grouping"], row["group_a"])]
        assert int(row["n_b"]) == sizes[(row["scenario"], row["grouping"], row["group_b"])]
        low, high = float(row["ratio_null_low"]), float(row["ratio_null_high"])
        ratio, p = float(row["ratio"]), float(row["ratio_p"])
        assert 0 < low <= high
        if p < 0.02:  # fewer than 2% of the shuffles reach it: above the band
            assert ratio >= high
        if p > 0.1:  # more than 10% reach it: inside the band or below
            assert ratio <= high
    assert [float(r["ratio_p_holm"]) for r in table] == pytest.approx(
        holm([float(r["ratio_p"]) for r in table]), abs=1e-9
    )
    assert {r["chance"] for r in table} <= {
        "Holm p < 0.05",
        "p < 0.05, not after Holm",
        "within chance",
    }
    markdown = (reports / "table2_adaptation.md").read_text()
    header = [cell.strip() for cell in markdown.splitlines()[0].split("|")]
    assert {"n_a", "n_b", "ratio_null_low", "ratio_null_high", "ratio_p_holm"} <= set(header)
    # the figures: each group's n on its label, one null band per pair, the line at 1
    heat = figure5(metrics, "country")
    labels = [t.get_text() for t in heat.axes[0].get_yticklabels()]
    assert f"Unknown (n={country['Unknown']})" in labels
    null = figure5_null(metrics, "country")
    panel = null.axes[0]
    pairs = metrics["adaptation"]["profile"]["country"]["pairs"]
    assert len(panel.collections) == len(pairs)  # one grey band per pair
    assert any(list(line.get_xdata()) == [1.0, 1.0] for line in panel.get_lines())
    names = [t.get_text() for t in panel.get_yticklabels()]
    assert all("(n=" in name for name in names) and len(names) == len(pairs)
    assert (reports / "figure5_country_null.png").exists()
