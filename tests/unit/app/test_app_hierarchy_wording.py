"""What the hierarchy page says about its plan and the node list is true of the mechanism and the data."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from gui_helpers import make_window


def test_the_prior_help_does_not_say_the_data_categories_are_declared_public_by_themselves(qtbot):
    """Since the categories must be declared public by the officer (the box "These categories are public"),
    the prior's help must not say that without a prior the data's categories are "declared public", as if
    dpgui did it: it says that the officer must declare them."""
    window = make_window(qtbot, seed=1)
    texts = [label.text() for label in window.hierarchy.findChildren(QLabel)]
    prior_help = [t for t in texts if t.startswith("A public table")]
    assert prior_help, texts
    assert "taken from your data and declared public" not in prior_help[0]
    assert "These categories are public" in prior_help[0]


def test_the_plan_summary_does_not_say_typed_budgets_were_chosen_with_the_prior(qtbot):
    """Level budgets typed by the officer (allocation "custom"), the uniform allocation and Ghazi et al.'s (2023)
    mechanism (no level budgets) were all summed up as "Budgets chosen with the public prior file's
    counts" when a prior was given: only the optimal and target allocations choose budgets with counts."""
    import numpy as np

    from dpgui.core.hierarchy import plan_hierarchy
    from dpgui.core.plan import PrivacySpec
    from dpgui.workspace.hierarchy_planning import PlannedHierarchy, with_budgets

    window = make_window(qtbot, seed=1)
    sizes = (1, 2, 4)
    prior = (np.array([40]), np.array([10, 30]), np.array([5, 5, 10, 20]))
    uniform = plan_hierarchy(sizes, PrivacySpec(1.0), consistency="topdown", prior_levels=prior)
    optimal = plan_hierarchy(sizes, PrivacySpec(1.0), allocation="optimal", consistency="topdown", prior_levels=prior)
    typed = with_budgets(uniform, (0.0, 0.2, 0.8))
    multiplicative = plan_hierarchy(sizes, PrivacySpec(1.0, delta=1e-6), noise="multiplicative", alpha=0.5,
                                    prior_levels=prior)
    for plan in (uniform, typed, multiplicative):
        words = window.hierarchy.summary_text(PlannedHierarchy(plan, None, note=""))
        assert "chosen with the public prior file's counts" not in words, (plan.allocation, plan.noise)
        assert "use the public prior file's counts" in words
    assert "chosen with the public prior file's counts" in window.hierarchy.summary_text(
        PlannedHierarchy(optimal, None, note=""))
    assert "set by hand" in window.hierarchy.summary_text(PlannedHierarchy(typed, None, note=""))


def test_the_exported_projection_is_the_plans_own(qtbot):
    """The bundle's projected error per level was computed in the window at the released counts (with its own
    trials), a figure the plan never stated: it is now the plan's own (:func:`plan_errors`, as the plan page and
    the CLI state it), at the plan's assumed records."""
    from datetime import datetime, timezone

    import numpy as np

    from dpgui.app.hierarchy.export_dialog import HierarchyExportDialog
    from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, release_hierarchy
    from dpgui.core.hierarchy_errors import plan_errors
    from dpgui.core.noise import SeededRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo, errors_json
    from dpgui.workspace.hierarchy import HierarchyOutcome

    hierarchy = Hierarchy.from_paths(["a", "b"], [(f"A{i // 50}", f"a{i}") for i in range(1000)])
    plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0), consistency="topdown", assumed_records=3000)
    release = release_hierarchy(hierarchy, np.full(1000, 3, dtype=np.int64), plan, SeededRandom(2))
    info = HierarchyReleaseInfo("d", "0" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False, True)
    dialog = HierarchyExportDialog(HierarchyOutcome(release, info, "d", info.release_id, True), "/tmp")
    qtbot.addWidget(dialog)
    projection = dialog.published_projection()
    assert projection == errors_json(plan_errors(plan, hierarchy))
    assert projection["counts"].startswith("3,000 records")
