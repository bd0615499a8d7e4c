"""Every input checked: a few hundred generated bad inputs fed to the command line.

A table per kind of input (run flags, scenario parameters, persona files, endpoint files, prompt
packs, sweep grids, the readers' arguments), widened by seeded junk bytes, each case fed to the
CLI's `main(argv)` in-process in a fresh folder, and asserted: exit 2, one `error: ` line on
stderr naming the flag or file it is about (an endpoints file with several problems lists each
on an indented line below it, its documented form), no traceback, and nothing written: no run
directory, no `runs/`, no file at all. Two run as real processes, where the break the issue
found was a process's (out of memory, a raw byte on the command line that is not UTF-8).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from personasim.simulation.cli.main import main

SEED = 37
RUN = ("run", "trust-population", "--out", "out", "--no-progress")
"""A run whose output would go to ./out (checked not to exist after each case)."""
PEOPLE = (*RUN, "--n-personas", "1", "--persona-file")
BIG_CELL = "x" * 140_000
"""Longer than the CSV reader's limit of 131,072 characters a cell."""
DEEP = "[" * 1_200 + "]" * 1_200
"""Nested deeper than a parser's recursion allows."""


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()
    names: str = ""
    """What the error line must name: the flag or the file."""
    says: str = ""
    """Words of the reason it must give (where the table states one)."""


def text(value: str) -> bytes:
    """A file's bytes; a lone surrogate written as its JSON or YAML escape stays an escape."""
    return value.encode("utf-8")


def file_case(name: str, argv: tuple[str, ...], file: str, body: bytes, says: str = "") -> Case:
    return Case(name, (*argv, file), ((file, body),), file, says)


# --- run flags -------------------------------------------------------------------------------

INT_FLAGS = {
    "--concurrency": (1, 4096),
    "--workers": (1, 256),
    "--max-attempts": (1, 100),
    "--seed": (0, 2**63 - 1),
    "--max-tokens": (1, 1_000_000),
    "--min-group-n": (1, 1_000_000),
    "--audit": (1, 1_000_000),
    "--audit-seed": (0, 2**63 - 1),
}
FLOAT_FLAGS = {"--timeout": 86_400, "--rpm": 1_000_000, "--latency": 86_400}


def bad_integers(low: int, high: int) -> list[str]:
    return [
        str(low - 1),
        str(high + 1),
        "nan",
        "inf",
        "1e20",
        "1.5",
        "abc",
        "",
        "9" * 5_000,
        str(2**70),
        "0x10",
    ]


def bad_positives(high: float) -> list[str]:
    return ["0", "-1", "nan", "inf", "-inf", "1e308", "abc", "", str(high * 10)]


def flag_cases() -> Iterator[Case]:
    for flag, (low, high) in INT_FLAGS.items():
        for value in bad_integers(low, high):
            says = f"must be an integer of at least {low} and at most {high}"
            yield Case(f"{flag}={value[:12]}", (*RUN, f"{flag}={value}"), names=flag, says=says)
    for flag, high in FLOAT_FLAGS.items():
        for value in bad_positives(high):
            says = f"must be a number greater than 0 and at most {high}"
            yield Case(f"{flag}={value[:12]}", (*RUN, f"{flag}={value}"), names=flag, says=says)
    for flag in ("--max-failure-rate", "--max-wrong-read-rate"):
        for value in ("nan", "inf", "-0.5", "1.5", "abc"):
            yield Case(f"{flag}={value}", (*RUN, f"{flag}={value}"), names=flag, says="must be")
    for command in ("rescore", "audit", "retry"):
        for flag, value in (("--concurrency", "1e20"), ("--timeout", "inf"), ("--rpm", "nan")):
            yield Case(f"{command} {flag}={value}", (command, "out", flag, value), names=flag)


# --- scenario parameters ---------------------------------------------------------------------

