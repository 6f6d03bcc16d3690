"""Everything a signed bundle states comes from what the budget ledger recorded at release time.

A genuine release saved in a project file is edited one field at a time; signing the restored release
must either refuse (with the field named) or write a bundle identical to the genuine one. The three
reproductions of the issue come first: a CDF release whose "padding" key was deleted (its CSV would differ
in most cumulative counts), a hierarchy release whose notes were replaced, and a release whose data
source was deleted. Then the sweep over every field, for a CDF and a hierarchy release, and the
releases recorded before the ledger held these fields (refused only where the missing field matters).
"""

from __future__ import annotations

import copy
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.planner import auto_plan
from dpgui.core.tree import TreeShape
from dpgui.errors import DataError, DpguiError
from dpgui.report import ledger as ledger_module
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.report.cdf.csv_export import release_csv_bytes
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_PRIOR, projection_json
from dpgui.report.hierarchy.publish import (authenticate_hierarchy_release, sign_hierarchy_release,
                                            spend_and_release_hierarchy)
from dpgui.report.keystore import create_key, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.project_file import Project, ProjectRelease, project_from_json, project_to_json
from dpgui.report.hierarchy.project import ProjectHierarchyRelease
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import StatisticKind
from dpgui.report.cdf.publish import authenticate_release, sign_release, spend_and_release

PASSPHRASE = "signed fields passphrase"
BINS = 50
SOURCE = {"kind": "database", "location": "postgresql://officer@db.example.org/payroll",
          "query": "SELECT wage FROM wages WHERE region = 'south'", "row_count_public": True,
          "engine": "the database (PostgreSQL 16)"}
NOTE = "the prior lists 3 categories that the data does not hold"


@pytest.fixture
def secret(tmp_path):
    files = create_key("officer", PASSPHRASE, tmp_path / "keys")
    return load_secret_key(files.secret_path, PASSPHRASE)


# ------------------------------------------------------------------------------------------ genuine releases
def _cdf_plan(delta: float = 1e-9) -> Plan:
    """K = 50 bins under change (a missing leaf: 51 leaves) on an 8 × 8 tree: 13 padding leaves, so GLS's
    known zeros change the estimate; δ > 0 and automatic noise, so the plan carries the planner's noise choice."""
    privacy = PrivacySpec(1.0, delta=delta)
    return auto_plan(BINS, privacy, shape=TreeShape(BINS, (8, 8), True), noise="auto" if delta > 0 else "laplace")


def _cdf_release(source: dict[str, Any] | None = SOURCE, plan: Plan | None = None):
    counts = np.random.default_rng(28).integers(0, 400, BINS)
    with Ledger() as ledger:
        ledger.set_cap("payroll", 100.0, 1e-6)
        return spend_and_release(ledger, "payroll", "wage", "auto", counts, plan or _cdf_plan(), SecureRandom(),
                                 0.0, 5000.0, "l2", n_missing=7, source_record=source)


def _cdf_document(result, info) -> dict[str, Any]:
    """The project file dpgui saves after the release, as JSON values."""
    record = ProjectRelease.from_release(result, info.release_id, info.created_utc, info.column, info.missing,
                                         info.source)
    project = Project("/data/wages.db", None, "wage", 0.0, 5000.0, BINS, dataset="payroll", releases=(record,))
    return json.loads(project_to_json(project))


def _restored_cdf(document: dict[str, Any]):
    """The last release of a project file as the window restores it (dpgui.app.shell.project: the dataset is the
    project's, a release without a column shows "value", one without a missing-value rule the plan's)."""
    project = project_from_json(json.dumps(document))
    record = project.releases[-1]
    release = record.to_release()
    info = ReleaseInfo(project.dataset or "dataset", record.column or "value", record.release_id, record.created,
                       record.missing or release.missing_rule, record.source)
    return release, info


