"""Prompt packs: written by `personasim prompts`, edited, validated, sent, recorded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from personasim.scenarios.trust.population import TrustPopulation
from personasim.simulation import SQLiteEventStore, list_scenarios
from personasim.simulation.cli.main import main
from personasim.simulation.llm.prompts import PromptPack, PromptPackError

ORIGINAL = "5. Condition your action on your persona profile."
EDITED = "5. Let the character profile above guide what you do."


def write_pack(tmp_path: Path, capsys, scenario: str = "trust-population") -> Path:
    path = tmp_path / "pack.yaml"
    assert main(["prompts", scenario, "--output", str(path)]) == 0
    assert f"prompts written to {path}" in capsys.readouterr().err
    return path


def run(tmp_path: Path, *extra: str) -> int:
    args = ["run", "trust-population", "--n-personas", "4", "--no-progress"]
    return main([*args, "--out", str(tmp_path / "r"), *extra])


def sent_prompts(run_dir: Path) -> list[str]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.payload["messages"][0]["content"] for e in store.read(["llm.call"])]


def test_an_edited_sentence_is_what_the_model_sees(tmp_path: Path, capsys) -> None:
    path = write_pack(tmp_path, capsys)
    text = path.read_text()
    assert ORIGINAL in text
    path.write_text(text.replace(ORIGINAL, EDITED))
    assert run(tmp_path, "--prompts", str(path)) == 0
    prompts = sent_prompts(tmp_path / "r")
    assert len(prompts) >= 4
    assert all(EDITED in p and ORIGINAL not in p for p in prompts)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["prompts"] == {
        "scenario": "trust-population",
        "sha256": digest,
        "shipped": False,
        "file": str(path),
    }
    # replay shows the texts actually sent
    agent = json.loads((tmp_path / "r" / "metrics.json").read_text())  # run finished
    assert agent["partial"] is False
    assert main(["replay", str(tmp_path / "r"), "--agent", first_persona(tmp_path / "r")]) == 0
    assert EDITED in capsys.readouterr().out


def first_persona(run_dir: Path) -> str:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return next(e.agent_id for e in store.read(["llm.call"]))


def test_the_shipped_pack_is_recorded_by_default(tmp_path: Path) -> None:
    assert run(tmp_path) == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    shipped = TrustPopulation.shipped_prompts()
    # named by scenario and content hash, never by the path it was installed at
    assert manifest["prompts"] == {
        "scenario": "trust-population",
        "sha256": hashlib.sha256(Path(shipped.path).read_bytes()).hexdigest(),
        "shipped": True,
    }
    assert all(ORIGINAL in p for p in sent_prompts(tmp_path / "r"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["prompts"]["trustor"].update(
            text=d["prompts"]["trustor"]["text"].replace("${persona_details}", "")),
         "entry 'trustor' lacks ${persona_details}"),
        (lambda d: d["prompts"]["format_reminder"].update(
            text=d["prompts"]["format_reminder"]["text"] + " ${mood}"),
         "entry 'format_reminder' has unknown ${mood}"),
        (lambda d: d["prompts"].pop("format_reminder"), "entry 'format_reminder' is missing"),
        (lambda d: d["prompts"]["trustor"].update(kind="borrowed"), "prompts.trustor.kind"),
        (lambda d: d.update(scenario="classroom"), "a pack for 'classroom'"),
        (lambda d: d["prompts"]["format_reminder"].update(
            text="Pay $8 now. ${error} ${initial_amount}"),
         "entry 'format_reminder' has a '$' that is not a placeholder near 'Pay $8 now"),
    ],
)  # fmt: skip
def test_a_broken_pack_is_refused_before_anything_runs(
    tmp_path: Path, capsys, edit, message: str
) -> None:
    path = write_pack(tmp_path, capsys)
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert run(tmp_path, "--prompts", str(path)) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err
    assert not (tmp_path / "r").exists()


def test_unreadable_pack_files_are_named(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("prompts: [unclosed")
    assert run(tmp_path, "--prompts", str(bad)) == 2
    assert f"{bad}: not valid YAML" in capsys.readouterr().err
    assert run(tmp_path, "--prompts", str(tmp_path / "none.yaml")) == 2
    assert "cannot read the prompt pack" in capsys.readouterr().err


def test_resume_with_another_pack_is_refused(tmp_path: Path, capsys) -> None:
    path = write_pack(tmp_path, capsys)
    assert run(tmp_path) == 0
    path.write_text(path.read_text().replace(ORIGINAL, EDITED))
    assert run(tmp_path, "--resume", "--prompts", str(path)) == 2
    assert "cannot resume" in capsys.readouterr().err


def test_prompts_to_stdout_is_the_shipped_file(capsys) -> None:
    assert main(["prompts", "trust-population"]) == 0
    shipped = list_scenarios()["trust-population"].shipped_prompts()
    assert capsys.readouterr().out == Path(shipped.path).read_text()


def test_every_shipped_pack_has_provenance_for_each_entry() -> None:
    packs = [s.shipped_prompts() for s in list_scenarios().values()]
    packs = [p for p in packs if p is not None]
    assert len(packs) >= 4
    for pack in packs:
        for name, entry in pack.entries.items():
            assert entry.source and entry.kind in ("verbatim", "adapted", "ours"), name
            assert entry.text.strip(), name


def test_render_needs_every_placeholder(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    entry = "    source: s\n    kind: ours\n    text: 'Pay $$${n} to ${who}'\n"
    path.write_text("scenario: x\nprompts:\n  a:\n" + entry)
    pack = PromptPack.load(path)
    assert pack.render("a", n=3, who="Ann") == "Pay $3 to Ann"
    assert pack.entries["a"].placeholders() == {"n", "who"}
    with pytest.raises(KeyError):
        pack.render("a", n=3)
    with pytest.raises(PromptPackError, match=r"prompts\.a\.source"):
        PromptPack.load(path, "scenario: x\nprompts:\n  a: {kind: ours, text: t}\n")
