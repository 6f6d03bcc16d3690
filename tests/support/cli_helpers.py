"""Helpers for tests that run the CLI in-process (``dpgui.cli.main``) or as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dpgui.cli import main


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    """``dpgui ARGS`` in this process: (exit code, stdout, stderr); argparse's SystemExit is an exit code."""
    try:
        code = main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def signing_key_options(tmp_path: Path, capsys) -> list[str]:
    """A signing key "officer" made in ``tmp_path/keys`` with ``dpgui key create`` (its passphrase in
    ``tmp_path/pass.txt``): the ``--key`` and ``--passphrase-file`` options of a release into a bundle."""
    (tmp_path / "pass.txt").write_text("a long passphrase\n", encoding="utf-8")
    keys = tmp_path / "keys"
    assert run_cli(["key", "create", "officer", "--dir", str(keys), "--passphrase-file", str(tmp_path / "pass.txt")],
                   capsys)[0] == 0
    return ["--key", str(keys / "officer.key"), "--passphrase-file", str(tmp_path / "pass.txt")]


# ------------------------------------------------------------------ tables of bad input, run as a user runs them

ROOT = Path(__file__).resolve().parents[2]
PASSPHRASE = "a long passphrase"
GUARD_S = 120  # a hung command fails the test instead of hanging the suite (not a speed limit)


@dataclass(frozen=True)
class World:
    """The folder a case runs in (its files are the test module's), a signing key, a passphrase file."""

    folder: Path
    key: Path
    passphrase: Path

    def __truediv__(self, name: str) -> Path:
        return self.folder / name


@dataclass(frozen=True)
class Case:
    """One bad input: the command (built from the case's :class:`World`), what its one error line says."""

    id: str
    argv: Callable[[World], list[str]]
    words: tuple[str, ...] = ()  # each must appear in the error line (case-insensitive)
    setup: Callable[[World], None] | None = None
    code: int = 2
    not_words: tuple[str, ...] = field(default=())  # must NOT appear (e.g. a misleading cause)


def ledger_snapshot() -> dict:
    """``dpgui ledger show --json`` through the CLI's entry point (in this process)."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["ledger", "show", "--json"]) == 0
    return json.loads(buffer.getvalue())


def run_real(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``dpgui ARGV`` in a fresh interpreter, as a user runs it (the same DPGUI_HOME as the test); ``stdin``
    is its input (None: none at all)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    feed: dict = {"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run([sys.executable, "-m", "dpgui.cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=GUARD_S, **feed)



def check_refused_in_one_line(case: Case, world: World) -> str:
    """Run ``case`` as a user would and assert what every refusal must be: the case's exit code, no
    traceback, ONE line on stderr holding the case's words (and none of its ``not_words``), no raw
    control character, no value dumped whole (< 600 characters), nothing charged or logged in the
    ledger, nothing written (not even a temporary). Returns the line."""
    if case.setup is not None:
        case.setup(world)
    before = ledger_snapshot()
    files_before = sorted(p.name for p in world.folder.iterdir())
    result = run_real(case.argv(world), world.folder)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == case.code, (result.returncode, result.stdout[-500:], result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert not any(c in result.stderr for c in "\x1b\r\u202e"), repr(result.stderr)  # no raw control character
    assert len(lines[0]) < 600, lines[0][:600]
    for word in case.words:
        assert word.lower() in lines[0].lower(), lines[0]
    for word in case.not_words:
        assert word.lower() not in lines[0].lower(), lines[0]
    assert ledger_snapshot() == before  # nothing charged, no cap changed
    assert sorted(p.name for p in world.folder.iterdir()) == files_before  # nothing written, no temporary left
    return lines[0]