MEMORY = "would need about"
PARAMS = [
    ("trust-population", "--n-personas", "1000000000", "6,700 GB of memory"),
    ("trust-population", "--n-personas", "0", "greater than or equal to 1"),
    ("trust-population", "--n-personas", "-5", "greater than or equal to 1"),
    ("trust-population", "--n-personas", "nan", "valid integer"),
    ("trust-population", "--n-personas", "1e30", "valid integer"),
    ("trust-population", "--endowment", "1000000000000000000000000000000", "1000000"),
    ("trust-population", "--endowment", "0", "greater than or equal to 1"),
    ("trust-population", "--endowment", "1e30", "valid integer"),
    ("trust-population", "--endowment", "nan", "valid integer"),
    ("trust-population", "--temperature", "nan", "finite number"),
    ("trust-population", "--temperature", "inf", "finite number"),
    ("trust-population", "--temperature", "-1", "greater than or equal to 0"),
    ("trust-population", "--max-repairs", "99", "less than or equal to 5"),
    ("trust-population", "--trustee", "X9", "pattern"),
    ("trust-population", "--population", "everyone", "'sample' or 'synthetic'"),
    ("trust-population", "--attributes", "Relgion", "unknown trait"),
    ("trust-population", "--counterfactual-levels", "a,\udcff", "lone surrogate"),
    ("trust-beliefs", "--n-personas", "600000", MEMORY),
    ("trust-conditioning", "--weak-rho", "nan", "finite number"),
    ("trust-conditioning", "--n-personas", "300000", MEMORY),
    ("trust-forecast", "--rounds", "0", "greater than or equal to 1"),
    ("trust-forecast", "--n-personas", "40000", MEMORY),
    ("trust-forecast", "--endowment", "2000000", "less than or equal to 1000000"),
    ("persona-journey", "--n-personas", "100000", MEMORY),
    ("persona-journey", "--endowment", "1e30", "valid integer"),
    ("persona-journey", "--survey-temperature", "inf", "finite number"),
    ("career-chat", "--n-users", "1000000000", MEMORY),
    ("career-chat", "--bootstrap", "1000000000", "less than or equal to 100000"),
    ("career-chat", "--permutations", "1e12", "valid integer"),
    ("career-chat", "--emd-repeats", "0", "greater than or equal to 1"),
    ("career-chat", "--reference-year", "99999", "less than or equal to 2200"),
    ("career-chat", "--temperature", "nan", "finite number"),
    ("classroom", "--repetitions", "1000000", "less than or equal to 10"),
    ("classroom", "--temperature", "-inf", "finite number"),
    ("persona-gym", "--grading-batch", "1e9", "valid integer"),
    ("persona-gym", "--scripted-fidelity", "nan", "finite number"),
]


def param_cases() -> Iterator[Case]:
    for scenario, flag, value, says in PARAMS:
        argv = ("run", scenario, "--out", "out", "--no-progress", flag, value)
        yield Case(f"{scenario} {flag}={value[:12]!a}", argv, names=flag, says=says)
    yield Case("unknown parameter", (*RUN, "--n-persona", "3"), names="--n-persona")
    yield Case("a value without a flag", (*RUN, "stray"), names="stray")


# --- persona files ---------------------------------------------------------------------------

