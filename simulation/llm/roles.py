"""Roles: the parts models play in a scenario, and which model plays each in a run.

A scenario declares its roles (a persona, a judge, two or more evaluators...). On the command
line `--role NAME=SPEC[,SPEC...]` binds one and `--model` binds every role not named, so one
model can generate dialogues while another is probed, and a judge can be a stronger model. A
role is never played by the scripted double unless the user names it: where the run's model may
not play a role (PersonaGym's evaluators may not score their own model's answers), the run
refuses to start and says which `--role` to pass. An `optional` role is played only when
`--role` names it; unnamed, it is bound to no model and the scenario does without it (career
chat's job-title classifier: its word rule).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from personasim.simulation.llm.masking import mask_secrets

__all__ = ["DEFAULT_REPLY_TOKENS", "Role", "RoleError", "bind_roles", "parse_role_args"]

SCRIPTED = "scripted"
DEFAULT_REPLY_TOKENS = 150
"""Tokens a reply is assumed to take where its role states none (`Role.reply_tokens`): a
paragraph, the length of a persona's reasoned decision."""


def is_scripted(spec: str) -> bool:
    """The scripted double, with or without options (`scripted:drift=0.15`)."""
    return spec.partition(":")[0] == SCRIPTED


class RoleError(ValueError):
    """A role binding that cannot work; the message names the `--role` to pass."""


@dataclass(frozen=True)
class Role:
    """One part a model plays. `models`: how many models play it at once (an ensemble of
    evaluators has several); `not_played_by`: roles whose real models may not play this one;
    `must_name`: a real `--model` does not fill it by default (a judge the paper ran on a
    stronger model), so a run with a real model must say with `--role` who plays it;
    `optional`: played only when `--role` names it, by no model otherwise (not even the
    scripted double), and the scenario does the part without a model. `scorer`: it scores
    what other roles produced (a judge, an evaluator), so `personasim rescore` may bind it
    anew; `scorer_input`: it writes what a scorer reads and nothing else (PersonaGym's score
    examples), reused from the scored run unless `--regenerate-examples`. `reply_tokens`:
    how long a reply of this role usually is, in tokens, for `run --dry-run`'s completion
    estimate (the scripted double's replies are no guide to a model's); None: the kernel's
    `DEFAULT_REPLY_TOKENS`. `--max-tokens` bounds it."""

    description: str
    min_models: int = 1
    max_models: int | None = 1
    not_played_by: tuple[str, ...] = ()
    must_name: bool = False
    optional: bool = False
    scorer: bool = False
    scorer_input: bool = False
    reply_tokens: int | None = None

    def takes(self, count: int) -> bool:
        return count >= self.min_models and (self.max_models is None or count <= self.max_models)

    def arity(self) -> str:
        if self.max_models == self.min_models:
            return f"{self.min_models} model" + ("s" if self.min_models > 1 else "")
        most = "or more" if self.max_models is None else f"to {self.max_models}"
        return f"{self.min_models} {most} models"


def parse_role_args(
    items: Sequence[str], split: Callable[[str], list[str]]
) -> dict[str, tuple[str, ...]]:
    """`["judge=openai:gpt-4o", "evaluator=A,B"]` → {"judge": ("openai:gpt-4o",), ...}."""
    named: dict[str, tuple[str, ...]] = {}
    for item in items:
        name, sep, specs = item.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[a-z][a-z0-9_-]*", name) or not specs.strip():
            shown = repr(mask_secrets(item))
            raise RoleError(f"--role {shown}: use NAME=MODEL (e.g. judge=openai:gpt-4o)")
        if name in named:
            raise RoleError(f"--role {name} is given twice; pass one comma list instead")
        named[name] = tuple(s.strip() for s in split(specs) if s.strip())
    return named


def bind_roles(
    roles: Mapping[str, Role],
    model: str,
    named: Mapping[str, Sequence[str]],
    *,
    scenario: str = "this scenario",
) -> dict[str, tuple[str, ...]]:
    """Each role's model specs: the named ones, else the run's `model`."""
    unknown = sorted(set(named) - set(roles))
    if unknown:
        raise RoleError(
            f"{scenario} has no role {', '.join(map(repr, unknown))}; its roles are "
            f"{', '.join(roles)} (`personasim list` shows them)"
        )
    bound = {name: _bind_one(name, role, model, named.get(name)) for name, role in roles.items()}
    for name, role in roles.items():
        _check_distinct(name, role, bound, named, scenario)
    return bound


def _bind_one(name: str, role: Role, model: str, given: Sequence[str] | None) -> tuple[str, ...]:
    if given is not None:
        specs = tuple(given)
        if not role.takes(len(specs)):
            raise RoleError(f"--role {name} takes {role.arity()}, got {len(specs)}")
        real = [s for s in specs if not is_scripted(s)]
        if len(set(real)) != len(real):
            raise RoleError(f"--role {name}: each model may appear once ('scripted' may repeat)")
        return specs
    if role.optional:
        return ()
    if is_scripted(model):  # the scripted double may play every seat of an ensemble
        return (model,) * role.min_models
    if role.must_name:
        raise RoleError(
            f"role {name!r} ({role.description}) is not filled by --model; pass --role "
            f"{name}=MODEL (the same model as --model to let it judge itself, or "
            f"--role {name}=scripted for the scripted double)"
        )
    if role.min_models > 1:
        raise RoleError(
            f"role {name!r} ({role.description}) takes {role.arity()}; --model gives one. "
            f"Pass --role {name}=MODEL1,MODEL2 (or --role {name}=scripted,scripted for the "
            "scripted double)"
        )
    return (model,)


def _check_distinct(
    name: str,
    role: Role,
    bound: Mapping[str, tuple[str, ...]],
    named: Mapping[str, Sequence[str]],
    scenario: str,
) -> None:
    for other in role.not_played_by:
        clash = sorted(s for s in set(bound[name]) & set(bound[other]) if not is_scripted(s))
        if clash:
            hint = (
                f"pass --role {name}=OTHER_MODEL,... (or --role {name}=scripted,scripted for "
                "the scripted double)"
                if name not in named
                else f"choose other models for --role {name}"
            )
            raise RoleError(
                f"{scenario}: role {name!r} ({role.description}) may not be played by "
                f"{', '.join(clash)}, which plays {other!r}; {hint}"
            )
