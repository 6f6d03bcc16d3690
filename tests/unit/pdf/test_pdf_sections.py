"""The PDF layer's one table of reports (dpgui.pdf.sections): every kind of statistic has its report, and
report_pdf draws the same pages as the kind's own function (the text and every pixel of every page, read
back with poppler; the bytes themselves differ from run to run by the PDF's dates and document id)."""

from __future__ import annotations

import dataclasses
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, release_hierarchy
from dpgui.core.hierarchy_errors import plan_errors
from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.pdf.cdf import render_release_pdf
from dpgui.pdf.hierarchy import render_hierarchy_pdf
from dpgui.pdf.sections import SECTIONS, report_pdf
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo, errors_json
from dpgui.vocabulary import StatisticKind
from pdf_helpers import pdf_text, tool, write_pdf

KEY_ID = "7A3C91D04E5B2F68"
CREATED = datetime(2031, 7, 14, 9, 26, 53, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def _application(qapp):
    """The suite's QApplication (pytest-qt), made before any render (as in test_pdf_report)."""


def _cdf() -> tuple[object, object]:
    counts = np.bincount(np.random.default_rng(1).integers(0, 64, 5_000), minlength=64)
    result = release(counts, auto_plan(64, PrivacySpec(0.75, "change")), SeededRandom(11), 0.0, 100.0, "l2")
    return dataclasses.replace(result, secure=True), ReleaseInfo("trips", "minutes", "1" * 32, CREATED, "drop")


def _hierarchy() -> tuple[object, object, dict[str, object]]:
    tree = Hierarchy.from_paths(("region", "district"), [(f"R{r}", f"D{r}-{d}") for r in range(6) for d in range(3)])
    leaves = np.array([3 + (7 * i) % 40 for i in range(tree.level_sizes[-1])], dtype=np.int64)
    plan = plan_hierarchy(tree.level_sizes, PrivacySpec(0.5), consistency="topdown", assumed_records=2000)
    info = HierarchyReleaseInfo("schools", "2" * 32, CREATED, NODE_LIST_FROM_DATA, False, True)
    return release_hierarchy(tree, leaves, plan, SeededRandom(4)), info, errors_json(plan_errors(plan, tree))


def _pages(data: bytes, folder: Path, name: str) -> tuple[str, list[bytes]]:
    """The text of a PDF and the PNG of each of its pages (poppler's pdftotext and pdftoppm)."""
    path = write_pdf(data, folder / f"{name}.pdf")
    subprocess.run([tool("pdftoppm"), "-r", "40", "-png", str(path), str(folder / name)], check=True)
    return pdf_text(path), [png.read_bytes() for png in sorted(folder.glob(f"{name}-*.png"))]


def test_every_kind_of_statistic_has_its_report() -> None:
    assert set(SECTIONS) == set(StatisticKind)


def test_report_pdf_draws_what_the_kinds_own_function_draws(tmp_path: Path) -> None:
    cdf, cdf_info = _cdf()
    counts, counts_info, stated = _hierarchy()
    for name, by_kind, own in (
            ("cdf", report_pdf(StatisticKind.CDF, cdf, cdf_info, KEY_ID), render_release_pdf(cdf, cdf_info, KEY_ID)),
            ("hierarchy", report_pdf(StatisticKind.HIERARCHY, counts, counts_info, KEY_ID, stated),
             render_hierarchy_pdf(counts, counts_info, stated, KEY_ID))):
        text, pages = _pages(by_kind, tmp_path, f"{name}-by-kind")
        own_text, own_pages = _pages(own, tmp_path, f"{name}-own")
        assert text == own_text and KEY_ID in text
        assert len(pages) >= 3 and pages == own_pages


def test_a_report_refuses_an_extra_section_it_does_not_have_or_misses_the_one_it_needs() -> None:
    cdf, cdf_info = _cdf()
    counts, counts_info, stated = _hierarchy()
    with pytest.raises(TypeError, match="no extra section"):
        report_pdf(StatisticKind.CDF, cdf, cdf_info, None, stated)
    with pytest.raises(TypeError, match="stated errors"):
        report_pdf(StatisticKind.HIERARCHY, counts, counts_info, None)
