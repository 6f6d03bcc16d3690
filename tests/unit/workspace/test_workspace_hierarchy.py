"""The hierarchy mode's workspace without Qt (dpgui/workspace/hierarchy.py): choices, reading the tree,
planning with typed budgets, the release request, the ledger checks and the release itself."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.hierarchy import clamped_discrete_laplace_moments
from dpgui.core.noise import SeededRandom
from dpgui.errors import Cancelled, DataError, ParameterError
from dpgui.report.ledger import Ledger, NoCapSet
from dpgui.workspace.hierarchy import (
    CATEGORIES_NOT_DECLARED, HierarchyRequest, HierarchyWorkspace, check_hierarchy_budget, check_level_columns,
    find_paths, hierarchy_request, level_choices, load_hierarchy, node_row, run_hierarchy_release, set_first_cap,
)
from dpgui.workspace.hierarchy_planning import (
    FROM_DATA, NO_COUNTS, HierarchyChoice, plan_and_project, share_budget, with_budgets,
)
from dpgui.workspace.release import BudgetOk, FirstCapNeeded, NotEnoughBudget
from dpgui.vocabulary import Allocation, PriorSource

ROWS = [("North", "N1")] * 30 + [("North", "N2")] * 12 + [("South", "S1")] * 25 + [("South", "S2")] * 3 \
    + [("East", "E1")] * 1


def write_csv(path: Path, rows, header=("region", "district")) -> Path:
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    return path


@pytest.fixture
def data(tmp_path) -> Path:
    return write_csv(tmp_path / "schools.csv", ROWS)


CHOICE = HierarchyChoice(levels=("region", "district"))


def no_progress(fraction: float, message: str) -> None:
    pass


def test_the_workspace_module_imports_no_qt():
    import subprocess

    code = "import sys, dpgui.workspace.hierarchy; print(any(m.startswith('PySide6') for m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("levels, words", [
    (("region",), "at least 2"), (("a", "b", "c", "d", "e"), "at most 4"), (("region", "region"), "twice")])
def test_bad_level_lists_are_refused_with_the_fix(levels, words):
    with pytest.raises(ParameterError) as err:
        check_level_columns(levels)
    assert words in err.value.problem and err.value.fix


@pytest.mark.parametrize("field, value", [("noise", "loud"), ("allocation", "best"), ("allocation", "custom"),
                                         ("consistency", "l9")])
def test_bad_choices_are_refused(field, value):
    with pytest.raises(ParameterError):
        replace(CHOICE, **{field: value})


def test_level_choices_counts_distinct_values(data):
    assert level_choices(data, ("region", "district")) == (("region", 3), ("district", 5))


def test_load_from_the_data_declares_categories_public_and_keeps_counts_private(data):
    loaded = load_hierarchy(data, CHOICE)
    tree = loaded.hierarchy
    assert tree.level_sizes == (1, 3, 5) and loaded.rows == len(ROWS)
    assert loaded.prior_levels is None and loaded.prior_source == NO_COUNTS  # no counts for the planner
    levels = tree.aggregate(loaded.leaf_counts)
    assert int(levels[0][0]) == len(ROWS)
    assert dict(zip(tree.labels[0], levels[1].tolist())) == {"East": 1, "North": 42, "South": 28}
    opted = load_hierarchy(data, replace(CHOICE, counts_from_data=True))
    assert opted.prior_source == FROM_DATA
    for a, b in zip(opted.prior_levels, levels):
        np.testing.assert_array_equal(a, b)


def test_load_with_a_prior_takes_the_prior_tree_and_refuses_unknown_paths(data, tmp_path):
    prior = tmp_path / "prior.csv"
    prior.write_text("region,district,count\nNorth,N1,20\nNorth,N2,10\nNorth,N3,0\nSouth,S1,20\nSouth,S2,5\n"
                     "East,E1,2\n")
    loaded = load_hierarchy(data, replace(CHOICE, prior_path=prior))
    assert loaded.hierarchy.level_sizes == (1, 3, 6) and loaded.prior_source == PriorSource.FILE  # N3: in the prior only
    assert loaded.prior_levels[0][0] == 57 and int(loaded.leaf_counts.sum()) == len(ROWS)
    assert loaded.leaf_counts[loaded.hierarchy.leaf_index([("North", "N3")])[0]] == 0
    short = tmp_path / "short.csv"
    short.write_text("region,district,count\nNorth,N1,20\nSouth,S1,20\n")
    with pytest.raises(DataError) as err:
        load_hierarchy(data, replace(CHOICE, prior_path=short))
    # The data's paths missing from the prior are counted, never quoted (a message may be read by others).
    assert "3 path(s)" in str(err.value) and "N2" not in str(err.value) and "prior" in err.value.fix


def test_a_value_under_two_parents_is_a_data_error_naming_its_levels_not_the_value(tmp_path):
    bad = write_csv(tmp_path / "bad.csv", [("North", "Central"), ("South", "Central"), ("North", "N1")])
    with pytest.raises(DataError) as err:
        load_hierarchy(bad, CHOICE)
    text = str(err.value)
    assert "two parents" in text and err.value.fix
    assert not any(label in text for label in ("Central", "North", "South"))  # data is never quoted


def test_loading_can_be_cancelled(data):
    with pytest.raises(Cancelled):
        load_hierarchy(data, CHOICE, should_cancel=lambda: True)


def test_plan_without_counts_has_no_projection_and_refuses_the_optimiser(data):
    choice = replace(CHOICE, neighbours="addremove")  # N private and no estimate typed: no counts at all
    loaded = load_hierarchy(data, choice)
    planned = plan_and_project(loaded, choice)
    assert planned.projection is None and "depend on the counts" in planned.note
    assert planned.errors is not None and planned.errors.counts is None  # the noise's margins alone
    assert planned.plan.level_budgets == pytest.approx((1 / 3, 1 / 3, 1 / 3)) and planned.alpha is None
    loaded = load_hierarchy(data, CHOICE)
    planned = plan_and_project(loaded, CHOICE)  # under change N is public: projected at N spread evenly
    assert planned.projection is not None and planned.plan.assumed_records == loaded.rows
    assert planned.plan.level_budgets == pytest.approx((0.0, 0.5, 0.5))
    with pytest.raises(ParameterError) as err:
        plan_and_project(loaded, replace(CHOICE, allocation="optimal"))
    assert "needs node counts" in err.value.problem and "prior" in err.value.fix


def test_plan_with_counts_takes_the_consistency_with_the_lower_projected_error(data):
    choice = replace(CHOICE, counts_from_data=True)
    loaded = load_hierarchy(data, choice)
    planned = plan_and_project(loaded, choice, trials=40)
    assert set(planned.projections) == {"topdown", "gls"}
    assert planned.projections[planned.plan.consistency].weighted_mse == min(
        p.weighted_mse for p in planned.projections.values())
    assert planned.plan.prior_source == FROM_DATA
    # consistency "none": the closed form, checked against the engine's moments computed by hand
    none = plan_and_project(loaded, replace(choice, consistency="none"))
    plan = none.plan
    assert none.projection.method == "closed form"
    for level, counts in enumerate(loaded.prior_levels):
        scale = plan.level_scales()[level]
        if scale is None:
            assert none.projection.levels[level].mse == 0
            continue
        assert float(scale) >= plan.privacy.level_sensitivity / plan.level_budgets[level]  # t ≥ Δ/ε_ℓ
        bias, variance = clamped_discrete_laplace_moments(counts, float(scale))
        assert none.projection.levels[level].mse == pytest.approx(float(np.sum(bias ** 2 + variance)), rel=1e-9)


def test_optimal_allocation_with_counts_beats_uniform(data):
    choice = replace(CHOICE, counts_from_data=True, consistency="none")
    loaded = load_hierarchy(data, choice)
    uniform = plan_and_project(loaded, choice)
    optimal = plan_and_project(loaded, replace(choice, allocation="optimal"))
    assert math.fsum(optimal.plan.level_budgets) == pytest.approx(1.0)
    assert optimal.projection.weighted_mse <= uniform.projection.weighted_mse * (1 + 1e-9)


def test_delta_shows_the_gaussian_and_multiplicative_comparison(data):
    choice = replace(CHOICE, counts_from_data=True, delta=1e-9)
    planned = plan_and_project(load_hierarchy(data, choice), choice, trials=20)
    gaussian, multiplicative = planned.alpha
    assert gaussian.mechanism == "gaussian" and multiplicative.mechanism == "multiplicative"
    assert len(gaussian.levels) == len(multiplicative.levels) == 3
    assert {"laplace", "gaussian"} <= set(planned.alternatives)


def test_a_typed_budget_keeps_its_value_and_the_others_share_the_rest(data):
    choice = replace(HierarchyChoice(levels=("region", "district")), neighbours="addremove", epsilon=1.2)
    loaded = load_hierarchy(data, choice)
    plan = plan_and_project(loaded, choice).plan
    assert plan.level_budgets == pytest.approx((0.4, 0.4, 0.4))  # add/remove: the root is noised too
    budgets = share_budget(plan, 2, 0.6)
    assert budgets == pytest.approx((0.3, 0.3, 0.6)) and math.fsum(budgets) == pytest.approx(1.2)
    typed = plan_and_project(loaded, replace(choice, budgets=budgets))
    assert typed.plan.level_budgets == pytest.approx(budgets) and "typed" in " ".join(typed.plan.notes)
    for bad in (0.0, 1.2, 5.0, float("nan")):
        with pytest.raises(ParameterError):
            share_budget(plan, 1, bad)
    change = plan_and_project(loaded, CHOICE).plan
    with pytest.raises(ParameterError):
        share_budget(change, 0, 0.1)  # the root is public under change: no budget
    with pytest.raises(ParameterError):
        with_budgets(plan, (0.1, 0.1, 0.1))  # must add up to ε


def test_the_workspace_drops_what_a_change_makes_stale(data):
    ws = HierarchyWorkspace()
    heard: list[frozenset[str]] = []
    ws.subscribe(heard.append)
    ws.open_file(data)
    ws.update_choice(levels=("region", "district"))
    loaded = load_hierarchy(data, ws.state.choice)
    ws.update(loaded=loaded, planned=plan_and_project(loaded, ws.state.choice))
    ws.update_choice(epsilon=2.0)
    assert ws.state.loaded is loaded and ws.state.planned is None  # a new plan is needed, the tree stays
    ws.update_choice(levels=("district", "region"))
    assert ws.state.loaded is None
    assert all(isinstance(parts, frozenset) and parts for parts in heard)
    assert ws.update(problem="") == frozenset()  # nothing changed, nobody told


def test_the_release_request_says_what_is_missing(data):
    ws = HierarchyWorkspace()
    assert "Open a file" in hierarchy_request(ws.state, "schools")
    ws.open_file(data)
    assert "level columns" in hierarchy_request(ws.state, "schools")
    ws.update_choice(levels=CHOICE.levels)
    loaded = load_hierarchy(data, ws.state.choice)
    ws.update(loaded=loaded)
    assert "plan" in hierarchy_request(ws.state, "schools")
    planned = plan_and_project(loaded, ws.state.choice)
    ws.update(planned=planned)
    assert hierarchy_request(ws.state, "schools") == CATEGORIES_NOT_DECLARED  # no prior: declare the categories
    ws.update_choice(categories_public=True)
    assert ws.state.planned is planned and ws.state.loaded is loaded  # a declaration keeps the tree and the plan
    assert "name" in hierarchy_request(ws.state, "  ")
    request = hierarchy_request(ws.state, "schools")
    assert isinstance(request, HierarchyRequest) and request.dataset == "schools" and request.epsilon == 1.0
    assert request.categories_public
    ws.open_file(data)  # a file opened again (or another one): its categories are not declared yet
    assert not ws.state.choice.categories_public


def _request(data: Path, dataset: str = "schools") -> HierarchyRequest:
    loaded = load_hierarchy(data, CHOICE)
    return HierarchyRequest(loaded, plan_and_project(loaded, CHOICE).plan, dataset, categories_public=True)


def test_the_ledger_is_asked_before_anything_is_spent_and_pays_once(data):
    request = _request(data)
    assert isinstance(check_hierarchy_budget(request), FirstCapNeeded)
    with pytest.raises(NoCapSet):  # no cap: refused before the noise
        run_hierarchy_release(request, lambda: SeededRandom(1), no_progress, lambda: False)
    with Ledger() as ledger:
        assert ledger.releases() == []
    assert isinstance(set_first_cap(request, 1.5, "test"), BudgetOk)
    with pytest.raises(Cancelled):
        run_hierarchy_release(request, lambda: SeededRandom(1), no_progress, lambda: True)
    outcome = run_hierarchy_release(request, lambda: SeededRandom(1), no_progress, lambda: False, release_id="a" * 32)
    assert outcome.release_id == "a" * 32 and not outcome.secure
    with Ledger() as ledger:
        entries = ledger.releases()
    assert [(e.dataset_id, e.epsilon) for e in entries] == [("schools", 1.0)]
    released = outcome.release
    np.testing.assert_array_equal(np.bincount(released.hierarchy.parents[1], weights=released.counts[2]),
                                  released.counts[1])
    assert int(released.counts[0][0]) == len(ROWS) and all((c >= 0).all() for c in released.counts)
    # a second release would exceed the cap of 1.5: refused, nothing more spent
    check = check_hierarchy_budget(request)
    assert isinstance(check, NotEnoughBudget) and "Nothing was spent" in check.message
    row = node_row(released, 1, 0)
    assert row.label == released.hierarchy.labels[0][0] and row.lower <= row.count <= row.upper


def test_find_paths_by_label_and_by_path(data):
    tree = load_hierarchy(data, CHOICE).hierarchy
    found = find_paths(tree, "n")
    assert [(lvl, tree.labels[lvl - 1][i]) for lvl, i in found][:1] == [(1, "North")]
    assert {tree.labels[lvl - 1][i] for lvl, i in find_paths(tree, "s2")} == {"S2"}
    assert find_paths(tree, "south / s1") == [(2, tree.leaf_index([("South", "S1")])[0])]
    assert find_paths(tree, "  ") == [] and find_paths(tree, "zzz") == []


def test_target_error_gives_the_least_budget_that_meets_it(data):
    choice = replace(CHOICE, counts_from_data=True, consistency="none", allocation="target", epsilon=4.0)
    loaded = load_hierarchy(data, choice)
    loose = plan_and_project(loaded, replace(choice, target_mse=200.0))
    tight = plan_and_project(loaded, replace(choice, target_mse=50.0))
    assert loose.plan.privacy.epsilon < tight.plan.privacy.epsilon <= 4.0  # a smaller error costs more ε
    for planned, target in ((loose, 200.0), (tight, 50.0)):
        assert planned.projection.weighted_mse <= target * (1 + 1e-6)
        assert math.fsum(planned.plan.level_budgets) == pytest.approx(planned.plan.privacy.epsilon)
    with pytest.raises(ParameterError) as err:  # more than the ε allowed
        plan_and_project(loaded, replace(choice, target_mse=0.01))
    assert "raise ε" in err.value.fix


def test_a_prior_with_the_datas_path_counts_is_refused(data, tmp_path):
    """As in the CLI: a "public prior" that is the data file itself, a copy, the data plus a blank line, or
    the data's path counts written as a table carries the confidential counts; it is refused with the fix,
    before anything is planned (the path counts are compared, not the bytes)."""
    from collections import Counter

    counted = "region,district,count\n" + "".join(f"{r},{d},{n}\n" for (r, d), n in sorted(Counter(ROWS).items()))
    variants = {"copy.csv": data.read_text(), "blank.csv": data.read_text() + "\n", "counted.csv": counted}
    for same in (data, *variants):
        prior = data if same == data else tmp_path / same
        if prior != data:
            prior.write_text(variants[same])
        with pytest.raises(DataError) as err:
            load_hierarchy(data, replace(CHOICE, prior_path=prior))
        assert "has the data's own counts on every path" in err.value.problem and "public prior" in err.value.fix
    other = tmp_path / "other.csv"
    other.write_text(counted.replace("North,N1,30", "North,N1,31"))
    assert load_hierarchy(data, replace(CHOICE, prior_path=other)).prior_path == other


def test_the_recorded_prior_hash_is_of_the_file_that_was_read(data, tmp_path):
    """The prior's SHA-256 is taken when the prior is read (load), not at release time: a prior edited
    after loading does not get its new bytes' hash recorded for counts planned on the old ones."""
    import hashlib

    prior = tmp_path / "prior.csv"
    used = b"region,district,count\nNorth,N1,20\nNorth,N2,10\nSouth,S1,20\nSouth,S2,5\nEast,E1,2\n"
    prior.write_bytes(used)
    choice = replace(CHOICE, prior_path=prior)
    loaded = load_hierarchy(data, choice)
    assert loaded.prior_sha256 == hashlib.sha256(used).hexdigest()
    prior.write_bytes(used.replace(b"20", b"99"))  # edited after it was read
    request = HierarchyRequest(loaded, plan_and_project(loaded, choice).plan, "schools")
    set_first_cap(request, 1.0, "test")
    outcome = run_hierarchy_release(request, lambda: SeededRandom(1), no_progress, lambda: False)
    assert outcome.info.prior_sha256 == hashlib.sha256(used).hexdigest() and outcome.info.prior_name == "prior.csv"


