"""Command line: the same plan → release workflow as the app, headless and scriptable.

    dpgui [FILE] [--column COL]   opens the desktop app (the start page without FILE)

    dpgui COMMAND …               runs a command of the table :data:`dpgui.cli.commands.COMMANDS` (plan,
                                  release, …, and each statistic's command group, e.g. ``dpgui hierarchy
                                  release``); the synopsis: docs/cli.md and ``dpgui --help``
      (the data is read only through dpgui.data.source: a file on this computer, a database URL without
      password — the database counts —, or Spark; docs/cli.md)

Exit codes: 0 success, 2 bad input (one line on stderr naming the argument and the fix), 1 an
internal error. Nothing is written unless the whole release succeeded. Every release is first
recorded in the budget ledger (``$DPGUI_HOME``), which refuses it if the dataset's cap would be
exceeded; everything that can be checked (the input file, the plan and the noise sampler's limits,
every output target, the key) is checked before that, so bad input is never charged. ``verify``
exits 0 only when every check holds, otherwise 1 with one line saying what failed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

if sys.argv[1:2] == ["plan"]:
    # `dpgui plan` does no linear algebra that threads would speed up (vectors, and eigenproblems of a few
    # dozen rows), and OpenBLAS starts its pool of threads when NumPy is imported: on a busy two-core
    # machine that took ~0.06 s of the 0.3 s the answer may take. The user's setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The commands' modules import NumPy: after the thread setting, which must come first.
from dpgui.cli.arguments import _Parser
from dpgui.cli.commands import build_parser, find_command
from dpgui.cli.interrupt import InterruptedRelease
from dpgui.cli.keys import version_text
from dpgui.cli.release_plan import cmd_plan_file, spec_parser
from dpgui.cli.requests import NeighboursRequest, command_name, with_neighbours
from dpgui.cli.sources import _choose_neighbours
from dpgui.data.file_types import FILE_TYPE_NAMES
from dpgui.errors import DpguiError


def _no_desktop() -> bool:
    """True on Linux and the BSDs when no display server is named and no Qt platform is forced
    (on a server, over plain ssh). Windows and macOS always have their desktop."""
    if sys.platform in ("win32", "darwin") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _gui(argv: list[str]) -> int:
    """``dpgui [FILE] [--column NAME]``: the desktop window (start page without FILE)."""
    parser = _Parser(prog="dpgui", description="Open the desktop app (on FILE if given).")
    parser.add_argument("file", nargs="?", help=f"a {FILE_TYPE_NAMES} file to open")
    parser.add_argument("--column", help="the column to select after opening FILE")
    args = parser.parse_args(argv)
    if _no_desktop():
        # Qt would abort here with a misleading "reinstall" message (and a core dump).
        print("dpgui: error: the window needs a graphical desktop, and none was found (neither DISPLAY nor "
              "WAYLAND_DISPLAY is set); start dpgui from the desktop, or use the commands: dpgui --help",
              file=sys.stderr)
        return 2
    try:
        from dpgui.app.main import run_gui
    except ImportError as err:  # e.g. Qt's system libraries missing on a server
        print(f"dpgui: error: the desktop app cannot start ({err}); install the Qt libraries or use "
              "the commands plan, release, simulate", file=sys.stderr)
        return 2
    return run_gui(args.file, args.column)


def _spent_note(command: str, interruption: KeyboardInterrupt) -> str:
    """After ``command`` was interrupted: whether the ledger recorded a release's spend (asked, not assumed)."""
    if not isinstance(interruption, InterruptedRelease):  # before a release id was made: nothing can be spent
        releasing = command.split()[-1] == "release"  # release, hierarchy release
        return " and nothing was spent" if releasing else ""
    from dpgui.workspace.release import spent_on

    release_id = interruption.release_id
    spent = spent_on(release_id)  # None: the ledger cannot tell
    if spent is None:
        return f"; check 'dpgui ledger show' for release {release_id}"
    return f", but its ε was spent (ledger release {release_id})" if spent else " and nothing was spent"


#: Options whose value may be a negative number: argparse takes "-1e-9" (but not "-1") for an option.
NUMBER_OPTIONS = ("--epsilon", "--delta", "--lower", "--upper", "--focus")


def _join_negative_numbers(arguments: list[str]) -> list[str]:
    """``--delta -1e-9`` as ``--delta=-1e-9``, so that the value reaches its own check (and its one-line
    message) instead of argparse's "expected one argument"."""
    out: list[str] = []
    i = 0
    while i < len(arguments):
        arg = arguments[i]
        following = arguments[i + 1] if i + 1 < len(arguments) else ""
        if arg in NUMBER_OPTIONS and following.startswith("-") and not following.startswith("--"):
            out.append(f"{arg}={following}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from dpgui.formatting import printable_text

    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or (find_command(arguments[0]) is None and not arguments[0].startswith("-")) or (
            arguments[0] == "--column"):
        return _gui(arguments)
    plan_file = spec_parser(arguments)  # `dpgui plan|release --spec F`: a release plan file
    parser = plan_file or build_parser()
    args = parser.parse_args(_join_negative_numbers(arguments))
    if args.version:
        print(version_text())
        return 0
    if args.self_test:
        from dpgui.selftest import run_self_test

        return run_self_test()
    if args.command is None:
        parser.print_help()
        return 0
    command = command_name(args)  # "hierarchy release"
    try:
        if plan_file is not None:
            code = cmd_plan_file(args)
            sys.stdout.flush()
            return code
        neighbours = _choose_neighbours(NeighboursRequest.of(args))
        chosen = find_command(args.command)
        assert chosen is not None  # the parser knows only the table's words
        code = chosen.run(with_neighbours(args, neighbours.neighbours))
        if code == 0 and neighbours.note:
            print(f"dpgui {command}: {neighbours.note}", file=sys.stderr)
        sys.stdout.flush()  # here, so that a reader that stopped early (| head) is caught below
        return code
    except BrokenPipeError:
        # The reader of our output went away (``dpgui ledger show | head``): not an error of dpgui.
        # Point stdout at /dev/null so that the interpreter's last flush does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except DpguiError as err:  # one line, whatever the user typed into the names it quotes (a LF, an ESC)
        from dpgui.workspace.ledger_words import worded  # a ledger refusal's facts in words

        print(f"dpgui {command}: error: {printable_text(str(worded(err)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interruption:
        print(f"dpgui {command}: interrupted; nothing was written{_spent_note(command, interruption)}", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"dpgui {command}: error: out of memory; use fewer bins or a smaller file", file=sys.stderr)
        return 2