def _report_bytes(*parts: Any) -> bytes:
    """A stand-in for the PDF: a digest of every value the report is drawn from (its release and info), so
    that two bundles have the same stand-in exactly when their PDFs would be drawn from the same values."""
    def plain(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return value.tolist()
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, datetime):
            return value.isoformat()
        if hasattr(value, "to_json"):
            return value.to_json()
        if hasattr(value, "__dataclass_fields__"):
            return {name: plain(getattr(value, name)) for name in value.__dataclass_fields__}
        return value

    text = json.dumps(plain(parts), sort_keys=True, default=repr)
    return b"%PDF stand-in " + hashlib.sha256(text.encode()).hexdigest().encode()


def _bundle_files(folder: Path) -> dict[str, bytes]:
    return {path.suffix if not path.name.endswith(".minisig") else ".minisig": path.read_bytes()
            for path in sorted(folder.iterdir())}


def _signed_files(folder: Path) -> dict[str, bytes]:
    """The bundle's CSV, PDF and manifest (the signature apart: minisign's comment holds a time)."""
    files = _bundle_files(folder)
    files.pop(".minisig")
    return files


def _sign_cdf(document: dict[str, Any], folder: Path, secret) -> dict[str, bytes]:
    """Restore, confirm as the window does (the shown release is the ledger-confirmed one), draw the
    report from it and sign: the bundle's files."""
    release, info = _restored_cdf(document)
    folder.mkdir()
    with Ledger() as ledger:
        shown = authenticate_release(ledger, release, info)
        sign_release(ledger, folder, "bundle", shown, info, _report_bytes(shown, info), secret)
    return _signed_files(folder)


# ------------------------------------------------------------------------------------------ reproductions
def test_a_cdf_release_saved_without_its_padding_key_is_refused_naming_it(tmp_path, secret):
    result, info = _cdf_release()
    document = _cdf_document(result, info)
    del document["releases"][0]["padding"]
    release, restored_info = _restored_cdf(document)
    # what the edited file would publish: recomputed as a release of before GLS used the padding zeros
    differing = int(np.sum(release.cumulative != result.cumulative))
    assert differing > 0, "the reproduction needs a release whose published counts depend on the padding"
    with Ledger() as ledger, pytest.raises(DataError) as refused:
        sign_release(ledger, tmp_path, "edited", release, restored_info, b"%PDF", secret)
    assert "padding" in refused.value.problem and f"release {info.release_id}" in refused.value.problem
    assert not list(tmp_path.glob("edited*"))


def test_a_cdf_release_saved_without_its_data_source_is_refused_naming_it(tmp_path, secret):
    result, info = _cdf_release()
    document = _cdf_document(result, info)
    del document["releases"][0]["source"]
    release, restored_info = _restored_cdf(document)
    assert restored_info.source is None
    with Ledger() as ledger, pytest.raises(DataError, match="data source"):
        sign_release(ledger, tmp_path, "edited", release, restored_info, b"%PDF", secret)
    assert not list(tmp_path.glob("edited*"))


def test_a_genuine_saved_cdf_release_signs_as_the_one_made_in_the_session(tmp_path, secret):
    result, info = _cdf_release()
    assert result.plan.noise_choice is not None
    (tmp_path / "session").mkdir()
    with Ledger() as ledger:
        sign_release(ledger, tmp_path / "session", "bundle", result, info, _report_bytes(result, info), secret)
    session = _bundle_files(tmp_path / "session")
    restored = _sign_cdf(_cdf_document(result, info), tmp_path / "restored", secret)
    assert restored[".csv"] == session[".csv"] == release_csv_bytes(result)
    assert restored[".json"] == session[".json"]  # the manifest, noise choice and source included


