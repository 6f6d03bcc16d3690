"""Every registered statistic answers the protocol (dpgui.workspace.statistic.Statistic) with the figures of
an independent computation: counted from a real source, released through the ledger (the charge recorded is
the plan's ε, δ and the ρ of its noise), its digest, CSV and manifest, signed and verified through the
registry; and each plans as its own planner does, stating the 95 % margin its plan gives, also at another
budget. The registry is iterated, so a statistic added to it is checked too."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpgui.core.counts import CountsPlan
from dpgui.core.grouped_cdf import GroupedPlan, GroupList, plan_grouped
from dpgui.core.hierarchy import Hierarchy, plan_hierarchy
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import prefix_variances
from dpgui.data.source import open_source
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DataError
from dpgui.report.bundle import BundlePaths, schema_problems
from dpgui.report.keystore import create_key, load_public_key, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.vocabulary import AUTO, Neighbours, Noise, StatisticKind
from dpgui.workspace.hierarchy import load_hierarchy
from dpgui.workspace.hierarchy_planning import HierarchyChoice, HierarchyPlanRequest, PlannedHierarchy, plan_and_project
from dpgui.workspace.planning import PlanRequest, plan_cdf
from dpgui.workspace.statistic import Statistic
from dpgui.workspace.statistics import STATISTICS, recorded_charge, release_words, statistic, verify
from dpgui.workspace.statistics.cdf import CdfSpend
from dpgui.workspace.statistics.counts import CountsPlanRequest, CountsSpend
from dpgui.workspace.statistics.grouped_cdf import GroupedCdfPlanRequest, GroupedCdfSpend
from dpgui.workspace.statistics.hierarchy import HierarchySpend

PASSPHRASE = "a long test passphrase"
EPSILON = 0.8
#: (state, city, age) of 10 people: the data every sample counts
ROWS = [("OR", "Portland", 31), ("OR", "Portland", 45), ("OR", "Salem", 22), ("WA", "Seattle", 67),
        ("WA", "Seattle", 38), ("WA", "Seattle", 54), ("WA", "Spokane", 19), ("WA", "Tacoma", 80),
        ("WA", "Tacoma", 41), ("OR", "Salem", 29)]


def _cdf_spend() -> CdfSpend:
    return CdfSpend("age", 0.0, 100.0, 8, auto_plan(8, PrivacySpec(EPSILON, "change")), "none")


def _cdf_expected() -> list[int]:
    """The true bin counts of the ages on [0, 100) in 8 bins, counted here by hand."""
    return np.bincount([min(int(age // 12.5), 7) for _, _, age in ROWS], minlength=8).tolist()


def _hierarchy_spend() -> HierarchySpend:
    tree = Hierarchy.from_paths(("state", "city"), sorted({(s, c) for s, c, _ in ROWS}))
    plan = plan_hierarchy(tree.level_sizes, PrivacySpec(EPSILON, "change"), noise="laplace", consistency="topdown")
    return HierarchySpend(tree, plan, node_list_from_prior=False)


def _hierarchy_expected() -> list[int]:
    """The true count of each city, in the tree's leaf order (its sorted (state, city) paths)."""
    paths = sorted({(s, c) for s, c, _ in ROWS})
    return [sum(1 for s, c, _ in ROWS if (s, c) == path) for path in paths]


def _counts_spend() -> CountsSpend:
    return CountsSpend("state", CountsPlan(("WA", "OR"), PrivacySpec(EPSILON, "change")))


def _counts_expected() -> list[int]:
    """The rows in WA, then in OR (the stated order), counted here by hand."""
    return [sum(1 for s, _, _ in ROWS if s == "WA"), sum(1 for s, _, _ in ROWS if s == "OR")]


#: the public groups of the grouped sample: ID is absent from the data (released from zeros), the rest dropped
GROUPS = GroupList(("WA", "OR", "ID"))


def _grouped_spend() -> GroupedCdfSpend:
    return GroupedCdfSpend("age", "state", 0.0, 100.0, plan_grouped(GROUPS, 8, PrivacySpec(EPSILON, "change")))


