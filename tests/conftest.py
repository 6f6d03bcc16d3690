"""Every test gets its own dpgui home (keys, ledger, autosaves): the real one is never touched."""

import pytest


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
