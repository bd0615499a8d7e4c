"""docs/security.md, tried: a run directory is data (opening one never runs code it names), the
viewer's server answers only this machine's names, and no key written into a spec, a URL or an
endpoints file reaches a file or the screen."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from personasim.simulation.cli.main import main
from personasim.simulation.core import scenario as scenario_module
from personasim.simulation.llm import scripted
from personasim.simulation.llm.masking import find_secrets, is_secret_name, mask_secrets
from personasim.simulation.runs.viewer.viewer import page_csp
from personasim.simulation.runs.viewer.viewer_server import ViewServer, host_name

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
FAKE_LANGCHAIN = "langchain:langchain_core.language_models.fake_chat_models:FakeListChatModel"
KEY = "s3cretKEY4242xyz"
"""A key written where it does not belong; it must appear in no file and on no screen."""
URL = f"http://user:{KEY}@127.0.0.1:9/v1"


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`personasim ARGS` as a process of its own."""
    env = {k: v for k, v in os.environ.items() if k != "PERSONASIM_CACHE_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "personasim.simulation.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- a run directory is data ---------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("security") / "run"
    args = ["run", "trust-population", "--n-personas", "2", "--no-progress", "--no-cache"]
    assert main([*args, "--out", str(out)]) == 0
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hostile_copy(run: Path, where: Path, scenario: str = "evil", status: str = "complete") -> Path:
    """A copy of `run` as someone might send it: `evil.py` beside it writes `where/MARKER` when
    imported, and the manifest names it as the run's scenario file, with its true hash."""
    shared = where / "shared"
    shutil.copytree(run, shared / "run")
    evil = shared / "evil.py"
    evil.write_text(f"open({str(where / 'MARKER')!r}, 'w').write('ran')\n")
    shutil.copy(evil, shared / "run" / "evil.py")
    manifest = json.loads((shared / "run" / "manifest.json").read_text())
    manifest["scenario"] = scenario
    manifest["status"] = status
    manifest["scenario_file"] = {"path": "evil.py", "sha256": sha256(evil), "class": "Evil"}
    (shared / "run" / "manifest.json").write_text(json.dumps(manifest))
    return shared / "run"


OPENING = {
    "view": (["view", "RUN"], 0),
    "view --output": (["view", "RUN", "--output", "RUN/page.html"], 0),
    "metrics": (["metrics", "RUN"], 2),
    "metrics --check": (["metrics", "RUN", "--check"], 2),
    "replay": (["replay", "RUN"], 0),
    "export": (["export", "RUN"], 0),
    "export parquet": (["export", "RUN", "--format", "parquet"], 0),
    "rescore": (["rescore", "RUN", "--role", "judge=scripted", "--out", "RUN-rescored"], 2),
    "audit": (["audit", "RUN"], None),  # 0 or 3 (a 2-reading sample): not what is tried here
    "retry": (["retry", "RUN", "--no-progress"], 2),
}
"""Each command that opens a run: its words and the exit it must give on the hostile copy."""


@pytest.mark.parametrize("scenario", ["evil", "trust-population"])
@pytest.mark.parametrize("command", sorted(OPENING))
def test_opening_a_run_never_imports_the_code_its_manifest_names(
    finished_run: Path, tmp_path: Path, monkeypatch, capsys, command: str, scenario: str
) -> None:
    """In the run's folder (so the manifest's relative path resolves to evil.py), each command
    gives its answer and evil.py never runs; a name an installed scenario has does not make the
    file's run that scenario's either."""
    run = hostile_copy(finished_run, tmp_path, scenario, status="interrupted")
    monkeypatch.chdir(run.parent)
    words, code = OPENING[command]
    given = main([w.replace("RUN", str(run)) for w in words])
    captured = capsys.readouterr()
    assert not (tmp_path / "MARKER").exists()
    assert code is None or given == code, captured.err
    if given == 2:  # refused in one line that says why
        assert captured.err.startswith("error:") and captured.err.count("\n") == 1
    if command.startswith("metrics") or command == "retry":
        assert "pass --scenario-file FILE" in captured.err


def test_view_shows_what_it_can_and_says_what_it_cannot(
    finished_run: Path, tmp_path: Path, capsys
) -> None:
    run = hostile_copy(finished_run, tmp_path)
    assert main(["view", str(run)]) == 0
    note = capsys.readouterr().err
    assert (
        note.startswith(f"note: {run}: the scenario's summary lines") and "--scenario-file" in note
    )
    page = (run / "view.html").read_text()
    data = json.loads(re.search(r'id="runs">(.*?)</script>', page).group(1))[0]
    assert data["metrics"] == json.loads((run / "metrics.json").read_text())
    assert len(data["agents"]["rows"]) == 3 and "not shown" in data["summary"][0]
    assert not (tmp_path / "MARKER").exists()


def test_only_a_named_file_with_the_recorded_hash_is_loaded(
    finished_run: Path, tmp_path: Path, capsys
) -> None:
    """`--scenario-file` names the code; another file (here one that would leave a marker of its
    own) is refused before it runs, and a run of an installed scenario takes none."""
    run = hostile_copy(finished_run, tmp_path, status="interrupted")
    other = tmp_path / "other.py"
    other.write_text(f"open({str(tmp_path / 'OTHER')!r}, 'w').close()\n")
    for words in (["metrics", str(run)], ["view", str(run)], ["retry", str(run)]):
        capsys.readouterr()
        assert main([*words, "--scenario-file", str(other)]) == 2
        err = capsys.readouterr().err.replace("\n", "")
        assert f"--scenario-file {other}: sha256 {sha256(other)[:12]}" in err
        assert "is not the file the run used" in err
    assert main(["metrics", str(run), "--scenario-file", str(tmp_path / "gone.py")]) == 2
    assert "gone.py: no such file" in capsys.readouterr().err
    for command in ("metrics", "view"):  # a run of an installed scenario takes none
        assert main([command, str(finished_run), "--scenario-file", str(other)]) == 2
        assert "leave --scenario-file out" in capsys.readouterr().err
    assert not (tmp_path / "OTHER").exists() and not (tmp_path / "MARKER").exists()


@pytest.fixture
def registries() -> Iterator[None]:
    """A scenario file loaded here registers its rules; later tests see the registries as before."""
    scenario_module.list_scenarios()  # built-ins imported before the snapshot
    with scenario_module.SCENARIOS.scoped(), scripted.RULES.scoped():
        yield


def test_the_named_file_gives_the_page_its_summary_lines(tmp_path: Path, registries, capsys):
    script = tmp_path / "coin_guess.py"
    shutil.copy(EXAMPLE, script)
    args = ["--n-personas", "2", "--rounds", "1", "--no-progress", "--no-cache"]
    assert main(["run", str(script), *args, "--out", str(tmp_path / "run")]) == 0
    assert main(["view", str(tmp_path / "run"), "--scenario-file", str(script)]) == 0
    assert "note:" not in capsys.readouterr().err
    page = (tmp_path / "run" / "view.html").read_text()
    summary = json.loads(re.search(r'id="runs">(.*?)</script>', page).group(1))[0]["summary"]
    assert summary and "2 guesses" in summary[0]


def test_a_malformed_scenario_file_record_is_one_line(finished_run: Path, tmp_path: Path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["scenario_file"] = "evil.py"
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["metrics", str(run)]) == 2
    assert "malformed scenario_file record" in capsys.readouterr().err
    assert main(["view", str(run)]) == 0  # the page, without the summary lines


@pytest.mark.slow
def test_each_command_as_its_own_process_leaves_evil_py_unrun(
    finished_run: Path, tmp_path: Path
) -> None:
    """The break as it was found: real `personasim` processes in the folder a shared run was
    unpacked in (about 2 s each)."""
    run = hostile_copy(finished_run, tmp_path, status="interrupted")
    for name, (words, code) in OPENING.items():
        done = cli(*(w.replace("RUN", "run") for w in words), cwd=run.parent)
        assert "Traceback" not in done.stderr, (name, done.stderr)
        assert code is None or done.returncode == code, (name, done.stderr)
        assert not (tmp_path / "MARKER").exists(), name


# -- the viewer's server -------------------------------------------------------------------


def request(port: int, host: str | None, path: str = "/") -> tuple[int, dict[str, str], bytes]:
    """GET `path` from 127.0.0.1:`port` with this Host header (None: none at all)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("GET", path, skip_host=True)
    if host is not None:
        connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), body


@pytest.fixture
def page_server() -> Iterator[ViewServer]:
    with ViewServer("<html><body>the run page</body></html>", port=0) as server:
        server.serve_in_background()
        yield server
        server.shutdown()


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example", "10.0.0.1", "",
             "localhost:{port}:1", "[::1", "localhost.evil", None],
)  # fmt: skip
def test_a_request_for_another_name_is_refused(page_server: ViewServer, host: str | None) -> None:
    """What a DNS-rebinding page sends (its own name, resolved to 127.0.0.1) gets 403 and a
    short body, never the page."""
    port = page_server.server_address[1]
    status, headers, body = request(port, None if host is None else host.format(port=port))
    assert status == 403 and b"the run page" not in body and len(body) < 200
    assert headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "127.0.0.1", "localhost:{port}", "LOCALHOST", "[::1]:{port}",
             "[::1]", "localhost."],
)  # fmt: skip
def test_a_request_for_this_machine_is_served(page_server: ViewServer, host: str) -> None:
    port = page_server.server_address[1]
    status, headers, body = request(port, host.format(port=port))
    assert status == 200 and b"the run page" in body
    assert headers["Content-Security-Policy"] == page_csp(frame=True)
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"


def test_two_host_headers_are_refused(page_server: ViewServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", page_server.server_address[1], timeout=10)
    connection.putrequest("GET", "/", skip_host=True)
    connection.putheader("Host", "127.0.0.1")
    connection.putheader("Host", "evil.example")
    connection.endheaders()
    assert connection.getresponse().status == 403


def test_the_host_served_is_answered_too() -> None:
    assert host_name("Example.COM:80") == "example.com" and host_name("[::1]:8") == "::1"
    assert host_name("a:b") is None and host_name("[::1]x") is None
    with ViewServer("page", port=0, host="localhost") as server:
        server.serve_in_background()
        assert request(server.server_address[1], "localhost")[0] == 200
        server.shutdown()


def test_the_csp_allows_exactly_the_pages_own_script_and_style(finished_run: Path, tmp_path):
    """The page's inline script and style are the ones the policy names by hash (so the page
    runs), and nothing else may load: no script, style, fetch or frame from anywhere."""
    target = tmp_path / "page.html"
    assert main(["view", str(finished_run), "--output", str(target)]) == 0
    html = target.read_text()
    (meta,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    assert meta == page_csp() and page_csp(frame=True) == meta + "; frame-ancestors 'none'"
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.S)
    (style,) = re.findall(r"<style>(.*?)</style>", html, re.S)

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src 'sha256-{digest(script)}';" in meta
    assert f"style-src 'sha256-{digest(style)}';" in meta
    assert "default-src 'none'" in meta and "unsafe" not in meta and "connect-src" not in meta


@pytest.mark.parametrize("port", ["70000", "-1", "x", "65536"])
def test_a_port_out_of_range_is_one_line(finished_run: Path, port: str, capsys) -> None:
    assert main(["view", str(finished_run), "--serve", "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument --port: a port is 0 to 65535") and err.count("\n") == 1


@pytest.mark.slow
def test_view_serve_as_a_process_refuses_a_rebinding_request(finished_run: Path) -> None:
    """`personasim view RUN --serve`: a free port (printed), the page for 127.0.0.1, 403 for
    `Host: evil.example` (about 5 s: the process starts and builds the page)."""
    env = {k: v for k, v in os.environ.items() if k != "PERSONASIM_CACHE_DIR"}
    command = [sys.executable, "-m", "personasim.simulation.cli.main", "view", str(finished_run)]
    process = subprocess.Popen(
        [*command, "--serve"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        found = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
        assert found, line + process.stderr.read()  # type: ignore[union-attr]
        port = int(found.group(1))
        assert port != 8000
        assert request(port, "evil.example")[0] == 403
        status, _, body = request(port, f"127.0.0.1:{port}")
        assert status == 200 and b'id="runs"' in body
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.browser
def test_the_served_page_renders_under_its_policy(finished_run: Path, tmp_path: Path) -> None:
    """Headless Chromium on the served page (the CSP header and the page's meta tag both
    apply): the script ran and drew the run's cards."""
    from test_viewer_browser import chromium

    html = (finished_run / "view.html").read_text() if (finished_run / "view.html").exists() else ""
    if not html:
        assert main(["view", str(finished_run)]) == 0
        html = (finished_run / "view.html").read_text()
    with ViewServer(html, port=0) as server:
        server.serve_in_background()
        command = [
            chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
            "--dump-dom", server.url,
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
        server.shutdown()
    assert "<h2>Results</h2>" in done.stdout and "<h2>Agents (3)</h2>" in done.stdout


# -- no secret on disk or screen -----------------------------------------------------------


def files_holding(root: Path, text: str, besides: Path | None = None) -> list[Path]:
    return [
        p
        for p in root.rglob("*")
        if p.is_file() and p != besides and text.encode() in p.read_bytes()
    ]


def trust(*more: str) -> list[str]:
    return ["run", "trust-population", "--n-personas", "2", "--no-progress", "--out", "r", *more]


SECRET_CASES = {
    "key in the URL's query": trust("--model", f"openai:m@http://127.0.0.1:9/v1?api_key={KEY}"),
    "user:key in the URL": trust("--model", f"openai:m@http://user:{KEY}@127.0.0.1:9/v1"),
    "token in the URL's query": trust("--model", f"openai:m@http://h/v1?x=1&access_token={KEY}"),
    "langchain api_key": trust("--model", f"{FAKE_LANGCHAIN}?api_key={KEY}"),
    "langchain openai_api_key": trust("--model", f"{FAKE_LANGCHAIN}?openai_api_key={KEY}"),
    "--base-url with user:key": trust("--model", "openai:m", "--base-url", f"http://u:{KEY}@h/v1"),
    "two --base-url": trust(
        "--model", "openai:m", "--base-url", "http://h/v1", "--base-url", f"http://h2/v1?key={KEY}"
    ),
    "--role": ["run", "classroom", "--out", "r", "--role", f"judge=openai:m@{URL}"],
    "--role badly named": ["run", "classroom", "--out", "r", "--role", f"J=openai:m?key={KEY}"],
    "sweep": ["sweep", "trust-population", "--out", "r", "--models", f"scripted,openai:m@{URL}"],
    "dry run": [*trust("--model", f"openai:m@http://u:{KEY}@h/v1"), "--dry-run"],
    "key-like value": trust("--model", "openai:m@http://h/v1/sk-abcdefghijklmnopqrstuvwx"),
}


@pytest.mark.parametrize("case", sorted(SECRET_CASES))
def test_a_key_in_a_spec_or_url_is_refused_masked(
    case: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    assert main(SECRET_CASES[case]) == 2
    captured = capsys.readouterr()
    key = "sk-abcdefghijklmnopqrstuvwx" if case == "key-like value" else KEY
    assert captured.err.startswith("error:") and captured.err.count("\n") == 1
    assert key not in captured.err + captured.out and "***" in captured.err
    assert "environment" in captured.err or "use NAME=MODEL" in captured.err
    assert not (tmp_path / "r").exists() and files_holding(tmp_path, key) == []


def test_a_key_in_openai_base_url_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:{KEY}@127.0.0.1:9/v1")
    assert main(trust("--model", "openai:m")) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: OPENAI_BASE_URL http://***@127.0.0.1:9/v1 holds a key")
    assert KEY not in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("url", "what"),
    [
        (f"http://user:{KEY}@127.0.0.1:9/v1", "user:password"),
        (f"http://h/v1?token={KEY}", "token="),
    ],
)
def test_an_endpoints_file_with_a_key_in_a_url_names_the_file_and_entry(
    url: str, what: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    endpoints = tmp_path / "pools.toml"
    endpoints.write_text(
        f'[pools.gpus]\n[[pools.gpus.endpoints]]\nurl = "http://ok:8000/v1"\n'
        f'[[pools.gpus.endpoints]]\nurl = "{url}"\n'
    )
    assert main(trust("--model", "openai:m@pool:gpus", "--endpoints", str(endpoints))) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {endpoints}:5: pools.gpus.endpoints[1].url: ")
    assert what in err and "key_env" in err and KEY not in err and err.count("\n") == 1
    assert files_holding(tmp_path, KEY, besides=endpoints) == []


def test_audit_and_retry_refuse_a_key_masked(finished_run: Path, tmp_path: Path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    spec = f"reader=openai:m@http://u:{KEY}@127.0.0.1:9/v1"
    assert main(["audit", str(run), "--role", spec]) == 2
    assert main(["audit", str(run), "--role", spec.replace("reader", "judge")]) == 2
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    assert main(["retry", str(run), "--base-url", f"http://u:{KEY}@h/v1"]) == 2
    err = capsys.readouterr().err
    assert KEY not in err and err.count("error:") == 3 and err.count("***") >= 3
    assert files_holding(tmp_path, KEY) == []
    assert {p for p in run.rglob("*") if p.is_file()} == set(before)


@pytest.mark.slow
def test_a_key_in_a_url_as_its_own_process(tmp_path: Path) -> None:
    """The three breaks as reported, as processes: one line, no traceback, no key anywhere."""
    for spec in (
        f"openai:fake@http://127.0.0.1:9/v1?api_key={KEY}",
        f"openai:fake@http://user:{KEY}@127.0.0.1:9/v1",
        f"langchain:langchain_openai:ChatOpenAI?api_key={KEY}",
    ):
        done = cli(*trust("--model", spec), cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1 and KEY not in done.stderr + done.stdout
    assert files_holding(tmp_path, KEY) == []


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("openai:m@http://user:pw@host/v1", "openai:m@http://***@host/v1"),
        ("http://u:p@ss@host:80/v1", "http://***@host:80/v1"),
        ("http://h/v1?api_key=abc&x=1", "http://h/v1?api_key=***&x=1"),
        ("http://h/v1?X-Amz-Signature=abc", "http://h/v1?X-Amz-Signature=***"),
        ("langchain:m:C?apikey=a&temperature=0", "langchain:m:C?apikey=***&temperature=0"),
        ("langchain:m:C?max_tokens=5&model=x", "langchain:m:C?max_tokens=5&model=x"),
        ("openai:gpt-4o@pool:gpus", "openai:gpt-4o@pool:gpus"),
        ("openai:m@http://h:8000/v1", "openai:m@http://h:8000/v1"),
        ("scripted:drift=0.2,seed=3", "scripted:drift=0.2,seed=3"),
        ("Bearer abcdefghijkl", "***"),
    ],
)
def test_masking(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert bool(find_secrets(text)) == (masked != text)


@pytest.mark.parametrize(
    ("name", "secret"),
    [("api_key", True), ("apikey", True), ("key", True), ("token", True), ("access_token", True),
     ("secret", True), ("password", True), ("clientSecret", True), ("APIKey", True),
     ("openai_api_key", True), ("x-api-key", True), ("max_tokens", False), ("model", False),
     ("temperature", False), ("top_k", False), ("base_url", False)],
)  # fmt: skip
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret
