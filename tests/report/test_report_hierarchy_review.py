"""Final review of issue 15's merged hierarchy release (report side): error paths past the spend."""

from __future__ import annotations

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DpguiError
from dpgui.report.hierarchy_bundle import NODE_LIST_FROM_DATA
from dpgui.report.ledger import Ledger


def test_a_failure_while_recording_the_output_says_the_budget_was_spent(monkeypatch):
    """spend_then_release's promise: any failure after the spend says that the budget was spent and under
    which ledger id. Computing what the ledger records about the output (its SHA-256, the public
    parameters) ran outside that guard, so such a failure surfaced as a bare error after ε was gone."""
    import dpgui.report.hierarchy_publish as publish

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
