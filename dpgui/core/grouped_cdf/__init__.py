"""The CDF of a numeric column for each group of a categorical column (docs/privacy-model.md, "A CDF for
each group"): the public group list (:mod:`.groups`), the plan shared by every group and its sensitivity
(:mod:`.plan`), the release (:mod:`.release`). Imports only dpgui.core, dpgui.errors and dpgui.vocabulary;
no I/O, any thread.
"""

from __future__ import annotations

from dpgui.core.grouped_cdf.groups import GROUPS_FROM_DATA, MAX_GROUPS, OTHER_LABEL, GroupList
from dpgui.core.grouped_cdf.plan import GroupedPlan, GroupTreePrivacy, level_sensitivities, plan_grouped
from dpgui.core.grouped_cdf.release import GroupedRelease, release_grouped

__all__ = [
    "GROUPS_FROM_DATA",
    "MAX_GROUPS",
    "OTHER_LABEL",
    "GroupList",
    "GroupTreePrivacy",
    "GroupedPlan",
    "GroupedRelease",
    "level_sensitivities",
    "plan_grouped",
    "release_grouped",
]
