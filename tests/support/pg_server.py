"""A throw-away PostgreSQL cluster for the tests (and benchmarks): real server, no mock.

Use the session fixture ``pg_server`` (tests/conftest.py) in a test, or in a script::

    from pg_server import PgServer          # tests/ on sys.path (pytest puts it there)
    with PgServer.start() as pg:
        pg.execute("CREATE TABLE t (x float8)")
        spec = parse_source(pg.url, table="t")   # no password in the URL
        os.environ["DPGUI_DB_PASSWORD"] = pg.password   # how dpgui gets it (or a password prompt)

The cluster (Debian's ``postgresql`` package: ``initdb``/``pg_ctl`` on PATH or under
/usr/lib/postgresql/*/bin) lives in a fresh directory under /tmp, listens ONLY on a unix socket in
that directory (``listen_addresses = ''``), and asks for a password (``scram-sha-256``, a random one
per cluster), so wrong-password tests are real. ``pg.url`` is ``postgresql://dpgui_test@/dpgui?host=<dir>``;
``pg.tcp_url(port)`` a URL for a TCP port (``closed_port()`` gives one nobody listens on). Running as
root (CI containers), initdb refuses: the cluster is then run as the ``postgres`` user (created by the
Debian package), through ``runuser``. :func:`unavailable_reason` says why a cluster cannot be started
(tests skip locally with that reason; under ``CI=true`` they fail instead).

Start ~2 s (initdb with ``--no-sync``, ``fsync = off``), stop ~0.5 s; the directory is removed.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pathlib
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

USER = "dpgui_test"
DATABASE = "dpgui"


def _bin_dir() -> pathlib.Path | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return pathlib.Path(found).resolve().parent
    def version(p: str) -> int:
        name = pathlib.Path(p).parent.parent.name
        return int(name) if name.isdigit() else 0

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    return pathlib.Path(candidates[-1]).parent if candidates else None


def _run_as() -> list[str]:
    """The command prefix that runs the server as a non-root user (empty when not root)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError as exc:
        raise RuntimeError("running as root and there is no 'postgres' user to run PostgreSQL as") from exc
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    return [runuser, "-u", "postgres", "--"]


def unavailable_reason() -> str | None:
    """None if a cluster can be started here, else why not (with the fix)."""
    if _bin_dir() is None:
        return "PostgreSQL server not installed (initdb not found); run `make system-deps` (Debian package postgresql)"
    try:
        _run_as()
    except RuntimeError as exc:
        return str(exc)
    return None


def require_postgresql() -> None:
    """Skip the calling test when no cluster can be started here, with the reason (fail under CI):
    :func:`system_pieces.require`."""
    from system_pieces import require

    require(unavailable_reason())


def closed_port() -> int:
    """A localhost TCP port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@dataclass
class PgServer:
    """A running throw-away cluster; :meth:`stop` (or the ``with`` block) removes it."""

    base: pathlib.Path
    bin_dir: pathlib.Path
    password: str
    prefix: Sequence[str]
    version: str = ""

    @property
    def socket_dir(self) -> str:
        return str(self.base)

    @property
    def url(self) -> str:
        """``postgresql://dpgui_test@/dpgui?host=<socket dir>``: no password (dpgui refuses one in a URL)."""
        return f"postgresql://{USER}@/{DATABASE}?host={self.base}"

    @staticmethod
    def tcp_url(port: int, host: str = "127.0.0.1") -> str:
        return f"postgresql://{USER}@{host}:{port}/{DATABASE}"

    def connect(self, database: str = DATABASE, **kwargs: Any) -> Any:
        """A psycopg connection as the cluster's superuser (autocommit), for setting up test data."""
        import psycopg

        return psycopg.connect(host=self.socket_dir, user=USER, password=self.password, dbname=database,
                               autocommit=True, **kwargs)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run one statement as superuser; its rows (empty list for statements without rows)."""
        with self.connect() as conn, conn.cursor() as cur:
            cur.execute(sql, params)  # type: ignore[arg-type]
            return list(cur.fetchall()) if cur.description is not None else []

    @classmethod
    def start(cls) -> PgServer:
        reason = unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        bin_dir = _bin_dir()
        assert bin_dir is not None
        prefix = _run_as()
        base = pathlib.Path(tempfile.mkdtemp(prefix="dpgui-pg-"))
        password = secrets.token_urlsafe(18)
        server = cls(base, bin_dir, password, prefix)
        try:
            pwfile = base / "pw"
            pwfile.write_text(password + "\n", encoding="utf-8")
            pwfile.chmod(0o600)
            if prefix:
                uid, gid = pwd.getpwnam("postgres").pw_uid, pwd.getpwnam("postgres").pw_gid
                for p in (base, pwfile):
                    os.chown(p, uid, gid)
            data = base / "data"
            server._run("initdb", "-D", str(data), "-U", USER, "--auth=scram-sha-256", f"--pwfile={pwfile}",
                        "-E", "UTF8", "--locale=C", "--no-sync")
            pwfile.unlink()
            with open(data / "postgresql.conf", "a", encoding="utf-8") as f:
                f.write(f"\nlisten_addresses = ''\nunix_socket_directories = '{base}'\nfsync = off\n"
                        "synchronous_commit = off\nfull_page_writes = off\nmax_connections = 30\n")
            server._run("pg_ctl", "-D", str(data), "-l", str(base / "log"), "-w", "-t", "60", "start")
            with server.connect(database="postgres") as conn:
                conn.execute(f"CREATE DATABASE {DATABASE}")
                server.version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        except BaseException:
            server.stop()
            raise
        return server

    def _run(self, tool: str, *args: str) -> None:
        cmd = [*self.prefix, str(self.bin_dir / tool), *args]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=self.base, check=False)
        if done.returncode != 0:
            log = self.base / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()} {tail}")

    def stop(self) -> None:
        if (self.base / "data" / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError):
                self._run("pg_ctl", "-D", str(self.base / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PgServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def pg_cluster() -> Iterator[PgServer]:
    """``with pg_cluster() as pg:`` a started cluster, stopped and removed at the end."""
    server = PgServer.start()
    try:
        yield server
    finally:
        server.stop()
