"""The trust scenarios send every text of their prompt pack, and only from the pack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from personasim.simulation import (
    ChatRequest,
    ChatResponse,
    ScriptedBackend,
    SQLiteEventStore,
    list_scenarios,
    run_scenario,
)


class FirstAnswersUnusable(ScriptedBackend):
    """The scripted model, except that every first attempt is unreadable, so every task's
    re-ask (its reminder) is sent too."""

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "garbled": "every first attempt"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        if len(request.messages) == 1:
            return ChatResponse(text="I would rather not say.")
        return await super().complete(request, timeout)


def marked_pack(scenario: str, path: Path) -> list[str]:
    """The shipped pack with `[[entry]]` appended to each entry's text; its entry names."""
    shipped = Path(list_scenarios()[scenario].shipped_prompts().path)
    data = yaml.safe_load(shipped.read_text())
    for name, entry in data["prompts"].items():
        entry["text"] += f" [[{name}]]"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return list(data["prompts"])


def sent_texts(run_dir: Path) -> str:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        calls = [e.payload["messages"] for e in store.read(["llm.call"])]
    return "\n".join(m["content"] for messages in calls for m in messages)


@pytest.mark.parametrize(
    ("scenario", "params", "unused"),
    [
        ("trust-population", {"n_personas": 3}, set()),
        ("trust-beliefs", {"n_personas": 6, "attributes": "Age,Religion"}, set()),
        (
            "trust-conditioning",
            {"n_personas": 6, "attributes": "Age,Religion", "strategy": "Ctx+Tr"},
            {"belief_dollars"},  # only Ctx+$ asks for dollars
        ),
        (
            "trust-conditioning",
            {"n_personas": 6, "attributes": "Age,Religion", "strategy": "Ctx+$"},
            {"belief_ranking"},  # Ctx+$ asks for dollars, not a ranking
        ),
        ("trust-forecast", {"n_personas": 1, "rounds": 2, "archetypes": "M3"}, set()),
    ],
)
def test_every_pack_entry_reaches_the_model(
    tmp_path: Path, scenario: str, params: dict[str, Any], unused: set[str]
) -> None:
    pack = tmp_path / "pack.yaml"
    names = marked_pack(scenario, pack)
    result = run_scenario(
        scenario,
        {**params, "max_repairs": 1},
        out=tmp_path / "r",
        backend=FirstAnswersUnusable(),
        prompts=pack,
        progress=False,
        use_cache=False,
    )
    sent = sent_texts(result.run_dir)
    missing = [n for n in names if n not in unused and f"[[{n}]]" not in sent]
    assert missing == []
    assert all(f"[[{n}]]" not in sent for n in unused)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["prompts"]["file"] == str(pack)


def test_the_manifest_says_the_level_order_is_shuffled_per_run(tmp_path: Path) -> None:
    """The belief prompts are verbatim but list the levels in a seeded order of our own: the
    pack says so and the manifest records it; the order itself is in `trust.levels`."""
    orders = []
    for seed in (0, 1):
        result = run_scenario(
            "trust-beliefs",
            {"n_personas": 20, "strategies": "NoCtx+Tr"},
            out=tmp_path / f"r{seed}",
            seed=seed,
            progress=False,
        )
        manifest = json.loads((result.run_dir / "manifest.json").read_text())
        recorded = manifest["prompts"]["order"]
        assert set(recorded) == {"belief_ranking", "belief_dollars"}
        assert all("seeded" in text and "verbatim" in text for text in recorded.values())
        with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
            (levels,) = [e.payload for e in store.read(["trust.levels"])]
        orders.append(levels["shown_order"])
    assert orders[0] != orders[1]  # another seed, another order