def test_typed_budgets_make_a_custom_plan_without_the_engines_figures(data):
    """Budgets the officer typed are not the optimiser's: the plan says "custom", drops the target error
    and the noise-choice figures computed for the engine's budgets; the planner refuses "custom"."""
    from dpgui.core.hierarchy import HierarchyPlan, plan_hierarchy

    assert "custom" in tuple(Allocation)
    choice = replace(CHOICE, counts_from_data=True, allocation="optimal", epsilon=2.0, delta=1e-6, noise="auto")
    loaded = load_hierarchy(data, choice)
    engine = plan_and_project(loaded, choice, trials=20).plan
    assert engine.allocation == "optimal" and any(n.startswith("noise: ") for n in engine.notes)
    budgets = share_budget(engine, 2, engine.level_budgets[2] * 0.5)
    typed = plan_and_project(loaded, replace(choice, budgets=budgets), trials=20).plan
    assert typed.allocation == "custom" and typed.target_mse is None
    assert typed.level_budgets == pytest.approx(budgets)
    noise_notes = [n for n in typed.notes if n.startswith("noise: ")]
    assert noise_notes and all("figures" not in n and any(c.isdigit() for c in n) is False for n in noise_notes)
    assert HierarchyPlan.from_json(typed.to_json()) == typed
    target = replace(CHOICE, counts_from_data=True, allocation="target", target_mse=200.0, epsilon=4.0,
                     consistency="none")
    target_plan = plan_and_project(loaded, target).plan
    assert target_plan.target_mse == 200.0
    retyped = with_budgets(target_plan, share_budget(target_plan, 1, target_plan.level_budgets[1] * 0.5))
    assert retyped.allocation == "custom" and retyped.target_mse is None
    with pytest.raises(ParameterError) as err:
        plan_hierarchy(loaded.hierarchy.level_sizes, choice.privacy(), allocation="custom")
    assert "by hand" in err.value.problem and err.value.fix


