"""The PDF of a release plan (dpgui.pdf.plan): a summary page, then each part's own pages as its kind's report
draws them — a plan of the four kinds has 1 + the parts' own page counts, each part's pages say what its report
alone says (only the footer names the plan and the part), the summary page states the plan's figures (shares
computed here: ε_i / Σ ε of Laplace parts, ρ_i / Σ ρ of Gaussian ones), a plan drawn with test noise has the red
strip, and a plan released through one ledger entry is signed with its PDF and verifies (read back with poppler)."""

from __future__ import annotations

import dataclasses
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpgui import __version__
from dpgui.core.counts import CountsPlan, release_counts
from dpgui.core.grouped_cdf import GroupList, plan_grouped, release_grouped
from dpgui.vocabulary import Charge, Noise, OtherGroups, StatisticKind
from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, release_hierarchy
from dpgui.core.hierarchy_errors import plan_errors
from dpgui.core.mechanism import release
from dpgui.core.noise import SecureRandom, SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.pdf.plan import PlanReportPart, plan_pdf, plan_report_pdf
from dpgui.pdf.sections import report_pdf
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.report.counts.bundle import CountsReleaseInfo
from dpgui.report.grouped_cdf.bundle import GroupedReleaseInfo
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo, errors_json
from dpgui.report.ledger import Ledger
from dpgui.report.plan.bundle import PlanSummary
from dpgui.report.signing import generate_key
from dpgui.workspace.plan_split import PlannedPart, PlanPart, split_plan
from dpgui.workspace.planning import PlanRequest
from dpgui.workspace.release_plan import PlanItem, ReleasedPart, ReleasedPlan, plan_summary, release_plan, sign_plan
from dpgui.workspace.statistics import STATISTICS, verify
from dpgui.workspace.statistics.cdf import CDF, CdfSpend
from dpgui.workspace.statistics.counts import COUNTS, CountsPlanRequest, CountsSpend
from pdf_helpers import pdf_text, tool, write_pdf

KEY_ID = "7A3C91D04E5B2F68"
CREATED = datetime(2031, 7, 14, 9, 26, 53, tzinfo=timezone.utc)
PLAN_ID = "9" * 32
UNIT = "at most 1 record per person (declared by the officer)"
SOURCE = {"kind": "file", "format": "parquet", "location": "/data/trips.parquet"}


@pytest.fixture(autouse=True)
def _application(qapp):
    """The suite's QApplication (pytest-qt), made before any render (as in test_pdf_report)."""


def _four_kinds(secure: bool) -> list[tuple[StatisticKind, str, float, float, float, Any, Any, dict[str, Any] | None]]:
    """A release of each kind (kind, title, weight, ε, margin, release, info, the kind's extra section as its own
    report takes it), drawn with seeded noise, marked secure or not."""
    counts = np.bincount(np.random.default_rng(1).integers(0, 64, 5_000), minlength=64)
    cdf = dataclasses.replace(release(counts, auto_plan(64, PrivacySpec(0.3, "change")), SeededRandom(11), 0.0, 100.0,
                                      "l2"), secure=secure)
    tree = Hierarchy.from_paths(("region", "district"), [(f"R{r}", f"D{r}-{d}") for r in range(6) for d in range(3)])
    leaves = np.array([3 + (7 * i) % 40 for i in range(tree.level_sizes[-1])], dtype=np.int64)
    tree_plan = plan_hierarchy(tree.level_sizes, PrivacySpec(0.2), consistency="topdown", assumed_records=2000)
    category = dataclasses.replace(release_counts(np.array([10, 20, 30]), CountsPlan(("a", "b", "c"), PrivacySpec(0.4)),
                                                  SeededRandom(2)), secure=secure)
    groups = plan_grouped(GroupList(tuple(f"G{i:02d}" for i in range(8)), OtherGroups.OTHER), 16,
                          PrivacySpec(0.1, "change"))
    grouped = release_grouped(np.random.default_rng(3).integers(0, 40, size=(9, 16)), groups, SeededRandom(5), 0.0,
                              160.0)  # its info says whether the noise was secure
    return [
        (StatisticKind.CDF, "CDF of minutes", 1.0, 0.3, 41.25, cdf, ReleaseInfo("trips", "minutes", "1" * 32, CREATED,
                                                                                "drop"), None),
        (StatisticKind.COUNTS, "Counts of state", 4.0, 0.4, 9.0, category,
         CountsReleaseInfo("trips", "state", "2" * 32, CREATED, secure), None),
        (StatisticKind.GROUPED_CDF, "CDF of delay for each carrier", 1.0, 0.1, 120.5, grouped,
         GroupedReleaseInfo("trips", "delay", "carrier", "3" * 32, CREATED, secure), None),
        (StatisticKind.HIERARCHY, "Counts over region → district", 2.0, 0.2, 33.5,
         release_hierarchy(tree, leaves, tree_plan, SeededRandom(4)),
         HierarchyReleaseInfo("trips", "4" * 32, CREATED, NODE_LIST_FROM_DATA, secure, True),
         errors_json(plan_errors(tree_plan, tree))),
    ]


