"""Files written by earlier versions of dpgui, read as today's: the one module that knows their shapes.

A reader parses a file's JSON (or a CSV's table), hands it here, and from then on reads today's shape
only: below the readers (:mod:`dpgui.report.project_file`, :mod:`dpgui.report.hierarchy.project`,
:mod:`dpgui.report.bundle` and :mod:`dpgui.report.cdf.release_files`) no code asks which version wrote a file,
and the engine, the workspace, the command line and the window see only today's model. Each step is a
small pure function (a new dict; the argument is not changed) that fills in what one earlier version did
not write, or drops what it wrote and today ignores; a document of today's shape passes every step
unchanged, so today's files are read, and written back, as they are. A file of a newer version than
this dpgui reads is refused with a :class:`~dpgui.errors.DataError` that says so.

**Project files** (``"format": "dpgui-project"``): always ``"version": 1``; keys were added without a new
version, so the steps go by what a key's absence means (:func:`upgrade_project`):

========================  =====================================================  =========================
written by dpgui of       differs from today                                     read as
========================  =====================================================  =========================
2026-11-21                a ``"secure"`` flag in each release                    dropped: only the budget
                                                                                 ledger says a release's
                                                                                 noise was secure
before 2026-11-22         no ``"locked_levels"``                                 ``[]``
before 2026-11-24         no ``"delta"`` and ``"noise"``                         ``0.0`` and ``"auto"``
before 2026-11-25         no ``"mode"``, ``"hierarchy"``,                        ``"cdf"``, ``null``, ``[]``
                          ``"hierarchy_releases"``
before 2026-11-25 16:00   a release without ``"padding"``: its GLS estimate      ``"padding": "unknown"``
                          took the padding leaves as unknown (not as zeros)
before 2026-11-25 11:00   hierarchy choices without ``"categories_public"``      ``false``
before 2026-11-28         hierarchy choices without ``"records_estimate"``       ``null``
========================  =====================================================  =========================

A release marked ``"padding": "unknown"`` is recomputed with the estimator it was published with
(:attr:`dpgui.core.mechanism.Release.padding_known` False), so a reopened release shows the numbers that
were published; :func:`dpgui.report.project_file.project_to_json` writes the mark only for
``"known_zeros"``, so a file that an earlier dpgui of version 1 reads stays readable to it.

A plan inside a file (``Plan.to_json``) keeps its own reading of older plans
(:meth:`dpgui.core.plan.Plan.from_json`: no ``missing_leaf``, ``delta``, ``missing_impute`` or ``focus``
key), because the budget ledger holds plans too.

**Manifests** (``schema_version`` 1 to 5) are signed: a verifier checks the bytes as written, against the
schema of their version (``manifest.schema.json``). What is read from one for a report (the plan, the
missing values) is read from :func:`upgrade_manifest`'s copy:

=======  ========================================================  =====================================
version  differs from today                                        read as
=======  ========================================================  =====================================
1        ``"missing_values"`` only the policy's word (``"drop"``    an object: the rule, its words, no
         or ``"error"``, before 2026-11-24); no ``noise``,          released count; Laplace noise, δ = 0,
         ``privacy.delta``/``rho``, ``tree.missing_leaf``           ρ null, no missing leaf
2, 3     no ``"source"`` (2: a CDF, 3: a hierarchy)                 absent: not recorded (as today)
4        no ``"focus"``, ``"whole_numbers"``, imputed value         absent: not stated (as today)
=======  ========================================================  =====================================

**Released CSVs** of a CDF: before 2026-11-24 without the ``unbiased_estimate`` column
(:data:`~dpgui.report.cdf.csv_export.CDF_COLUMNS_V1`); :func:`upgrade_cdf_table` gives today's columns, the
released cumulative counts standing in for the estimates, and a note that says so.

The retired missing-value policy ``"error"`` (stop at the first missing value: it made publishing depend
on the data) is kept where a file says a release applied it: the reports state it
(:data:`dpgui.core.missing.MISSING_RULE_TEXT`). A new release never applies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from dpgui.core.missing import MISSING_DROP, MISSING_RULE_TEXT
from dpgui.errors import DataError
from dpgui.report.cdf.csv_export import CDF_COLUMNS, CDF_COLUMNS_V1
from dpgui.vocabulary import AUTO, StatisticKind

__all__ = [
    "DROPPED_BEFORE_N",
    "MANIFEST_VERSION",
    "PADDING_KNOWN_ZEROS",
    "PADDING_UNKNOWN",
    "PROJECT_VERSION",
    "newer_manifest_problem",
    "upgrade_cdf_table",
    "upgrade_manifest",
    "upgrade_project",
]

#: The project file version this dpgui reads and writes.
PROJECT_VERSION: Final = 1
#: The newest manifest schema version this dpgui reads (and writes, for a release with the officer's statements).
MANIFEST_VERSION: Final = 5
#: A release's ``"padding"`` in a project file: its GLS estimate used the padding leaves as known zeros, or
#: (releases made before it did) took them as unknown.
PADDING_KNOWN_ZEROS: Final = "known_zeros"
PADDING_UNKNOWN: Final = "unknown"

_Step = Callable[[dict[str, Any]], dict[str, Any]]

#: What a release under ``change`` that dropped its missing values did (no release does it now: under
#: ``change`` they have a leaf of their own), as the reports say it.
DROPPED_BEFORE_N: Final = "dropped before N was fixed (a release of an older version of dpgui)"


# ------------------------------------------------------------------------------------------------ projects

def _drop_secure_flags(data: dict[str, Any]) -> dict[str, Any]:
    """2026-11-21: each release held ``"secure"``; whether a release may be signed is the ledger's to say."""
    releases = data.get("releases")
    if not isinstance(releases, list):
        return data
    return {**data, "releases": [{k: v for k, v in r.items() if k != "secure"} if isinstance(r, dict) else r
                                 for r in releases]}