def test_an_edited_noise_choice_is_refused_and_a_missing_one_is_signed_as_recorded(tmp_path, secret):
    """The planner's noise choice (both noises' projected errors) is stated in the manifest: compared like the
    rest of the plan when the file carries one; a file without one (as some earlier versions saved) is signed
    with the recorded one."""
    result, info = _cdf_release()
    document = _cdf_document(result, info)
    edited = copy.deepcopy(document)
    choice = edited["releases"][0]["plan"]["noise_choice"]
    choice["laplace"]["total_sq_error"] = choice["laplace"]["total_sq_error"] / 2  # "Laplace was twice as good"
    with Ledger() as ledger, pytest.raises(DataError, match="plan"):
        authenticate_release(ledger, *_restored_cdf(edited))
    without = copy.deepcopy(document)
    del without["releases"][0]["plan"]["noise_choice"]
    signed = json.loads(_sign_cdf(without, tmp_path / "without", secret)[".json"])
    assert signed["noise_choice"] == result.plan.to_json()["noise_choice"]


def _hierarchy_release(notes: tuple[str, ...] = (NOTE,), source: dict[str, Any] | None = SOURCE):
    paths = [(f"R{r}", f"R{r}/D{d}") for r in range(3) for d in range(4)]
    tree = Hierarchy.from_paths(("region", "district"), paths)
    leaves = np.zeros(tree.level_sizes[-1], dtype=np.int64)
    leaves[tree.leaf_index(paths)] = 300 + 17 * np.arange(len(paths))
    plan = plan_hierarchy(tree.level_sizes, PrivacySpec(1.0), noise="laplace", consistency="topdown")
    with Ledger() as ledger:
        ledger.set_cap("schools", 100.0, 1e-6)
        return spend_and_release_hierarchy(ledger, "schools", tree, leaves, plan, SecureRandom(),
                                           node_list_source=NODE_LIST_FROM_PRIOR, prior_name="prior.csv",
                                           prior_sha256="ab" * 32, notes=notes, source_record=source)


def _hierarchy_document(result, info) -> dict[str, Any]:
    record = ProjectHierarchyRelease.from_release(result, info)
    project = Project("/data/schools.csv", None, mode=StatisticKind.HIERARCHY,
                      sections={StatisticKind.HIERARCHY: ProjectSection(None, (record,))})
    return json.loads(project_to_json(project))


def _restored_hierarchy(document: dict[str, Any]):
    part = project_from_json(json.dumps(document)).section(StatisticKind.HIERARCHY)
    if part.problem or not part.releases:
        raise DataError(part.problem or "no hierarchy release", "the damaged part is left out")
    return part.releases[-1].to_release()


def _sign_hierarchy(document: dict[str, Any], folder: Path, secret) -> dict[str, bytes]:
    """As the window's export: confirm, the published projection at the released counts, the report, sign."""
    from dpgui.core.hierarchy import project_hierarchy, projection_trials

    release, info = _restored_hierarchy(document)
    folder.mkdir()
    with Ledger() as ledger:
        confirmed = authenticate_hierarchy_release(ledger, release, info)
        projection = projection_json(project_hierarchy(release.plan, release.counts, seed=0, hierarchy=release.hierarchy,
                                                       trials=projection_trials(release.plan.level_sizes)),
                                     "the released counts")
        sign_hierarchy_release(ledger, folder, "bundle", release, confirmed,
                               _report_bytes(release, confirmed, projection), secret, projection)
    return _signed_files(folder)


def test_hierarchy_notes_replaced_in_the_project_are_refused_naming_them(tmp_path, secret):
    result, info = _hierarchy_release()
    document = _hierarchy_document(result, info)
    document["hierarchy_releases"][0]["notes"] = ["counts verified by the national statistics office"]
    release, restored = _restored_hierarchy(document)
    with Ledger() as ledger, pytest.raises(DataError) as refused:
        sign_hierarchy_release(ledger, tmp_path, "edited", release, restored, b"%PDF", secret)
    assert "notes" in refused.value.problem
    assert not list(tmp_path.glob("edited*"))


