"""The hierarchy engine against hostile input: what a hostile file, an edited
saved plan or a typo could make the engine charge, publish or say falsely."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpgui.core.counting_trees import truncated_laplace_delta
from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, plan_hierarchy
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DataError, ParameterError


def _exact_laplace_spend(plan: HierarchyPlan) -> Fraction:
    """Σ_ℓ Δ/t_ℓ with Δ recomputed from the model here (2L change, L add/remove)."""
    privacy = plan.privacy
    delta1 = (2 if privacy.neighbours == "change" else 1) * privacy.records_per_person
    return sum((Fraction(delta1) / t for t in plan.level_scales() if t is not None), Fraction(0))


def _exact_gaussian_rho(plan: HierarchyPlan) -> Fraction:
    """Σ_ℓ Δ₂²/(2σ_ℓ²) with Δ₂² recomputed from the model (2L² change, L² add/remove)."""
    privacy = plan.privacy
    l2sq = (2 if privacy.neighbours == "change" else 1) * privacy.records_per_person ** 2
    return sum((Fraction(l2sq) / (2 * s) for s in plan.level_scales() if s is not None), Fraction(0))


# ----------------------------------------------------------------------------------------------
# the ledger's charge is never below what the noise spends
# ----------------------------------------------------------------------------------------------


def test_the_charge_covers_the_spend_of_a_plan_whose_budgets_sum_just_above_epsilon():
    """A plan (built directly, or read back from a saved/edited JSON) whose level budgets add up to
    ε(1 + 5·10⁻¹⁰), inside the plan's rounding tolerance, on scales that land exactly on the
    sampler's grid: the noise spends Σ Δ/t_ℓ = 1.0 while ε = 0.9999999995 was stated. The ledger
    must be charged at least what is spent (checked by exact rationals and OpenDP's map)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    privacy = PrivacySpec(1.0 - 5e-10, "change", 1)
    plan = HierarchyPlan((1, 2, 3), privacy, "laplace", (0.0, 0.5, 0.5), (1.0, 1.0, 1.0), "uniform", "none")
    spent = _exact_laplace_spend(plan)
    assert spent == 1  # t = 4 on both levels, Δ = 2
    opendp_spent = math.fsum(
        dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=float(t)).map(2)
        for t in plan.level_scales() if t is not None)
    epsilon, delta, rho = plan.ledger_charge()
    assert Fraction(epsilon) >= spent and epsilon >= opendp_spent
    assert delta == 0.0 and rho is not None and Fraction(rho) >= spent * spent / 2
    assert plan.epsilon_spent() >= float(spent)


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("records", [1, 2])
def test_the_gaussian_charge_covers_the_spend_under_budget_slack(neighbours, records):
    """Gaussian level budgets summing to ρ(1 + 9·10⁻¹⁰): the charged ρ is ≥ Σ Δ₂²/(2σ_ℓ²) (exact
    rationals, and OpenDP's zCDP map of its discrete Gaussian), and the charged ε is ≥ the CKS ε of
    the spent ρ."""
    import opendp.prelude as dp

    from dpgui.core.accounting import zcdp_epsilon

    dp.enable_features("contrib")
    privacy = PrivacySpec(1.0, neighbours, records, delta=1e-6)
    assert privacy.rho is not None
    first = privacy.first_noised_level()
    shares = [0.0] * first + [privacy.rho * (1 + 9e-10) / (4 - first)] * (4 - first)
    plan = HierarchyPlan((1, 2, 3, 5), privacy, "gaussian", tuple(shares), (1.0,) * 4, "uniform", "none")
    rho_spent = _exact_gaussian_rho(plan)
    l2 = math.sqrt((2 if neighbours == "change" else 1) * records ** 2)
    opendp_rho = math.fsum(
        dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float), scale=math.sqrt(float(s)))
        .map(l2) for s in plan.level_scales() if s is not None)
    epsilon, delta, rho = plan.ledger_charge()
    assert rho is not None and Fraction(rho) >= rho_spent and rho >= opendp_rho * (1 - 1e-12)
    assert delta == 1e-6 and epsilon >= zcdp_epsilon(float(rho_spent), 1e-6)


def _independent_multiplicative_spend(plan: HierarchyPlan) -> tuple[float, float]:
    """Ghazi et al.'s (2023) composition recomputed from the plan's own privacy spec (not the parameters' copy of
    it): per record Σ_i c(1/t_ρ + 2/t_ν + 1/t_T) [+ 1/t_M], δ likewise, then group privacy over
    k = 2L (change) or L (add/remove) records."""
    m = plan.multiplicative
    assert m is not None
    eps = Fraction(0)
    delta = 0.0
    for tr, tn, tc, bound in zip(m.threshold_scales, m.query_scales, m.count_scales, m.count_bounds):
        eps += m.cutoff * (1 / tr + 2 / tn + 1 / tc)
        delta += m.cutoff * truncated_laplace_delta(tc, bound)
    if plan.privacy.neighbours == "addremove":
        assert m.root_scale is not None and m.root_bound is not None
        eps += 1 / m.root_scale
        delta += truncated_laplace_delta(m.root_scale, m.root_bound)
    k = (2 if plan.privacy.neighbours == "change" else 1) * plan.privacy.records_per_person
    e = float(eps)
    return k * e, (delta if k == 1 else delta * math.expm1(k * e) / math.expm1(e))


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("records", [1, 3])
def test_the_multiplicative_charge_covers_its_composition(neighbours, records):
    plan = plan_hierarchy((1, 3, 9), PrivacySpec(1.0, neighbours, records, delta=1e-6), noise="multiplicative",
                          alpha=0.5)
    epsilon, delta, _ = plan.ledger_charge()
    spent_eps, spent_delta = _independent_multiplicative_spend(plan)
    assert epsilon >= spent_eps and delta >= spent_delta