def _add_locked_levels(data: dict[str, Any]) -> dict[str, Any]:
    """Before 2026-11-22 no level's budget could be locked."""
    return {"locked_levels": [], **data}


def _add_delta_and_noise(data: dict[str, Any]) -> dict[str, Any]:
    """Before 2026-11-24 every plan was pure ε-DP, its noise chosen by the planner."""
    return {"delta": 0.0, "noise": AUTO, **data}


def _add_hierarchy_mode(data: dict[str, Any]) -> dict[str, Any]:
    """Before 2026-11-25 a project held a CDF workspace only."""
    return {"mode": str(StatisticKind.CDF), "hierarchy": None, "hierarchy_releases": [], **data}


def _mark_padding_unknown(data: dict[str, Any]) -> dict[str, Any]:
    """Before 2026-11-25 16:00 a release's GLS estimate took the padding leaves as unknown."""
    releases = data.get("releases")
    if not isinstance(releases, list):
        return data
    return {**data, "releases": [{"padding": PADDING_UNKNOWN, **r} if isinstance(r, dict) else r for r in releases]}


def _add_hierarchy_statements(data: dict[str, Any]) -> dict[str, Any]:
    """Hierarchy choices of before 2026-11-25 11:00 have no statement that the categories are public, and
    of before 2026-11-28 no estimate of N typed under add/remove."""
    settings = data.get("hierarchy")
    if not isinstance(settings, dict):
        return data
    return {**data, "hierarchy": {"categories_public": False, "records_estimate": None, **settings}}


_PROJECT_STEPS: Final[tuple[_Step, ...]] = (
    _drop_secure_flags, _add_locked_levels, _add_delta_and_noise, _add_hierarchy_mode, _mark_padding_unknown,
    _add_hierarchy_statements,
)


def upgrade_project(data: dict[str, Any], version: int, source: str) -> dict[str, Any]:
    """A project document (its JSON object, of ``version`` as the caller read it) in today's shape (module
    doc); ``data`` is not changed. A version higher than :data:`PROJECT_VERSION` is a :class:`DataError`
    naming ``source`` that says a newer dpgui saved it. O(#releases)."""
    if version > PROJECT_VERSION:
        from dpgui import __version__

        raise DataError(f"{source} was saved by a newer dpgui (project version {version}; this dpgui "
                        f"{__version__} reads version {PROJECT_VERSION})", "update dpgui to open it")
    for step in _PROJECT_STEPS:
        data = step(data)
    return data


