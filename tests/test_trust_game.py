"""TrustGame rules, fixed-archetype trustees and Environment membership, on a real Simulation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from personasim.environments import TrusteeAgent, TrustGame, TrustOutcome, archetype_cap
from personasim.simulation import (
    EventLog,
    InvalidActionError,
    LLMClient,
    ScriptedBackend,
    SimAgent,
    Simulation,
    SQLiteEventStore,
)


class Trustor(SimAgent):
    """The smallest possible agent: the test makes its moves."""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteEventStore]:
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        yield store


@pytest.fixture
def sim(store: SQLiteEventStore) -> Simulation:
    return Simulation(seed=0, llm=LLMClient(ScriptedBackend()), log=EventLog(store))


@pytest.fixture
def game(sim: Simulation) -> TrustGame:
    return TrustGame(sim, endowment=10, multiplier=3)


@pytest.fixture
def trustor(sim: Simulation) -> Trustor:
    return Trustor(sim, "p1")


@pytest.fixture
def trustee(sim: Simulation) -> TrusteeAgent:
    return TrusteeAgent(sim, "M3")


def events(store: SQLiteEventStore, kind: str) -> list[tuple[str | None, int | None, dict]]:
    return [(e.agent_id, e.round, e.payload) for e in store.read(kinds=[kind])]


# --- transfer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sent", [-1, -0.5, 11, 10.5, 2.5, 0.1, 100])
def test_invalid_transfers_are_refused(
    game: TrustGame, trustor: Trustor, trustee: TrusteeAgent, store: SQLiteEventStore, sent: float
) -> None:
    with pytest.raises(InvalidActionError):
        game.check_transfer(sent)
    with pytest.raises(InvalidActionError):
        game.transfer(trustor, trustee, sent)
    assert events(store, "trust.transfer") == []
    assert game.transfer(trustor, trustee, 2) == 6  # a refused move leaves nothing pending


@pytest.mark.parametrize(("sent", "whole"), [(0, 0), (10, 10), (4.0, 4), (7, 7)])
def test_valid_transfers_are_whole_dollars(game: TrustGame, sent: float, whole: int) -> None:
    amount = game.check_transfer(sent)
    assert amount == whole and isinstance(amount, int)


@pytest.mark.parametrize("sent", [0, 1, 4, 10])
def test_received_is_multiplier_times_sent(
    game: TrustGame, trustor: Trustor, trustee: TrusteeAgent, sent: int
) -> None:
    assert game.transfer(trustor, trustee, sent) == 3 * sent


def test_other_multiplier_and_endowment(sim: Simulation, trustor: Trustor) -> None:
    game = TrustGame(sim, endowment=44, multiplier=5, name="big")
    trustee = TrusteeAgent(sim, "M5")
    assert game.transfer(trustor, trustee, 44) == 220
    with pytest.raises(InvalidActionError):
        game.check_transfer(45)
    assert game.settings() == {"endowment": 44, "multiplier": 5, "rounds": 1}


@pytest.mark.parametrize("settings", [{"endowment": 0}, {"multiplier": 0}, {"rounds": 0}])
def test_game_settings_must_be_positive(sim: Simulation, settings: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        TrustGame(sim, **settings)


@pytest.mark.parametrize("sent", [float("inf"), float("1" + "0" * 400), float("nan")])
def test_non_finite_transfers_are_refused_as_invalid_actions(game: TrustGame, sent: float) -> None:
    """Regression: int(inf) / int(nan) escaped as OverflowError / ValueError."""
    with pytest.raises(InvalidActionError):
        game.check_transfer(sent)


# --- repay and payoffs ------------------------------------------------------------------------


@pytest.mark.parametrize("returned", [-1, -0.01, 12.01, 13, 100])
def test_repay_bounds(
    game: TrustGame, trustor: Trustor, trustee: TrusteeAgent, returned: float
) -> None:
    assert game.transfer(trustor, trustee, 4) == 12
    with pytest.raises(InvalidActionError):
        game.repay(trustor, trustee, returned)
    assert game.history == {}
    assert game.repay(trustor, trustee, 12).returned == 12  # still pending, and 12 is allowed


@pytest.mark.parametrize(("sent", "returned"), [(4, 0), (4, 5), (4, 12), (0, 0), (10, 7.5)])
def test_payoffs(
    game: TrustGame, trustor: Trustor, trustee: TrusteeAgent, sent: int, returned: float
) -> None:
    received = game.transfer(trustor, trustee, sent)
    outcome = game.repay(trustor, trustee, returned)
    assert outcome == TrustOutcome(
        round=None,
        sent=sent,
        received=3 * sent,
        returned=returned,
        trustor_payoff=10 - sent + returned,
        trustee_payoff=received - returned,
    )


def test_repay_without_transfer_is_refused(
    game: TrustGame, trustor: Trustor, trustee: TrusteeAgent, store: SQLiteEventStore
) -> None:
    with pytest.raises(InvalidActionError, match="never sent"):
        game.repay(trustor, trustee, 0)
    game.transfer(trustor, trustee, 1)
    game.repay(trustor, trustee, 1)
    with pytest.raises(InvalidActionError):
        game.repay(trustor, trustee, 1)  # already settled
    assert len(events(store, "trust.return")) == 1


def test_double_transfer_in_one_round_is_refused(
    sim: Simulation, game: TrustGame, trustor: Trustor, trustee: TrusteeAgent
) -> None:
    sim.begin_round(1)
    game.transfer(trustor, trustee, 3)
    with pytest.raises(InvalidActionError, match="already sent"):
        game.transfer(trustor, trustee, 2)
    assert game.repay(trustor, trustee, 3).sent == 3  # the first transfer stands


def test_transfer_after_settling_is_still_refused_in_the_same_round(
    sim: Simulation, game: TrustGame, trustor: Trustor, trustee: TrusteeAgent
) -> None:
    """Regression: only an unsettled transfer used to block a second one in the round."""
    sim.begin_round(1)
    game.transfer(trustor, trustee, 3)
    game.repay(trustor, trustee, 3)
    with pytest.raises(InvalidActionError, match="this round"):
        game.transfer(trustor, trustee, 2)
    sim.end_round()
    sim.begin_round(2)
    assert game.transfer(trustor, trustee, 2) == 6  # the next round is a new move


def test_history_per_pair_across_rounds(
    sim: Simulation, game: TrustGame, trustee: TrusteeAgent
) -> None:
    alice, bob = Trustor(sim, "alice"), Trustor(sim, "bob")
    for round_index, (a_sent, b_sent) in enumerate([(2, 5), (4, 0)], start=1):
        sim.begin_round(round_index)
        for who, sent in ((alice, a_sent), (bob, b_sent)):
            received = game.transfer(who, trustee, sent)
            game.repay(who, trustee, trustee.respond(received))
        sim.end_round()
    assert set(game.history) == {("alice", "trustee-M3"), ("bob", "trustee-M3")}
    assert [(o.round, o.sent, o.returned) for o in game.history[("alice", "trustee-M3")]] == [
        (1, 2, 3),
        (2, 4, 3),
    ]
    assert [(o.round, o.sent, o.returned) for o in game.history[("bob", "trustee-M3")]] == [
        (1, 5, 3),
        (2, 0, 0),
    ]


def test_moves_are_logged(
    sim: Simulation,
    game: TrustGame,
    trustor: Trustor,
    trustee: TrusteeAgent,
    store: SQLiteEventStore,
) -> None:
    sim.begin_round(2)
    game.transfer(trustor, trustee, 4)
    game.repay(trustor, trustee, 5)
    assert events(store, "trust.transfer") == [
        ("p1", 2, {"env": "trust_game", "trustee": "trustee-M3", "sent": 4, "received": 12})
    ]
    assert events(store, "trust.return") == [
        (
            "trustee-M3",
            2,
            {
                "env": "trust_game",
                "trustor": "p1",
                "sent": 4,
                "received": 12,
                "returned": 5,
                "trustor_payoff": 11,
                "trustee_payoff": 7,
            },
        )
    ]
    assert events(store, "env.created") == [
        (
            None,
            None,
            {
                "env": "trust_game",
                "kind": "trust_game",
                "settings": {"endowment": 10, "multiplier": 3, "rounds": 1},
            },
        )
    ]


# --- trustee archetypes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("archetype", "received", "returned"),
    [
        ("M1", 30, 1),
        ("M1", 0, 0),
        ("M3", 30, 3),
        ("M3", 3, 3),
        ("M3", 2, 2),
        ("M5", 30, 5),
        ("M5", 3, 3),
        ("M5", 0, 0),
        ("M10", 12, 10),
    ],
)
def test_archetype_returns_min_of_cap_and_received(
    sim: Simulation, archetype: str, received: int, returned: int
) -> None:
    trustee = TrusteeAgent(sim, archetype)
    assert trustee.respond(received) == returned
    assert trustee.cap == archetype_cap(archetype)
    assert trustee.agent_id == f"trustee-{archetype}"


def test_trustee_is_announced_with_its_archetype(sim: Simulation, store: SQLiteEventStore) -> None:
    TrusteeAgent(sim, "M5", agent_id="t")
    assert events(store, "agent.created") == [
        ("t", None, {"type": "TrusteeAgent", "archetype": "M5", "max_return": 5})
    ]


@pytest.mark.parametrize(("archetype", "cap"), [("M1", 1), ("M3", 3), ("M5", 5), ("M12", 12)])
def test_archetype_cap(archetype: str, cap: int) -> None:
    assert archetype_cap(archetype) == cap


@pytest.mark.parametrize("archetype", ["X3", "M", "m3", "M3x", "3", "", "M-1", " M3"])
def test_archetype_cap_rejects_unknown_archetypes(archetype: str) -> None:
    with pytest.raises(ValueError, match="archetype"):
        archetype_cap(archetype)


def test_trustee_with_unknown_archetype_is_not_created(sim: Simulation) -> None:
    with pytest.raises(ValueError, match="'X3'"):
        TrusteeAgent(sim, "X3")


def test_agent_ids_are_unique(sim: Simulation) -> None:
    Trustor(sim, "same")
    with pytest.raises(ValueError, match="same"):
        Trustor(sim, "same")


# --- environment membership ---------------------------------------------------------------------


def test_enter_leave_and_move_to(
    sim: Simulation, game: TrustGame, trustor: Trustor, store: SQLiteEventStore
) -> None:
    other = TrustGame(sim, name="second")
    assert set(sim.environments) == {"trust_game", "second"}

    trustor.move_to(game)
    assert trustor.location is game and set(game.occupants) == {"p1"}

    with pytest.raises(InvalidActionError, match="move_to"):
        other.enter(trustor)  # already in another environment
    assert trustor.location is game and other.occupants == {}

    trustor.move_to(other)
    assert trustor.location is other
    assert game.occupants == {} and set(other.occupants) == {"p1"}

    with pytest.raises(InvalidActionError, match="not in"):
        game.leave(trustor)

    other.leave(trustor)
    assert trustor.location is None and other.occupants == {}
    with pytest.raises(InvalidActionError):
        other.leave(trustor)

    moves = [(e.kind, e.agent_id, e.payload) for e in store.read(kinds=["env.entered", "env.left"])]
    assert moves == [
        ("env.entered", "p1", {"env": "trust_game"}),
        ("env.left", "p1", {"env": "trust_game"}),
        ("env.entered", "p1", {"env": "second"}),
        ("env.left", "p1", {"env": "second"}),
    ]


def test_environment_names_are_unique(sim: Simulation, game: TrustGame) -> None:
    with pytest.raises(ValueError, match="trust_game"):
        TrustGame(sim)
