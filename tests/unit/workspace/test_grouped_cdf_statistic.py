"""The CDF for each group as a statistic: the ledger is charged the shared plan's budget once whatever the
number of groups (checked against closed forms written out here), the CSV holds every released group's CDF at
the bin edges and its noisy size, and a release kept in a project file comes back with the same values and
signs."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpgui.core.grouped_cdf import GroupList, plan_grouped
from dpgui.vocabulary import Noise, OtherGroups
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.data.group_histograms import GroupHistograms
from dpgui.data.histogram import ColumnHistogram
from dpgui.report.grouped_cdf.bundle import GROUPED_CDF_CSV_COLUMNS
from dpgui.report.grouped_cdf.project import GROUPED_CDF_SECTION, GroupedCdfSettings, ProjectGroupedRelease
from dpgui.report.keystore import create_key, load_public_key, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.project_sections import ProjectSection
from dpgui.workspace.statistics import verify
from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF, GroupedCdfSpend

PASSPHRASE = "a long test passphrase"


def _histograms(labels: tuple[str, ...], counts: np.ndarray) -> GroupHistograms:
    """Confidential histograms on [0, 8) in 8 bins, one per released group (no missing values)."""
    return GroupHistograms(labels, tuple(
        ColumnHistogram(counts=row.astype(np.int64), lower=0.0, upper=8.0, bins=8, n_rows=int(row.sum()), n_missing=0,
                        n_clamped_low=0, n_clamped_high=0, missing_policy="drop") for row in counts))


def _release(ledger: Ledger, groups: GroupList, privacy: PrivacySpec, noise: str = Noise.LAPLACE) -> Any:
    plan = plan_grouped(groups, 8, privacy, noise=noise)
    spend = GroupedCdfSpend("age", "state", 0.0, 8.0, plan)
    counts = np.arange(len(plan.labels) * 8, dtype=np.int64).reshape(len(plan.labels), 8) % 5
    return GROUPED_CDF.release(ledger, "people", spend, _histograms(plan.labels, counts), SecureRandom())


@pytest.mark.parametrize("groups", [1, 3, 40])
def test_the_ledger_is_charged_the_laplace_budget_once_whatever_the_number_of_groups(groups: int) -> None:
    epsilon = 0.7
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, _ = _release(ledger, GroupList(tuple(f"g{i}" for i in range(groups))), PrivacySpec(epsilon, "change"))
        totals = ledger.totals("people")
    assert len(release.releases) == groups
    # closed form: pure ε-DP Laplace, the groups in parallel: (ε, 0) and ρ = ε²/2, once
    assert (totals.epsilon_spent, totals.delta_spent, totals.releases) == (pytest.approx(epsilon), 0.0, 1)
    assert totals.rho_spent == pytest.approx(epsilon ** 2 / 2)


def test_a_gaussian_grouped_release_is_charged_its_epsilon_delta_and_at_least_the_rho_its_noise_spends() -> None:
    epsilon, delta, people = 1.0, 1e-6, 2
    privacy = PrivacySpec(epsilon, "addremove", people, delta)
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0, 1e-3)
        release, _ = _release(ledger, GroupList(("a", "b", "c"), OtherGroups.OTHER), privacy, Noise.GAUSSIAN)
        totals = ledger.totals("people")
    tree = release.plan.tree
    assert tree.noise == Noise.GAUSSIAN and release.labels == ("a", "b", "c", "other")
    # what the noise spends, written out: Σ over noised levels of Δ₂²/(2σ_l²), Δ₂² = L² under add/remove
    spent = sum(people ** 2 / (2 * float(s)) for s in tree.scales if s is not None)
    simple = (math.sqrt(math.log(1 / delta) + epsilon) - math.sqrt(math.log(1 / delta))) ** 2  # ρ → (ε, δ), simple
    assert (totals.epsilon_spent, totals.delta_spent, totals.releases) == (pytest.approx(epsilon), delta, 1)
    assert totals.rho_spent is not None and totals.rho_spent >= spent * (1 - 1e-12)
    assert totals.rho_spent >= simple  # the CKS conversion gives at least the simple bound's ρ


def test_the_csv_holds_each_groups_cdf_at_the_bin_edges_and_its_noisy_size() -> None:
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, _ = _release(ledger, GroupList(("WA", "OR", "ID")), PrivacySpec(1.0, "change"))
    rows = list(csv.DictReader(io.StringIO(GROUPED_CDF.csv_text(release))))
    assert tuple(rows[0]) == GROUPED_CDF_CSV_COLUMNS and len(rows) == 3 * 8
    for g, label in enumerate(("WA", "OR", "ID")):
        group = release.releases[g]
        mine = rows[8 * g: 8 * (g + 1)]
        assert {r["group"] for r in mine} == {label}
        assert [float(r["value"]) for r in mine] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
        assert [float(r["cumulative_count"]) for r in mine] == group.cumulative.tolist()
        assert [float(r["std_error"]) for r in mine] == group.std_error.tolist()
        assert {float(r["group_size"]) for r in mine} == {group.total}
        assert {float(r["group_size_std_error"]) for r in mine} == {release.total_std_error}


def test_a_release_kept_in_a_project_comes_back_with_its_values_and_signs(tmp_path: Path) -> None:
    files = create_key("officer", PASSPHRASE, tmp_path / "keys")
    secret, public = load_secret_key(files.secret_path, PASSPHRASE), load_public_key(files.public_path)
    settings = GroupedCdfSettings("age", "state", ("WA", "OR"), "", OtherGroups.OTHER, 0.0, 8.0, 8, 1.0)
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, info = _release(ledger, GroupList(("WA", "OR"), OtherGroups.OTHER), PrivacySpec(1.0, "addremove"))
        record = ProjectGroupedRelease.from_release(release, info)
        written = json.loads(json.dumps(GROUPED_CDF_SECTION.to_json(ProjectSection(settings, (record,)), list)))
        section = GROUPED_CDF_SECTION.read(written, "'work.dpgui'")
        assert section == ProjectSection(settings, (record,))
        restored, restored_info = GROUPED_CDF.from_record(section.releases[0], "people")
        assert not restored_info.secure  # only the ledger says it may be signed
        assert GROUPED_CDF.digest(restored) == GROUPED_CDF.digest(release)
        assert GROUPED_CDF.csv_text(restored) == GROUPED_CDF.csv_text(release)
        assert GROUPED_CDF.parameters(restored, restored_info) == GROUPED_CDF.parameters(release, info)
        confirmed, confirmed_info = GROUPED_CDF.authenticate(ledger, restored, restored_info)
        paths = GROUPED_CDF.sign(ledger, tmp_path, "restored", confirmed, confirmed_info, b"%PDF-1.4 test", secret)
    verification = verify(paths.manifest, public)
    assert verification.ok, verification.failure
    manifest = verification.manifest
    assert manifest is not None and manifest["released_groups"] == ["WA", "OR", "other"]
    assert manifest["group_sizes"]["released"] == "with noise" and manifest["other_groups"]["policy"] == "other"


def test_a_damaged_release_in_a_project_is_refused_naming_the_field() -> None:
    from dpgui.errors import DataError

    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, info = _release(ledger, GroupList(("WA",)), PrivacySpec(1.0, "change"))
    item = ProjectGroupedRelease.from_release(release, info).to_json()
    item["levels"] = item["levels"] + item["levels"]  # one group's levels too many
    with pytest.raises(DataError, match="'levels' must be"):
        GROUPED_CDF_SECTION.read({"grouped_cdf_releases": [item]}, "'work.dpgui'")


def test_a_grouped_part_shares_a_plans_budget_at_its_margin_and_charge() -> None:
    """In a release plan beside a CDF, the grouped part is planned at its share: its margin is its margin_at,
    its charge the shared plan's ε once, and the shares add up to the plan's ε (the split's own check)."""
    from dpgui.workspace.plan_split import PlanPart, split_plan
    from dpgui.workspace.planning import PlanRequest
    from dpgui.workspace.statistics import STATISTICS
    from dpgui.workspace.statistics.grouped_cdf import GroupedCdfPlanRequest
    from dpgui.vocabulary import StatisticKind

    grouped = GroupedCdfPlanRequest(GroupList(tuple(f"c{i}" for i in range(16))), 64, PrivacySpec(1.0, "change"))
    parts = [PlanPart(STATISTICS[StatisticKind.CDF], PlanRequest(256, PrivacySpec(1.0)), 1.0),
             PlanPart(GROUPED_CDF, grouped, 4.0)]
    found = split_plan(parts, 1.0)
    assert sum(p.budget for p in found.parts) == pytest.approx(1.0)
    planned = found.parts[1]
    assert planned.margin95 == GROUPED_CDF.margin_at(grouped, planned.budget, 0.0)
    assert planned.charge.epsilon == pytest.approx(planned.budget) and planned.charge.delta == 0.0
    assert planned.planned.plan.labels == grouped.groups.released  # every group planned with the one shared plan
    assert found.weighted_margin <= found.equal.weighted_margin


def test_a_level_released_where_the_plan_noises_none_is_refused_as_damage() -> None:
    from dpgui.errors import DataError

    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, info = _release(ledger, GroupList(("WA", "OR")), PrivacySpec(1.0, "change"))
    item = ProjectGroupedRelease.from_release(release, info).to_json()
    tree = release.plan.tree
    silent = [level for level, scale in enumerate(tree.scales) if scale is None]
    noised = [level for level, scale in enumerate(tree.scales) if scale is not None]
    assert noised and GROUPED_CDF_SECTION.read({"grouped_cdf_releases": [item]}, "'w.dpgui'").releases
    damaged = json.loads(json.dumps(item))
    if silent:  # a number where no level was released
        damaged["levels"][0][silent[0]] = [0] * tree.shape.nodes_at_level(silent[0])
    else:  # a released level left out
        damaged["levels"][0][noised[0]] = None
    with pytest.raises(DataError, match="'levels' must be"):
        GROUPED_CDF_SECTION.read({"grouped_cdf_releases": [damaged]}, "'w.dpgui'")
