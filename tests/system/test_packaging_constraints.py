"""packaging/constraints.txt: the versions the installers are built from, inside pyproject.toml's ranges.

`make constraints` (packaging/make_constraints.sh) writes it from a clean venv; packaging/linux/build.sh
and the Windows and macOS jobs of .github/workflows/installers.yml install with `-c` it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from ruamel.yaml import YAML

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (the installers are built with 3.11)

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "packaging" / "constraints.txt"
USE = "-c packaging/constraints.txt"


def _pins() -> dict[str, Version]:
    """Canonical name -> pinned version; every line that is not a comment is `name==version`."""
    pins: dict[str, Version] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)", line.strip())
        assert match, f"not a name==version pin: {line!r}"
        name = canonicalize_name(match.group(1))
        assert name not in pins, f"{name} is pinned twice"
        pins[name] = Version(match.group(2))
    return pins


def _requirements() -> list[Requirement]:
    """What the installers install: dpgui's dependencies and its `package` extra (PyInstaller)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(text) for text in project["dependencies"] + project["optional-dependencies"]["package"]]


def test_constraints_are_exact_pins_and_leave_dpgui_out():
    pins = _pins()
    assert len(pins) >= 15, sorted(pins)
    assert "dpgui" not in pins  # the project itself is installed from the checkout (--exclude-editable)


def test_every_dependency_is_pinned_inside_its_range():
    pins = _pins()
    requirements = [r for r in _requirements() if r.marker is None or r.marker.evaluate()]
    assert {canonicalize_name(r.name) for r in requirements} >= {"numpy", "pyside6-essentials", "pyinstaller"}
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not pinned in {CONSTRAINTS.name}: run `make constraints`"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{CONSTRAINTS.name} pins {name}=={pins[name]}, outside pyproject.toml's {requirement}: "
            "run `make constraints`")


def test_the_qt_bindings_are_pinned_together():
    """PySide6-Essentials and shiboken6 are one release: a mismatch fails at import."""
    pins = _pins()
    assert pins["shiboken6"] == pins["pyside6-essentials"]


def test_the_installer_builds_install_with_the_constraints():
    build = (ROOT / "packaging" / "linux" / "build.sh").read_text(encoding="utf-8")
    install = build.index(f'pip install --quiet -e ".[package]" {USE}')
    assert install < build.index("-m PyInstaller")
    workflow = YAML(typ="safe").load((ROOT / ".github" / "workflows" / "installers.yml").read_text(encoding="utf-8"))
    for job_name in ("windows", "macos"):
        runs = [step.get("run", "") for step in workflow["jobs"][job_name]["steps"]]
        installs = [i for i, run in enumerate(runs) if 'pip install -e ".[package]"' in run]
        assert installs and all(USE in runs[i] for i in installs), job_name
        assert installs[0] < next(i for i, run in enumerate(runs) if "pyinstaller " in run)
    assert "make package" in str(workflow["jobs"]["linux"]["steps"])  # build.sh, above
    assert "constraints:" in (ROOT / "Makefile").read_text(encoding="utf-8")