def _released_plan(secure: bool) -> ReleasedPlan:
    """The four releases as a released plan holds them (each part's share and margin as its split planned it)."""
    parts = []
    for kind, title, weight, epsilon, margin, released, info, extra in _four_kinds(secure):
        part = PlanPart(STATISTICS[kind], None, weight, name=title)
        planned = PlannedPart(part, Noise.LAPLACE, epsilon, epsilon, 0.0, None, margin,
                              Charge(epsilon, 0.0, epsilon ** 2 / 2))
        item = PlanItem(part, lambda plan: plan, title, extra_of=None if extra is None else lambda _, e=extra: e)
        parts.append(ReleasedPart(item, planned, info.release_id, released, info, None))
    return ReleasedPlan(PLAN_ID, "trips", None, tuple(parts), CREATED, SOURCE, secure)  # type: ignore[arg-type]


LAPLACE_CHARGE = Charge(1.0, 0.0, 0.15)  # the four parts' ε add up to 1, their ε²/2 to 0.15


def _summary(secure: bool, charge: Charge = LAPLACE_CHARGE) -> PlanSummary:
    return PlanSummary(PLAN_ID, "trips", CREATED, 1.0, 0.0, charge, "optimised", 412.3, 498.7, UNIT, SOURCE, secure)


LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"}
#: Where the footer starts, in points from the top of an A4 page (the footer's rule is below it, the pages'
#: content above it: dpgui.pdf.page.footer_top).
FOOTER_TOP_PT = 783


def _read(path: Path, page: int, top: float, height: float, layout: bool = False) -> str:
    """The text of a band of ``page`` (points from the top), ligatures spelt out; with ``layout``, one line per
    line of the page (a table's row on one line) with its runs of white space as one space."""
    args = [tool("pdftotext"), "-enc", "UTF-8", "-r", "72", "-x", "0", "-y", str(top), "-W", "595", "-H", str(height),
            "-f", str(page), "-l", str(page)] + (["-layout"] if layout else [])
    text = subprocess.run(args + [str(path), "-"], capture_output=True, text=True, check=True).stdout
    for ligature, letters in LIGATURES.items():
        text = text.replace(ligature, letters)
    if layout:
        return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    return " ".join(text.split())


def _body(path: Path, page: int) -> str:
    return _read(path, page, 0, FOOTER_TOP_PT)


def _footer(path: Path, page: int) -> str:
    return _read(path, page, FOOTER_TOP_PT, 842 - FOOTER_TOP_PT)


def _summary_lines(path: Path) -> str:
    return _read(path, 1, 0, 842, layout=True)


def _page_count(path: Path) -> int:
    info = subprocess.run([tool("pdfinfo"), str(path)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))


