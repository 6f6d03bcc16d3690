"""The plan of a hierarchy release (:class:`HierarchyPlan`): noise, level budgets, weights and consistency;
public and JSON-serialisable."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from dpgui.core.counting_trees import (
    MultiplicativeParams, multiplicative_privacy,
)
from dpgui.core.hierarchy.tree import MAX_LEVELS, MIN_LEVELS, Hierarchy
from dpgui.core.noise_mechanisms import NoiseMechanism, mechanism_for, round_up_float
from dpgui.core.plan import BUDGET_RTOL, PrivacySpec, budget_total, check_neighbours
from dpgui.errors import ParameterError
from dpgui.vocabulary import HIERARCHY_NOISES, Allocation, HierarchyConsistency, Name, Noise, PriorSource

#: The range of a level's weight in the weighted MSE (Ko, Ziani & Fioretto's eq. 5), or 0. Only the
#: weights' ratios move the optimal budgets; beyond a ratio of 10¹² the optimiser's arithmetic overflows.
MIN_LEVEL_WEIGHT, MAX_LEVEL_WEIGHT = 1e-6, 1e6


def _check_choice(value: object, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise ParameterError(f"unknown {what} {value!r}", "use " + ", ".join(repr(a) for a in allowed))
    return str(value)


_Word = TypeVar("_Word", bound=Name)


def _member(kind: type[_Word], value: object, what: str, allowed: Sequence[str] | None = None) -> _Word:
    """``value`` as a member of ``kind`` if it is one of ``allowed`` (default: every member), else ParameterError."""
    return kind(_check_choice(value, tuple(kind) if allowed is None else allowed, what))


def _check_multiplicative_params(params: MultiplicativeParams, sizes: tuple[int, ...], privacy: PrivacySpec) -> None:
    """Ghazi et al.'s (2023) parameters must be the ones made for this tree and privacy spec (an edited saved
    plan could otherwise draw noise for another ε, neighbour model or group size than the ledger is
    charged for), and their composition (:func:`counting_trees.multiplicative_privacy`) must stay
    within the spec's (ε, δ). ParameterError otherwise. O(rounds)."""
    made_for = (params.level_sizes, params.neighbours, params.records_per_person, params.group_size,
                params.epsilon, params.delta)
    this = (sizes, privacy.neighbours, privacy.records_per_person, privacy.level_sensitivity, privacy.epsilon,
            privacy.delta)
    if made_for != this:
        raise ParameterError("the multiplicative mechanism's parameters were made for another tree or privacy spec "
                             "than the plan's", "make the plan again (do not edit a saved plan)")
    try:
        eps, delta = multiplicative_privacy(params)
    except (ArithmeticError, ValueError):
        eps, delta = math.inf, math.inf
    if not (eps <= privacy.epsilon * (1 + BUDGET_RTOL) and delta <= privacy.delta * (1 + BUDGET_RTOL)):
        raise ParameterError(f"the multiplicative mechanism's parameters spend (ε, δ) = ({eps:.4g}, {delta:.3g}), more "
                             f"than the plan's ({privacy.epsilon:g}, {privacy.delta:g})",
                             "make the plan again (do not edit a saved plan)")


#: The largest number of records a plan may assume (beyond any real table; keeps the counts in int64).
MAX_ASSUMED_RECORDS = 10**15


def check_assumed_records(records: object) -> int:
    """``records`` as the number of records a projection assumes: a whole number from 1 to 10¹⁵
    (ParameterError with the fix otherwise)."""
    if isinstance(records, bool) or not isinstance(records, numbers.Integral) or not 1 <= int(records) <= MAX_ASSUMED_RECORDS:
        raise ParameterError(f"the number of records to assume, {records!r}, is not a whole number from 1 to "
                             f"{MAX_ASSUMED_RECORDS:.0e}", "give a public figure such as 12000 (an estimate will do)")
    return int(records)


