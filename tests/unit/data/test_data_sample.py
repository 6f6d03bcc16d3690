"""Tests of the bundled sample dataset and dpgui.data.sample."""

from __future__ import annotations

import sys

import pytest

from dpgui.data.histogram import column_histogram
from dpgui.data.readers import list_columns
from dpgui.data.sample import sample_dataset_path
from dpgui.errors import DataError

NUMERIC = ["dep_delay", "arr_delay", "air_time", "distance", "hour"]


def test_sample_found_in_checkout():
    path = sample_dataset_path()
    assert path.is_file() and path.name == "flights.parquet"
    assert path.stat().st_size < 3_000_000
    assert (path.parent / "README.md").is_file() and (path.parent / "LICENSE").is_file()


def test_sample_columns():
    kinds = dict(list_columns(sample_dataset_path()))
    for name in NUMERIC + ["month"]:
        assert kinds[name] == "numeric"
    assert kinds["origin"] == "text" and kinds["carrier"] == "text"


def test_sample_histogram_with_suggested_bounds():
    h = column_histogram(sample_dataset_path(), "distance", 0, 5000, 50)
    assert h.n_rows == 336_776 and h.n_missing == 0 and h.total == h.n_rows
    assert h.n_clamped_low == 0 and h.n_clamped_high == 0
    d = column_histogram(sample_dataset_path(), "arr_delay", -100, 500, 60)
    assert d.n_missing > 0 and d.total == d.n_rows - d.n_missing


def test_sample_found_in_pyinstaller_bundle(tmp_path, monkeypatch):
    target = tmp_path / "resources" / "sample" / "flights.parquet"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"PAR1")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert sample_dataset_path() == target


def test_sample_missing_raises(tmp_path, monkeypatch):
    import dpgui.resources

    monkeypatch.setattr(dpgui.resources, "__file__", str(tmp_path / "a" / "resources.py"))
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "bundle"), raising=False)
    with pytest.raises(DataError, match="sample dataset is missing"):
        sample_dataset_path()
