"""The Trust Game (Berg et al. 1995; seed 001): the game, the reader of the amount an answer
sends, and published human reference values."""

from __future__ import annotations

from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "MAX_ENDOWMENT": "personasim.environments.trust_game.place",
    "CLOSING_SENTENCE": "personasim.environments.trust_game.transfer",
    "HumanReference": "personasim.environments.trust_game.reference",
    "TrustGame": "personasim.environments.trust_game.place",
    "TrustOutcome": "personasim.environments.trust_game.place",
    "human_reference": "personasim.environments.trust_game.reference",
    "library_reading": "personasim.environments.trust_game.transfer",
    "read_transfer": "personasim.environments.trust_game.transfer",
}
"""Each public name and the module that defines it, imported on first use."""

__all__ = [
    "CLOSING_SENTENCE",
    "MAX_ENDOWMENT",
    "HumanReference",
    "TrustGame",
    "TrustOutcome",
    "human_reference",
    "library_reading",
    "read_transfer",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
