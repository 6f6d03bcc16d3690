"""The layers hold (pyproject.toml's import-linter contracts); the window starts without SciPy and pandas.

The contracts (run by `make lint` in CI, and here so that `make test` alone sees them too): core imports
nothing of ours but errors; data and report import core; workspace never imports app; only dpgui.app
and dpgui.pdf import Qt (PySide6, shiboken6, pyqtgraph), the PDF without widgets or the app; the CLI imports
the app only to start the window, and reaches the budget ledger and the publishing modules only through
dpgui.workspace. They read every import statement, also those inside functions. A statistic (the counts of
one column) is imported only from its own places and the registries, each naming it on one line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the dpgui package found in ``cwd`` (it puts cwd first on sys.path)."""
    command = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(command), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_import_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken." in result.stdout


def test_a_qt_import_in_core_breaks_the_contracts(tmp_path):
    """Not vacuous: a lazy Qt import in a copy of dpgui/core is caught, and the message names it."""
    shutil.copytree(ROOT / "dpgui", tmp_path / "dpgui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    tree = tmp_path / "dpgui" / "core" / "tree.py"
    tree.write_text(tree.read_text(encoding="utf-8") + "\n\ndef _window() -> None:\n    import PySide6.QtWidgets\n",
                    encoding="utf-8")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Only dpgui.app and dpgui.pdf import Qt (PySide6, shiboken6, pyqtgraph) BROKEN" in result.stdout
    assert "dpgui.core.tree -> PySide6" in result.stdout


def test_a_ledger_import_in_the_cli_breaks_the_contracts(tmp_path):
    """Not vacuous: the CLI importing the budget ledger itself (not through dpgui.workspace) is caught."""
    shutil.copytree(ROOT / "dpgui", tmp_path / "dpgui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    cli = tmp_path / "dpgui" / "cli" / "__init__.py"
    cli.write_text(cli.read_text(encoding="utf-8") + "\n\ndef _ledger() -> None:\n    import dpgui.report.ledger\n",
                   encoding="utf-8")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "dpgui.workspace BROKEN" in result.stdout
    assert "dpgui.cli is not allowed to import dpgui.report.ledger" in result.stdout


def test_the_window_starts_without_loading_scipy_or_pandas():
    """SciPy and pandas load when first used (planning, the table preview), not with the window:
    together they added ~0.9 s to the time before the first window appeared."""
    code = ("import sys\nfrom dpgui.app.shell.main_window import MainWindow\nimport dpgui.cli\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"loaded at start-up: {result.stdout.strip()[:300]}"


#: Libraries `dpgui plan` must answer without (its budget: ≤ 0.3 s of wall time at 10⁶ bins; importing
#: scipy.optimize alone took ~0.35 s). hashlib/_hashlib: OpenSSL, loaded by `secrets` (only seeds need it).
PLAN_NEEDS_NONE_OF = ("scipy", "pandas", "pyarrow", "PySide6", "pyqtgraph", "sqlalchemy", "cryptography",
                      "jsonschema", "openpyxl", "pyreadstat", "_hashlib")
#: Engine modules the plan does not need: the mechanism (and its estimators and consistency).
PLAN_NEEDS_NO_ENGINE = ("dpgui.core.mechanism", "dpgui.core.estimators", "dpgui.core.consistency")


def test_dpgui_plan_answers_without_the_heavy_libraries():
    """The plan command's whole path (parse, auto-plan, baselines, projections, JSON) at 10⁶ bins, in a
    fresh interpreter: none of those libraries or engine modules is imported, lazily or not, and no
    O(K·h) per-prefix array is built (the worst variance comes from ``max_prefix_variance``)."""
    code = ("import io, json, sys\nfrom contextlib import redirect_stdout\nfrom dpgui.cli import main\n"
            "import dpgui.core.projection as projection\n"
            "basis, rows = projection.prefix_basis, []\n"
            "def spy(shape, estimator, released, prefixes):\n"
            "    rows.append(len(prefixes))\n"
            "    return basis(shape, estimator, released, prefixes)\n"
            "projection.prefix_basis = spy\n"
            "with redirect_stdout(io.StringIO()) as out:\n"
            "    code = main(['plan', '--bins', '1000000', '--epsilon', '1', '--json'])\n"
            "assert code == 0 and json.loads(out.getvalue())['bins'] == 1000000\n"
            "assert not rows, f'per-prefix arrays of {rows} rows'\n"
            "print(','.join(sorted(sys.modules)))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.strip().split(","))
    assert "dpgui.core.planner" in loaded and "numpy" in loaded  # (the list is the real one)
    heavy = sorted(m for m in loaded if m.split(".")[0] in PLAN_NEEDS_NONE_OF)
    assert not heavy, f"dpgui plan imported {heavy[:20]}"
    assert not loaded & set(PLAN_NEEDS_NO_ENGINE), sorted(loaded & set(PLAN_NEEDS_NO_ENGINE))


def test_dpgui_plan_starts_numpy_without_the_blas_thread_pool():
    """OpenBLAS starts its threads when NumPy is imported (~0.06 s on a busy two-core machine); `dpgui plan`
    asks for one, unless the user set OPENBLAS_NUM_THREADS; the other commands keep the default."""
    code = ("import os, sys\nsys.argv = ['dpgui', *sys.argv[1:]]\nimport dpgui.cli\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = str(ROOT)

    def threads(*argv: str, **extra: str) -> str:
        result = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT,
                                env={**env, **extra}, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert threads("plan", "--bins", "256") == "1"
    assert threads("plan", OPENBLAS_NUM_THREADS="2") == "2"
    assert threads("release") == "None"
    assert threads() == "None"


#: The counts of one column, which every layer holds in its own place: its folders and modules.
COUNTS_PLACES = ("dpgui/core/counts", "dpgui/report/counts", "dpgui/workspace/statistics/counts.py",
                 "dpgui/workspace/counts.py", "dpgui/pdf/counts.py", "dpgui/app/counts", "dpgui/cli/counts.py",
                 "dpgui/selftest/counts.py", "dpgui/workspace/plan_parts/counts.py")
#: The CDF for each group, likewise (its counting in the data layer is its own module too).
GROUPED_CDF_PLACES = ("dpgui/core/grouped_cdf", "dpgui/data/group_histograms.py", "dpgui/report/grouped_cdf",
                      "dpgui/workspace/statistics/grouped_cdf.py", "dpgui/workspace/grouped_cdf.py",
                      "dpgui/pdf/grouped_cdf.py", "dpgui/app/grouped_cdf", "dpgui/cli/grouped_cdf.py",
                      "dpgui/selftest/grouped_cdf.py", "dpgui/workspace/plan_parts/grouped_cdf.py")
#: The registries, each naming every statistic on one line (and importing what that line names).
REGISTRIES = ("dpgui/workspace/statistics/__init__.py", "dpgui/report/project_file.py", "dpgui/pdf/sections.py",
              "dpgui/app/shell/mode_table.py", "dpgui/cli/commands.py", "dpgui/selftest/__init__.py",
              "dpgui/workspace/plan_parts/__init__.py")


def _module_of(place: str) -> str:
    return place.removesuffix(".py").replace("/", ".")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, also inside functions (``from a import b`` gives ``a`` and ``a.b``)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("places", [COUNTS_PLACES, GROUPED_CDF_PLACES], ids=["counts", "grouped_cdf"])
def test_a_statistic_is_its_own_places_and_one_line_per_registry(places):
    """The counts of one column (and the CDF for each group) is imported only from its own places and from the
    registries, each of which names it on one line (its ``StatisticKind`` entry): a statistic is added or taken
    out there alone."""
    modules = tuple(_module_of(place) for place in places)
    importers: dict[str, set[str]] = {}
    for path in sorted((ROOT / "dpgui").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(places):
            continue
        hits = {m for m in _imports(path) if m in modules or m.startswith(tuple(f"{s}." for s in modules))}
        if hits:
            importers[relative] = hits
    assert set(importers) == set(REGISTRIES), importers
    for registry in REGISTRIES:
        names = _names_from(ROOT / registry, modules)
        lines = [line for line in (ROOT / registry).read_text(encoding="utf-8").splitlines()
                 if any(re.search(rf"\b{name}\b", line) for name in names) and not line.startswith(("from ", "import "))]
        assert len(lines) == 1, (registry, lines)  # its one entry


def _names_from(path: Path, modules: tuple[str, ...]) -> set[str]:
    """The names ``path`` imports from ``modules`` (``from dpgui.cli.counts import cmd_counts`` → cmd_counts)."""
    import ast

    return {alias.asname or alias.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module is not None
            and (node.module in modules or node.module.startswith(tuple(f"{m}." for m in modules)))
            for alias in node.names}
