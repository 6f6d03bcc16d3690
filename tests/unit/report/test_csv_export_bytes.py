"""The release CSV (dpgui.report.cdf.csv_export) is byte for byte what the ``csv.writer`` + ``repr`` writer
wrote before it was vectorised (kept here as the reference), and float_texts is repr."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.mechanism import Release, release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import cumulative_interval95
from dpgui.core.synthetic import synthetic_counts
from dpgui.report.cdf.csv_export import (CDF_COLUMNS, float_texts, release_csv_blocks, release_csv_bytes, release_csv_text,
                                     write_release_csv)


def reference_csv_text(result: Release) -> str:
    """The writer as it was (commit 9f0437a): csv.writer, one Python row per bin, repr of each float."""
    lower, upper = result.bin_edges()
    ci_low, ci_high = cumulative_interval95(result)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CDF_COLUMNS)
    integral = result.cumulative.dtype.kind in "iu"
    for lo, hi, count, cdf, se, ci_lo, ci_hi, est in zip(lower, upper, result.cumulative, result.cdf,
                                                         result.std_error, ci_low, ci_high, result.estimate):
        writer.writerow([repr(float(lo)), repr(float(hi)), int(count) if integral else repr(float(count)),
                         repr(float(cdf)), repr(float(se)), repr(float(ci_lo)), repr(float(ci_hi)), repr(float(est))])
    return buffer.getvalue()


CASES = [  # bins, neighbours, noise (delta), consistency, lower, upper, records
    (64, "change", 0.0, "l2", 0.0, 1.0, 500),
    (1000, "addremove", 0.0, "l1", -3.5, 1e12, 20_000),
    (257, "change", 1e-6, "none", 1e-9, 2e-9, 3000),  # Gaussian; float cumulative counts; tiny edges
    (4096, "addremove", 1e-6, "l2", -1e20, 1e20, 40),  # edges in repr's exponent form; few records
    (300, "change", 0.0, "none", 0.0, 100.0, 0),  # no records: zeros, and N = 0 (cdf all 0.0)
]


@pytest.mark.slow
@pytest.mark.parametrize(("bins", "neighbours", "delta", "consistency", "lower", "upper", "records"), CASES)
def test_release_csv_is_byte_identical_to_the_reference_writer(bins: int, neighbours: str, delta: float,
                                                               consistency: str, lower: float, upper: float,
                                                               records: int, tmp_path: Path) -> None:
    plan = auto_plan(bins, PrivacySpec(0.5, neighbours, delta=delta), noise="gaussian" if delta else "laplace")
    counts = synthetic_counts("normal", records, bins, seed=bins)
    result = release(counts, plan, SeededRandom(bins), lower, upper, consistency)
    expected = reference_csv_text(result)
    assert release_csv_text(result) == expected
    assert release_csv_bytes(result) == expected.encode("utf-8")
    # Several blocks (the threads' order must not matter), and the streamed file.
    assert b"".join(release_csv_blocks(result, rows_per_block=37)) == expected.encode("utf-8")
    assert write_release_csv(result, tmp_path / "r.csv").read_bytes() == expected.encode("utf-8")


def _awkward_doubles(rng: np.random.Generator, n: int) -> np.ndarray:
    """Doubles of every kind: random bit patterns (all exponents, NaN, inf, subnormals), decades from
    1e-6 to 1e17 either side of repr's switches to exponent form, halves, whole numbers up to 2⁵³, and
    each one's neighbours."""
    x = np.concatenate([
        rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64),
        rng.random(n) * 10.0 ** rng.uniform(-6, 17, n) * rng.choice([-1.0, 1.0], n),
        rng.integers(-10**6, 10**6, n) / 2.0 ** rng.integers(0, 30, n),
        rng.integers(-2**53, 2**53, n).astype(np.float64),
        10.0 ** np.arange(-8, 18), [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7976931348623157e308],
    ])
    with np.errstate(all="ignore"):
        return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])


def test_float_texts_is_repr() -> None:
    values = _awkward_doubles(np.random.default_rng(2017), 30_000)
    assert float_texts(values).to_pylist() == [repr(v) for v in values.tolist()]


def test_levels_sha256_hashes_the_compact_json_of_the_levels() -> None:
    """The ledger's digest of released levels is that of json.dumps(compact) of the lists (the form it
    had before it was written by Arrow), across block boundaries, None levels, empty levels and lists."""
    import hashlib
    import json

    from dpgui.report import publish

    rng = np.random.default_rng(5)
    cases = [[np.array([5])], [None, np.array([], np.int64), [1, -2, 3]], [], [None],
             [np.array([2**62, -2**63, 0]), None, rng.integers(-10**9, 10**9, 2 * publish._HASH_BLOCK + 3)],
             [rng.integers(-5, 5, publish._HASH_BLOCK)]]
    for levels in cases:
        canonical = [None if lvl is None else np.asarray(lvl, dtype=np.int64).tolist() for lvl in levels]
        expected = hashlib.sha256(json.dumps(canonical, separators=(",", ":")).encode("ascii")).hexdigest()
        assert publish.levels_sha256(levels) == expected


def test_float_texts_is_repr_with_an_arrow_of_another_layout_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """This pyarrow writes the layout float_texts expects (so the tests above ran its fast path); one
    that did not would be written by repr for every value."""
    from dpgui.report.cdf import csv_export

    assert csv_export._arrow_layout_known()
    monkeypatch.setattr(csv_export, "_arrow_layout_known", lambda: False)
    values = _awkward_doubles(np.random.default_rng(3), 300)
    assert float_texts(values).to_pylist() == [repr(v) for v in values.tolist()]
