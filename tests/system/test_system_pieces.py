"""The one rule for tests that need a piece beyond Python (``tests/support/system_pieces.py``): a missing
piece skips the test with its reason on a developer's machine, fails it under CI, and a piece that is
there lets the test run."""

from __future__ import annotations

import pytest

from system_pieces import require


def test_a_piece_that_is_there_lets_the_test_run(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require(None) is None


def test_a_missing_piece_fails_under_ci_with_its_reason(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="Java is missing: CI installs it"):
        require("Java is missing")


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_a_missing_piece_skips_off_ci_with_its_reason(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception, match="PySpark is not installed"):
        require("PySpark is not installed")
