"""The command line's table of commands: every ``dpgui WORD …`` is one line of :data:`COMMANDS` (its word,
the function that adds its parser, the function that runs it), from which the parser
(:func:`build_parser`: the subcommands in the table's order, and the list of words its usage shows) and
the dispatch of :func:`dpgui.cli.main` are made. A statistic's commands are its own module(s) here (the
parser of its subcommand group and its commands, e.g. :mod:`dpgui.cli.counts`) and its one line below.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpgui.cli.arguments import (
    _Parser, add_columns_parser, add_key_parser, add_ledger_parser, add_plan_parser, add_quantiles_parser,
    add_release_parser, add_simulate_parser, add_verify_parser,
)
from dpgui.cli.counts import add_counts_parser, cmd_counts
from dpgui.cli.grouped_cdf import add_grouped_parser, cmd_grouped
from dpgui.cli.hierarchy_group import add_hierarchy_parser, cmd_hierarchy
from dpgui.cli.keys import cmd_key, cmd_verify
from dpgui.cli.ledger import cmd_ledger
from dpgui.cli.planning import cmd_plan, cmd_simulate
from dpgui.cli.release import cmd_quantiles, cmd_release
from dpgui.cli.sources import cmd_columns


@dataclass(frozen=True)
class CliCommand:
    """``dpgui WORD …``: ``add_parser(sub)`` adds the parser named ``word`` (with its subcommands, for a
    group) to the CLI's subparsers ``sub``; ``run`` is its adapter (a group's: its dispatcher), given the
    parsed options with the neighbour model decided, and returns the exit code."""

    word: str
    add_parser: Callable[[Any], None]
    run: Callable[[argparse.Namespace], int]


#: Every command, in the order ``dpgui --help`` lists them.
COMMANDS: tuple[CliCommand, ...] = (
    CliCommand("plan", add_plan_parser, cmd_plan),
    CliCommand("release", add_release_parser, cmd_release),
    CliCommand("quantiles", add_quantiles_parser, cmd_quantiles),
    CliCommand("verify", add_verify_parser, cmd_verify),
    CliCommand("key", add_key_parser, cmd_key),
    CliCommand("ledger", add_ledger_parser, cmd_ledger),
    CliCommand("simulate", add_simulate_parser, cmd_simulate),
    CliCommand("columns", add_columns_parser, cmd_columns),
    CliCommand("hierarchy", add_hierarchy_parser, cmd_hierarchy),
    CliCommand("grouped", add_grouped_parser, cmd_grouped),
    CliCommand("counts", add_counts_parser, cmd_counts),
)


def find_command(word: str) -> CliCommand | None:
    """The table's command ``word``, or None when ``word`` is none of them."""
    return next((command for command in COMMANDS if command.word == word), None)


def build_parser() -> argparse.ArgumentParser:
    """``dpgui``'s parser: ``--version``, ``--self-test`` and every command of :data:`COMMANDS`."""
    parser = _Parser(prog="dpgui", description="Differentially private CDF releases.")
    parser.add_argument("--version", action="store_true", help="print the versions of dpgui and its libraries")
    parser.add_argument("--self-test", action="store_true",
                        help="run the whole workflow headless on the bundled sample (throw-away key and ledger); "
                             "exit 0 only if every step passed")
    words = ",".join(command.word for command in COMMANDS)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar=f"{{{words}}}")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser
