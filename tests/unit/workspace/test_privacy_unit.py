"""Every statistic counts through its spend's privacy unit (dpgui.core.privacy_unit.PrivacyUnit): at most L rows of
each person are counted (checked against an independent count of what any choice of L rows gives), a spend with a
unit refuses the neighbour model 'change' and another L before anything is read, and the unit is stated in the
ledger's words and the manifest (schema-valid), the declared L too."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpgui.core.counts import CountsPlan
from dpgui.core.grouped_cdf import GroupList, plan_grouped
from dpgui.core.hierarchy import Hierarchy, plan_hierarchy
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.privacy_unit import PrivacyUnit, privacy_unit_record, privacy_unit_words, unit_of_source
from dpgui.data.source import open_source
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import ParameterError
from dpgui.report.bundle import schema_problems
from dpgui.report.ledger import Ledger
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.statistics import STATISTICS, release_words
from dpgui.workspace.statistics.cdf import CdfSpend
from dpgui.workspace.statistics.counts import CountsSpend
from dpgui.workspace.statistics.grouped_cdf import GroupedCdfSpend
from dpgui.workspace.statistics.hierarchy import HierarchySpend

EPSILON = 0.8
L = 2
#: (person, state, city, age): p1 has 7 rows, p2 3, the others 1 each
ROWS = ([("p1", "WA", "Seattle", 30 + i) for i in range(5)] + [("p1", "OR", "Salem", 60), ("p1", "WA", "Tacoma", 90)]
        + [("p2", "OR", "Portland", 20), ("p2", "OR", "Portland", 21), ("p2", "WA", "Seattle", 22)]
        + [("p3", "WA", "Spokane", 44), ("p4", "OR", "Salem", 55), ("p5", "WA", "Tacoma", 66)])
UNIT = PrivacyUnit("person", L)
GROUPS = GroupList(("WA", "OR"))
PATHS = sorted({(s, c) for _, s, c, _ in ROWS})


def _privacy(neighbours: str = "addremove", records: int = L) -> PrivacySpec:
    return PrivacySpec(EPSILON, neighbours, records)


def _spend(kind: StatisticKind, privacy: PrivacySpec, unit: PrivacyUnit | None = UNIT) -> Any:
    if kind == StatisticKind.CDF:
        return CdfSpend("age", 0.0, 100.0, 10, auto_plan(10, privacy), "none", privacy_unit=unit)
    if kind == StatisticKind.COUNTS:
        return CountsSpend("state", CountsPlan(("WA", "OR"), privacy), privacy_unit=unit)
    if kind == StatisticKind.GROUPED_CDF:
        return GroupedCdfSpend("age", "state", 0.0, 100.0, plan_grouped(GROUPS, 10, privacy), privacy_unit=unit)
    tree = Hierarchy.from_paths(("state", "city"), PATHS)
    plan = plan_hierarchy(tree.level_sizes, privacy, noise="laplace", consistency="topdown")
    return HierarchySpend(tree, plan, node_list_from_prior=False, privacy_unit=unit)


def _true_counts(kind: StatisticKind, rows: list[tuple[str, str, str, int]]) -> np.ndarray:
    """What the statistic counts of ``rows``, counted here by hand (flattened)."""
    if kind == StatisticKind.CDF:
        return np.bincount([min(age // 10, 9) for *_, age in rows], minlength=10)
    if kind == StatisticKind.COUNTS:
        return np.array([sum(1 for r in rows if r[1] == s) for s in ("WA", "OR")])
    if kind == StatisticKind.GROUPED_CDF:
        return np.concatenate([np.bincount([min(r[3] // 10, 9) for r in rows if r[1] == s], minlength=10)
                               for s in GROUPS.labels])
    return np.array([sum(1 for r in rows if (r[1], r[2]) == path) for path in PATHS])


def _flat(counts: Any) -> np.ndarray:
    inner = counts.counts if hasattr(counts, "counts") else counts
    return np.asarray(inner, dtype=np.int64).reshape(-1)


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("person,state,city,age\n" + "".join(f"{p},{s},{c},{a}\n" for p, s, c, a in ROWS),
                    encoding="utf-8")
    return path


def test_the_privacy_unit_in_words_and_as_a_manifest_states_it() -> None:
    assert privacy_unit_words(PrivacyUnit("tailnum", 20), 20) == (
        "At most 20 records per person, enforced: dpgui kept at most 20 rows of each value of 'tailnum' (chosen at "
        "random, not by their values)")
    assert privacy_unit_words(None, 1) == (
        "At most 1 record per person — declared by you, not checked by dpgui (no person-ID column)")
    assert privacy_unit_words(PrivacyUnit("id", 1), 1).startswith("At most 1 record per person, enforced: dpgui "
                                                                   "kept at most 1 row of each value of 'id'")
    assert privacy_unit_record(None, 3) == {"records_per_person": 3, "enforced": False, "person_column": None,
                                            "statement": privacy_unit_words(None, 3)}
    assert privacy_unit_record(UNIT, L)["enforced"] is True and privacy_unit_record(UNIT, L)["person_column"] == "person"
    assert unit_of_source({"kind": "file", "engine": "this computer", "privacy_unit": UNIT.source_record()}) == UNIT
    assert unit_of_source({"kind": "file", "engine": "this computer"}) is None and unit_of_source(None) is None
    with pytest.raises(ParameterError, match="edited"):
        unit_of_source({"privacy_unit": {"person_column": "person", "records_per_person": 2, "people": 5}})
    for column, records in (("", 2), ("person", 0), ("person", True), ("person", 2.5)):
        with pytest.raises(ParameterError):
            PrivacyUnit(column, records)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", list(STATISTICS))
def test_a_spend_with_a_person_column_refuses_change_and_another_records_per_person(kind: StatisticKind) -> None:
    with pytest.raises(ParameterError, match="neighbour model must be add/remove") as err:
        _spend(kind, _privacy("change"))
    assert "addremove" in err.value.fix and "'person'" in err.value.problem
    with pytest.raises(ParameterError, match="plan is for 3 records per person") as err:
        _spend(kind, _privacy("addremove", 3))
    assert "2 records per person" in err.value.fix
    # without a person-ID column, L is a declaration and every neighbour model stays allowed
    assert _spend(kind, _privacy("change", 3), unit=None).privacy_unit is None
    assert _spend(kind, _privacy(), unit=UNIT).privacy_unit == UNIT


@pytest.mark.parametrize("kind", list(STATISTICS))
def test_a_statistic_counts_at_most_l_rows_of_each_person_and_states_the_unit(
        kind: StatisticKind, data_file: Path) -> None:
    found = STATISTICS[kind]
    spend = _spend(kind, _privacy())
    per_person = collections.Counter(p for p, *_ in ROWS)
    kept_total = sum(min(n, L) for n in per_person.values())  # 2 + 2 + 1 + 1 + 1: whichever rows are kept
    with open_source(SourceSpec("file", str(data_file))) as source:
        everything = _flat(found.count(source, _spend(kind, _privacy("addremove", 1), unit=None)))
        counted_raw = [found.count(source, spend) for _ in range(12)]
        record = source.public_record()
    draws = [_flat(c) for c in counted_raw]
    assert everything.tolist() == _true_counts(kind, ROWS).tolist()
    for counted in draws:
        assert int(counted.sum()) == kept_total
        assert np.all(counted <= everything)  # kept rows are the table's rows
        # p3, p4 and p5 (one row each) are always counted in full
        assert np.all(counted >= _true_counts(kind, [r for r in ROWS if r[0] in ("p3", "p4", "p5")]))
    assert len({tuple(c.tolist()) for c in draws}) > 1  # a fresh secret per count: not always the same rows

    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, info = found.release(ledger, "people", spend, counted_raw[0], SecureRandom(), source_record=record)
        entry = ledger.releases("people")[0]
        assert entry.description["source"]["privacy_unit"] == {"person_column": "person", "records_per_person": 2}
        assert release_words(entry.description).endswith(
            "; at most 2 records per person, enforced: dpgui kept at most 2 rows of each value of 'person' (chosen at "
            "random, not by their values)")
        manifest = found.manifest(release, info, "sample", b"csv", b"pdf", "0123456789ABCDEF")
        assert manifest["privacy_unit"] == {
            "records_per_person": 2, "enforced": True, "person_column": "person",
            "statement": "At most 2 records per person, enforced: dpgui kept at most 2 rows of each value of "
                         "'person' (chosen at random, not by their values)"}
        assert manifest["neighbours"] == Neighbours.ADDREMOVE and manifest["records_per_person"] == 2
        assert schema_problems(manifest, found.manifest_schema) == []


@pytest.mark.parametrize("kind", list(STATISTICS))
def test_without_a_person_column_the_manifest_says_l_was_declared(kind: StatisticKind, data_file: Path) -> None:
    found = STATISTICS[kind]
    spend = _spend(kind, _privacy("change", 3), unit=None)
    with open_source(SourceSpec("file", str(data_file))) as source:
        counts = found.count(source, spend)
        record = source.public_record()
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, info = found.release(ledger, "people", spend, counts, SecureRandom(), source_record=record)
        entry = ledger.releases("people")[0]
        assert "privacy_unit" not in entry.description["source"]
        assert "per person" not in release_words(entry.description)
        manifest = found.manifest(release, info, "sample", b"csv", b"pdf", "0123456789ABCDEF")
    assert manifest["privacy_unit"] == {
        "records_per_person": 3, "enforced": False, "person_column": None,
        "statement": "At most 3 records per person — declared by you, not checked by dpgui (no person-ID column)"}
    assert schema_problems(manifest, found.manifest_schema) == []
    old = {k: v for k, v in manifest.items() if k != "privacy_unit"}  # a manifest written before the field
    assert schema_problems(old, found.manifest_schema) == []

