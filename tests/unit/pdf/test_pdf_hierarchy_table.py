"""The hierarchy PDF lists every released count: all levels, each category followed by its children, on as
many pages as it takes (the PDF listed the first 30 categories of the top level only), and states the
plan's 95 % margins per level (the figures the plan page states), not a projection made afterwards."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from dpgui.pdf.hierarchy import TEXT_PAGES, render_hierarchy_pdf, tree_order
from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, release_hierarchy
from dpgui.core.hierarchy_errors import plan_errors, released_mostly_noise
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.formatting import format_level_margin, format_number
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo, errors_json

# 45 regions (more than the 30 the PDF used to list), 2–3 districts each, some with schools of few pupils
PATHS = [(f"Region {r:02d}", f"D{r:02d}-{d}", f"S{r:02d}-{d}-{s}") for r in range(45) for d in range(2 + r % 2)
         for s in range(1 + (r + d) % 3)]
TREE = Hierarchy.from_paths(("region", "district", "school"), PATHS)
LEAVES = np.array([3 + (7 * i) % 40 for i in range(TREE.level_sizes[-1])], dtype=np.int64)
INFO = HierarchyReleaseInfo("schools", "1" * 32, datetime(2031, 7, 14, tzinfo=timezone.utc), NODE_LIST_FROM_DATA,
                            False, True)


def _pdf_text(path: Path, first: int | None = None, last: int | None = None) -> str:
    tool = shutil.which("pdftotext")
    if tool is None:
        pytest.fail("pdftotext (poppler-utils) is not installed: run make system-deps")
    args = [tool, "-layout", "-enc", "UTF-8"] + (["-f", str(first)] if first else []) + (["-l", str(last)] if last else [])
    return subprocess.run(args + [str(path), "-"], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    plan = plan_hierarchy(TREE.level_sizes, PrivacySpec(0.5), consistency="topdown", assumed_records=2000)
    release = release_hierarchy(TREE, LEAVES, plan, SeededRandom(4))
    errors = plan_errors(plan, TREE)
    path = tmp_path_factory.mktemp("pdf") / "h.pdf"
    path.write_bytes(render_hierarchy_pdf(release, INFO, errors_json(errors), None))
    return release, errors, path


@pytest.mark.slow
def test_every_count_of_every_level_is_listed_parent_before_children(rendered):
    release, _, path = rendered
    text = _pdf_text(path, TEXT_PAGES + 1)
    order = tree_order(TREE)
    assert len(order) == TREE.n_nodes  # every node once
    lines = [line for line in text.splitlines() if line.strip()]
    position = 0
    for level, node in order:  # the rows come in the tree's order: each category, then its children
        label = "All records" if level == 0 else TREE.labels[level - 1][node]
        count = format_number(int(release.counts[level][node]))
        interval = f"{format_number(int(release.lower[level][node]))} – {format_number(int(release.upper[level][node]))}"
        while not (re.search(rf"(^|\s){re.escape(label)}\s", lines[position]) and count in lines[position]):
            position += 1  # (raises IndexError if a row is missing or out of order)
        assert interval in lines[position]
        assert ("●" in lines[position]) == (level > 0 and bool(released_mostly_noise(release, level)[node]))
    pages = int(re.findall(r"Page \d+ of (\d+)", _pdf_text(path))[0])
    assert pages > TEXT_PAGES + 1 and f"Page {pages} of {pages}" in _pdf_text(path, pages, pages)


def test_children_follow_their_parent_in_the_release_order():
    order = tree_order(TREE)
    assert order[0] == (0, 0)
    for i, (level, node) in enumerate(order[1:], start=1):
        if level > 1:  # the row above is its parent or an earlier sibling's subtree
            parent = int(TREE.parents[level - 1][node])
            assert (level - 1, parent) in order[:i]
    children = [node for level, node in order if level == 1]
    assert children == list(range(TREE.level_sizes[1]))


def test_the_pdf_states_the_plans_margins(rendered):
    _, errors, path = rendered
    page1 = " ".join(_pdf_text(path, 1, 1).split())
    assert "(records)" in page1  # the heading names the unit of the margins below
    for figures in errors.levels:
        assert format_level_margin(figures.margin95, unit=False) in page1
    assert "2,000 records (N, public under change) assumed spread evenly over the categories" in page1
    assert "Page 1 of" in page1 and "first 30" not in page1