@pytest.mark.parametrize("edit", ["records_per_person", "neighbours", "epsilon", "level_sizes", "count_scales"])
def test_an_edited_saved_multiplicative_plan_is_refused(edit):
    """A saved plan whose multiplicative parameters no longer match its privacy spec or tree (an edited
    project file: more records per person, another neighbour model, a larger ε in the spec than the
    parameters were made for, another tree, smaller noise scales) would release noise calibrated to the
    parameters while the ledger is charged by the spec: refused with a fix, never charged wrongly."""
    plan = plan_hierarchy((1, 3, 9), PrivacySpec(1.0, "change", 1, delta=1e-6), noise="multiplicative", alpha=0.5)
    data = plan.to_json()
    if edit == "records_per_person":
        data["records_per_person"] = 3
    elif edit == "neighbours":
        data["neighbours"] = "addremove"
    elif edit == "epsilon":
        data["multiplicative"]["epsilon"] = 4.0
        data["multiplicative"]["epsilon_record"] = 2.0
        data["multiplicative"]["count_scales"] = ["1/1000"] * len(data["multiplicative"]["count_scales"])
    elif edit == "level_sizes":
        data["level_sizes"] = [1, 3, 10]
    else:
        data["multiplicative"]["count_scales"] = ["1/100"] * len(data["multiplicative"]["count_scales"])
    with pytest.raises(ParameterError, match=r"make the plan again"):
        HierarchyPlan.from_json(data)


def test_an_unedited_saved_multiplicative_plan_reads_back():
    plan = plan_hierarchy((1, 3, 9), PrivacySpec(1.0, "addremove", 2, delta=1e-6), noise="multiplicative", alpha=0.5)
    again = HierarchyPlan.from_json(plan.to_json())
    assert again.ledger_charge() == plan.ledger_charge() and again.multiplicative == plan.multiplicative


# ----------------------------------------------------------------------------------------------
# hostile labels: the published node list must say unambiguously which count is which node's
# ----------------------------------------------------------------------------------------------


def test_a_label_holding_the_csv_path_separator_is_refused():
    """Level-2 nodes 'B > C' under 'A' and 'C' under 'A > B' would both be written as the path
    'A > B > C' in the released CSV: two rows that no reader can tell apart."""
    from dpgui.core.hierarchy import PATH_SEPARATOR
    from dpgui.report.hierarchy.bundle import PATH_SEPARATOR as CSV_SEPARATOR

    assert PATH_SEPARATOR == CSV_SEPARATOR
    with pytest.raises(DataError, match=r"contains .>. between spaces.*replace ' > '"):
        Hierarchy.from_paths(["a", "b", "c"], [("A", "B > C", "x"), ("A > B", "C", "y")])
    assert Hierarchy.from_paths(["a", "b"], [("A>B", "x"), ("A -> B", "y")]).level_sizes == (1, 2, 2)


@pytest.mark.parametrize("label", ["line\nbreak", "carriage\rreturn", "tab\there", "nul\x00"])
def test_a_label_with_a_control_character_is_refused(label):
    with pytest.raises(DataError, match="control character"):
        Hierarchy.from_paths(["a", "b"], [("A", label)])


@pytest.mark.parametrize("twin", ["Cafe\u0301", "Café ", " Café"])
def test_two_labels_that_look_the_same_are_refused_naming_the_column_not_the_values(twin):
    """'Café' (NFC) and 'Café' (NFD, e + combining accent) or 'Café ' are different strings but show
    the same in the CSV, the PDF and the window: two nodes the reader cannot tell apart. The values
    may be the data's: the message names the level column and the kind of difference only."""
    with pytest.raises(DataError, match="two values of level column 'a' look the same") as err:
        Hierarchy.from_paths(["a", "b"], [("Café", "x"), (twin, "y")])
    assert "Caf" not in str(err.value) and "normalisation" in str(err.value)


# ----------------------------------------------------------------------------------------------
# the plan's notes (published in the manifest) carry no figure computed on confidential counts
# ----------------------------------------------------------------------------------------------


