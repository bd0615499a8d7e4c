"""The Trust Game (Berg et al. 1995; seed 001): the game, the reader of the amount an answer
sends, and published human reference values."""

from personasim.environments.trust_game.place import TrustGame, TrustOutcome
from personasim.environments.trust_game.reference import HumanReference, human_reference
from personasim.environments.trust_game.transfer import (
    CLOSING_SENTENCE,
    library_reading,
    read_transfer,
)

__all__ = [
    "CLOSING_SENTENCE",
    "HumanReference",
    "TrustGame",
    "TrustOutcome",
    "human_reference",
    "library_reading",
    "read_transfer",
]
