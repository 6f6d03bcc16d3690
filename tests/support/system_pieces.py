"""Tests that need a piece of the system beyond Python: one rule for all of them.

A PostgreSQL server (`tests/support/pg_server.py`) and Spark (PySpark, the extra ``dpgui[spark]``, with a Java
runtime). Where a piece is missing, the test is skipped with the reason and the fix on a developer's
machine only; under ``CI=true`` it fails, because CI installs every piece (`make system-deps`, the test
venv's spark extra), so no such test is ever skipped silently there.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest


def in_ci() -> bool:
    """Is this a CI run (``CI`` set to 1/true/yes, as CI services do)?"""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(reason: str | None, *, module_level: bool = False) -> None:
    """Nothing if ``reason`` is None (the piece is here); else skip (fail under CI) with the reason."""
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"{reason}: CI installs it, so this test must run there", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def spark_unavailable_reason() -> str | None:
    """None if Spark can run here (PySpark importable, Java found), else why not with the fix."""
    if importlib.util.find_spec("pyspark") is None:
        return "PySpark is not installed (pip install 'dpgui[spark]')"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is missing (make system-deps, or apt install default-jre-headless)"
    return None
