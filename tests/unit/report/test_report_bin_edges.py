"""A published bin edge is the edge the records were counted against (dpgui.core.tree.bin_edges).

Before, a release printed lower + (upper − lower)·j/K while the histogram counted against
numpy.linspace's j·w + lower: on [0, 1) with 10 bins the report said bin 3 starts at 0.3, but a value of
0.3 had been counted in bin 2 (its edge is 0.30000000000000004), so "values below 0.3" included it.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from dpgui.core.focus import _edge
from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.tree import bin_edges
from dpgui.data.histogram import values_histogram
from dpgui.report.cdf.csv_export import release_csv_text


def _bin_of(value: float, lower: float, upper: float, bins: int) -> int:
    return int(np.argmax(values_histogram([value], lower, upper, bins)))


def _random_bounds(rng: np.random.Generator) -> tuple[float, float, int]:
    lower = float(rng.uniform(-1e3, 1e3) * 10.0 ** rng.integers(-4, 4))
    upper = lower + float(rng.uniform(1e-3, 1e3) * 10.0 ** rng.integers(-3, 4))
    return lower, upper, int(rng.integers(2, 300))


def test_decimal_values_on_decimal_edges_are_published_on_the_side_they_were_counted():
    values = [0.1, 0.1, 0.3, 0.3, 0.3, 0.3, 0.3, 0.7]
    counts = values_histogram(values, 0.0, 1.0, 10)
    assert counts[2] == 5 and counts[3] == 0  # 0.3 < 0.1 + 0.2 ... < linspace's edge 3, 0.30000000000000004
    plan = auto_plan(10, PrivacySpec(1.0, "change"))
    result = release(counts, plan, SeededRandom(1), 0.0, 1.0, "none")
    lower_edges, upper_edges = result.bin_edges()
    assert upper_edges[2] == lower_edges[3] == 0.30000000000000004
    rows = list(csv.DictReader(io.StringIO(release_csv_text(result))))
    assert rows[2]["bin_upper"] == rows[3]["bin_lower"] == "0.30000000000000004"
    # What the row claims, the count of values below bin_upper, is what the histogram counted up to bin 2.
    assert sum(v < float(rows[2]["bin_upper"]) for v in values) == counts[:3].sum() == 7


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_every_value_lies_within_the_published_edges_of_the_bin_it_was_counted_in(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        lower, upper, bins = _random_bounds(rng)
        edges = bin_edges(lower, upper, bins)
        plan = auto_plan(bins, PrivacySpec(1.0, "addremove"))
        result = release(np.zeros(bins, dtype=np.int64), plan, SeededRandom(seed), lower, upper, "l2")
        published_lower, published_upper = result.bin_edges()
        np.testing.assert_array_equal(published_lower, edges[:-1])
        np.testing.assert_array_equal(published_upper, edges[1:])
        # values on the edges, an ulp either side, and decimal fractions of the range
        on_edges = edges[1:-1]
        probes = np.concatenate([on_edges, np.nextafter(on_edges, -np.inf), np.nextafter(on_edges, np.inf),
                                 lower + (upper - lower) * np.arange(1, bins) / bins])
        for value in rng.choice(probes, size=min(60, probes.size), replace=False):
            j = _bin_of(float(value), lower, upper, bins)
            assert published_lower[j] <= value < published_upper[j] or (j == bins - 1 and value >= published_lower[j])
        assert all(_edge(j, lower, upper, bins) == edges[j] for j in range(bins + 1))
