"""The report of a CDF for each group: a first page with the plan, the groups, the rule for the others and the
privacy statement (the sizes published with noise only, the budget spent once), then five groups a page, each
with its noisy size and its quantiles; drawn by report_pdf as by its own function (read back with poppler)."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.grouped_cdf import GroupList, plan_grouped, release_grouped
from dpgui.vocabulary import OtherGroups, StatisticKind
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.pdf.grouped_cdf import GROUPS_PER_PAGE, render_grouped_cdf_pdf
from dpgui.pdf.sections import report_pdf
from dpgui.report.grouped_cdf.bundle import GroupedReleaseInfo
from pdf_helpers import pdf_text, write_pdf

CREATED = datetime(2031, 7, 14, 9, 26, 53, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def _application(qapp):
    """The suite's QApplication (pytest-qt), made before any render."""


def test_the_report_names_every_group_and_says_the_sizes_are_noisy(tmp_path: Path) -> None:
    labels = tuple(f"G{i:02d}" for i in range(8))
    plan = plan_grouped(GroupList(labels, OtherGroups.OTHER), 16, PrivacySpec(0.8, "change"))
    counts = np.random.default_rng(3).integers(0, 40, size=(len(plan.labels), 16))
    counts[2] = 0  # a listed group absent from the data
    release = release_grouped(counts, plan, SeededRandom(5), 0.0, 160.0)
    info = GroupedReleaseInfo("flights", "dep_delay", "carrier", "3" * 32, CREATED, False)
    data = report_pdf(StatisticKind.GROUPED_CDF, release, info, "7A3C91D04E5B2F68")
    text = " ".join(pdf_text(write_pdf(data, tmp_path / "grouped.pdf")).split())
    assert " ".join(pdf_text(write_pdf(render_grouped_cdf_pdf(release, info, "7A3C91D04E5B2F68"),
                                       tmp_path / "own.pdf")).split()) == text
    pages = 1 + math.ceil(len(plan.labels) / GROUPS_PER_PAGE)  # 9 groups ("other" too): the first page and two
    assert f"Page {pages} of {pages}" in text and f"Page {pages + 1} of" not in text
    assert "released only as a noisy estimate" in text and "spent once for all groups" in text
    assert "counted in one group 'other'" in text and "G00, G01, G02" in text
    for label in (*labels, "other"):
        assert f"Group {label}" in text
    assert text.count("50% quantile") == len(plan.labels) and "TEST" in text  # seeded noise is said on the page


def test_every_group_states_its_mean_and_sum_with_intervals(tmp_path: Path) -> None:
    """Each group's table has cdf_moments' mean and sum with the interval, the noise's margin and the binning
    (half of a 10 wide bin); a group whose released total is not positive says it has no mean."""
    from dpgui.core.cdf_moments import NO_MEAN, cdf_moments
    from dpgui.formatting import format_fixed, moment_decimals

    plan = plan_grouped(GroupList(("AA", "DL", "B6")), 16, PrivacySpec(1.0, "change"))
    counts = np.random.default_rng(4).integers(0, 40, size=(3, 16))
    release = release_grouped(counts, plan, SeededRandom(6), 0.0, 160.0)
    info = GroupedReleaseInfo("flights", "dep_delay", "carrier", "4" * 32, CREATED, False)
    text = " ".join(pdf_text(write_pdf(render_grouped_cdf_pdf(release, info, None), tmp_path / "g.pdf")).split())
    for group in release.releases:
        moments = cdf_moments(group)
        mean = moments.mean
        assert mean is not None
        places = moment_decimals(mean.noise_margin, mean.binning)
        assert (f"Mean {format_fixed(mean.value, places)} (95 %: {format_fixed(mean.low, places)} to "
                f"{format_fixed(mean.high, places)}; noise ± {format_fixed(mean.noise_margin, places)}, binning ± 5.0)"
                ) in text
        total = moments.sum
        assert f"Sum {format_fixed(total.value, moment_decimals(total.noise_margin, total.binning))} (95 %" in text
    assert text.count("binning ± 5.0 per value") == 3 and NO_MEAN not in text
