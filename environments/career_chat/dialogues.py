"""Dialogues made once and probed many times (seed 003, §3 and §5: GPT-4o's dialogues, probed by
every model under study).

`load_dialogues` reads the dialogues a career-chat run generated (its run directory: profiles
from `agent.created`, the exchanges from `career.question` / `career.answer`, the end from
`career.dialogue_ended`) or a dialogue file, JSONL with one user per line:

    {"profile": {"id": "u001", "age": 34, "gender": "Female", "education": "Master's",
                 "experience": 8, "job_title": "Data Analyst", "country": "Germany"},
     "turns": [{"question": "...", "answer": "..."}, ...],
     "ended": "goals_covered"}

A turn may also carry `proposed` (the user's question before the out-of-context detector) and
`out_of_context` (the detector's verdict); `ended` is one of `END_REASONS`. The source's
identity (file, size, SHA-256; for a run also its id and the models that played each role) goes
into the probing run's log, so a table always says whose dialogues it measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personasim.environments.career_chat.files import CareerChatFileError, jsonl_rows
from personasim.environments.career_chat.place import END_REASONS, RecordedDialogue, RecordedTurn
from personasim.environments.career_chat.profiles import profile_from_row
from personasim.simulation import EVENTS_FILE, SQLiteEventStore, file_identity, read_manifest

__all__ = ["DialogueSource", "load_dialogues"]

GENERATING_ROLES = ("user", "detector", "assistant")
"""The roles whose work a probing run reuses instead of repeating."""


@dataclass(frozen=True)
class DialogueSource:
    dialogues: tuple[RecordedDialogue, ...]
    record: dict[str, Any]
    """What the probing run logs about the source (`career.dialogues_source`)."""

    @property
    def longest(self) -> int:
        return max((len(d.turns) for d in self.dialogues), default=0)


def load_dialogues(path: Path) -> DialogueSource:
    """The dialogues of a career-chat run directory, or of a dialogue JSONL file."""
    if path.is_dir():
        return _from_run(path)
    dialogues = tuple(_from_line(path, line, row) for line, row in jsonl_rows(path))
    if not dialogues:
        raise CareerChatFileError(path, None, "no dialogues")
    _unique(path, dialogues)
    return DialogueSource(dialogues, {"kind": "file", **file_identity(path)})


# --- a run directory ---------------------------------------------------------------------------


def _from_run(run_dir: Path) -> DialogueSource:
    manifest = read_manifest(run_dir)
    if manifest.get("scenario") != "career-chat":
        raise CareerChatFileError(run_dir, None, "not a career-chat run directory")
    if manifest.get("status") != "complete":
        raise CareerChatFileError(
            run_dir, None, f"the run is {manifest.get('status')}; resume it to the end first"
        )
    events_path = run_dir / EVENTS_FILE
    with SQLiteEventStore(events_path) as store:
        kinds = ["agent.created", "career.question", "career.answer", "career.dialogue_ended"]
        events = list(store.read(kinds))
    profiles = {
        e.agent_id: profile_from_row(
            events_path, None, {**e.payload["persona"]["attributes"], "id": e.agent_id}
        )
        for e in events
        if e.kind == "agent.created" and e.payload.get("type") == "UserSimulator"
    }
    questions: dict[str, list[dict[str, Any]]] = {user: [] for user in profiles}
    answers: dict[str, list[str]] = {user: [] for user in profiles}
    ended: dict[str, str] = {}
    for event in events:
        if event.kind == "career.question":
            questions[event.agent_id].append(event.payload)
        elif event.kind == "career.answer":
            answers[event.agent_id].append(event.payload["answer"])
        elif event.kind == "career.dialogue_ended":
            ended[event.agent_id] = event.payload["reason"]
    dialogues = []
    for user, profile in profiles.items():
        if user not in ended:
            raise CareerChatFileError(events_path, None, f"{user}'s dialogue never ended")
        asked = questions[user][: len(answers[user])]  # an unanswered last question was dropped
        turns = tuple(
            RecordedTurn(q["question"], a, q["proposed"], bool(q["out_of_context"]))
            for q, a in zip(asked, answers[user], strict=True)
        )
        dialogues.append(RecordedDialogue(profile, turns, ended[user]))
    if not dialogues:
        raise CareerChatFileError(events_path, None, "the run has no user dialogues")
    roles = manifest.get("roles") or {}
    record = {
        "kind": "run",
        "run": run_dir.name,
        "created_at": manifest.get("created_at"),
        "roles": {role: roles.get(role) for role in GENERATING_ROLES},
        **file_identity(events_path),
    }
    return DialogueSource(tuple(dialogues), record)


# --- a dialogue file ---------------------------------------------------------------------------


def _from_line(path: Path, line: int, row: dict[str, Any]) -> RecordedDialogue:
    if not isinstance(row.get("profile"), dict):
        raise CareerChatFileError(path, line, "needs a profile object")
    profile = profile_from_row(path, line, row["profile"])
    turns = row.get("turns")
    if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
        raise CareerChatFileError(path, line, "turns must be a list of objects")
    ended = row.get("ended")
    if ended not in END_REASONS:
        raise CareerChatFileError(path, line, f"ended must be one of {', '.join(END_REASONS)}")
    if ended != "failed" and not turns:
        raise CareerChatFileError(path, line, f"a dialogue that ended {ended!r} needs a turn")
    return RecordedDialogue(profile, tuple(_turn(path, line, t) for t in turns), ended)


def _turn(path: Path, line: int, turn: dict[str, Any]) -> RecordedTurn:
    question, answer = turn.get("question"), turn.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise CareerChatFileError(path, line, "every turn needs a question (text)")
    if not isinstance(answer, str) or not answer.strip():
        raise CareerChatFileError(path, line, "every turn needs an answer (text)")
    proposed = turn.get("proposed", question)
    flagged = turn.get("out_of_context", False)
    if not isinstance(proposed, str) or not isinstance(flagged, bool):
        raise CareerChatFileError(path, line, "proposed must be text, out_of_context true/false")
    if not flagged and proposed != question:
        raise CareerChatFileError(path, line, "proposed differs from question: out_of_context?")
    return RecordedTurn(question, answer, proposed, flagged)


def _unique(path: Path, dialogues: tuple[RecordedDialogue, ...]) -> None:
    seen: set[str] = set()
    for dialogue in dialogues:
        if dialogue.profile.id in seen:
            raise CareerChatFileError(path, None, f"user {dialogue.profile.id!r} appears twice")
        seen.add(dialogue.profile.id)
