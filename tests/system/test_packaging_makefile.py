"""What the Makefile's targets install into the venv, read from `make -n` (nothing is installed).

`make run` opens the window: it installs the app and its dependencies alone, none of the test, Spark or
packaging extras (1.7 GB with them, 0.8 GB without). `make test`, `make lint` and `make bench` install
the test and Spark extras. Each extras set has its own marker file in the venv, so a venv made by
`make run` gets the extras on the next `make test`, and `make run` after `make test` reinstalls nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def _dry_run(target: str, venv: Path) -> list[str]:
    """The commands `make TARGET` would run with its venv at ``venv`` (printed by `make -n`, not run)."""
    # Not the variables of an enclosing `make test` (its MAKEFLAGS would pass EXTRAS=… on to this make).
    env = {key: value for key, value in os.environ.items()
           if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "EXTRAS")}
    result = subprocess.run(["make", "-n", target, f"VENV={venv}"], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=True)
    return result.stdout.splitlines()


def _installed_extras(commands: list[str]) -> list[set[str]]:
    """For each `pip install -e .[…]` among ``commands``, the extras it names (empty: the app alone)."""
    installs = []
    for command in commands:
        match = re.search(r"pip install .*-e '\.(?:\[([^]]*)\])?'", command)
        if match:
            installs.append({extra.strip() for extra in (match.group(1) or "").split(",") if extra.strip()})
    return installs


def _names(requirements: list[str]) -> set[str]:
    """Distribution names of PEP 508 requirement strings, normalised (``PySide6_Essentials`` → ``pyside6-essentials``)."""
    return {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()  # type: ignore[union-attr]
            for requirement in requirements}


def test_make_run_installs_the_app_without_any_extra(tmp_path):
    installs = _installed_extras(_dry_run("run", tmp_path / "venv"))
    assert installs == [set()]


def test_the_apps_own_dependencies_include_no_test_spark_or_packaging_package():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    tools = _names(extras["test"] + extras["spark"] + extras["package"]) - {"dpgui"}
    assert {"pytest", "pyspark", "pyinstaller", "opendp", "ruff", "mypy"} <= tools
    assert not _names(project["dependencies"]) & tools


@pytest.mark.parametrize("target", ["test", "lint", "bench"])
def test_test_lint_and_bench_install_the_test_and_spark_extras(tmp_path, target):
    installs = _installed_extras(_dry_run(target, tmp_path / "venv"))
    assert installs == [{"test", "spark"}]


def _venv_with_markers(venv: Path, *markers: str) -> None:
    """A venv directory as `make` sees it: created, with these marker files newer than pyproject.toml."""
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "activate").touch()
    for marker in markers:
        (venv / marker).touch()


def test_a_venv_made_by_make_run_gets_the_extras_on_make_test(tmp_path):
    venv = tmp_path / "venv"
    _venv_with_markers(venv, ".installed-app")
    assert _installed_extras(_dry_run("run", venv)) == []
    assert _installed_extras(_dry_run("test", venv)) == [{"test", "spark"}]


def test_make_run_after_make_test_installs_nothing_again(tmp_path):
    venv = tmp_path / "venv"
    _venv_with_markers(venv, ".installed-test+spark")
    assert _installed_extras(_dry_run("test", venv)) == []
    # The app alone is a subset of what is installed: `pip install -e .` re-links it and removes nothing.
    assert _installed_extras(_dry_run("run", venv)) == [set()]
    (venv / ".installed-app").touch()
    assert _installed_extras(_dry_run("run", venv)) == []
    assert _installed_extras(_dry_run("test", venv)) == []
