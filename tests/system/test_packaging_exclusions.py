"""What packaging/dpgui.spec leaves out of the bundle is what the app never imports or loads.

The spec's ``EXCLUDES`` (modules) and ``_UNUSED_QT`` (Qt and pyarrow libraries and plugins) are read from
the spec itself; the app's imports from its source (AST: ``import``, ``from … import``,
``importlib.import_module("…")``). A module the frozen app imports but the spec left out would fail only
in the installed app, so the rule is checked here rather than left to the self-test's paths. Also
packaging/linux/dedupe_libs.py, which keeps one copy of the libraries NumPy's and SciPy's wheels both ship.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from script_modules import script_module

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "dpgui.spec"

# Imported by the app although the spec leaves it out, and why that is right.
OPTIONAL = {
    "pyspark": "dpgui/data/spark_source.py: the optional Spark engine (`dpgui[spark]`); in an installer it "
               "says that PySpark is missing",
}


def _spec_value(name: str) -> object:
    """The value the spec assigns to ``name`` at its top level (a literal or a ``re.compile(…)``)."""
    for node in ast.parse(SPEC.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return eval(compile(ast.Expression(node.value), str(SPEC), "eval"), {"re": re})  # our own spec file
    raise AssertionError(f"{name} is not assigned at the top of {SPEC}")


def _imports(source: str) -> set[str]:
    """Every absolute module name a Python source imports, ``from a import b`` counted as a and a.b."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return found


def _left_out(module: str, excludes: list[str]) -> str | None:
    return next((name for name in excludes if module == name or module.startswith(name + ".")), None)


def _violations(files: dict[str, str], excludes: list[str]) -> list[str]:
    return sorted(f"{path} imports {module} (the spec excludes {name})"
                  for path, source in files.items() for module in _imports(source)
                  if (name := _left_out(module, excludes)) is not None and name not in OPTIONAL)


def _app_sources() -> dict[str, str]:
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in sorted((ROOT / "dpgui").rglob("*.py"))}


def test_the_app_imports_nothing_the_spec_leaves_out():
    excludes = _spec_value("EXCLUDES")
    assert isinstance(excludes, list) and "scipy.stats" in excludes and "readline" in excludes
    sources = _app_sources()
    imported = set().union(*(_imports(source) for source in sources.values()))
    assert {"scipy.optimize", "pyarrow.parquet", "PySide6.QtWidgets", "sqlalchemy"} <= imported  # the walk sees them
    assert _violations(sources, excludes) == []
    assert {name for name in OPTIONAL if any(_left_out(module, [name]) for module in imported)} == set(OPTIONAL)


def test_the_rule_catches_an_import_of_an_excluded_module():
    excludes = _spec_value("EXCLUDES")
    assert _violations({"x.py": "from scipy import stats\n"}, excludes) == [
        "x.py imports scipy.stats (the spec excludes scipy.stats)"]
    assert _violations({"x.py": "import importlib\nimportlib.import_module('readline')\n"}, excludes) == [
        "x.py imports readline (the spec excludes readline)"]
    assert _violations({"x.py": "import scipy.optimize\nfrom pyarrow import parquet\n"}, excludes) == []


UNUSED_QT_PLUGINS = [
    "PySide6/Qt/plugins/imageformats/libq" + name + ".so"
    for name in ("gif", "icns", "ico", "jpeg", "tga", "tiff", "wbmp", "webp")
] + ["PySide6/Qt/plugins/generic/libqevdev" + name + "plugin.so" for name in ("keyboard", "mouse", "tablet", "touch")]

# What the window needs on a Linux desktop (X11 or Wayland), headless (the self-test) and for its plots.
DESKTOP_QT = [
    "PySide6/Qt/plugins/platforms/libqxcb.so", "PySide6/Qt/plugins/platforms/libqwayland.so",
    "PySide6/Qt/plugins/platforms/libqoffscreen.so", "PySide6/Qt/plugins/imageformats/libqsvg.so",
    "PySide6/Qt/plugins/iconengines/libqsvgicon.so",
    "PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so",
    "PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so",
    "PySide6/Qt/plugins/xcbglintegrations/libqxcb-glx-integration.so",
    "PySide6/Qt/plugins/wayland-shell-integration/libxdg-shell.so",
    "PySide6/Qt/lib/libQt6OpenGL.so.6", "PySide6/Qt/lib/libQt6Svg.so.6", "PySide6/Qt/lib/libQt6XcbQpa.so.6",
    "PySide6/Qt/lib/libQt6WaylandClient.so.6", "PySide6/Qt/lib/libQt6DBus.so.6",
    "pyarrow/libarrow.so.2600", "pyarrow/libarrow_substrait.so.2600", "pyarrow/libarrow_acero.so.2600",
    "pyarrow/libarrow_dataset.so.2600", "pyarrow/libparquet.so.2600",
]


@pytest.mark.parametrize("path", UNUSED_QT_PLUGINS)
def test_image_formats_and_kiosk_input_plugins_are_left_out(path):
    assert _spec_value("_UNUSED_QT").search(path)  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", DESKTOP_QT)
def test_what_the_window_loads_is_kept(path):
    assert not _spec_value("_UNUSED_QT").search(path)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def dedupe():
    with script_module(ROOT / "packaging" / "linux" / "dedupe_libs.py") as module:
        yield module


def test_identical_wheel_libraries_are_kept_once(tmp_path, dedupe):
    internal = tmp_path / "_internal"
    files = {
        "numpy.libs/libgfortran-04.so.5": b"gfortran 5",
        "scipy.libs/libgfortran-04.so.5": b"gfortran 5",  # the same file: linked
        "numpy.libs/libquadmath-96.so.0": b"quadmath 1",
        "scipy.libs/libquadmath-96.so.0": b"quadmath 2",  # same name, other bytes: kept
        "scipy.libs/libscipy_openblas.so": b"openblas",
        "scipy/libgfortran-04.so.5": b"gfortran 5",  # not an auditwheel folder: kept
    }
    for name, data in files.items():
        (internal / name).parent.mkdir(parents=True, exist_ok=True)
        (internal / name).write_bytes(data)

    linked = dedupe.dedupe_libs(internal)

    link = internal / "scipy.libs/libgfortran-04.so.5"
    assert linked == [(link, internal / "numpy.libs/libgfortran-04.so.5")]
    assert link.is_symlink() and str(link.readlink()) == "../numpy.libs/libgfortran-04.so.5"
    for name, data in files.items():
        assert (internal / name).read_bytes() == data
        assert (internal / name).is_symlink() == (name == "scipy.libs/libgfortran-04.so.5")
    assert dedupe.dedupe_libs(internal) == []  # a second run changes nothing
