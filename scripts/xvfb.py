"""Start Xvfb on a display number the X server picks itself (``-displayfd``), for tests, benchmarks
and the installed-app smoke test.

    python scripts/xvfb.py [--size WxH] COMMAND [ARG…]   # like xvfb-run: COMMAND runs with DISPLAY set

Picking a number ourselves (a fixed one, a random one, or the first without a lock file) races with
other X servers and trips over stale lock files; with ``-displayfd`` the server takes the first free
number and writes it to a pipe. The display is handed out only after an X11 connection setup on it
has succeeded. Needs Debian's ``xvfb`` (``make system-deps``).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import IO

START_TIMEOUT_S = 30.0


@contextlib.contextmanager
def virtual_display(width: int = 1280, height: int = 860) -> Iterator[str]:
    """Run Xvfb with one ``width``×``height``×24 screen; yields ``":N"`` and stops the server after."""
    binary = shutil.which("Xvfb")
    if binary is None:
        raise RuntimeError("Xvfb is not installed: run `make system-deps` (CI does this in .ci/run)")
    read_end, write_end = os.pipe()
    # A file, not a pipe: a long-lived server must never block on it. Closed when the server stops.
    log = tempfile.TemporaryFile()  # noqa: SIM115
    # -noreset: by default the server re-initialises itself whenever its last client leaves, and a
    # client that connects meanwhile can be refused; between app runs that happens every time.
    server = subprocess.Popen([binary, "-displayfd", str(write_end), "-screen", "0", f"{width}x{height}x24",
                               "-nolisten", "tcp", "-noreset"], pass_fds=(write_end,),
                              stdout=subprocess.DEVNULL, stderr=log)
    os.close(write_end)
    try:
        number = _read_display_number(read_end, server, log)
        yield f":{number}"
    finally:
        os.close(read_end)
        log.close()
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _read_display_number(read_end: int, server: subprocess.Popen, log: IO[bytes]) -> int:
    deadline = time.monotonic() + START_TIMEOUT_S
    text = b""
    while not text.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RuntimeError(f"Xvfb did not start within {START_TIMEOUT_S:g} s")
        ready, _, _ = select.select([read_end], [], [], min(remaining, 0.5))
        if ready:
            chunk = os.read(read_end, 16)
            if not chunk:  # the server closed the pipe without a number: it failed to start
                break
            text += chunk
        elif server.poll() is not None:
            break
    if text.strip().isdigit() and _accepts_clients(int(text), server, deadline):
        return int(text)
    log.seek(0)
    errors = log.read().decode(errors="replace").strip()[-2000:]
    raise RuntimeError(f"Xvfb did not start (exit code {server.poll()}): {errors or 'no message'}")


# X11 connection setup: little-endian, protocol 11.0, no authorisation; the reply's first byte is 1 on success.
_X11_SETUP = b"l\x00" + struct.pack("<HHHH2x", 11, 0, 0, 0)


def _accepts_clients(number: int, server: subprocess.Popen, deadline: float) -> bool:
    """True once the server completes an X11 connection setup with a client, False if it died first.

    A full handshake, not just a connect: a client started right after ``-displayfd`` answered was
    once refused ("could not connect to display") here.
    """
    path = f"/tmp/.X11-unix/X{number}"
    while server.poll() is None and time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(5)
            try:
                probe.connect(path)
                probe.sendall(_X11_SETUP)
                if probe.recv(1) == b"\x01":
                    return True
            except OSError:
                pass
        time.sleep(0.05)
    return False


def main(argv: list[str]) -> int:
    """Run ``argv`` with DISPLAY set to a fresh virtual display (``--size WxH`` first: its screen size);
    its exit code is returned."""
    size: tuple[int, ...] = ()
    if argv[:1] == ["--size"] and len(argv) > 1:
        size, argv = tuple(int(v) for v in argv[1].lower().split("x")), argv[2:]
    if not argv or len(size) not in (0, 2):
        print("usage: python scripts/xvfb.py [--size WxH] COMMAND [ARG…]", file=sys.stderr)
        return 2
    with virtual_display(*size) as display:
        return subprocess.run(argv, env={**os.environ, "DISPLAY": display}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