def test_the_plan_has_a_summary_page_then_each_parts_own_pages(tmp_path: Path) -> None:
    plan = write_pdf(plan_report_pdf(_released_plan(True), _summary(True), KEY_ID, "trips-plan"), tmp_path / "plan.pdf")
    page = 2  # the summary is page 1
    for number, (kind, title, _, _, _, released, info, extra) in enumerate(_four_kinds(True), start=1):
        own = write_pdf(report_pdf(kind, released, info, KEY_ID, extra), tmp_path / f"part{number}.pdf")
        count = _page_count(own)
        assert count >= 1
        for own_page in range(1, count + 1):
            assert _footer(own, own_page) == (f"Release {info.release_id} · trips · made with dpgui {__version__} "
                                              f"Page {own_page} of {count}")
            assert _footer(plan, page) == (f"Release plan {PLAN_ID} · trips · made with dpgui {__version__} "
                                           f"Part {number} of 4 · page {own_page} of {count}")
            assert _body(plan, page) == _body(own, own_page) and _body(own, own_page), (title, own_page)
            page += 1
        assert title in pdf_text(plan, 1)
    assert _page_count(plan) == page - 1  # 1 + the parts' own pages, nothing more


def test_the_summary_page_states_the_plans_figures_and_each_part(tmp_path: Path) -> None:
    path = write_pdf(plan_report_pdf(_released_plan(True), _summary(True), KEY_ID, "trips-plan"), tmp_path / "plan.pdf")
    text, lines = _body(path, 1) + " " + _footer(path, 1), _summary_lines(path)
    kinds = _four_kinds(True)
    total = sum(kind[3] for kind in kinds)
    assert total == pytest.approx(1.0)
    for number, (kind, title, weight, epsilon, margin, *_) in enumerate(kinds, start=1):
        share = f"{round(100 * epsilon / total)} %"
        assert (f"{number} {title} {weight:g} ε = {epsilon:g} ({share}) ± {margin:,.1f}\n{STATISTICS[kind].title}\n"
                f"file trips-plan.part{number}.csv") in lines
    for words in ("Release plan: 4 statistics of trips", PLAN_ID, "key 7A3C91D04E5B2F68", "2031-07-14 09:26:53 UTC",
                  "ε = 1 (δ = 0)", "charged ε = 1 once for the whole plan", UNIT,
                  "412.3 records, against 498.7 records had every statistic been given an equal share",
                  "dpgui verify trips-plan.manifest.json", "Summary of the plan"):
        assert words in text, words
    assert "a PARQUET file" in _body(path, 1)  # "file": a ligature in pdf_text
    assert "TEST" not in text


def test_gaussian_parts_show_their_delta_and_rho_and_share_rho(tmp_path: Path) -> None:
    rhos = (0.01, 0.03)  # the parts' ρ; the plan's ρ is their sum (zCDP composition)
    released = _released_plan(True)
    cdf = released.parts[0]
    parts = [PlanReportPart(StatisticKind.CDF, f"CDF {i}", 1.0, Charge(0.5 + i, 1e-6, rho), 10.0, cdf.release, cdf.info)
             for i, rho in enumerate(rhos)]
    summary = dataclasses.replace(_summary(True, Charge(1.2, 1e-6, sum(rhos))), delta=1e-6, split="equal")
    path = write_pdf(plan_pdf(summary, parts, None), tmp_path / "gaussian.pdf")
    text, lines = _body(path, 1), _summary_lines(path)
    for i, rho in enumerate(rhos):
        assert (f"{i + 1} CDF {i} 1 ε = {0.5 + i:g}, δ = 1e-6, ± 10.0\nCDF of a numeric column ρ = {rho:g} "
                f"({round(100 * rho / sum(rhos))} %)") in lines
    assert "charged ε = 1.2, δ = 1e-6, ρ = 0.04 once" in text and "Each share is of ρ" in text
    assert "Every statistic was given an equal share of the budget" in text and "part1.csv" not in text
    assert "not signed" in text and _page_count(path) == 1 + 3 + 3


