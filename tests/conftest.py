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
    import os

    from pg_server import PgServer, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}")
        pytest.skip(reason)
    server = PgServer.start()
    try:
        yield server
    finally:
        server.stop()