def test_a_hierarchy_release_saved_without_its_data_source_is_refused(tmp_path, secret):
    result, info = _hierarchy_release()
    document = _hierarchy_document(result, info)
    del document["hierarchy_releases"][0]["source"]
    release, restored = _restored_hierarchy(document)
    with Ledger() as ledger, pytest.raises(DataError, match="data source"):
        sign_hierarchy_release(ledger, tmp_path, "edited", release, restored, b"%PDF", secret)


# ------------------------------------------------------------------------------------------ the sweep
def _changed(value: Any) -> list[Any]:
    """Other values for a JSON scalar (each a plausible edit)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1]
    if isinstance(value, float):
        return [value * 1.5 + 1.0]
    if isinstance(value, str):
        return [value + "x", ""]
    if value is None:
        return ["x", 0]
    return []


def _mutations(document: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[str, Callable[[Any], None]]]:
    """(name, edit) for every field: each key deleted, each scalar changed, lists edited at their ends."""
    def setter(where: tuple[Any, ...], new: Any) -> Callable[[Any], None]:
        def edit(root: Any) -> None:
            target = root
            for step in where[:-1]:
                target = target[step]
            target[where[-1]] = new
        return edit

    def deleter(where: tuple[Any, ...]) -> Callable[[Any], None]:
        def edit(root: Any) -> None:
            target = root
            for step in where[:-1]:
                target = target[step]
            del target[where[-1]]
        return edit

    if isinstance(document, dict):
        for key, value in document.items():
            yield f"{'/'.join(map(str, path + (key,)))} deleted", deleter(path + (key,))
            yield from _mutations(value, path + (key,))
    elif isinstance(document, list):
        if not document:
            yield f"{'/'.join(map(str, path))} given an entry", setter(path, ["x"])
        for index in sorted({0, len(document) - 1}) if document else ():
            yield from _mutations(document[index], path + (index,))
        if len(document) > 1:
            yield f"{'/'.join(map(str, path))} shortened", setter(path, document[:-1])
    else:
        for new in _changed(document):
            yield f"{'/'.join(map(str, path))} = {new!r}", setter(path, new)


def _sweep(document: dict[str, Any], part: str, sign: Callable[[dict[str, Any], Path], dict[str, bytes]],
           genuine: dict[str, bytes], tmp_path: Path) -> tuple[int, int]:
    """Edit every field of the document's release one at a time: refused, or the genuine bundle."""
    refused = same = 0
    for number, (name, edit) in enumerate(_mutations(document[part][0], (part, 0))):
        edited = copy.deepcopy(document)
        edit(edited)
        try:
            files = sign(edited, tmp_path / f"m{number}")
        except DpguiError:
            refused += 1
            continue
        assert files == genuine, f"{name}: signed a bundle that differs from the genuine release's"
        same += 1
    return refused, same


def test_every_field_of_a_saved_cdf_release_edited_is_refused_or_signs_the_genuine_bundle(tmp_path, secret):
    result, info = _cdf_release()
    document = _cdf_document(result, info)
    genuine = _sign_cdf(document, tmp_path / "genuine", secret)
    refused, same = _sweep(document, "releases", lambda d, f: _sign_cdf(d, f, secret), genuine, tmp_path)
    assert refused > 40 and same >= 1  # e.g. the missing-value rule deleted: the window fills in the plan's rule


def test_every_field_of_a_saved_hierarchy_release_edited_is_refused_or_signs_the_genuine_bundle(tmp_path, secret):
    result, info = _hierarchy_release()
    document = _hierarchy_document(result, info)
    genuine = _sign_hierarchy(document, tmp_path / "genuine", secret)
    refused, _ = _sweep(document, "hierarchy_releases", lambda d, f: _sign_hierarchy(d, f, secret), genuine, tmp_path)
    assert refused > 40


