"""Helpers for tests that run the CLI in-process (``dpgui.cli.main``)."""

from __future__ import annotations

from dpgui.cli import main


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    """``dpgui ARGS`` in this process: (exit code, stdout, stderr); argparse's SystemExit is an exit code."""
    try:
        code = main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