def _notes_on(counts: np.ndarray, source: str) -> tuple[str, ...]:
    hierarchy = Hierarchy.from_paths(["a", "b"], [(f"A{i // 3}", f"a{i}") for i in range(9)])
    plan = plan_hierarchy(hierarchy.level_sizes, PrivacySpec(1.0, "change", 1, delta=1e-6), noise="auto",
                          consistency="auto", prior_levels=hierarchy.aggregate(counts), prior_source=source,
                          hierarchy=hierarchy, alpha=0.5, trials=8)
    return plan.notes


def test_notes_made_on_opted_in_confidential_counts_publish_only_the_choices():
    """With --counts-from-data the optimiser's choices are made on the confidential counts (opted in and
    recorded); the notes that explain them go into the signed manifest. They may say what was chosen,
    but the projected errors they quoted (4 significant digits of a function of the confidential
    counts, e.g. of how many counts are near zero) are not part of the opt-in. With a public prior the
    figures stay."""
    import re

    figure = re.compile(r"\d+\.\d+(?:e[+-]\d+)?|\d+e[+-]\d+")
    confidential = "confidential data (opted in)"
    for counts in (np.array([0, 0, 1, 0, 2, 0, 1, 0, 0]), np.array([50, 70, 90, 40, 30, 60, 80, 20, 10])):
        notes = _notes_on(counts, confidential)
        assert len(notes) >= 3 and sum("not published" in n for n in notes) == 3, notes
        assert all(set(figure.findall(n)) <= {"0.5"} for n in notes), notes  # α = 0.5 only
        public = _notes_on(counts, "prior file")
        assert sum(len(set(figure.findall(n)) - {"0.5"}) for n in public) >= 4, public


# ----------------------------------------------------------------------------------------------
# the per-level sensitivity, by brute force over one person's records
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("records", [1, 2, 3])
def test_the_level_sensitivity_holds_when_a_persons_records_differ_in_different_levels(records):
    """Enumerate every way one person's L records can sit on the leaves of a small tree (3 regions with
    2, 1 and 3 districts) and every neighbour: change moves each record to any leaf (paths may differ
    on level 1 for one record and only on level 2 for another), add/remove drops all L. The largest
    per-level L1 and squared L2 change of the level's count vector must be PrivacySpec's figures
    (2L, 2L² change; L, L² add/remove), which the plan's noise is calibrated to."""
    import itertools

    hierarchy = Hierarchy.from_paths(["r", "d"], [("R0", "a"), ("R0", "b"), ("R1", "c"), ("R2", "d"), ("R2", "e"),
                                                  ("R2", "f")])
    leaves = range(hierarchy.level_sizes[-1])

    def levels(placement: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        return hierarchy.aggregate(np.bincount(np.asarray(placement, dtype=np.int64), minlength=len(leaves)))

    worst = {"change": [0, 0], "addremove": [0, 0]}  # [L1, L2²] over levels 1..L
    nothing = levels(())
    for before in itertools.combinations_with_replacement(leaves, records):
        a = levels(before)
        for ell in (1, 2):
            d = a[ell] - nothing[ell]
            worst["addremove"] = [max(worst["addremove"][0], int(np.abs(d).sum())),
                                  max(worst["addremove"][1], int((d * d).sum()))]
        for after in itertools.product(leaves, repeat=records):
            b = levels(after)
            for ell in (1, 2):
                d = a[ell] - b[ell]
                worst["change"] = [max(worst["change"][0], int(np.abs(d).sum())),
                                   max(worst["change"][1], int((d * d).sum()))]
    for neighbours, (l1, l2sq) in worst.items():
        spec = PrivacySpec(1.0, neighbours, records)
        assert (spec.level_sensitivity, spec.level_l2_sensitivity_squared) == (l1, l2sq), neighbours


def test_paths_missing_from_the_prior_are_counted_not_named():
    """Paths of the data that the prior lacks are the data's (a school in the data but not in the public
    list reveals its pupils): the message counts them and names none."""
    tree = Hierarchy.from_paths(["s", "c"], [("OR", "OR/Portland")])
    with pytest.raises(DataError, match=r"2 path\(s\) of the data are not in the hierarchy's tree") as err:
        tree.leaf_index([("OR", "WA/Seattle"), ("OR", "OR/Portland"), ("WA", "WA/Tacoma")])
    assert "Seattle" not in str(err.value) and "Tacoma" not in str(err.value)


@pytest.mark.parametrize("field, value", [("consistency", "topdown"), ("consistency", "gls"), ("allocation", "optimal")])
def test_a_multiplicative_plan_claiming_consistency_or_an_allocation_is_refused(field, value):
    """The multiplicative mechanism's counts are released as they are (no consistency step, no level
    budgets): a saved plan edited to say "topdown" would be released inconsistent while its manifest
    and the window say that every parent is the sum of its children."""
    plan = plan_hierarchy((1, 3, 9), PrivacySpec(1.0, "change", 1, delta=1e-6), noise="multiplicative", alpha=0.5)
    data = plan.to_json()
    data[field] = value
    with pytest.raises(ParameterError, match="multiplicative"):
        HierarchyPlan.from_json(data)
