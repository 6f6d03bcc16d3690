"""The table of commands (:data:`dpgui.cli.commands.COMMANDS`) drives the command line: the parser's
subcommands, the list of words in its usage, ``--help`` and the dispatch of ``main`` come from it."""

from __future__ import annotations

import argparse

from cli_helpers import run_cli

from dpgui.cli import commands
from dpgui.cli.arguments import _Parser
from dpgui.cli.commands import COMMANDS, CliCommand, build_parser, find_command


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def test_every_command_of_the_table_is_a_subcommand_in_the_table_order():
    words = [command.word for command in COMMANDS]
    action = _subcommands(build_parser())
    assert list(action.choices) == words
    assert action.metavar == "{" + ",".join(words) + "}"
    assert len(set(words)) == len(words)


def test_the_help_lists_the_commands_in_the_table_order(capsys):
    code, out, _ = run_cli(["--help"], capsys)
    words = [command.word for command in COMMANDS]
    assert code == 0 and "{" + ",".join(words) + "}" in out
    listed = [line.split()[0] for line in out.splitlines()  # "    plan   choose a tree…" (not a wrapped help line)
              if line.startswith("    ") and not line.startswith("     ") and line.split()[0] in words]
    assert listed == words


def test_a_statistics_command_group_is_a_line_of_the_table():
    from dpgui.cli.counts import add_counts_parser, cmd_counts
    from dpgui.cli.hierarchy_group import add_hierarchy_parser, cmd_hierarchy

    assert find_command("hierarchy") == CliCommand("hierarchy", add_hierarchy_parser, cmd_hierarchy)
    assert find_command("counts") == CliCommand("counts", add_counts_parser, cmd_counts)
    assert find_command("no such command") is None


def _fake_command(seen: list[argparse.Namespace]) -> CliCommand:
    def add_parser(sub) -> None:
        fake = sub.add_parser("fake", help="a command that only the test knows")
        fake_sub = fake.add_subparsers(dest="fake_command", parser_class=_Parser, metavar="{show}", required=True)
        show = fake_sub.add_parser("show", help="show the value")
        show.add_argument("--value", type=int, required=True)

    def cmd_fake(args: argparse.Namespace) -> int:
        seen.append(args)
        return 7

    return CliCommand("fake", add_parser, cmd_fake)


def test_a_line_added_to_the_table_is_parsed_listed_and_dispatched(monkeypatch, capsys):
    seen: list[argparse.Namespace] = []
    monkeypatch.setattr(commands, "COMMANDS", (*COMMANDS, _fake_command(seen)))

    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0 and "a command that only the test knows" in out
    assert ",counts,fake}" in out

    code, _, _ = run_cli(["fake", "show", "--value", "3"], capsys)
    assert code == 7 and len(seen) == 1
    assert seen[0].command == "fake" and seen[0].fake_command == "show" and seen[0].value == 3

    code, _, err = run_cli(["fake", "show", "--value", "three"], capsys)
    assert code == 2 and err.startswith("dpgui fake show: error: argument --value") and len(seen) == 1


def test_without_its_line_a_word_is_no_command(monkeypatch, capsys):
    """A word the table does not hold is not parsed as a command: ``dpgui WORD`` opens the window on the
    file WORD (which here refuses, for want of a desktop)."""
    monkeypatch.setattr(commands, "COMMANDS", tuple(c for c in COMMANDS if c.word != "counts"))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    code, _, err = run_cli(["counts"], capsys)
    assert code == 2 and "needs a graphical desktop" in err
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0 and ",counts}" not in out and "noisy counts of the stated categories" not in out


def test_every_group_names_its_subcommand_in_messages():
    """Messages name the command as typed, a group's subcommand included (``dpgui counts release: …``): every
    group's parser keeps its subcommand in ``<word>_command``, which :func:`command_name` reads."""
    from dpgui.cli.requests import command_name

    top = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    groups = 0
    for word, parser in top.choices.items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                groups += 1
                assert action.dest == f"{word}_command"
                for sub in action.choices:
                    args = argparse.Namespace(command=word, **{action.dest: sub})
                    assert command_name(args) == f"{word} {sub}"
    assert groups >= 4  # key, ledger, hierarchy, counts
    assert command_name(argparse.Namespace(command="release")) == "release"
