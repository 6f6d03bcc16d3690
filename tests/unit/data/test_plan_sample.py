"""resources/sample/flights_plan.parquet (see resources/sample/README.md): the release plan's sample with a
person-ID column."""

from __future__ import annotations

import collections

import pyarrow.parquet as pq

from dpgui.data.sample import sample_dataset_path


def test_bundled_plan_sample_has_the_documented_rows_columns_and_unknown_tail_numbers():
    sample = sample_dataset_path().parent / "flights_plan.parquet"
    assert sample.stat().st_size < 3_000_000
    assert (sample.parent / "flights_plan.LICENSE").is_file()
    assert "flights_plan.parquet" in (sample.parent / "README.md").read_text(encoding="utf-8")
    table = pq.read_table(sample)
    assert table.num_rows == 336_776
    assert table.column_names == ["dep_delay", "distance", "carrier", "origin", "dest_tzone", "dest", "tailnum",
                                  "month"]
    assert [str(table.schema.field(c).type) for c in ("dep_delay", "distance", "month")] == ["double", "double", "int8"]
    assert {c: table[c].null_count for c in table.column_names} == {
        "dep_delay": 8_255, "distance": 0, "carrier": 0, "origin": 0, "dest_tzone": 0, "dest": 0, "tailnum": 0,
        "month": 0}
    flights = collections.Counter(table["tailnum"].to_pylist())
    assert len(flights) == 4_044 and flights["unknown"] == 2_512 and "" not in flights
    assert max(n for tail, n in flights.items() if tail != "unknown") == 575
    assert sum(1 for n in flights.values() if n > 20) == 3_138
    assert {c: len(set(table[c].to_pylist())) for c in ("carrier", "origin", "dest_tzone", "dest", "month")} == {
        "carrier": 16, "origin": 3, "dest_tzone": 9, "dest": 105, "month": 12}
    # the same flights as flights.parquet, in the same order
    flights_sample = pq.read_table(sample_dataset_path(), columns=["dep_delay", "distance", "carrier", "month"])
    assert table.select(["dep_delay", "distance", "carrier", "month"]).equals(flights_sample)
