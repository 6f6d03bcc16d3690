"""What a hierarchy release's files claim is true of the mechanism and the data."""

from __future__ import annotations

import csv
import io

import numpy as np

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, release_hierarchy
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.report.hierarchy.bundle import hierarchy_csv_text

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_rows(hierarchy: Hierarchy) -> list[dict[str, str]]:
    plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0), consistency="none")
    release = release_hierarchy(hierarchy, np.ones(hierarchy.level_sizes[-1], dtype=np.int64), plan, SeededRandom(1))
    return list(csv.DictReader(io.StringIO(hierarchy_csv_text(release))))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_labels_that_a_spreadsheet_would_run_as_formulas_are_neutralised():
    """A hostile data file's categories ('=HYPERLINK(…)', '+cmd|…', '@SUM(…)', '-2+3') and column name
    become cells of the released CSV, which privacy officers open in Excel: no cell may start a formula
    (OWASP CSV injection: such a cell is written with a leading apostrophe). Plain numbers stay as they
    are ('-3' is a number, not a formula)."""
    hierarchy = Hierarchy.from_paths(
        ["=region", "district"],
        [("=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0"), ("@SUM(1)", "-2+3"), ("-3", "ok"), ("B", "-4.5")])
    rows = _csv_rows(hierarchy)
    for row in rows:
        for key in ("level_name", "path"):
            cell = row[key]
            assert not cell.startswith(FORMULA_STARTS) or _is_number(cell), (key, cell)
    paths = {row["path"] for row in rows}
    assert "-3" in paths and "'=HYPERLINK(\"http://x\",\"y\")" in paths and "'@SUM(1) > -2+3" in paths
    assert "B > -4.5" in paths and "'-3 > ok" in paths
    assert {row["level_name"] for row in rows} >= {"'=region", "district"}


def test_the_pdf_does_not_promise_a_per_node_95_percent_interval_for_consistent_releases():
    """Top-down and GLS intervals come from a parametric bootstrap pooled over a level's nodes: ≈ 95 %
    on average over the level, not ≥ 95 % for each node (release_hierarchy's docstring). The PDF said
    "at least 95 % probability" for every release; it must say what each release guarantees."""
    from datetime import datetime, timezone

    from dpgui.pdf.hierarchy import _page1_html, _page2_html
    from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo

    hierarchy = Hierarchy.from_paths(["a", "b"], [(f"A{i // 3}", f"a{i}") for i in range(9)])
    info = HierarchyReleaseInfo("d", "0" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False, False)
    projection = {"method": "closed form", "counts": "x", "weighted_mse": 1.0, "levels": []}
    for consistency, per_node in (("topdown", False), ("gls", False), ("none", True)):
        plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0), consistency=consistency)
        release = release_hierarchy(hierarchy, np.full(9, 5, dtype=np.int64), plan, SeededRandom(2))
        html = _page1_html(release, info, projection, None) + _page2_html(release, None)
        assert ("at least 95 %" in html) == per_node, consistency
        assert ("on average over the nodes of its level" in html) == (not per_node), consistency


def test_the_manifest_says_what_the_intervals_guarantee():
    from datetime import datetime, timezone

    from dpgui.report.bundle import schema_problems
    from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo, build_hierarchy_manifest

    hierarchy = Hierarchy.from_paths(["a", "b"], [(f"A{i // 3}", f"a{i}") for i in range(9)])
    info = HierarchyReleaseInfo("d", "0" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False, True)
    plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0), consistency="topdown")
    release = release_hierarchy(hierarchy, np.full(9, 5, dtype=np.int64), plan, SeededRandom(2))
    manifest = build_hierarchy_manifest(release, info, "discrete_laplace_hierarchy", "n", b"c", b"p", "0" * 16)
    assert manifest["intervals"]["level"] == 0.95 and "on average over a level" in manifest["intervals"]["method"]
    assert schema_problems(manifest) == []


def test_the_pdf_does_not_describe_multiplicative_counts_as_slightly_biased_noisy_counts():
    """Ghazi et al.'s (2023) mechanism publishes every count below ~τ_min as ⌊α τ_min⌋ (about 10⁵ records at
    ε = 1): "a count ... biases small counts slightly upwards" would be false. The PDF must say that
    small counts are all published as that floor value."""
    import math

    from dpgui.pdf.hierarchy import _page2_html

    hierarchy = Hierarchy.from_paths(["a", "b"], [(f"A{i // 3}", f"a{i}") for i in range(9)])
    plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0, delta=1e-6), noise="multiplicative", alpha=0.5)
    release = release_hierarchy(hierarchy, np.full(9, 5, dtype=np.int64), plan, SeededRandom(3))
    html = _page2_html(release, None)
    assert "slightly upwards" not in html
    assert plan.multiplicative is not None
    digits = "".join(ch for ch in html if ch.isdigit() or ch == "<")
    assert str(math.floor(plan.multiplicative.bucket_zero)) in digits


def test_the_published_charge_covers_the_published_noise_scales():
    """From the manifest alone (what a reviewer has): the noise scales and sensitivities it states
    must spend no more than the charge it states — Σ Δ/t_ℓ for Laplace (OpenDP's privacy map of its
    discrete Laplace), Σ Δ₂²/(2σ_ℓ²) for Gaussian (OpenDP's zCDP map of its discrete Gaussian), for
    both neighbour models and L = 1, 3 records per person."""
    import math
    from datetime import datetime, timezone

    import opendp.prelude as dp

    from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo, build_hierarchy_manifest

    dp.enable_features("contrib")
    hierarchy = Hierarchy.from_paths(["a", "b", "c"], [(f"A{i // 6}", f"B{i // 2}", f"c{i}") for i in range(12)])
    info = HierarchyReleaseInfo("d", "0" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False, True)
    for neighbours in ("change", "addremove"):
        for records in (1, 3):
            for noise in ("laplace", "gaussian"):
                privacy = PrivacySpec(0.7, neighbours, records, delta=1e-7 if noise == "gaussian" else 0.0)
                plan = plan_hierarchy(hierarchy.level_sizes, privacy, noise=noise, consistency="none")
                release = release_hierarchy(hierarchy, np.full(12, 4, dtype=np.int64), plan, SeededRandom(4))
                manifest = build_hierarchy_manifest(release, info, "m", "n", b"c", b"p", "0" * 16)
                published, charged = manifest["plan"], manifest["privacy"]["charged"]
                scales = [s for s in published["level_noise_scales"] if s is not None]
                assert len(scales) == len(hierarchy.level_sizes) - (1 if neighbours == "change" else 0)
                if noise == "laplace":
                    d1 = published["sensitivity_per_level"]
                    assert d1 == (2 if neighbours == "change" else 1) * records
                    spent = math.fsum(
                        dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int),
                                          scale=t).map(d1) for t in scales)
                    assert spent <= charged["epsilon"] * (1 + 1e-12)
                else:
                    l2sq = published["l2_sensitivity_squared_per_level"]
                    assert l2sq == (2 if neighbours == "change" else 1) * records ** 2
                    rho = math.fsum(
                        dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float),
                                           scale=math.sqrt(s)).map(math.sqrt(l2sq)) for s in scales)
                    assert rho <= charged["rho"] * (1 + 1e-9)