def _grouped_expected() -> list[list[int]]:
    """The true bin counts of the ages on [0, 100) in 8 bins for each listed state, counted here by hand."""
    return [np.bincount([min(int(age // 12.5), 7) for s, _, age in ROWS if s == state], minlength=8).tolist()
            for state in GROUPS.labels]


#: kind → (the spend of a sample release, the confidential counts it must read, counted independently)
SAMPLES: dict[StatisticKind, tuple[Callable[[], Any], Callable[[], list[Any]]]] = {
    StatisticKind.CDF: (_cdf_spend, _cdf_expected),
    StatisticKind.HIERARCHY: (_hierarchy_spend, _hierarchy_expected),
    StatisticKind.COUNTS: (_counts_spend, _counts_expected),
    StatisticKind.GROUPED_CDF: (_grouped_spend, _grouped_expected),
}


def _noise(plan: Any) -> str:
    """A plan's noise (a grouped plan's is its shared tree plan's)."""
    return plan.tree.noise if isinstance(plan, GroupedPlan) else plan.noise


def _released_levels(release: Any) -> list[Any]:
    """The released noisy levels the ledger's digest covers: a grouped release's are, per level, every group's
    nodes of that level, group after group (None: a level the shared plan does not noise)."""
    if hasattr(release, "releases"):
        return [None if release.releases[0].levels[level] is None
                else np.concatenate([group.levels[level] for group in release.releases])
                for level in range(len(release.releases[0].levels))]
    return release.levels if hasattr(release, "levels") else release.counts


def _csv_rows(kind: StatisticKind, release: Any, expected: list[Any]) -> int:
    """The CSV's data rows: a hierarchy's nodes, a grouped CDF's groups × bins, else one per count."""
    if kind == StatisticKind.HIERARCHY:
        return 1 + sum(len(level) for level in release.hierarchy.labels)
    if kind == StatisticKind.GROUPED_CDF:
        return len(expected) * len(expected[0])
    return len(expected)


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("state,city,age\n" + "".join(f"{s},{c},{a}\n" for s, c, a in ROWS), encoding="utf-8")
    return path


@pytest.fixture
def key(tmp_path: Path) -> Any:
    files = create_key("officer", PASSPHRASE, tmp_path / "keys")
    return load_secret_key(files.secret_path, PASSPHRASE), load_public_key(files.public_path)


def test_every_kind_of_the_vocabulary_is_registered_under_its_own_kind() -> None:
    assert set(STATISTICS) == set(StatisticKind)
    for kind, found in STATISTICS.items():
        assert found.kind is kind and statistic(str(kind)) is found
    with pytest.raises(DataError, match="not a kind of release"):
        statistic("histogram of everything")


@pytest.mark.parametrize("kind", list(STATISTICS))
def test_a_statistic_counts_releases_charges_and_signs_what_an_independent_computation_says(
        kind: StatisticKind, data_file: Path, key: Any, tmp_path: Path) -> None:
    found: Statistic[Any, Any, Any, Any, Any] = STATISTICS[kind]
    make_spend, expected_counts = SAMPLES[kind]
    spend = make_spend()
    plan = found.plan_of(spend)
    charge = found.charge(plan)
    # a Laplace plan: the ledger is charged the ε set, δ = 0 (ρ = ε²/2 when the plan reports one)
    assert _noise(plan) == Noise.LAPLACE
    assert charge.epsilon == pytest.approx(EPSILON) and charge.delta == 0.0
    assert charge.rho is None or charge.rho == pytest.approx(EPSILON ** 2 / 2)
    assert recorded_charge(str(kind), plan.to_json()) == charge  # the plan read back charges the same

    with open_source(SourceSpec("file", str(data_file))) as source:
        counts = found.count(source, spend)
        record = source.public_record()
    leaves = counts.counts if hasattr(counts, "counts") else counts  # a histogram or leaf counts
    assert np.asarray(leaves).tolist() == expected_counts()

    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
        release, info = found.release(ledger, "people", spend, counts, SecureRandom(), source_record=record)
        totals = ledger.totals("people")
        assert (totals.epsilon_spent, totals.delta_spent, totals.releases) == (pytest.approx(EPSILON), 0.0, 1)
        entry = ledger.releases("people")[0]
        assert entry.description["kind"] == kind
        assert release_words(entry.description).startswith(found.ledger_words(entry.description) + " from ")
        output = ledger.release_output(entry.release_id)
        assert output is not None and output.params == json.loads(json.dumps(found.parameters(release, info)))
        # the digest: SHA-256 of the compact JSON of the released levels, made here by json and hashlib
        levels = _released_levels(release)
        canonical = [None if lv is None else np.asarray(lv, dtype=np.int64).tolist() for lv in levels]
        assert found.digest(release) == output.levels_sha256 == hashlib.sha256(
            json.dumps(canonical, separators=(",", ":")).encode("ascii")).hexdigest()

        rows = list(csv.reader(io.StringIO(found.csv_text(release))))
        assert len(rows) - 1 == _csv_rows(kind, release, expected_counts())
        name = found.bundle_name(release, info)  # the default name: dataset first, the release id's 8 last
        assert name.startswith("people-") and name.endswith("-" + info.release_id[:8])
        assert re.fullmatch(r"[A-Za-z0-9._-]+", name), name
        secret, public = key
        manifest = found.manifest(release, info, "sample", b"csv", b"pdf", public.key_id_hex)
        assert manifest["kind"] == kind and schema_problems(manifest, found.manifest_schema) == []

        confirmed, confirmed_info = found.authenticate(ledger, release, info)
        paths: BundlePaths = found.sign(ledger, tmp_path, "sample", confirmed, confirmed_info, b"%PDF-1.4 test",
                                        secret)
    verification = verify(paths.manifest, public)
    assert verification.ok, verification.failure
    assert verification.manifest is not None and verification.manifest["kind"] == kind
    assert paths.csv.read_text(encoding="utf-8") == found.csv_text(confirmed)


def test_an_import_of_the_hierarchy_from_the_cdf_breaks_the_contracts(tmp_path: Path) -> None:
    """Not vacuous: in a copy of dpgui, an import of the hierarchy's report package from the CDF's (and of
    one statistic's implementation from another's) is caught by lint-imports, naming the import."""
    root = Path(__file__).resolve().parents[3]
    shutil.copytree(root / "dpgui", tmp_path / "dpgui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", tmp_path / "pyproject.toml")
    for module, imported in (("report/cdf/csv_export.py", "dpgui.report.hierarchy.bundle"),
                             ("workspace/statistics/hierarchy.py", "dpgui.workspace.statistics.cdf")):
        path = tmp_path / "dpgui" / module
        path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _other() -> None:\n    import {imported}\n",
                        encoding="utf-8")
    command = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(command), "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "dpgui.report.hierarchy never import each other BROKEN" in " ".join(result.stdout.split())
    assert "dpgui.report.cdf.csv_export -> dpgui.report.hierarchy.bundle" in result.stdout
    assert "dpgui.workspace.statistics.hierarchy -> dpgui.workspace.statistics.cdf" in result.stdout


def _margin(std_error: float) -> float:
    """The product's 95 % margin of a standard error, records: 2.2·SE + 1 (0 for an exact value), written out."""
    return 2.2 * std_error + 1.0 if std_error > 0 else 0.0


def _cdf_request(path: Path, epsilon: float, delta: float) -> Any:
    return PlanRequest(8, PrivacySpec(epsilon, "change", delta=delta), noise=AUTO)


def _cdf_planned(request: Any) -> tuple[Any, float]:
    """The CDF planner's plan, and its margin at the worst CDF point from the prefix variances."""
    plan = plan_cdf(request).plan
    return plan, _margin(float(np.sqrt(prefix_variances(plan).max())))


def _hierarchy_request(path: Path, epsilon: float, delta: float) -> Any:
    choice = HierarchyChoice(levels=("state", "city"), epsilon=epsilon, delta=delta, categories_public=True)
    return HierarchyPlanRequest(load_hierarchy(path, choice), choice)


def _hierarchy_margin(planned: PlannedHierarchy) -> float:
    assert planned.errors is not None
    return max(_margin(level.std_error) for level in planned.errors.projection.levels)


def _hierarchy_planned(request: Any) -> tuple[Any, float]:
    """The hierarchy planner's plan, and the margin of its worst level from the levels' standard errors."""
    planned = plan_and_project(request.loaded, request.choice)
    return planned.plan, _hierarchy_margin(planned)


#: kind → (a plan request for the data at (ε, δ), the kind's own planner: its plan and worst 95 % margin)
def _counts_request(data_file: Path, epsilon: float, delta: float) -> CountsPlanRequest:
    return CountsPlanRequest(("WA", "OR"), epsilon, Neighbours.CHANGE)


def _counts_planned(request: CountsPlanRequest) -> tuple[CountsPlan, float]:
    """The plan, and the 95 % margin of a count by direct sums of the discrete Laplace pmf at its scale."""
    plan = CountsPlan(request.categories, PrivacySpec(request.epsilon, request.neighbours))
    q = math.exp(-1.0 / float(plan.scale))
    covered, margin = (1 - q) / (1 + q), 0
    while covered < 0.95:
        margin += 1
        covered += 2 * (1 - q) / (1 + q) * q ** margin
    return plan, float(margin)


def _grouped_request(data_file: Path, epsilon: float, delta: float) -> GroupedCdfPlanRequest:
    return GroupedCdfPlanRequest(GROUPS, 8, PrivacySpec(epsilon, "change", delta=delta))


def _grouped_planned(request: GroupedCdfPlanRequest) -> tuple[GroupedPlan, float]:
    """The shared plan, and the margin of the worst group's worst CDF point: every group has the shared plan's
    prefix variances (its root noised), so the worst over all of them is the shared plan's worst."""
    plan = plan_grouped(request.groups, request.bins, request.privacy)
    variances = np.tile(prefix_variances(plan.tree), len(plan.labels))  # every released group's CDF points
    return plan, _margin(float(np.sqrt(variances.max())))


PLAN_SAMPLES: dict[StatisticKind, tuple[Callable[[Path, float, float], Any], Callable[[Any], tuple[Any, float]]]] = {
    StatisticKind.CDF: (_cdf_request, _cdf_planned),
    StatisticKind.HIERARCHY: (_hierarchy_request, _hierarchy_planned),
    StatisticKind.COUNTS: (_counts_request, _counts_planned),
    StatisticKind.GROUPED_CDF: (_grouped_request, _grouped_planned),
}


@pytest.mark.parametrize("kind", list(STATISTICS))
def test_a_statistic_plans_as_its_planner_and_states_the_margin_at_another_budget(
        kind: StatisticKind, data_file: Path) -> None:
    found: Statistic[Any, Any, Any, Any, Any] = STATISTICS[kind]
    make_request, own_planner = PLAN_SAMPLES[kind]
    request = make_request(data_file, EPSILON, 0.0)
    planned = found.plan(request)
    plan, margin = own_planner(request)
    assert planned.plan == plan and planned.margin95 == pytest.approx(margin, rel=1e-9)
    assert planned.margin95 > 1.0 and planned.alternatives == ()  # δ = 0: Laplace only, nothing offered beside it
    # at another budget: the plan the planner makes at (ε, δ), its margin larger at a smaller ε
    at_half = found.margin_at(request, EPSILON / 2, 0.0)
    assert at_half == pytest.approx(own_planner(make_request(data_file, EPSILON / 2, 0.0))[1], rel=1e-9)
    assert at_half > planned.margin95
    assert found.margin_at(request, EPSILON, 0.0) == pytest.approx(planned.margin95, rel=1e-9)


@pytest.mark.parametrize("kind", [StatisticKind.CDF, StatisticKind.HIERARCHY])  # the kinds with a choice of noise
def test_with_delta_a_statistic_offers_the_other_noise_beside_its_plan(kind: StatisticKind, data_file: Path) -> None:
    found: Statistic[Any, Any, Any, Any, Any] = STATISTICS[kind]
    make_request, own_planner = PLAN_SAMPLES[kind]
    request = make_request(data_file, EPSILON, 1e-6)
    planned = found.plan(request)
    assert planned.plan == own_planner(request)[0]
    noises = {Noise(alternative.plan.noise) for alternative in planned.alternatives}
    assert noises and Noise(planned.plan.noise) not in noises
    for alternative in planned.alternatives:
        assert alternative.what == f"{Noise(alternative.plan.noise).words} noise"
        assert alternative.margin95 > 1.0
    # the margin at (ε, δ) of the same noise asked for: what the planner gives when it plans at that budget
    assert found.margin_at(request, EPSILON, 1e-6) == pytest.approx(planned.margin95, rel=1e-9)
