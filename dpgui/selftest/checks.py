"""What every step of the self-test shares: the state passed from step to step, the failure and its check,
the budget every release of the self-test spends, and the verification of a fresh bundle with a one-byte
change caught. No Qt; runs inside the self-test's throw-away ``DPGUI_HOME``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

EPSILON = 1.0


class SelfTestFailure(Exception):
    """A check of the self-test did not hold."""


def require(condition: bool, message: str) -> None:
    if not condition:
        raise SelfTestFailure(message)


class Run:
    """The state passed from step to step (the outputs of earlier steps)."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.values: dict[str, Any] = {}


def verify_and_tamper(manifest: Path, csv: Path, public_path: Path) -> int:
    """Verify a fresh bundle, then check that a one-byte change to its CSV is caught (the CSV is
    restored afterwards). Returns the number of checks of the fresh bundle."""
    from dpgui.workspace.statistics import verify
    from dpgui.report.keystore import load_public_key

    public = load_public_key(public_path)
    result = verify(manifest, public)
    require(result.ok, f"the fresh bundle does not verify: {result.failure}")
    original = csv.read_bytes()
    changed = bytearray(original)
    changed[len(changed) // 2] ^= 0x01
    csv.write_bytes(bytes(changed))
    try:
        tampered = verify(manifest, public)
    finally:
        csv.write_bytes(original)
    require(not tampered.ok, "a bundle with one changed byte in its CSV still verifies")
    return len(result.checks)