NOT_FINITE = "is not a finite number"
SURROGATE = "lone surrogate"
NOT_AGE = "is not an age; give a number from 0 to 130"
JSONL = {
    "nan": ('{"id": "a", "age": NaN}', NOT_FINITE),
    "infinity": ('{"id": "a", "age": 40, "income": Infinity}', NOT_FINITE),
    "minus infinity": ('{"id": "a", "income": -Infinity}', NOT_FINITE),
    "overflow": ('{"id": "a", "income": 1e400}', NOT_FINITE),
    "surrogate value": ('{"id": "a", "sex": "\\ud800"}', f"field sex: \\ud800 {''}"),
    "surrogate key": ('{"id": "a", "s\\udc00x": "F"}', "a field's name"),
    "surrogate id": ('{"id": "\\udfff", "age": 40}', "field id"),
    "negative age": ('{"id": "a", "age": -5}', NOT_AGE),
    "huge age": ('{"id": "a", "age": 1e23}', NOT_AGE),
    "age 131": ('{"id": "a", "age": 131}', NOT_AGE),
    "age nan text": ('{"id": "a", "age": "nan"}', NOT_AGE),
    "age inf text": ('{"id": "a", "age": "inf"}', NOT_AGE),
    "list value": ('{"id": "a", "age": [40]}', "must be scalars"),
    "object value": ('{"id": "a", "job": {"title": "x"}}', "must be scalars"),
    "empty key": ('{"id": "a", "": "x"}', "empty name"),
    "duplicate key": ('{"id": "a", "age": 1, "age": 2}', "appears twice"),
    "not json": ("{id: a}", "not a JSON object"),
    "array line": ("[1, 2, 3]", "expected a JSON object"),
    "string line": ('"just text"', "expected a JSON object"),
    "deep": (DEEP, "not a JSON object"),
    "long number": ('{"id": "a", "n": ' + "9" * 5_000 + "}", "too long to read"),
    "64-bit overflow": ('{"id": "a", "n": ' + str(2**64) + "}", "does not fit 64 bits"),
    "id list": ('{"id": ["a"], "age": 40}', "'id' must be"),
    "id empty": ('{"id": " ", "age": 40}', "'id' must be"),
    "duplicate ids": ('{"id": "a"}\n{"id": "a"}', "line 2: duplicate id"),
    "empty": ("", "holds no personas"),
    "blank lines": ("\n\n  \n", "holds no personas"),
}
CSV_LIMIT = "a cell is longer than 131,072 characters"
CSV = {
    "huge cell": ("id,age,sex\na,30," + BIG_CELL, f"line 2: {CSV_LIMIT}"),
    "huge header": ("id," + BIG_CELL + "\na,1", f"line 1: {CSV_LIMIT}"),
    "negative age": ("id,age\na,-5", NOT_AGE),
    "huge age": ("id,age\na,1e23", NOT_AGE),
    "nan age": ("id,age\na,nan", NOT_AGE),
    "semicolons": ("id;age;sex\na;30;F", "separated by semicolons"),
    "duplicate header": ("id,age,age\na,1,2", "repeats column"),
    "empty column name": ("id,,sex\na,1,F", "empty column name"),
    "more values than columns": ("id,age\na,30,F,extra", "more values than"),
    "empty": ("", "holds no personas"),
}
NOT_UTF8 = "is not UTF-8"
RAW = {
    "latin-1.jsonl": ('{"id": "a", "city": "Münster"}'.encode("latin-1"), "column 23"),
    "utf16.jsonl": ('{"id": "a", "age": 40}'.encode("utf-16"), NOT_UTF8),
    "bad byte mid-file.jsonl": (b'{"id": "a"}\n{"id": "b", "sex": "F\xc3"}\n', "line 2"),
    "bad byte.csv": (b"id,age,city\na,40,M\xfcnster\n", f"line 2: byte 0xfc at column 7 {''}"),
    "persona.yaml": (b"- id: a\n  age: 40\n", "unknown persona file type"),
    "no extension": (b'{"id": "a"}\n', "unknown persona file type"),
}
PROFILE_HEADER = "id,age,gender,education,experience,job_title,country\n"


def junk(rng: random.Random, size: int) -> bytes:
    """Seeded random bytes: not UTF-8 text (at the seed used, each has a byte that is not)."""
    return rng.randbytes(size)


