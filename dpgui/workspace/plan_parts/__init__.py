"""The parts of a release plan file, one codec per statistic (:data:`PART_CODECS`, one line each; each
codec in its own module, which never imports another's): what a statistic's ``[[statistic]]`` table holds and
how its plan item is made (:class:`~dpgui.workspace.plan_parts.common.PartCodec`). No Qt; any thread.
"""

from __future__ import annotations

from dpgui.errors import ParameterError
from dpgui.vocabulary import StatisticKind
from dpgui.workspace.plan_parts.cdf import CDF_PART
from dpgui.workspace.plan_parts.common import FIX, PartCodec, PartPrivacy, check_common
from dpgui.workspace.plan_parts.counts import COUNTS_PART
from dpgui.workspace.plan_parts.grouped_cdf import GROUPED_CDF_PART
from dpgui.workspace.plan_parts.hierarchy import HIERARCHY_PART

__all__ = ["PART_CODECS", "PartCodec", "PartPrivacy", "check_common", "part_codec"]

#: Every statistic a plan file may list, by its kind.
PART_CODECS: dict[StatisticKind, PartCodec] = {
    StatisticKind.CDF: CDF_PART,
    StatisticKind.HIERARCHY: HIERARCHY_PART,
    StatisticKind.COUNTS: COUNTS_PART,
    StatisticKind.GROUPED_CDF: GROUPED_CDF_PART,
}


def part_codec(kind: StatisticKind) -> PartCodec:
    """The codec of ``kind``; a ParameterError for a kind a plan file cannot list."""
    if kind not in PART_CODECS:
        raise ParameterError(f"a release plan cannot list a {kind}", FIX)
    return PART_CODECS[kind]
