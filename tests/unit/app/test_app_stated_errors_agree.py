"""The stated errors of the window, the CLI and the PDF agree to the digit for the same plan.

Before, the CDF plan's window said "± 40.0" (95 % margin) where ``dpgui plan`` printed "rms ± 17.73" (one
standard error) and the PDF a root-mean-square of margins; the hierarchy plan showed one standard deviation
("5.64 per category") and the PDF a projection at the released counts from 8 simulations. Now all three
state the 95 % margin, computed by the same function, worded alike: here the window on the bundled samples,
``dpgui plan`` / ``dpgui hierarchy plan`` run on the same choices, and the PDF of a release of the plan.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from dpgui.pdf.hierarchy import render_hierarchy_pdf
from dpgui.pdf.cdf import render_release_pdf
from dpgui.core.margins import cdf_margins
from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, hierarchy_sample_path
from dpgui.formatting import cdf_margin_words, format_margin_records
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo

from cli_helpers import run_cli
from gui_helpers import TIMEOUT, make_window, release_and_wait, wait_plan

MARGIN = re.compile(r"± [\d,]+\.\d")


def _pdf_text(data: bytes, folder: Path) -> str:
    tool = shutil.which("pdftotext")
    if tool is None:
        pytest.fail("pdftotext (poppler-utils) is not installed: run make system-deps")
    path = folder / "report.pdf"
    path.write_bytes(data)
    text = subprocess.run([tool, "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(text.split())


def test_a_cdf_plans_margins_agree_in_window_cli_and_pdf(qtbot, capsys, tmp_path):
    window = make_window(qtbot, seed=4)
    window.open_sample()
    qtbot.waitUntil(lambda: window.table is not None, timeout=TIMEOUT)
    wait_plan(qtbot, window)
    page = window.plan_page
    qtbot.waitUntil(lambda: "at the worst point" in page.summary.text(), timeout=TIMEOUT)
    plan = page.plan
    n = page.plots.n_public  # N as the window uses it (public under change: the file's rows)
    assert n
    margins = cdf_margins(plan)
    stated = cdf_margin_words(margins.worst, margins.average, n)
    assert stated in page.summary.text()  # the window

    # the CLI on the same choices makes the same plan and states the same words
    column = window.workspace.state.column.column
    code, out, err = run_cli(["plan", "--bins", str(plan.shape.bins), "--epsilon", f"{plan.privacy.epsilon:g}",
                              "--n", str(n), "--json"], capsys)
    assert code == 0, err
    import json

    report = json.loads(out)
    assert report["branching"] == list(plan.shape.branching) and report["level_epsilons"] == pytest.approx(
        list(plan.level_budgets)), column
    code, out, err = run_cli(["plan", "--bins", str(plan.shape.bins), "--epsilon", f"{plan.privacy.epsilon:g}",
                              "--n", str(n)], capsys)
    assert code == 0, err
    assert stated in out

    # the PDF of a release of this plan
    release_and_wait(qtbot, window)
    outcome = window.cdf.outcome
    assert outcome.release.plan == plan
    text = _pdf_text(render_release_pdf(outcome.release, outcome.info, None), tmp_path)
    assert format_margin_records(margins.worst) in text and format_margin_records(margins.average) in text
    assert set(MARGIN.findall(text)) >= set(MARGIN.findall(stated))


def test_a_hierarchy_plans_margins_agree_in_window_cli_and_pdf(qtbot, capsys, tmp_path):
    from dpgui.app.hierarchy.export_dialog import HierarchyExportDialog
    from dpgui.core.hierarchy import release_hierarchy
    from dpgui.core.noise import SeededRandom
    from dpgui.workspace.hierarchy import HierarchyOutcome

    window = make_window(qtbot, seed=4)
    window.start_page.hierarchy_sample_button.click()
    qtbot.waitUntil(lambda: window.in_hierarchy_mode(), timeout=TIMEOUT)
    page = window.hierarchy
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy(), timeout=120_000)
    planned = page.state_ws.state.planned
    plan, loaded = planned.plan, page.state_ws.state.loaded
    window_cells = [[page.table.item(level, column).text() for column in range(8, 12)]
                    for level in range(page.table.rowCount())]
    assert all(MARGIN.match(cells[0]) for cells in window_cells[1:]) and window_cells[0][0] == "exact"

    code, out, err = run_cli(["hierarchy", "plan", "--input", str(hierarchy_sample_path()), "--levels",
                              ",".join(HIERARCHY_SAMPLE_LEVELS), "--epsilon", f"{plan.privacy.epsilon:g}", "--json"],
                             capsys)
    assert code == 0, err
    import json

    report = json.loads(out)
    assert report["plan"]["level_budgets"] == list(plan.level_budgets)
    assert (report["consistency"], report["plan"]["assumed_records"]) == (plan.consistency, plan.assumed_records)
    code, out, err = run_cli(["hierarchy", "plan", "--input", str(hierarchy_sample_path()), "--levels",
                              ",".join(HIERARCHY_SAMPLE_LEVELS), "--epsilon", f"{plan.privacy.epsilon:g}"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Projected 95 % margin"))
    for level, cells in enumerate(window_cells):  # the CLI's row of each level holds the window's four cells
        row = lines[start + 2 + level]
        assert row.split()[0] == str(level) and all(cell in row for cell in cells), (row, cells)

    # the PDF of a release of this plan, with the projection the Export dialog publishes
    release = release_hierarchy(loaded.hierarchy, loaded.leaf_counts, plan, SeededRandom(1))
    info = HierarchyReleaseInfo("flight_routes", "2" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False,
                                True)
    dialog = HierarchyExportDialog(HierarchyOutcome(release, info, "flight_routes", info.release_id, True), str(tmp_path))
    qtbot.addWidget(dialog)
    text = _pdf_text(render_hierarchy_pdf(release, info, dialog.published_projection(), None), tmp_path)
    page1 = re.sub(r"\s", "", text[: text.index("Page 1 of")])  # (pdftotext drops some spaces in table cells)
    for level, cells in enumerate(window_cells):
        figures = [cells[0].removesuffix(" records"), *cells[1:]]  # the PDF's heading says "(records)"
        assert all(re.sub(r"\s", "", cell) in page1 for cell in figures), (level, cells)
    assert np.all([f.margin95 for f in planned.errors.levels][1:])
