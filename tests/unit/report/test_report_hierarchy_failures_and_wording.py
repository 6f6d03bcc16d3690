"""A hierarchy release's error paths past the spend, and what its files say about its mechanism."""

from __future__ import annotations

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DpguiError
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA
from dpgui.report.ledger import Ledger


def test_a_failure_while_recording_the_output_says_the_budget_was_spent(monkeypatch):
    """spend_then_release's promise: any failure after the spend says that the budget was spent and under
    which ledger id. Computing what the ledger records about the output (its SHA-256, the public
    parameters) ran outside that guard, so such a failure surfaced as a bare error after ε was gone."""
    import dpgui.report.hierarchy.publish as publish

    hierarchy = Hierarchy.from_paths(["a", "b"], [("A", "a1"), ("A", "a2"), ("B", "b1")])
    plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0), consistency="topdown")

    def broken(*args: object) -> str:
        raise RuntimeError("disk full")

    monkeypatch.setattr(publish, "levels_sha256", broken)
    with Ledger() as ledger:
        ledger.set_cap("d", 10.0)
        with pytest.raises(DpguiError) as caught:
            publish.spend_and_release_hierarchy(ledger, "d", hierarchy, np.array([3, 4, 5]), plan, SeededRandom(1),
                                                node_list_source=NODE_LIST_FROM_DATA, release_id="ab" * 16)
        assert ledger.release("ab" * 16) is not None  # spent
    assert "was spent" in caught.value.problem and "ab" * 16 in caught.value.problem


def _page1(plan_kwargs: dict, privacy: PrivacySpec, budgets: tuple[float, ...] | None = None) -> str:
    from datetime import datetime, timezone

    from dpgui.pdf.hierarchy import _page1_html
    from dpgui.core.hierarchy import release_hierarchy
    from dpgui.report.hierarchy.bundle import HierarchyReleaseInfo
    from dpgui.workspace.hierarchy_planning import with_budgets

    hierarchy = Hierarchy.from_paths(["a", "b"], [(f"A{i // 3}", f"a{i}") for i in range(9)])
    plan = plan_hierarchy(hierarchy.level_sizes, privacy, **plan_kwargs)
    if budgets is not None:
        plan = with_budgets(plan, budgets)
    release = release_hierarchy(hierarchy, np.full(9, 5, dtype=np.int64), plan, SeededRandom(3))
    info = HierarchyReleaseInfo("d", "0" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False, True)
    projection = {"levels": [], "weighted_mse": 0.0, "method": "m", "counts": "c"}
    return _page1_html(release, info, projection, None)


def test_the_pdf_does_not_say_the_multiplicative_mechanism_splits_its_budget_equally_over_the_levels():
    """Ghazi et al.'s (2023) mechanism has no level budgets (it spends its (ε, δ) over its rounds); its plan carries
    the allocation "uniform" only as a placeholder. The PDF said "equal budget on every level" and "uniform
    budgets need no counts": false for this mechanism."""
    html = _page1({"noise": "multiplicative", "alpha": 0.5}, PrivacySpec(1.0, delta=1e-6))
    assert "equal budget on every level" not in html
    assert "uniform budgets" not in html


def test_the_pdf_does_not_call_budgets_typed_by_hand_uniform():
    """Level budgets the officer typed (allocation "custom") without counts: the PDF said "uniform budgets
    need no counts" for them."""
    html = _page1({"consistency": "topdown"}, PrivacySpec(1.0), budgets=(0.0, 0.3, 0.7))
    assert "uniform budgets" not in html and "set by hand" in html


def test_a_project_file_with_edited_intervals_cannot_be_signed():
    """The ledger confirms a restored release by its plan, node list, sources and the SHA-256 of its
    counts; the 95 % intervals (written to the signed CSV) and their method (the manifest) came from the
    project file unchecked, so an edited file could have a signed bundle publish false intervals. They are
    pinned by the ledger at release time (their SHA-256 and method), like the counts."""
    from dataclasses import replace

    from dpgui.core.noise import SecureRandom
    from dpgui.errors import DataError
    from dpgui.report.hierarchy.publish import authenticate_hierarchy_release, spend_and_release_hierarchy
    from dpgui.report.hierarchy.project import ProjectHierarchyRelease

    hierarchy = Hierarchy.from_paths(["a", "b"], [(f"A{i // 3}", f"a{i}") for i in range(9)])
    leaves = np.arange(9, dtype=np.int64) * 4
    for consistency in ("topdown", "none"):
        plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0), consistency=consistency)
        with Ledger() as ledger:
            ledger.set_cap("d", 100.0)
            result, info = spend_and_release_hierarchy(ledger, "d", hierarchy, leaves, plan, SecureRandom(),
                                                       node_list_source=NODE_LIST_FROM_DATA)
            record = ProjectHierarchyRelease.from_release(result, info)
            restored, restored_info = record.to_release()
            assert authenticate_hierarchy_release(ledger, restored, restored_info).secure  # unedited: fine
            widened = tuple(tuple(int(v) + 1 for v in level) for level in record.upper)
            for edited in (replace(record, upper=widened), replace(record, interval_method="exact, per node")):
                bad, bad_info = edited.to_release()
                with pytest.raises(DataError, match="interval"):
                    authenticate_hierarchy_release(ledger, bad, bad_info)


def test_the_schema_says_what_the_node_list_hash_covers():
    """A reviewer recomputes node_list_sha256 from the schema's words: they said "(labels and parents)", but
    the hash (hierarchy_sha256) also covers the level names. The description names every key, and
    following it gives the manifest's hash."""
    import hashlib
    import json
    from pathlib import Path

    import dpgui.report as report
    from dpgui.report.hierarchy.bundle import hierarchy_sha256

    schema = json.loads((Path(report.__file__).parent / "manifest.schema.json").read_text(encoding="utf-8"))
    words = schema["$defs"]["hierarchy_manifest"]["properties"]["hierarchy"]["description"]
    for key in ("level_names", "labels", "parents"):
        assert key in words, key
    hierarchy = Hierarchy.from_paths(["région", "b"], [("A", "a1"), ("A", "a2"), ("B", "b1")])
    canonical = {"level_names": list(hierarchy.level_names), "labels": [list(level) for level in hierarchy.labels],
                 "parents": [[int(x) for x in p] for p in hierarchy.parents]}
    text = json.dumps(canonical, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == hierarchy_sha256(hierarchy)
