"""How many decisions each career-chat role may make, for `personasim run --dry-run`.

A dialogue ends when the simulated user says its goals are covered (at the first question, at
the soonest) or after `max_turns` exchanges; only a finished dialogue is probed in the dialogue
format and judged. The scripted double's dialogues end where its rules say, so the dry run
takes these limits instead of its counts (`Scenario.decision_ranges`). Each role's range holds
on its own: the fewest probes and judgements need every dialogue to fail, which costs re-asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from personasim.environments.career_chat import DIMENSIONS
from personasim.simulation import DecisionRange, Event

if TYPE_CHECKING:
    from personasim.scenarios.career_chat.scenario import CareerChatParams

__all__ = ["career_decision_ranges"]

USABLE_ENDS = ("goals_covered", "max_turns")


def career_decision_ranges(
    params: CareerChatParams, events: Sequence[Event]
) -> dict[str, DecisionRange]:
    """User, detector and assistant decisions from the dialogues' turn limit (none when they
    are replayed from `dialogues_from`), respondent and judge decisions from how many dialogues
    may end usable; the classifier's (one a distinct title) are the scripted run's."""
    users = sum(
        e.kind == "agent.created" and e.payload.get("type") == "UserSimulator" for e in events
    )
    items = next((len(e.payload["items"]) for e in events if e.kind == "career.survey"), 0)
    ended = [e for e in events if e.kind == "career.dialogue_ended"]
    ranges: dict[str, DecisionRange] = {}
    if params.dialogues_from is None:
        n, turns = len(ended), params.max_turns
        dialogues = f"{n} dialogues of 1 to --max-turns {turns} questions"
        ranges["user"] = DecisionRange(n, n * turns, dialogues)
        for role in ("detector", "assistant"):
            ranges[role] = DecisionRange(0, n * turns, f"{dialogues}, 0 to {turns} answered")
        fewest, most = 0, users
    else:  # replayed: which dialogues are usable is recorded, not up to the model
        fewest = most = sum(e.payload["reason"] in USABLE_ENDS for e in ended)
    per_probe = (1, 2) if params.reasoning_pass else (1, 1)
    thinking = ", each after a reasoning pass (none if it fails)" if params.reasoning_pass else ""
    ranges["respondent"] = DecisionRange(
        (users + fewest) * items * per_probe[0],
        (users + most) * items * per_probe[1],
        f"{items} items for {users} profiles and for {fewest} to {most} usable dialogues"
        + thinking,
    )
    per_dialogue = len(DIMENSIONS) * params.judge_samples
    if per_dialogue:
        ranges["judge"] = DecisionRange(
            fewest * per_dialogue,
            most * per_dialogue,
            f"{fewest} to {most} usable dialogues x {len(DIMENSIONS)} dimensions x "
            f"--judge-samples {params.judge_samples}",
        )
    return ranges
