"""Benchmark: a histogram counted IN PostgreSQL (one aggregate query) vs reading the column to this computer.

    python benchmarks/bench_sql.py            # 10,000,000 rows, 65,536 bins
    python benchmarks/bench_sql.py --quick    # 1,000,000 rows
    python benchmarks/bench_sql.py --check    # exit 1 if the bytes target is missed

Starts a throw-away PostgreSQL cluster (tests/support/pg_server.py: Debian's ``postgresql``, unix socket only),
fills a table with ``--rows`` values ``random()`` after ``setseed(0.42)`` (in SQL), and puts a
counting proxy between the client and the server's socket: every byte that crosses the wire, both
directions, is counted for real (the protocol messages, not a formula). Then times, ``--repeats`` times:

(a) in the database: ``SqlSource.histogram`` (one aggregate query; only the counts travel);
(b) to the client: ``SELECT x FROM big`` through a server-side cursor (text format, as a client reads a
    column) → numpy → the same binning (``Binner``); and, for reference, the most compact way to move
    the column: ``COPY (SELECT x FROM big) TO STDOUT (FORMAT BINARY)`` (bytes only).

Prints the median time of each, the bytes each moved, and ``bytes_ratio = (a) / (b)`` against the target
(<= 0.01); checks that (a) and (b) give the same counts. Without PostgreSQL installed it says so and
exits 0 (exit 1 under ``--check``).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import socket
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "support"), str(REPO / "benchmarks")]

BYTES_TARGET = 0.01
LOWER, UPPER, BINS = 0.0, 1.0, 65_536


class CountingProxy:
    """A unix-socket proxy in front of PostgreSQL's socket that counts the bytes in each direction."""

    def __init__(self, server_socket: str) -> None:
        self.server_socket = server_socket
        self.dir = tempfile.mkdtemp(prefix="dpgui-proxy-")
        self.path = os.path.join(self.dir, ".s.PGSQL.5432")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(8)
        self.lock = threading.Lock()
        self.to_server = 0
        self.to_client = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.to_server = self.to_client = 0

    def total(self) -> int:
        with self.lock:
            return self.to_server + self.to_client

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(self.server_socket)
            threading.Thread(target=self._pipe, args=(client, server, "to_server"), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, "to_client"), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, counter: str) -> None:
        try:
            while True:
                data = src.recv(1 << 18)
                if not data:
                    break
                dst.sendall(data)
                with self.lock:
                    setattr(self, counter, getattr(self, counter) + len(data))
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true", help="1,000,000 rows, 1 repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 if the bytes target is missed")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.repeats = 1_000_000, 1

    from pg_server import PgServer, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"bench_sql: skipped: {reason}")
        return 1 if args.check else 0

    import numpy as np

    from dpgui.data.binning import Binner
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source
    from timing import median_time

    with PgServer.start() as pg:
        t0 = time.perf_counter()
        with pg.connect() as conn:
            conn.execute("SELECT setseed(0.42)")
            conn.execute(f"CREATE TABLE big AS SELECT random() AS x FROM generate_series(1, {args.rows})")
            conn.execute("VACUUM ANALYZE big")
        print(f"PostgreSQL {pg.version}: table of {args.rows:,} float8 rows made in {time.perf_counter() - t0:.1f} s; "
              f"K = {BINS:,} bins on [{LOWER}, {UPPER})")
        proxy = CountingProxy(os.path.join(pg.socket_dir, ".s.PGSQL.5432"))
        url = f"postgresql://dpgui_test@/dpgui?host={proxy.dir}"
        os.environ["DPGUI_DB_PASSWORD"] = pg.password

        with open_source(parse_source(url, table="big")) as src:
            def in_db() -> tuple[object, int]:
                proxy.reset()
                h = src.histogram("x", LOWER, UPPER, BINS)
                return h, proxy.total()

            t_db, (h_db, bytes_db) = median_time(in_db, repeats=args.repeats)

        import psycopg

        with psycopg.connect(host=proxy.dir, user="dpgui_test", password=pg.password, dbname="dpgui") as conn:
            def to_client() -> tuple[object, int]:
                proxy.reset()
                binner = Binner(LOWER, UPPER, BINS)
                with conn.transaction(), conn.cursor(name="col") as cur:
                    cur.itersize = 100_000
                    cur.execute("SELECT x FROM big")
                    while rows := cur.fetchmany(1_000_000):
                        binner.add(np.fromiter((r[0] for r in rows), dtype=np.float64, count=len(rows)))
                return binner.counts, proxy.total()

            t_client, (counts_client, bytes_client) = median_time(to_client, repeats=args.repeats)

            proxy.reset()
            t0 = time.perf_counter()
            with conn.cursor() as cur, cur.copy("COPY (SELECT x FROM big) TO STDOUT (FORMAT BINARY)") as copy:
                for _ in copy:
                    pass
            t_copy, bytes_copy = time.perf_counter() - t0, proxy.total()
        proxy.close()

    same = np.array_equal(h_db.counts, counts_client)  # type: ignore[attr-defined]
    ratio = bytes_db / bytes_client
    print(f"(a) in the database (one aggregate query): {t_db:8.2f} s   {bytes_db:>13,} bytes on the wire")
    print(f"(b) column to the client (SELECT x, text): {t_client:8.2f} s   {bytes_client:>13,} bytes on the wire")
    print(f"    column by binary COPY (reference)    : {t_copy:8.2f} s   {bytes_copy:>13,} bytes on the wire")
    print(f"bytes_ratio = (a)/(b) = {ratio:.5f} (target <= {BYTES_TARGET}); vs binary COPY: {bytes_db / bytes_copy:.5f}; "
          f"time_ratio = {t_db / t_client:.3f}")
    if args.rows < 10_000_000:
        print("(the bytes target is for 10^7 rows: the K counts are the same size with fewer rows, the column smaller)")
    print(f"counts equal: {same}")
    if not same:
        return 1
    return 1 if args.check and args.rows >= 10_000_000 and ratio > BYTES_TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