# ------------------------------------------------------------------------------------------ the window's restore
# What the officer may state for a release (whole numbers, a focus, missing values counted as a value, the
# CSV dialect's origin) and a hierarchy plan's assumed records, each edited in the saved project, restored
# as the window restores it (dpgui.workspace.release.restored_shown_release, hierarchy_project.restored_outcome)
# and signed as its Export does: refused, or the genuine bundle.
FILE_SOURCE = {"kind": "file", "format": "csv", "dialect": {"delimiter": ";", "decimal": ",", "origin": "stated"},
               "engine": "this computer"}


def _stated_cdf_document() -> dict[str, Any]:
    from dpgui.core.quantiles import WholeNumbers

    plan = auto_plan(256, PrivacySpec(1.0, impute=3.0), focus=(100, 120))
    assert plan.focus == (100, 120) and plan.privacy.impute == 3.0
    counts = np.random.default_rng(28).integers(0, 40, 256)
    with Ledger() as ledger:
        ledger.set_cap("ages", 100.0)
        result, info = spend_and_release(ledger, "ages", "age", "auto", counts, plan, SecureRandom(), -0.5, 255.5, "l2",
                                         n_missing=4, source_record=FILE_SOURCE, whole_numbers=WholeNumbers.STATED)
    record = ProjectRelease.from_release(result, info.release_id, info.created_utc, info.column, info.missing,
                                         info.source, info.whole_numbers)
    project = Project("/data/ages.csv", None, "age", -0.5, 255.5, 256, dataset="ages", releases=(record,))
    return json.loads(project_to_json(project))


def _sign_as_the_window(document: dict[str, Any], folder: Path, secret) -> dict[str, bytes]:
    from dpgui.workspace.release import restored_shown_release

    project = project_from_json(json.dumps(document))
    shown = restored_shown_release(project.releases[-1], project.dataset or "dataset")
    if not shown.confirmed:
        raise DataError(shown.problem, "the window shows the reason and exports nothing")
    folder.mkdir()
    with Ledger() as ledger:
        sign_release(ledger, folder, "bundle", shown.release, shown.info, _report_bytes(shown.release, shown.info),
                     secret)
    return _signed_files(folder)


def test_every_statement_of_a_restored_cdf_release_edited_is_refused_or_signs_the_genuine_bundle(tmp_path, secret):
    document = _stated_cdf_document()
    genuine = _sign_as_the_window(document, tmp_path / "genuine", secret)
    manifest = json.loads(genuine[".json"])
    assert manifest["whole_numbers"]["source"] == "stated" and manifest["focus"]["first_prefix"] == 100
    assert manifest["missing_values"]["value"] == 3.0 and manifest["source"] == FILE_SOURCE
    refused, same = _sweep(document, "releases", lambda d, f: _sign_as_the_window(d, f, secret), genuine, tmp_path)
    assert refused > 60 and same >= 1
    for edit in (lambda r: r.pop("whole_numbers"), lambda r: r.update(whole_numbers="type"),
                 lambda r: r["plan"].pop("focus"), lambda r: r["plan"]["focus"].update(first_prefix=90),
                 lambda r: r["plan"].update(missing_impute=0.0), lambda r: r["source"]["dialect"].update(origin="default")):
        edited = copy.deepcopy(document)
        edit(edited["releases"][0])
        with pytest.raises(DataError):
            _sign_as_the_window(edited, tmp_path / f"statement{len(list(tmp_path.iterdir()))}", secret)


def _assumed_records_document() -> dict[str, Any]:
    """A hierarchy release of the data's own categories (declared public) under change: its plan assumes the
    public N spread evenly, and its published projection is made at those records."""
    from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA

    paths = [(f"R{r}", f"R{r}/D{d}") for r in range(3) for d in range(4)]
    tree = Hierarchy.from_paths(("region", "district"), paths)
    leaves = np.zeros(tree.level_sizes[-1], dtype=np.int64)
    leaves[tree.leaf_index(paths)] = 3 + np.arange(len(paths))
    plan = plan_hierarchy(tree.level_sizes, PrivacySpec(1.0), noise="laplace", hierarchy=tree,
                          assumed_records=int(leaves.sum()))
    with Ledger() as ledger:
        ledger.set_cap("schools", 100.0)
        result, info = spend_and_release_hierarchy(ledger, "schools", tree, leaves, plan, SecureRandom(),
                                                   node_list_source=NODE_LIST_FROM_DATA, source_record=FILE_SOURCE)
    return _hierarchy_document(result, info)


