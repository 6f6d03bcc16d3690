"""The one table of the statistics the window releases: each kind's mode class
(:class:`~dpgui.app.mode.StatisticMode`), its button under "What to release" and the button's tooltip, in the
order the buttons stand. The window builds its modes and buttons from it and asks the chosen mode, never which
statistic it is: a further statistic is a mode in its own folder of dpgui/app and one line here. GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpgui.app.cdf.mode import CdfMode
from dpgui.app.counts.mode import CountsMode
from dpgui.app.grouped_cdf.mode import GroupedCdfMode
from dpgui.app.hierarchy.page import HierarchyMode
from dpgui.app.mode import StatisticMode
from dpgui.app.plan.mode import PlanMode
from dpgui.vocabulary import ReleaseKind, StatisticKind

__all__ = ["MODES", "ModeEntry"]


@dataclass(frozen=True)
class ModeEntry:
    """How the window makes a statistic's mode (``make(window)``; the window is the mode's host, a
    :class:`~dpgui.app.mode.ModeHost` with what that mode needs besides) and offers it."""

    make: Callable[[Any], StatisticMode]
    label: str
    tip: str


#: kind → its mode, in the order of the "What to release" buttons (the first is chosen at start).
MODES: dict[StatisticKind | ReleaseKind, ModeEntry] = {
    StatisticKind.CDF: ModeEntry(CdfMode, "The &CDF of a number column",
                                 "Publish the distribution of one number column (e.g. distances): how many records "
                                 "lie below each value."),
    StatisticKind.HIERARCHY: ModeEntry(lambda window: HierarchyMode(window, window.workspace, window),
                                       "Counts over a &hierarchy of categories",
                                       "Publish how many records fall in each category of 2 to 4 nested columns, "
                                       "e.g. region → district → school."),
    StatisticKind.COUNTS: ModeEntry(CountsMode, "C&ounts of one column",
                                    "Publish how many records fall in each category of one column, from a public "
                                    "list of its categories."),
    StatisticKind.GROUPED_CDF: ModeEntry(GroupedCdfMode, "CDF for e&ach group",
                                         "Publish the distribution of one number column for each group of a public "
                                         "list (e.g. delays for each airline), for one budget."),
    ReleaseKind.PLAN: ModeEntry(PlanMode, "A release &plan (several statistics, one budget)",
                                "Publish several statistics of one table (distributions, each group's distribution, "
                                "counts) under one privacy budget, shared for the least error, confirmed and recorded "
                                "once."),
}
