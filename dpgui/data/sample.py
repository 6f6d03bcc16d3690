"""Location of the bundled sample dataset (NYC flights 2013, CC0; see resources/sample/).

The file is ``resources/sample/flights.parquet``: in a source checkout it is under the
repository root (the parent of the ``dpgui`` package); in a PyInstaller bundle it must be
added as data at ``resources/sample`` and is found under ``sys._MEIPASS``.
"""

from __future__ import annotations

import pathlib

from dpgui.errors import DataError
from dpgui.resources import find_resource, resource_candidates

__all__ = ["PLAN_SAMPLE_RELATIVE_PATH", "SAMPLE_RELATIVE_PATH", "plan_sample_path", "sample_dataset_candidates",
           "sample_dataset_path"]

#: Path of the sample file relative to the repository root / the bundle root.
SAMPLE_RELATIVE_PATH = pathlib.PurePosixPath("resources/sample/flights.parquet")


def sample_dataset_candidates() -> list[pathlib.Path]:
    """Places searched for the sample file, in order (bundle first, then the checkout)."""
    return resource_candidates(SAMPLE_RELATIVE_PATH)


def sample_dataset_path() -> pathlib.Path:
    """Absolute path of ``flights.parquet``; raises :class:`~dpgui.errors.DataError` if absent."""
    path = find_resource(SAMPLE_RELATIVE_PATH)
    if path is None:
        raise DataError(
            "the sample dataset is missing (looked in: " + ", ".join(str(p) for p in sample_dataset_candidates()) + ")",
            "reinstall dpgui, or run scripts/make_sample.py to regenerate it",
        )
    return path


#: The sample with a person-ID column for release plans (resources/sample/README.md).
PLAN_SAMPLE_RELATIVE_PATH = pathlib.PurePosixPath("resources/sample/flights_plan.parquet")


def plan_sample_path() -> pathlib.Path:
    """Absolute path of ``flights_plan.parquet`` (every 2013 flight with its aircraft's tail number); raises
    :class:`~dpgui.errors.DataError` if absent."""
    path = find_resource(PLAN_SAMPLE_RELATIVE_PATH)
    if path is None:
        raise DataError("the release plan sample is missing (" + ", ".join(
            str(p) for p in resource_candidates(PLAN_SAMPLE_RELATIVE_PATH)) + ")",
            "reinstall dpgui, or run scripts/make_plan_sample.py to regenerate it")
    return path