def test_a_plan_with_test_noise_has_the_red_strip_on_its_summary_page(tmp_path: Path) -> None:
    path = write_pdf(plan_report_pdf(_released_plan(False), _summary(False), None), tmp_path / "test.pdf")
    assert "TEST RELEASE — NOT FOR PUBLICATION" in pdf_text(path, 1)
    subprocess.run([tool("pdftoppm"), "-r", "20", "-f", "1", "-l", "1", "-png", str(path), str(tmp_path / "p")],
                   check=True)
    from PySide6.QtGui import QImage
    image = QImage(str(next(tmp_path.glob("p-*.png"))))
    red = sum(1 for x in range(image.width()) for y in range(image.height() // 8)
              if image.pixelColor(x, y).red() > 150 and image.pixelColor(x, y).green() < 60)
    assert red > image.width()  # a strip across the top, not a few red letters


def test_a_released_plan_is_signed_with_its_pdf_and_verifies(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    data = tmp_path / "t.parquet"
    pd.DataFrame({"x": rng.uniform(0, 100, 2000), "c": rng.choice(["a", "b", "c"], 2000)}).to_parquet(data)
    items = [PlanItem(PlanPart(CDF, PlanRequest(64, PrivacySpec(1.0, "addremove", 1))),
                      lambda p: CdfSpend("x", 0.0, 100.0, 64, p, "l2"), "x"),
             PlanItem(PlanPart(COUNTS, CountsPlanRequest(("a", "b", "c"), 1.0, "addremove"), weight=4),
                      lambda p: CountsSpend("c", p), "c")]
    split = split_plan([item.part for item in items], 1.0, 0.0)
    with Ledger() as ledger:
        ledger.set_cap("ds", 1.5)
        released = release_plan(ledger, "ds", items, split, lambda: open_source(parse_source(str(data))), SecureRandom,
                                epsilon=1.0, delta=0.0)
        summary = plan_summary(released, 1.0, 0.0, UNIT)
        key = generate_key()
        pdf = plan_report_pdf(released, summary, key.public_key.key_id_hex, "plan1")
        paths = sign_plan(ledger, released, summary, tmp_path, "plan1", pdf, key)
    assert paths.pdf.read_bytes() == pdf and verify(paths.manifest, key.public_key).ok
    text, lines = _body(paths.pdf, 1), _summary_lines(paths.pdf)
    total = sum(part.planned.charge.epsilon for part in released.parts)
    assert total == pytest.approx(summary.charge.epsilon) and total <= 1.0
    for number, part in enumerate(released.parts, start=1):
        epsilon = part.planned.charge.epsilon
        assert (f"{number} {part.item.title} {part.item.part.weight:g} ε = {epsilon:.6g} "
                f"({round(100 * epsilon / total)} %) ± {part.planned.margin95:,.1f}\n"
                f"{STATISTICS[part.item.part.statistic.kind].title}\nfile plan1.part{number}.csv") in lines
    assert f"{split.weighted_margin:,.1f} records, against {split.equal.weighted_margin:,.1f} records" in text
    assert _page_count(paths.pdf) == 1 + 3 + 1  # the summary, the CDF's three pages, the counts' one


def test_a_laplace_plan_says_the_delta_it_was_allowed_was_not_spent(tmp_path: Path) -> None:
    summary = dataclasses.replace(_summary(True), delta=1e-6)  # the officer allowed δ; Laplace parts spend none
    text = _body(write_pdf(plan_report_pdf(_released_plan(True), summary, KEY_ID), tmp_path / "delta.pdf"), 1)
    assert "budget: ε = 1, δ = 1e-6. The budget ledger was charged ε = 1 once" in text
    assert "The δ = 1e-6 allowed was not used: Laplace noise needs none." in text and "ρ =" not in text