def _sign_hierarchy_as_the_window(document: dict[str, Any], folder: Path, secret) -> dict[str, bytes]:
    """dpgui.app.hierarchy.export_dialog: the restored outcome, its projection at the plan's assumed records (no prior's
    counts in a restored release), the report, sign."""
    from dpgui.core.hierarchy_errors import plan_errors
    from dpgui.report.hierarchy.bundle import errors_json
    from dpgui.workspace.hierarchy_project import restored_outcome

    part = project_from_json(json.dumps(document)).section(StatisticKind.HIERARCHY)
    if part.problem or not part.releases:
        raise DataError(part.problem or "no hierarchy release", "the damaged part is left out")
    outcome = restored_outcome(part.releases[-1])
    if not outcome.secure:
        raise DataError(outcome.problem, "the window shows the reason and exports nothing")
    folder.mkdir()
    projection = errors_json(plan_errors(outcome.release.plan, outcome.release.hierarchy, None))
    with Ledger() as ledger:
        sign_hierarchy_release(ledger, folder, "bundle", outcome.release, outcome.info,
                               _report_bytes(outcome.release, outcome.info, projection), secret, projection)
    return _signed_files(folder)


@pytest.mark.slow
def test_a_restored_hierarchy_release_with_assumed_records_edited_is_refused_or_signs_the_genuine_bundle(tmp_path,
                                                                                                         secret):
    document = _assumed_records_document()
    genuine = _sign_hierarchy_as_the_window(document, tmp_path / "genuine", secret)
    projection = json.loads(genuine[".json"])["projection"]
    assert projection["counts"].startswith("102 records") and projection["levels"][2]["median_count"] == 8.5
    refused, _ = _sweep(document, "hierarchy_releases", lambda d, f: _sign_hierarchy_as_the_window(d, f, secret),
                        genuine, tmp_path)
    assert refused > 60
    edited = copy.deepcopy(document)
    edited["hierarchy_releases"][0]["plan"]["assumed_records"] = 10_000  # a projection at other records
    with pytest.raises(DataError, match="plan"):
        _sign_hierarchy_as_the_window(edited, tmp_path / "assumed", secret)


# ------------------------------------------------------------------------------------------ older records
def _as_recorded_by_version_2(release_id: str, *drop: str) -> None:
    """Make the ledger's output record of ``release_id`` what dpgui wrote before the fields ``drop`` were
    recorded (ledger schema version 2), bypassing the append-only trigger as a test only can."""
    path = ledger_module.default_ledger_path()
    raw = sqlite3.connect(path)
    try:
        params = json.loads(raw.execute("SELECT params FROM release_outputs WHERE release_id = ?",
                                        (release_id,)).fetchone()[0])
        for key in drop:
            params.pop(key, None)
        raw.execute("DROP TRIGGER IF EXISTS release_outputs_no_update")
        raw.execute("UPDATE release_outputs SET params = ? WHERE release_id = ?", (json.dumps(params), release_id))
        raw.commit()
    finally:
        raw.close()


def test_an_older_record_without_the_padding_is_refused_only_where_the_padding_matters(tmp_path, secret):
    padded, padded_info = _cdf_release()
    _as_recorded_by_version_2(padded_info.release_id, "padding")
    with Ledger() as ledger, pytest.raises(DataError) as refused:
        authenticate_release(ledger, *_restored_cdf(_cdf_document(padded, padded_info)))
    assert "earlier dpgui" in refused.value.problem and "padding" in refused.value.problem
    assert "release it again" in refused.value.fix
    # a tree without padding leaves: the padding changes nothing published, so the older record suffices
    shape = TreeShape(BINS, (51,), True)
    flat = Plan(shape, PrivacySpec(1.0), equal_budgets(shape, PrivacySpec(1.0)))
    plain, plain_info = _cdf_release(plan=flat)
    _as_recorded_by_version_2(plain_info.release_id, "padding")
    with Ledger() as ledger:
        assert authenticate_release(ledger, *_restored_cdf(_cdf_document(plain, plain_info))).secure


