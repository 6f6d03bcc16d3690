"""The folder of the ``dpgui hierarchy`` CLI tests: data, a prior, a signing key and two capped datasets
(the ``world`` fixture)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from dpgui.report.keystore import create_key
from dpgui.report.ledger import Ledger

LEVELS = "region,district,school"


PASSPHRASE = "a long test passphrase"


CAP_DELTA = 1e-6


def _tree(seed: int, low: int, high: int) -> list[tuple[tuple[str, str, str], int]]:
    """Leaf paths of a small 3-level tree (4 regions, 2–3 districts each, 2–4 schools each) with counts."""
    rng = np.random.default_rng(seed)
    leaves = []
    for r in range(1, 5):
        for d in range(1, int(rng.integers(2, 4)) + 1):
            for s in range(1, int(rng.integers(2, 5)) + 1):
                leaves.append(((f"R{r}", f"R{r}-D{d}", f"R{r}-D{d}-S{s}"), int(rng.integers(low, high))))
    return leaves


def _write_rows(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def world(tmp_path) -> Path:
    """``data.csv`` (one row per record, 3 levels), ``prior.csv`` (the same tree with other counts and one
    extra school of count 0), a signing key, and the datasets ``schools`` (ε 10, δ 1e-6) and ``pure`` (ε 10)."""
    folder = tmp_path / "work"
    folder.mkdir()
    leaves = _tree(5, 5, 120)
    _write_rows(folder / "data.csv", LEVELS.split(","), [list(path) for path, n in leaves for _ in range(n)])
    prior = [[*path, n + 7] for path, n in leaves] + [["R1", "R1-D1", "R1-D1-S9", 0]]
    _write_rows(folder / "prior.csv", [*LEVELS.split(","), "count"], prior)
    (folder / "pass.txt").write_text(PASSPHRASE + "\n", encoding="utf-8")
    create_key("officer", PASSPHRASE, folder)
    with Ledger() as ledger:
        ledger.set_cap("schools", 10, CAP_DELTA)
        ledger.set_cap("pure", 10)
    return folder