def assumed_levels(hierarchy: Hierarchy, records: int) -> tuple[np.ndarray, ...]:
    """Counts per level (root first) when ``records`` are spread evenly over the leaves: each leaf gets
    ⌊records / leaves⌋, the first (records mod leaves) leaves in the tree's order one more, and every
    node is the sum of its leaves. Each level's mean count is records / categories. Public: it uses the
    tree's shape and ``records`` only. O(nodes)."""
    total = check_assumed_records(records)
    leaves = hierarchy.level_sizes[-1]
    counts = np.full(leaves, total // leaves, dtype=np.int64)
    counts[: total % leaves] += 1
    return hierarchy.aggregate(counts)


def _check_level_sizes(level_sizes: Sequence[int]) -> tuple[int, ...]:
    sizes = tuple(int(s) for s in level_sizes)
    if not MIN_LEVELS + 1 <= len(sizes) <= MAX_LEVELS + 1 or sizes[0] != 1 or any(s < 1 for s in sizes):
        raise ParameterError(f"level sizes {sizes} are not (1, n_1, …, n_L) with 2 ≤ L ≤ 4 and n_ℓ ≥ 1",
                             "give the node count of each level, root (1) first")
    return sizes


@dataclass(frozen=True)
class HierarchyPlan:
    """Everything that decides a hierarchy release's noise; public and JSON-serialisable.

    ``level_budgets[ℓ]`` for ℓ = 0..L: ε_ℓ (laplace, Σ = privacy.epsilon) or ρ_ℓ (gaussian,
    Σ = privacy.rho); 0 for the root under change (public, exact); () for multiplicative.
    ``weights`` are eq. (5)'s w_ℓ (root first). ``notes`` say how automatic choices were made.
    ``allocation`` "custom": the level budgets were set by hand (not by :func:`plan_hierarchy`).
    ``assumed_records``: without prior counts, the number of records the plan's projected errors assume,
    spread evenly over the categories (:func:`dpgui.core.hierarchy_errors.assumed_levels`): N under
    change (public), a published estimate typed by the officer under add/remove (never the data's
    count); None: not stated.
    """

    level_sizes: tuple[int, ...]
    privacy: PrivacySpec
    noise: Noise
    level_budgets: tuple[float, ...]
    weights: tuple[float, ...]
    allocation: Allocation
    consistency: HierarchyConsistency
    target_mse: float | None = None
    prior_source: PriorSource = PriorSource.NONE
    multiplicative: MultiplicativeParams | None = None  # Ghazi et al.'s parameters, when noise is multiplicative
    notes: tuple[str, ...] = ()
    assumed_records: int | None = None

    def __post_init__(self) -> None:
        sizes = _check_level_sizes(self.level_sizes)
        if self.assumed_records is not None:
            object.__setattr__(self, "assumed_records", check_assumed_records(self.assumed_records))
        object.__setattr__(self, "level_sizes", sizes)
        object.__setattr__(self, "noise", _member(Noise, self.noise, "noise", HIERARCHY_NOISES))
        object.__setattr__(self, "allocation", _member(Allocation, self.allocation, "allocation"))
        object.__setattr__(self, "consistency", _member(HierarchyConsistency, self.consistency, "consistency"))
        object.__setattr__(self, "prior_source", _member(PriorSource, self.prior_source, "prior source"))
        weights = tuple(float(w) for w in self.weights)
        if len(weights) != len(sizes) or not all(_usable_weight(w) for w in weights):
            raise ParameterError(f"weights {list(weights)} are not one weight per level (root first), each 0 or from "
                                 f"{MIN_LEVEL_WEIGHT:g} to {MAX_LEVEL_WEIGHT:g}", f"give {len(sizes)} weights")
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "notes", tuple(str(n) for n in self.notes))
        if self.target_mse is not None:
            object.__setattr__(self, "target_mse", float(self.target_mse))
        if self.noise in (Noise.GAUSSIAN, Noise.MULTIPLICATIVE) and self.privacy.delta <= 0:
            raise ParameterError(f"{self.noise} noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
        if self.noise == Noise.MULTIPLICATIVE:
            if self.multiplicative is None:
                raise ParameterError("a multiplicative plan needs its paper-004 parameters", "plan it with plan_hierarchy")
            if self.consistency != HierarchyConsistency.NONE or self.allocation != Allocation.UNIFORM:
                raise ParameterError(f"a multiplicative plan releases its counts as they are (consistency none, uniform "
                                     f"allocation), not with {self.consistency} consistency and a {self.allocation} "
                                     "allocation", "make the plan again (do not edit a saved plan)")
            _check_multiplicative_params(self.multiplicative, sizes, self.privacy)
            object.__setattr__(self, "level_budgets", ())
            return
        budgets = tuple(float(b) for b in self.level_budgets)
        unit = self.budget_name
        if len(budgets) != len(sizes):
            raise ParameterError(f"{len(budgets)} level budgets for {len(sizes)} levels (root first)",
                                 f"give {len(sizes)} budgets (0 for the public root under change)")
        if any(not math.isfinite(b) or b < 0 for b in budgets):
            raise ParameterError(f"level budgets must be finite and ≥ 0, got {list(budgets)}", "give positive budgets")
        first = self.privacy.first_noised_level()
        if first == 1 and budgets[0] != 0:
            raise ParameterError("under change the root count is public and exact: it takes no budget",
                                 "give the root a budget of 0")
        for ell in range(first, len(sizes)):
            if budgets[ell] <= 0:
                raise ParameterError(f"level {ell} has no budget, but every node of every level is released",
                                     f"give level {ell} a budget > 0")
        total, expected = math.fsum(budgets), budget_total(self.privacy, self.noise)
        if abs(total - expected) > BUDGET_RTOL * expected:
            raise ParameterError(f"level budgets sum to {unit} = {total:.12g}, not {unit} = {expected:.12g}",
                                 f"make the budgets add up to {unit}")
        object.__setattr__(self, "level_budgets", budgets)
        for ell, scale in enumerate(self.level_scales()):
            if scale is None:
                continue
            problem = self.mechanism.scale_problem(scale)
            if problem is not None:
                raise ParameterError(f"level {ell}'s budget {unit} = {budgets[ell]:.3g} is too small: {problem}",
                                     "raise ε or give this level more of it")

    @property
    def n_levels(self) -> int:
        return len(self.level_sizes) - 1

    @property
    def budget_name(self) -> str:
        return "" if self.noise is Noise.MULTIPLICATIVE else self.mechanism.budget_unit

    @property
    def mechanism(self) -> NoiseMechanism:
        """The per-level noise of a Laplace or Gaussian plan (:mod:`dpgui.core.noise_mechanisms`); a
        multiplicative plan has none (ValueError: a programming error to ask)."""
        return mechanism_for(self.noise)

    def level_scales(self) -> tuple[Fraction | None, ...]:
        """Per level 0..L: the discrete-Laplace scale t_ℓ = laplace_scale(Δ, ε_ℓ) or the Gaussian
        σ_ℓ² = gaussian_sigma2(Δ₂², ρ_ℓ) (exact rationals); None where not noised (public root, or
        a multiplicative plan, whose noise is Ghazi et al.'s)."""
        if self.noise == Noise.MULTIPLICATIVE:
            return (None,) * len(self.level_sizes)
        sensitivity = self.privacy.sensitivity
        return tuple(None if b <= 0 else self.mechanism.scale(sensitivity, b) for b in self.level_budgets)

    def level_noise_variances(self) -> tuple[float, ...]:
        """Variance of each level's (unclamped) noise, counts² (0 for the public root and for a
        multiplicative plan, whose noise is not per level)."""
        return tuple(0.0 if s is None else self.mechanism.variance(float(s)) for s in self.level_scales())

    def epsilon_spent(self) -> float:
        """ε the release really spends (≤ what the level budgets sum to, which may exceed the planned ε by a
        relative 10⁻⁹: :meth:`ledger_charge`): laplace Σ_ℓ Δ/t_ℓ exactly (basic composition,
        rounded up to a float); gaussian the CKS conversion of :meth:`rho_spent` at δ; multiplicative
        Ghazi et al.'s composition (:func:`counting_trees.multiplicative_privacy`)."""
        if self.multiplicative is not None:
            return float(multiplicative_privacy(self.multiplicative)[0])
        return float(self.mechanism.epsilon_of(self._spent(), self.privacy.delta))

    def rho_spent(self) -> float:
        """zCDP ρ of a Gaussian release: Σ_ℓ Δ₂²/(2σ_ℓ²) over noised levels (≤ Σ_ℓ ρ_ℓ);
        laplace: ε_spent²/2 (pure ε-DP is ε²/2-zCDP); multiplicative: not a zCDP mechanism (nan)."""
        if self.multiplicative is not None:
            return math.nan
        return float(self.mechanism.rho_of(self._spent()))

    def _spent(self) -> Fraction:
        """What the level noise spends in the budget's unit (ε or ρ), rounded up to a float."""
        return Fraction(round_up_float(self.mechanism.spent(self.privacy.sensitivity, self.level_scales())))

    def ledger_charge(self) -> tuple[float, float, float | None]:
        """(ε, δ, ρ or None) the ledger records. Laplace and Gaussian: the one rule of every plan
        (:func:`dpgui.core.noise_mechanisms.ledger_charge`, as :meth:`dpgui.core.plan.Plan.ledger_charge`): the
        planned (ε, 0, ε²/2) — pure ε-DP is ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4) — or (ε, δ, ρ), unless
        the level noise spends more (level budgets may sum to the planned total within a relative 10⁻⁹: a
        saved or typed plan), then the larger figures of what it spends.

        Multiplicative (Ghazi et al. 2023) is not a per-count noise and has its own rule: (max(ε, ε spent),
        max(δ, δ spent), None) with Ghazi et al.'s (ε, δ) composition
        (:func:`counting_trees.multiplicative_privacy`) as what is spent, and no zCDP figure."""
        eps, delta = self.privacy.epsilon, self.privacy.delta
        if self.multiplicative is not None:
            spent_eps, spent_delta = multiplicative_privacy(self.multiplicative)
            return max(eps, spent_eps), max(delta, spent_delta), None
        charge = self.mechanism.charge(eps, delta, self.mechanism.spent(self.privacy.sensitivity, self.level_scales()))
        return charge.epsilon, charge.delta, charge.rho

    def to_json(self) -> dict[str, Any]:
        scales = [None if s is None else float(s) for s in self.level_scales()]
        eps, delta, rho = self.ledger_charge()
        out: dict[str, Any] = {
            "level_sizes": list(self.level_sizes),
            "epsilon": self.privacy.epsilon,
            "delta": self.privacy.delta,
            "neighbours": self.privacy.neighbours,
            "records_per_person": self.privacy.records_per_person,
            "sensitivity_per_level": self.privacy.level_sensitivity,
            "l2_sensitivity_squared_per_level": self.privacy.level_l2_sensitivity_squared,
            "noise": self.noise,
            "level_budgets": list(self.level_budgets),
            "budget_unit": self.budget_name,
            "budget_total": math.fsum(self.level_budgets),  # ε (laplace) or ρ (gaussian: its ε at δ is "epsilon")
            "level_noise_scales": scales,
            "weights": list(self.weights),
            "allocation": self.allocation,
            "consistency": self.consistency,
            "target_mse": self.target_mse,
            "prior_source": self.prior_source,
            "charge": {"epsilon": eps, "delta": delta, "rho": rho},
            "epsilon_spent": self.epsilon_spent(),
            "notes": list(self.notes),
            "multiplicative": None,
        }
        if self.multiplicative is not None:
            out["multiplicative"] = self.multiplicative.to_json()
        if self.assumed_records is not None:  # (absent, not null, when unstated: older plans read the same)
            out["assumed_records"] = self.assumed_records
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HierarchyPlan:
        try:
            privacy = PrivacySpec(float(data["epsilon"]), check_neighbours(data["neighbours"]), int(data["records_per_person"]),
                                  float(data.get("delta") or 0.0))
            multiplicative = None
            if data.get("multiplicative") is not None:
                multiplicative = MultiplicativeParams.from_json(data["multiplicative"])
            target = data.get("target_mse")
            assumed = data.get("assumed_records")
            return cls(tuple(int(s) for s in data["level_sizes"]), privacy,
                       _member(Noise, data["noise"], "noise", HIERARCHY_NOISES),
                       tuple(float(b) for b in data["level_budgets"]), tuple(float(w) for w in data["weights"]),
                       _member(Allocation, data["allocation"], "allocation"),
                       _member(HierarchyConsistency, data["consistency"], "consistency"),
                       None if target is None else float(target),
                       _member(PriorSource, data.get("prior_source", PriorSource.NONE), "prior source"), multiplicative,
                       tuple(data.get("notes", ())), None if assumed is None else assumed)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ParameterError(f"a saved hierarchy plan is incomplete or malformed ({exc})", "make the plan again") from None


def _usable_weight(weight: float) -> bool:
    return weight == 0 or MIN_LEVEL_WEIGHT <= weight <= MAX_LEVEL_WEIGHT
