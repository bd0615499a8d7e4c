"""What follows SCENARIO on `run`, `sweep` and `counterfactual`: the scenario's parameters as
flags (a boolean one also as `--flag` / `--no-flag`), an unknown flag checked against both the
command's own flags and the scenario's parameters, and `SCENARIO --help` listing the scenario's
parameters after the command's flags.

The help reads the scenario's card (`simulation/core/catalog.py`), so it imports none of a
built-in scenario's code and stays as fast as `personasim --help`.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from personasim.simulation.cli.options import scenario_values
from personasim.simulation.core.catalog import ParamCard, ScenarioCard
from personasim.simulation.core.scenario import ScenarioError, did_you_mean

if TYPE_CHECKING:
    from personasim.simulation.core.scenario import Scenario

__all__ = [
    "DefaultsHelpFormatter",
    "ScenarioHelp",
    "add_scenario_command",
    "params_help",
    "scenario_arguments",
    "scenario_card",
    "switches",
]


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """argparse's help with each flag's default, where it has one: a flag that is unset, off or
    empty by default gets no `(default: None)` noise, and a help that states its default itself
    (`%(default)s`, `(default ...`) is left as it is."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        shown = "%(default)" in text or "(default" in text
        if not action.option_strings or shown or _unset(action.default):
            return action.help
        return f"{text} (default: %(default)s)".strip()


def _unset(default: Any) -> bool:
    """A default not worth showing: None, False (a switch that is off), SUPPRESS or empty."""
    empty = isinstance(default, list | tuple) and not default
    return default is None or default is False or default is argparse.SUPPRESS or empty


class ScenarioHelp(argparse.Action):
    """`-h/--help`: the command's help; after SCENARIO, followed by that scenario's parameters
    (a scenario given after --help is not parsed yet, so the help is the command's alone)."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: Any = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> NoReturn:
        text = parser.format_help()
        if scenario := getattr(namespace, "scenario", None):
            try:
                text += "\n" + params_help(parser, scenario_card(scenario))
            except ScenarioError as exc:  # an unknown name, a broken file: one error line
                parser.error(str(exc))
        sys.stdout.write(text)
        parser.exit()


def add_scenario_command(
    commands: Any, name: str, description: str, **kwargs: Any
) -> argparse.ArgumentParser:
    """A command that takes SCENARIO and its parameters: its flags shown with their defaults,
    `SCENARIO --help` listing the scenario's parameters, and the parser kept in the parsed
    arguments (`scenario_parser`) so an unknown flag can be matched against the command's own."""
    parser = commands.add_parser(
        name,
        allow_abbrev=False,  # a scenario's --mode must not be taken for --model
        add_help=False,
        formatter_class=DefaultsHelpFormatter,
        **kwargs,
    )
    parser.description = (
        f"{description} `personasim {name} SCENARIO --help` lists a scenario's parameters, "
        "their types and defaults."
    )
    parser.add_argument(
        "-h",
        "--help",
        action=ScenarioHelp,
        help="show this help and exit; after SCENARIO, with the scenario's parameters",
    )
    parser.set_defaults(scenario_parser=parser)
    return parser


def scenario_card(scenario: str) -> ScenarioCard:
    """A scenario's card: a built-in one's as shipped, else found as a run would find it (a
    file, an entry point; an unknown name gets the run's error and its did-you-mean)."""
    from personasim.simulation.core.catalog import builtin_cards, card_of
    from personasim.simulation.runs.lifecycle.scenario_file import (
        is_scenario_path,
        resolve_scenario,
    )

    if not is_scenario_path(scenario) and (card := builtin_cards().get(scenario)) is not None:
        return card
    return card_of(resolve_scenario(scenario))


def params_help(parser: argparse.ArgumentParser, card: ScenarioCard) -> str:
    """The scenario's parameters as one more section of the command's help, formatted (and
    their defaults shown) by the command's own formatter."""
    formatter = parser.formatter_class(prog=parser.prog)
    formatter.start_section(f"parameters of {card.name} (--name value)")
    formatter.add_text(card.summary)
    formatter.add_arguments([_param_action(param) for param in card.params])
    formatter.end_section()
    return formatter.format_help()


def _param_action(param: ParamCard) -> argparse.Action:
    """A card's parameter as argparse shows a flag: `--flag TYPE`, or `--flag / --no-flag`."""
    switch = param.kind == "bool"
    required = param.default == "required"
    return argparse.Action(
        [f"{param.flag} / --no-{param.flag[2:]}"] if switch else [param.flag],
        dest=param.flag,
        nargs=0 if switch else None,
        metavar=None if switch else param.kind,
        default=None if required or param.default in ("None", "") else param.default,
        help=(param.description + (" (required)" if required else "")).replace("%", "%%"),
    )


def switches(card: ScenarioCard) -> frozenset[str]:
    """The boolean parameters (field names), which also go as --flag and --no-flag."""
    return frozenset(_field(param.flag) for param in card.params if param.kind == "bool")


def scenario_arguments(
    args: argparse.Namespace, tokens: Sequence[str], scenario: type[Scenario]
) -> dict[str, str]:
    """The scenario's parameters among the tokens argparse did not know, as strings (pydantic
    types them). Names are checked first, since a mistyped flag leaves its value behind."""
    from personasim.simulation.core.catalog import card_of

    card = card_of(scenario)
    _check_names(args, tokens, card)
    return scenario_values(tokens, switches(card))


def _check_names(args: argparse.Namespace, tokens: Sequence[str], card: ScenarioCard) -> None:
    """An error for the first flag that is not one of the scenario's parameters: argparse took
    the command's own, so a run flag mistyped ends up here too, and the did-you-mean looks at
    both."""
    params = {_field(param.flag) for param in card.params}
    params |= {f"no_{name}" for name in switches(card)}
    for token in tokens:
        flag = token.partition("=")[0]
        if flag.startswith("--") and flag != "--" and _field(flag) not in params:
            raise ScenarioError(_unknown_flag(flag, params, args, card))


def _unknown_flag(flag: str, params: set[str], args: argparse.Namespace, card: ScenarioCard) -> str:
    """`unknown flag --concurency; did you mean --concurrency?`, or where to look."""
    parser: argparse.ArgumentParser = args.scenario_parser
    own = {_field(o) for a in parser._actions for o in a.option_strings if o.startswith("--")}
    if hint := did_you_mean(_field(flag), params | own):
        return f"unknown flag {flag}; {hint.strip(' ()')}"
    return (
        f"unknown flag {flag}; `{parser.prog} {shlex.quote(args.scenario)} --help` lists the "
        f"flags and {card.name}'s parameters"
    )


def _field(flag: str) -> str:
    """`--n-personas` → `n_personas`, the name a parameter has in its pydantic model."""
    return flag.removeprefix("--").replace("-", "_")
