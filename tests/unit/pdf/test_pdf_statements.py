"""The release PDF states what the officer stated: the region the plan was
made for, missing values counted as a chosen value, and whole-number quantiles of a whole-number column."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from dpgui.pdf.cdf import render_release_pdf
from dpgui.core.focus import focus_offer
from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import WholeNumbers, quantiles
from dpgui.data.public_bounds import whole_number_bins
from dpgui.report.cdf.bundle import ReleaseInfo

from pdf_helpers import pdf_text, write_pdf

CREATED = datetime(2031, 7, 14, 9, 26, 53, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def _application(qapp):
    """A QApplication before any render (as in test_pdf_report)."""


def test_the_pdf_names_the_region_the_imputed_value_and_whole_number_quantiles(tmp_path):
    lower, upper, bins, _ = whole_number_bins(0, 99, 100)
    counts = np.random.default_rng(3).integers(0, 40, bins)
    privacy = PrivacySpec(1.0, impute=7.0)
    plan = focus_offer(bins, privacy, (1, 10), default=auto_plan(bins, privacy)).focused_plan
    assert plan.focus == (1, 10) and plan.privacy.impute == 7.0
    result = release(counts, plan, SeededRandom(2), lower, upper, missing=5)
    info = ReleaseInfo("survey", "age", "0" * 32, CREATED, result.missing_rule, whole_numbers=WholeNumbers.STATED)
    text = pdf_text(write_pdf(render_release_pdf(result, info, None), tmp_path / "statements.pdf"))
    assert "Region the plan was made for" in text and "from 0.5 to 9.5" in text
    assert "Counted as the value 7" in text and "not published on its own" in text
    # ("officer" is written with a ligature by pdftotext)
    assert "Estimate (whole number)" in text and "stated that the column holds whole numbers" in text
    median = next(q for q in quantiles(result, [0.5], whole_numbers=True))
    assert median.whole and f"(median) {median.value:.0f} {median.low:.0f} to {median.high:.0f}" in text
    plain = ReleaseInfo("survey", "age", "0" * 32, CREATED, result.missing_rule)
    text = pdf_text(write_pdf(render_release_pdf(result, plain, None), tmp_path / "plain.pdf"))
    assert "Estimate (interpolated)" in text and "The values are whole numbers" not in text


def test_the_verify_dialog_lists_the_statements_of_a_manifest():
    from dpgui.app.dialogs.verify import _facts
    from dpgui.report.bundle import Verification
    from dpgui.report.cdf.bundle import build_manifest

    lower, upper, bins, _ = whole_number_bins(0, 99, 100)
    privacy = PrivacySpec(1.0, impute=7.0)
    plan = focus_offer(bins, privacy, (1, 10), default=auto_plan(bins, privacy)).focused_plan
    result = release(np.ones(bins, np.int64), plan, SeededRandom(2), lower, upper, missing=5)
    info = ReleaseInfo("survey", "age", "0" * 32, CREATED, result.missing_rule, whole_numbers=WholeNumbers.TYPE)
    manifest = build_manifest(result, info, "n", b"csv", b"pdf", "ABCD")
    facts = _facts(Verification(True, (), manifest, "ABCD", None))
    assert "bin edges from 0.5 to 9.5" in facts["Plan made for"]
    assert facts["Whole numbers"].startswith("the file's declared type") and "whole numbers (bins centred" in \
        facts["Whole numbers"]
    assert "counted as the public value 7" in facts["Missing values"]