def test_the_consistency_note_names_the_consistency_the_plan_takes(data, tmp_path):
    choice = replace(CHOICE, counts_from_data=True)
    loaded = load_hierarchy(data, choice)
    planned = plan_and_project(loaded, choice)
    notes = [n for n in planned.plan.notes if n.startswith("consistency: ")]
    assert len(notes) == 1 and notes[0].startswith(f"consistency: {planned.plan.consistency},")
    assert "(simulated on the confidential counts (opted in))" in notes[0]  # published: says which counts
    assert "prior" not in notes[0]  # there is none
    assert "figures on the confidential counts, not published" in notes[0]  # opted-in counts: no figures
    prior = tmp_path / "prior.csv"
    prior.write_text("region,district,count\nNorth,N1,20\nNorth,N2,10\nSouth,S1,20\nSouth,S2,5\nEast,E1,2\n")
    choice = replace(CHOICE, prior_path=prior)
    with_prior = plan_and_project(load_hierarchy(data, choice), choice)
    assert any("(simulated on the prior)" in n for n in with_prior.plan.notes)


def test_a_release_of_undeclared_categories_is_refused_before_anything_is_spent(data):
    """Without a prior file the data's own categories are published: the release needs the officer's
    declaration that they are public; without it nothing is asked of the ledger, nothing spent."""
    request = replace(_request(data), categories_public=False)
    set_first_cap(request, 5.0, "test")
    with pytest.raises(ParameterError) as err:
        run_hierarchy_release(request, lambda: SeededRandom(1), no_progress, lambda: False)
    assert "declared public" in err.value.problem and "prior" in err.value.fix
    with Ledger() as ledger:
        assert ledger.releases() == []
    outcome = run_hierarchy_release(replace(request, categories_public=True), lambda: SeededRandom(1), no_progress,
                                    lambda: False)
    assert outcome.info.node_list_source.startswith("data")