def persona_cases(rng: random.Random) -> Iterator[Case]:
    for name, (body, says) in JSONL.items():
        yield file_case(f"persona jsonl {name}", PEOPLE, "p.jsonl", text(body), says)
    for name, (body, says) in CSV.items():
        yield file_case(f"persona csv {name}", PEOPLE, "p.csv", text(body), says)
    for name, (raw, says) in RAW.items():
        yield file_case(f"persona {name}", PEOPLE, name.replace(" ", "_"), raw, says)
    for index in range(6):
        for suffix in (".jsonl", ".csv"):
            body = junk(rng, rng.randrange(64, 4_096))
            yield file_case(f"persona junk {index}{suffix}", PEOPLE, f"j{suffix}", body, NOT_UTF8)
    yield Case("persona file missing", (*PEOPLE, "absent.jsonl"), (), "absent.jsonl", "no such")
    yield Case("persona file a folder", (*PEOPLE, "."), (), "--persona-file")
    profiles = ("run", "career-chat", "--out", "out", "--no-progress", "--profile-file")
    huge = PROFILE_HEADER + "u1,30,F,Bachelor,3,Nurse," + BIG_CELL
    yield file_case("profiles huge cell", profiles, "u.csv", text(huge), f"u.csv:2: {CSV_LIMIT}")
    nan = '{"id": "a", "age": NaN}'
    yield file_case("profiles nan", profiles, "u.jsonl", text(nan), NOT_FINITE)
    ratings = ("run", "career-chat", "--out", "out", "--no-progress", "--human-ratings")
    rated = "user,dimension,rating\nu1,coverage,"
    yield file_case("ratings huge cell", ratings, "h.csv", text(rated + BIG_CELL), CSV_LIMIT)
    yield file_case("ratings not utf-8", ratings, "h.csv", text(rated) + b"\xff", NOT_UTF8)
    scores = ("run", "persona-gym", "--out", "out", "--no-progress", "--human-scores")
    scored = "persona,task,score\np,Expected Action,"
    yield file_case("scores huge cell", scores, "s.csv", text(scored + BIG_CELL), CSV_LIMIT)
    yield file_case("scores not utf-8", scores, "s.csv", text(scored) + b"\xff", NOT_UTF8)
    gym = ("run", "persona-gym", "--out", "out", "--no-progress", "--persona-file")
    yield file_case("gym personas surrogate", gym, "g.json", text('["\\ud800"]'), SURROGATE)
    questions = ("run", "classroom", "--out", "out", "--no-progress", "--question-file")
    yield file_case("questions deep", questions, "q.jsonl", text(DEEP), "not valid JSON")
    surrogate = '{"question": "\\ud800", "answer": "#### 1"}'
    yield file_case("questions surrogate", questions, "q.jsonl", text(surrogate), SURROGATE)
    yield file_case("questions not utf-8", questions, "q.jsonl", b"\xff\xfe", NOT_UTF8)


# --- endpoint files --------------------------------------------------------------------------

ENDPOINT = '[pools.p]\n[[pools.p.endpoints]]\nurl = "http://127.0.0.1:9/v1"\n'
ENDPOINTS_TOML = {
    "weight inf": (ENDPOINT + "weight = inf\n", "weight: Input should be a finite number"),
    "weight nan": (ENDPOINT + "weight = nan\n", "weight: Input should be a finite number"),
    "weight huge": (ENDPOINT + "weight = 1e300\n", "less than or equal to 1000000"),
    "weight negative": (ENDPOINT + "weight = -1.0\n", "greater than 0"),
    "rpm inf": (ENDPOINT + "rpm = inf\n", "rpm: Input should be a finite number"),
    "rpm huge": (ENDPOINT + "rpm = 1e20\n", "less than or equal to 1000000"),
    "concurrency huge": (ENDPOINT + "concurrency = 100000000000\n", "less than or equal to 4096"),
    "concurrency zero": (ENDPOINT + "concurrency = 0\n", "greater than or equal to 1"),
    "cooldown inf": (
        "[pools.p]\ncooldown_s = inf\n" + ENDPOINT.split("\n", 1)[1],
        "cooldown_s: Input should be a finite number",
    ),
    "max failures huge": (
        "[pools.p]\nmax_failures = 1000000000\n" + ENDPOINT.split("\n", 1)[1],
        "less than or equal to 1000",
    ),
    "not toml": ("[pools.p\nurl = ", "not valid TOML"),
    "deep toml": ("x = " + DEEP + "\n", "not valid TOML"),
    "no pools": ("x = 1\n", "pools: Field required"),
    "a key in the file": (ENDPOINT + 'api_key = "sk-secret"\n', "never written"),
    "url junk": ('[pools.p]\n[[pools.p.endpoints]]\nurl = "gpu1"\n', "http://"),
}
YAML_POOL = "pools:\n  p:\n    endpoints:\n      - url: http://127.0.0.1:9/v1\n"
ENDPOINTS_YAML = {
    "cooldown .inf": (
        YAML_POOL.replace("endpoints:", "cooldown_s: .inf\n    endpoints:"),
        "cooldown_s: Input should be a finite number",
    ),
    "rpm .nan": (YAML_POOL + "        rpm: .nan\n", "rpm: Input should be a finite number"),
    "deep": ("pools: " + DEEP + "\n", "not valid YAML"),
    "not a table": ("- 1\n- 2\n", "expected a table"),
}


