"""The scripted double's rule for `quiz.answer` (a behaviour model, not a language model):
conscientious personas answer right; anyone else is off by one a third of the time."""

from __future__ import annotations

import numpy as np

from personasim.simulation import ChatRequest, scripted_behaviour


@scripted_behaviour("quiz.answer")
def quiz_answer(request: ChatRequest, rng: np.random.Generator) -> str:
    careful = request.hints.get("traits", {}).get("Conscientiousness") == "High"
    answer = 366 if careful or rng.random() >= 1 / 3 else 365
    return f"A leap year has an extra day. ANSWER: {answer}"