def test_project_settings_and_the_window_choice_hold_the_same_fields():
    """workspace.hierarchy_project copies the fields by name: a field added to one class only would be lost
    in project files (or fail to load)."""
    from dataclasses import fields

    from dpgui.report.hierarchy.project import HierarchySettings
    from dpgui.workspace.hierarchy_planning import HierarchyChoice

    assert {f.name for f in fields(HierarchySettings)} == {f.name for f in fields(HierarchyChoice)}


def _fingerprints() -> dict[str, set[str]]:
    """Every dataset's recorded data fingerprints, read from the ledger's file itself."""
    import sqlite3

    from dpgui.report.ledger import default_ledger_path

    with sqlite3.connect(default_ledger_path()) as conn:
        rows = conn.execute("SELECT dataset_id, fingerprint FROM dataset_fingerprints").fetchall()
    found: dict[str, set[str]] = {}
    for dataset, fingerprint in rows:
        found.setdefault(dataset, set()).add(fingerprint)
    return found


def test_the_window_release_records_the_fingerprint_the_command_line_records(data, tmp_path, capsys):
    """The window's release keeps the data's fingerprint in the ledger, as the command line's release of the
    same data does: the command line then notices the window's dataset under a new name, and the two
    fingerprints are equal. The fingerprint stays in the local ledger: not in the released CSV."""
    from cli_helpers import run_cli

    request = _request(data)
    set_first_cap(request, 5.0, "test")
    run_hierarchy_release(request, lambda: SeededRandom(1), no_progress, lambda: False)
    window = _fingerprints()
    assert set(window) == {"schools"} and len(window["schools"]) == 1
    (fingerprint,) = window["schools"]
    assert len(fingerprint) == 64 and int(fingerprint, 16) >= 0
    assert run_cli(["ledger", "cap", "schools-copy", "5"], capsys)[0] == 0
    release = ["hierarchy", "release", str(data), "--levels", "region,district", "--epsilon", "1", "--dataset",
               "schools-copy", "--categories-public", "--out", str(tmp_path / "out.csv")]
    code, _, err = run_cli(release, capsys)
    assert code == 2 and "same column names and number of rows as dataset 'schools'" in err, err
    code, _, err = run_cli([*release, "--new-dataset"], capsys)
    assert code == 0, err
    assert _fingerprints() == {"schools": {fingerprint}, "schools-copy": {fingerprint}}
    assert fingerprint not in (tmp_path / "out.csv").read_text(encoding="utf-8")