def endpoint_cases(rng: random.Random) -> Iterator[Case]:
    argv = (*RUN, "--model", "openai:m@pool:p", "--endpoints")
    for name, (body, says) in ENDPOINTS_TOML.items():
        yield file_case(f"endpoints {name}", argv, "e.toml", text(body), says)
    for name, (body, says) in ENDPOINTS_YAML.items():
        yield file_case(f"endpoints {name}", argv, "e.yaml", text(body), says)
    for index in range(3):
        body = junk(rng, rng.randrange(64, 2_048))
        yield file_case(f"endpoints junk {index}", argv, "e.toml", body, "can't decode byte")
    yield file_case("endpoints .json", argv, "e.json", b"{}", "use a .toml, .yaml or .yml file")


# --- prompt packs ----------------------------------------------------------------------------

ENTRY = (
    "scenario: trust-population\nprompts:\n  x:\n    text: {text}\n    source: s\n    kind: ours\n"
)
PACKS = {
    "surrogate": (ENTRY.format(text='"\\ud800"'), f"prompts.x.text: \\ud800 {''}"),
    "yaml error": ("scenario: [\n", "not valid YAML, line 2"),
    "tab indent": ("scenario: trust-population\nprompts:\n\tx: 1\n", "not valid YAML, line 3"),
    "not a mapping": ("- a\n- b\n", "not a prompt pack"),
    "wrong kind": (ENTRY.replace("ours", "borrowed").format(text="hi"), "prompts.x.kind"),
    "bare dollar": (ENTRY.format(text='"costs $ 5"'), "'$' that is not a placeholder"),
    "other scenario": (ENTRY.replace("trust-population", "classroom").format(text="hi"), "a pack"),
    "missing entries": (ENTRY.format(text="hi"), "is missing"),
    "deep": ("scenario: " + DEEP + "\n", "nested too deeply"),
    "empty": ("", "not a prompt pack"),
}


def pack_cases(rng: random.Random) -> Iterator[Case]:
    argv = (*RUN, "--prompts")
    for name, (body, says) in PACKS.items():
        yield file_case(f"pack {name}", argv, "p.yaml", text(body), says)
    for index in range(4):
        body = junk(rng, rng.randrange(64, 4_096))
        yield file_case(f"pack junk {index}", argv, "p.yaml", body, NOT_UTF8)
    yield file_case("pack not utf-8", argv, "p.yaml", b"scenario: \xe7\n", "column 11")


# --- sweep grids -----------------------------------------------------------------------------

SWEEP = ("sweep", "trust-population", "--out", "out", "--no-progress", "--n-personas", "1")
MANY = "endowment=" + ",".join(map(str, range(1, 2001)))
GRIDS = [
    (("--vary", "endowment=1,1000000000000000000000000000000"), "--endowment"),
    (("--vary", "n_personas=0,1"), "--n-personas"),
    (("--vary", "n_personas=1000000000"), "--n-personas"),
    (("--vary", "temperature=nan"), "--temperature"),
    (("--vary", "endowment"), "--vary"),
    (("--vary", "bogus=1,2"), "bogus"),
    (("--vary", MANY, "--vary", "max_repairs=0,1,2,3,4,5"), "12,000 cells"),
    (("--seeds", "-1"), "--seeds"),
    (("--seeds", "1,1"), "--seeds"),
    (("--seeds", str(2**70)), "--seeds"),
    (("--concurrency", "1e20"), "--concurrency"),
]