def test_an_older_hierarchy_record_without_notes_is_refused_only_when_the_release_states_notes(secret):
    noted, noted_info = _hierarchy_release()
    _as_recorded_by_version_2(noted_info.release_id, "notes")
    with Ledger() as ledger, pytest.raises(DataError, match=r"earlier dpgui.*notes"):
        authenticate_hierarchy_release(ledger, *_restored_hierarchy(_hierarchy_document(noted, noted_info)))
    quiet, quiet_info = _hierarchy_release(notes=(), source=None)
    _as_recorded_by_version_2(quiet_info.release_id, "notes", "source")
    with Ledger() as ledger:
        assert authenticate_hierarchy_release(ledger, *_restored_hierarchy(_hierarchy_document(quiet, quiet_info))).secure


def test_an_older_release_that_published_a_querys_row_count_is_not_signed(secret):
    """Releases of dpgui before the statement existed published a query's N under "change": their records (and
    project files) hold the query without ``row_count_public``. Signing one now would publish that N."""
    result, info = _cdf_release()
    cdf = _cdf_document(result, info)
    del cdf["releases"][0]["source"]["row_count_public"]
    tree, tree_info = _hierarchy_release()
    hierarchy = _hierarchy_document(tree, tree_info)
    del hierarchy["hierarchy_releases"][0]["source"]["row_count_public"]
    raw = sqlite3.connect(ledger_module.default_ledger_path())
    try:
        raw.execute("DROP TRIGGER IF EXISTS release_outputs_no_update")
        for release_id, text in raw.execute("SELECT release_id, params FROM release_outputs").fetchall():
            params = json.loads(text)
            del params["source"]["row_count_public"]
            raw.execute("UPDATE release_outputs SET params = ? WHERE release_id = ?", (json.dumps(params), release_id))
        raw.commit()
    finally:
        raw.close()
    with Ledger() as ledger:
        for authenticate, restored in ((authenticate_release, _restored_cdf(cdf)),
                                       (authenticate_hierarchy_release, _restored_hierarchy(hierarchy))):
            with pytest.raises(DataError) as refused:
                authenticate(ledger, *restored)
            assert "exact number of rows its query returns" in refused.value.problem and "again" in refused.value.fix


def test_a_version_2_ledger_is_upgraded_without_changing_a_record(tmp_path):
    _, info = _cdf_release()
    path = ledger_module.default_ledger_path()
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 2")
    raw.commit()
    before = raw.execute("SELECT * FROM release_outputs").fetchall(), raw.execute("SELECT * FROM releases").fetchall()
    raw.close()
    with Ledger() as ledger:
        assert ledger.release_output(info.release_id) is not None
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == ledger_module.SCHEMA_VERSION == 3
        after = raw.execute("SELECT * FROM release_outputs").fetchall(), raw.execute("SELECT * FROM releases").fetchall()
        assert after == before
    finally:
        raw.close()


def test_the_recorded_fields_are_the_ones_the_bundle_states():
    _, info = _cdf_release()
    with Ledger() as ledger:
        params = ledger.release_output(info.release_id).params
    assert params["padding"] == "known_zeros" and params["source"] == SOURCE
    _, hierarchy_info = _hierarchy_release()
    with Ledger() as ledger:
        params = ledger.release_output(hierarchy_info.release_id).params
    assert params["notes"] == [NOTE] and params["source"] == SOURCE
    assert datetime.fromisoformat(params["created_utc"]) == hierarchy_info.created_utc.astimezone(timezone.utc)
