"""create_file's early syncs (docs/engine.md "Big K: 2²⁴ bins in one release"): a file written block by block is synced on a
second thread every SYNC_EVERY bytes, never two syncs at once, the whole file fsynced before it counts as
written; a sync that fails leaves no file behind and raises."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import dpgui.report.files as files


def test_blocks_are_synced_early_on_another_thread_one_sync_at_a_time(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "SYNC_EVERY", 1000)
    synced: list[tuple[int, int]] = []  # (thread id, file size when the sync started)
    running = threading.Lock()
    path = tmp_path / "big.csv"

    def slow_sync(fd: int) -> None:
        assert running.acquire(blocking=False), "two syncs at once"
        try:
            synced.append((threading.get_ident(), os.fstat(fd).st_size))
            time.sleep(0.01)
        finally:
            running.release()

    monkeypatch.setattr(files, "_sync_data", slow_sync)
    blocks = [bytes([i]) * 700 for i in range(40)]
    files.create_file(path, iter(blocks))
    assert path.read_bytes() == b"".join(blocks)
    assert synced, "no early sync"
    assert all(thread != threading.get_ident() for thread, _ in synced)
    sizes = [size for _, size in synced]
    assert sizes == sorted(sizes) and sizes[0] >= 1000  # each sync after ≥ SYNC_EVERY new bytes, written through
    assert len(synced) <= len(blocks) * 700 // 1000


def test_a_failed_early_sync_removes_the_file_and_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "SYNC_EVERY", 1000)

    def failing_sync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files, "_sync_data", failing_sync)
    path = tmp_path / "big.csv"
    with pytest.raises(OSError, match="Input/output"):
        files.create_file(path, iter([b"x" * 700] * 10))
    assert not path.exists()


def test_small_files_are_not_synced_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(files, "_sync_data", calls.append)
    files.create_file(tmp_path / "small.txt", [b"a" * 100, b"b" * 100])
    assert calls == [] and (tmp_path / "small.txt").read_bytes() == b"a" * 100 + b"b" * 100