def sweep_cases() -> Iterator[Case]:
    for extra, names in GRIDS:
        yield Case(f"sweep {' '.join(extra)[:40]}", (*SWEEP, *extra), names=names)


# --- readers of a run ------------------------------------------------------------------------

MANIFESTS = {
    "broken manifest": (b'{"status": NaN', "unreadable manifest"),
    "binary manifest": (b"\xff\xfe\x00junk", "unreadable manifest"),
    "list manifest": (b"[1, 2]", "not a personasim manifest"),
}


def reader_cases() -> Iterator[Case]:
    for command in ("view", "metrics", "replay", "export", "audit"):
        yield Case(f"{command} of nothing", (command, "absent"), (), "absent", "not a run")
        for name, (body, says) in MANIFESTS.items():
            files = (("r/manifest.json", body),)
            yield Case(f"{command} of a {name}", (command, "r"), files, "manifest.json", says)
    for port in ("70000", "-1", "http"):
        argv = ("view", "absent", "--serve", "--port", port)
        yield Case(f"view --port {port}", argv, (), "--port")


def generated_cases() -> list[Case]:
    rng = random.Random(SEED)
    cases = [
        *flag_cases(),
        *param_cases(),
        *persona_cases(rng),
        *endpoint_cases(rng),
        *pack_cases(rng),
        *sweep_cases(),
        *reader_cases(),
    ]
    return cases


CASES = generated_cases()


def test_the_table_is_large_and_every_case_is_named_once() -> None:
    assert len(CASES) >= 150
    names = [case.name for case in CASES]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)


def written(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_is_one_error_line_and_nothing_written(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, body in case.files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(body)
    before = written(tmp_path)
    code = main(list(case.argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert lines and lines[0].startswith("error: "), captured.err
    assert all(line.startswith("  ") for line in lines[1:]), captured.err  # one per problem
    assert case.names in lines[0] and case.says in lines[0]
    assert written(tmp_path) == before  # no run directory, no runs/, no half-written file


def test_a_persona_file_too_large_to_read_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sparse 1.5 GB file: refused by its size, so nothing is read into memory."""
    monkeypatch.chdir(tmp_path)
    with open("p.jsonl", "wb") as handle:
        handle.truncate(1_500_000_000)
    assert main([*PEOPLE, "p.jsonl"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "error: --persona-file: p.jsonl: the file is 1.5 GB; a persona file is at most 1 GB "
        "(read whole into memory, several times its size): take a sample of it first"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]


# --- real processes --------------------------------------------------------------------------

SCRIPT = Path(sys.executable).with_name("personasim")
COMMAND = (
    [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "personasim.simulation.cli.main"]
)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_as_processes_the_worst_inputs_are_one_line(tmp_path: Path) -> None:
    """The inputs that broke a process: a size that ran it out of memory, and a raw byte that is
    not UTF-8 on the command line (which Python hands over as a lone surrogate); started
    together."""
    runs = {
        "--n-personas": ["--n-personas", "1000000000"],
        "--counterfactual-levels": ["--counterfactual-levels", os.fsdecode(b"a,\xff")],
    }
    started = {
        names: subprocess.Popen(
            [*COMMAND, *RUN, *argv],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )
        for names, argv in runs.items()
    }
    for names, process in started.items():
        _, err = process.communicate(timeout=120)
        lines = err.decode("utf-8", "replace").strip().splitlines()
        assert process.returncode == 2, lines
        assert len(lines) == 1 and lines[0].startswith("error: ") and names in lines[0], lines
    assert not any(tmp_path.iterdir())