# ----------------------------------------------------------------------------------------------- manifests

def _missing_values_object(rule: str, root_public: bool) -> dict[str, Any]:
    """A version-1 manifest's ``"missing_values"`` word as the object later versions write (no count)."""
    words = DROPPED_BEFORE_N if rule == MISSING_DROP and root_public else MISSING_RULE_TEXT.get(rule, rule)
    return {"rule": rule, "description": words, "released_count": None, "std_error": None}


def _manifest_1_to_2(manifest: dict[str, Any]) -> dict[str, Any]:
    """Version 1: Laplace noise only, δ = 0, no missing leaf; before 2026-11-24 the missing values' policy
    as a word."""
    out = {"noise": "discrete_laplace", **manifest}
    privacy = out.get("privacy")
    if isinstance(privacy, dict):
        out["privacy"] = {"delta": 0.0, "rho": None, **privacy}
    tree = out.get("tree")
    if isinstance(tree, dict):
        out["tree"] = {"missing_leaf": False, "level_rhos": None, "level_sigma2": None,
                       "l2_sensitivity_squared_per_level": None, **tree}
    missing = out.get("missing_values")
    if isinstance(missing, str):
        total = out.get("total_records")
        out["missing_values"] = _missing_values_object(missing, isinstance(total, dict) and total.get("public") is True)
    return out


def _same_shape(manifest: dict[str, Any]) -> dict[str, Any]:
    """Versions 2 to 4: what they lack (a data source, the officer's statements) is optional today too."""
    return manifest


#: The step from each version to the next (3 is the first hierarchy version; a CDF manifest goes 2 → 4).
_MANIFEST_STEPS: Final[dict[int, _Step]] = {1: _manifest_1_to_2, 2: _same_shape, 3: _same_shape, 4: _same_shape}


def newer_manifest_problem(manifest: dict[str, Any]) -> str | None:
    """The sentence that refuses a manifest of a schema version newer than this dpgui reads, else None (a
    version that is not a whole number is left to the schema check)."""
    version = manifest.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > MANIFEST_VERSION:
        return (f"the manifest was written by a newer dpgui (schema version {version}; this dpgui reads versions "
                f"1 to {MANIFEST_VERSION})")
    return None


def upgrade_manifest(manifest: dict[str, Any], name: str) -> dict[str, Any]:
    """A copy of ``manifest`` (one that satisfies ``manifest.schema.json``, so its ``schema_version`` is a
    version this dpgui knows) in today's shape, with ``schema_version`` :data:`MANIFEST_VERSION` (module
    doc); a newer version is a :class:`DataError` naming ``name`` (if not empty). Never written back: a signed manifest is
    read as it was signed."""
    newer = newer_manifest_problem(manifest)
    if newer is not None:
        raise DataError(newer.replace("the manifest", f"the manifest {name}", 1) if name else newer,
                        "update dpgui to read it")
    version = int(manifest["schema_version"])
    for step_from in range(version, MANIFEST_VERSION):
        manifest = _MANIFEST_STEPS[step_from](manifest)
    return {**manifest, "schema_version": MANIFEST_VERSION}


# ----------------------------------------------------------------------------------------------- CSV files

def upgrade_cdf_table(header: tuple[str, ...], table: np.ndarray) -> tuple[np.ndarray, str | None]:
    """A released CDF's rows (``table``: one row per bin, in ``header``'s columns) in today's columns
    (:data:`~dpgui.report.cdf.csv_export.CDF_COLUMNS`), and a note for the report when the file is of an
    earlier version: a CSV without ``unbiased_estimate`` gets the released cumulative counts in its place,
    so its intervals are centred on those. ``header`` must be one of the two. O(K)."""
    if header == CDF_COLUMNS:
        return table, None
    if header != CDF_COLUMNS_V1:
        raise ValueError(f"not a released CDF's header: {header!r}")
    cumulative = table[:, CDF_COLUMNS_V1.index("cumulative_count")]
    note = ("this CSV (from an older dpgui) has no unbiased_estimate column: the intervals are centred on the "
            "released counts, and their 95 % is not guaranteed")
    return np.column_stack([table, cumulative]), note
