"""Every test gets its own dpgui home (keys, ledger, autosaves): the real one is never touched. Qt runs
headless (its offscreen platform unless a test starts Xvfb itself), with one QApplication per session.

The markers of pyproject.toml are given here by rules, so a new test gets its marker from what it uses:
``db`` a PostgreSQL server, ``spark`` a Spark session, ``xvfb`` a real X server, ``packaging`` the
installers' build and files (test_packaging*), ``slow`` a test of tests/system (whole flows: seconds
each, measured) or one that opens the main window (seconds each, measured). Any other test that takes
seconds (measured with ``--durations``) carries ``@pytest.mark.slow`` itself, or its module
``pytestmark = pytest.mark.slow`` when every test of it is slow, so the marker follows the test when it
is renamed or moved. ``make test-fast`` runs the tests with none of these markers.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_SCALE_FACTOR_ROUNDING_POLICY", "PassThrough")

import pytest

#: Fixtures, and names a test calls, that need a piece of the system beyond Python.
_NEEDS = {
    "db": ("pg_server", "require_postgresql"),
    "spark": ("spark", "spark_unavailable_reason"),
    "xvfb": ("xvfb", "virtual_display"),
    # the main window (tests/support/gui_helpers.py): seconds per test where most take milliseconds
    "slow": ("make_window", "sample_window_planned", "hierarchy_sample_released", "MainWindow"),
}


def _needed_markers(item: pytest.Item) -> set[str]:
    """The markers a test earns by what it uses: its fixtures, the names its body and its fixtures' bodies
    call (a system piece, the main window), a parametrised source kind (``postgresql-…``, ``spark-…``),
    its file's name."""
    names = set(getattr(item, "fixturenames", ()))
    function = getattr(item, "function", None)
    fixture_info = getattr(item, "_fixtureinfo", None)
    fixture_defs = fixture_info.name2fixturedefs.values() if fixture_info is not None else ()
    for code in [getattr(function, "__code__", None), *(getattr(d[-1].func, "__code__", None) for d in fixture_defs)]:
        names |= set(code.co_names) if code is not None else set()
    callspec = getattr(item, "callspec", None)
    params = [str(v) for v in callspec.params.values()] if callspec is not None else []
    markers = {marker for marker, needs in _NEEDS.items() if names & set(needs)}
    if any(p.startswith("postgresql") for p in params):
        markers.add("db")
    if any(p.startswith("spark-") for p in params) or item.path.name == "test_spark_source.py":
        markers.add("spark")
    if item.path.name.startswith("test_packaging"):
        markers.add("packaging")
    if item.path.parent.name == "system":
        markers.add("slow")
    return markers


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in sorted(_needed_markers(item) - {m.name for m in item.iter_markers()}):
            item.add_marker(getattr(pytest.mark, marker))


@pytest.fixture(autouse=True, scope="session")
def _widgets_application_first(qapp):
    """pytest-qt's QApplication, made before any test: dpgui.pdf makes a bare QGuiApplication when no
    application runs (the CLI's case), and a process holds one application, so a PDF drawn first (by the
    CLI run in-process, or a bundle) would leave no widget test able to run."""


@pytest.fixture(autouse=True)
def _isolated_dpgui_home(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGUI_HOME", str(tmp_path / "dpgui-home"))


@pytest.fixture(scope="session")
def pg_server():
    """A throw-away PostgreSQL cluster (tests/support/pg_server.py) for the session: ``pg_server.url`` (no
    password), ``.password``, ``.execute(sql)``, ``.connect()``. Skipped with the reason when PostgreSQL
    is not installed, except under CI=true, where that fails (CI installs it: `make system-deps`)."""
    from pg_server import PgServer, require_postgresql

    require_postgresql()
    server = PgServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def key_folder(tmp_path_factory):
    """A folder with one signing key, ``officer.key`` / ``officer.pub`` (passphrase
    ``tests.cli_helpers.PASSPHRASE``), made once per module: deriving its encryption key is slow on purpose."""
    from dpgui.report.keystore import create_key
    from cli_helpers import PASSPHRASE

    folder = tmp_path_factory.mktemp("keys")
    create_key("officer", PASSPHRASE, folder)
    return folder
