"""Places agents act in: their rules and state, no prompts."""

from .trust_game import TrustGame, TrustOutcome

__all__ = ["TrustGame", "TrustOutcome"]
