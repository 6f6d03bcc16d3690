"""Location of the bundled sample dataset (NYC flights 2013, CC0; see resources/sample/).

The file is ``resources/sample/flights.parquet``: in a source checkout it is under the
repository root (the parent of the ``dpgui`` package); in a PyInstaller bundle it must be
added as data at ``resources/sample`` and is found under ``sys._MEIPASS``.
"""

from __future__ import annotations

import pathlib
import sys

from dpgui.errors import DataError

__all__ = ["SAMPLE_RELATIVE_PATH", "sample_dataset_path", "sample_dataset_candidates"]

#: Path of the sample file relative to the repository root / the bundle root.
SAMPLE_RELATIVE_PATH = pathlib.PurePosixPath("resources/sample/flights.parquet")


def sample_dataset_candidates() -> list[pathlib.Path]:
    """Places searched for the sample file, in order (bundle first, then the checkout)."""
    roots: list[pathlib.Path] = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.append(pathlib.Path(bundle))
    # dpgui/data/sample.py -> parents[0] = dpgui/data, [1] = dpgui, [2] = repository root
    roots.append(pathlib.Path(__file__).resolve().parents[2])
    return [root.joinpath(*SAMPLE_RELATIVE_PATH.parts) for root in roots]


def sample_dataset_path() -> pathlib.Path:
    """Absolute path of ``flights.parquet``; raises :class:`~dpgui.errors.DataError` if absent."""
    candidates = sample_dataset_candidates()
    for path in candidates:
        if path.is_file():
            return path
    raise DataError(
        "the sample dataset is missing (looked in: " + ", ".join(str(p) for p in candidates) + ")",
        "reinstall dpgui, or run scripts/make_sample.py to regenerate it",
    )
