"""Every test gets its own dpgui home (keys, ledger, autosaves): the real one is never touched. Qt runs
headless (its offscreen platform unless a test starts Xvfb itself), with one QApplication per session."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_SCALE_FACTOR_ROUNDING_POLICY", "PassThrough")

import pytest


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
    """A throw-away PostgreSQL cluster (tests/pg_server.py) for the session: ``pg_server.url`` (no
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
    from tests.cli_helpers import PASSPHRASE

    folder = tmp_path_factory.mktemp("keys")
    create_key("officer", PASSPHRASE, folder)
    return folder
