"""Privacy parameters and release plans: immutable, public, JSON-serialisable (docs/design.md, "The privacy model").

Neighbour models (sensitivities per tree level, ``L`` = records per person):

* ``change`` — one person's records change value; N is public, the root is published exactly,
  levels 1..h are noised; per level at most 2L node counts move by one: L1 sensitivity 2L.
* ``addremove`` — one person's records are added or removed; N is private, levels 0..h are
  noised (the root may get zero budget, then N is estimated from its children); L1 sensitivity L.

Noise is discrete Laplace with scale ``t_l ≥ Δ/ε_l`` (a rational, see :func:`laplace_scale`), so
level ``l`` is ``Δ/t_l ≤ ε_l``-DP and the release is ``Σ Δ/t_l ≤ ε``-DP by basic composition.
A level with ``ε_l = 0`` is not released at all (allowed for internal levels under GLS).

Missing values (docs/design.md "Missing values") are handled by the one rule the neighbour model
fixes, never by the data (:attr:`PrivacySpec.missing_rule`; the names: :mod:`dpgui.core.missing`):

* ``change`` — ``"bucket"``: N = all rows (public, exact); missing values are one more leaf of the
  tree after the K value bins (``TreeShape.missing_leaf``), so a value turning into a missing one is
  a change of one record's leaf: the change-one neighbour, sensitivity unchanged.
* ``addremove`` — ``"drop"``: missing rows are left out; a value turning into a missing one is the
  removal of one record, a neighbour, and the number of values is noised like any N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any
from collections.abc import Sequence

import numpy as np

from dpgui.core.missing import MISSING_BUCKET, MISSING_DROP, missing_rule_for
from dpgui.core.noise import MAX_LAPLACE_SCALE, discrete_laplace_variance, laplace_scale, laplace_scale_problem
from dpgui.core.tree import TreeShape
from dpgui.errors import ParameterError

NEIGHBOURS = ("change", "addremove")
ESTIMATORS = ("gls", "covering")
OBJECTIVES = ("total", "max")
# Budgets are floats; sums may differ from ε by rounding. Anything within this is "equal".
BUDGET_RTOL = 1e-9


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """ε must be a finite number > 0."""
    try:
        value = float(epsilon)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {epsilon!r}", "give e.g. 1 or 0.5") from None
    if not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{name} must be a finite number > 0, got {epsilon!r}", "give e.g. 1 or 0.5")
    if value > 100:
        raise ParameterError(f"{name} = {value} is far too large to protect anyone", "use ε ≤ 100 (typically 0.1–4)")
    return value


def _round_up(value: float, digits: int = 3) -> float:
    """``value`` rounded up to ``digits`` significant digits (for limits quoted in messages)."""
    step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return math.ceil(value / step * (1 - 1e-12)) * step * (1 + 1e-12)


@dataclass(frozen=True)
class PrivacySpec:
    """Total budget ε, neighbour model and records per person (L ≥ 1)."""

    epsilon: float
    neighbours: str = "change"
    records_per_person: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.neighbours not in NEIGHBOURS:
            raise ParameterError(
                f"unknown neighbour model {self.neighbours!r}", "use 'change' (N public) or 'addremove' (N private)"
            )
        rpp = self.records_per_person
        if isinstance(rpp, bool) or not isinstance(rpp, (int, np.integer)) or rpp < 1:
            raise ParameterError(f"records per person must be a whole number ≥ 1, got {rpp!r}",
                                 "use 1 if each person has one record")
        object.__setattr__(self, "records_per_person", int(rpp))
        # The sampler's limit (dpgui.core.noise), checked here so that no budget is ever spent on a
        # release whose noise cannot be drawn: even with all of ε on one level the scale is Δ/ε.
        scale = Fraction(self.level_sensitivity) / Fraction(self.epsilon)
        if scale > MAX_LAPLACE_SCALE:
            limit = float(MAX_LAPLACE_SCALE)
            if self.level_sensitivity / 100.0 > limit:
                most = int(limit * 100 / (self.level_sensitivity // self.records_per_person))
                fix = f"use fewer records per person (at most {most:,})"
            else:
                fix = (f"use ε ≥ {_round_up(self.level_sensitivity / limit):g} (with {self.records_per_person:,} record(s) "
                       "per person), or fewer records per person")
            raise ParameterError(
                f"ε = {self.epsilon:g} with {self.records_per_person:,} record(s) per person needs a noise scale of "
                f"{float(scale):.3g} records, beyond the noise sampler's limit of {limit:.3g}", fix)

    @property
    def level_sensitivity(self) -> int:
        """L1 sensitivity of one tree level's node counts: 2L (change) or L (add/remove)."""
        return (2 if self.neighbours == "change" else 1) * self.records_per_person

    @property
    def root_public(self) -> bool:
        return self.neighbours == "change"

    @property
    def missing_rule(self) -> str:
        """How missing values are released: ``"bucket"`` under change (N = all rows is public),
        ``"drop"`` under add/remove (N is private)."""
        return missing_rule_for(self.neighbours)

    @property
    def missing_leaf(self) -> bool:
        """Does the tree hold a leaf for the count of missing values (the ``bucket`` rule)?"""
        return self.missing_rule == MISSING_BUCKET

    def first_noised_level(self) -> int:
        return 1 if self.root_public else 0


@dataclass(frozen=True)
class Plan:
    """Everything that decides the noise, and nothing that depends on the confidential data.

    ``level_epsilons[i]`` is the budget of level ``first_noised_level + i`` (root first under
    add/remove); they sum to ``privacy.epsilon``.
    """

    shape: TreeShape
    privacy: PrivacySpec
    level_epsilons: tuple[float, ...]
    estimator: str = "gls"
    noise: str = "laplace"
    scales: tuple[Fraction | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ParameterError(f"unknown estimator {self.estimator!r}", "use 'gls' or 'covering'")
        if self.noise != "laplace":
            raise ParameterError(f"unknown noise {self.noise!r}", "only 'laplace' (pure ε) is available")
        if self.shape.missing_leaf and not self.privacy.missing_leaf:
            raise ParameterError(
                "the tree has a leaf for missing values but the neighbour model is add/remove (missing rows are dropped)",
                "make the tree without the missing leaf for add/remove",
            )
        first = self.privacy.first_noised_level()
        expected = self.shape.height + 1 - first
        eps = tuple(float(e) for e in self.level_epsilons)
        if len(eps) != expected:
            which = "levels 1..h" if first == 1 else "the root and levels 1..h"
            raise ParameterError(
                f"{len(eps)} level budgets given for a tree with {expected} noised levels",
                f"give one budget for each of {which} (here {expected})",
            )
        if any(not math.isfinite(e) or e < 0 for e in eps):
            raise ParameterError(f"level budgets must be finite and ≥ 0, got {list(eps)}", "give positive budgets")
        if eps[-1] <= 0:
            raise ParameterError("the leaf level has no budget", "give the last level a budget > 0")
        total = math.fsum(eps)
        if abs(total - self.privacy.epsilon) > BUDGET_RTOL * self.privacy.epsilon:
            raise ParameterError(
                f"level budgets sum to {total:.12g}, not ε = {self.privacy.epsilon:.12g}",
                "make the budgets add up to ε",
            )
        object.__setattr__(self, "level_epsilons", eps)
        delta = self.privacy.level_sensitivity
        scales: list[Fraction | None] = [None] * (self.shape.height + 1)
        for offset, e in enumerate(eps):
            scale = laplace_scale(delta, e) if e > 0 else None
            scales[first + offset] = scale
            problem = laplace_scale_problem(scale) if scale is not None else None
            if problem is not None:
                level = first + offset
                raise ParameterError(
                    f"level {level}'s budget ε = {e:.3g} is too small: {problem}",
                    f"give level {level} a budget of at least {_round_up(delta / float(MAX_LAPLACE_SCALE)):g}"
                    + (" (or 0 to leave this internal level out)" if level < self.shape.height else "") + ", or raise ε")
        object.__setattr__(self, "scales", tuple(scales))

    # ----- derived, public quantities -----
    @property
    def missing_rule(self) -> str:
        """The rule this plan releases with: ``"bucket"`` if the tree has the missing leaf, else
        ``"drop"``. A change-model plan without the leaf (older project files) is not the current
        rule (:attr:`PrivacySpec.missing_rule`) and is refused for new releases."""
        return MISSING_BUCKET if self.shape.missing_leaf else MISSING_DROP

    def released(self) -> list[bool]:
        """Per level 0..h: is the level's node count known (exact root or noised)?"""
        out = [s is not None for s in self.scales]
        if self.privacy.root_public:
            out[0] = True
        return out

    def level_variances(self) -> np.ndarray:
        """Noise variance per level 0..h: 0 for the public root, inf for unreleased, else exact
        discrete Laplace variance 2p/(1−p)², p = exp(−1/t_l)."""
        out = np.full(self.shape.height + 1, np.inf)
        for level, scale in enumerate(self.scales):
            if scale is not None:
                out[level] = discrete_laplace_variance(float(scale))
        if self.privacy.root_public:
            out[0] = 0.0
        return out

    def epsilon_spent(self) -> Fraction:
        """Exact ε of the release: Σ_l Δ/t_l over noised levels (≤ the planned ε)."""
        delta = self.privacy.level_sensitivity
        return sum((Fraction(delta) / s for s in self.scales if s is not None), Fraction(0))

    def to_json(self) -> dict[str, Any]:
        first = self.privacy.first_noised_level()
        return {
            "bins": self.shape.bins,
            "missing_leaf": self.shape.missing_leaf,
            "padded_bins": self.shape.padded_bins,
            "branching": list(self.shape.branching),
            "levels": list(range(first, self.shape.height + 1)),
            "level_epsilons": list(self.level_epsilons),
            "level_noise_scales": [float(s) if s is not None else None for s in self.scales[first:]],
            "epsilon": self.privacy.epsilon,
            "epsilon_spent": float(self.epsilon_spent()),
            "neighbours": self.privacy.neighbours,
            "records_per_person": self.privacy.records_per_person,
            "sensitivity_per_level": self.privacy.level_sensitivity,
            "estimator": self.estimator,
            "noise": "discrete_laplace",
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        # Plans saved before the missing leaf existed have no "missing_leaf" key: no leaf.
        shape = TreeShape(int(data["bins"]), tuple(int(b) for b in data["branching"]), bool(data.get("missing_leaf", False)))
        privacy = PrivacySpec(float(data["epsilon"]), data["neighbours"], int(data["records_per_person"]))
        return cls(shape, privacy, tuple(data["level_epsilons"]), data["estimator"])


def equal_budgets(shape: TreeShape, privacy: PrivacySpec) -> tuple[float, ...]:
    """ε split equally over the noised levels (the paper's ε̂·1)."""
    count = shape.height + 1 - privacy.first_noised_level()
    return split_budget(privacy.epsilon, [1.0] * count)


def split_budget(epsilon: float, weights: Sequence[float] | np.ndarray) -> tuple[float, ...]:
    """ε·w_i/Σw, with the last nonzero share adjusted so the floats sum to ε exactly (fsum)."""
    w = np.asarray(weights, dtype=float)
    shares = [epsilon * float(x) / float(w.sum()) for x in w]
    last = max(i for i, x in enumerate(shares) if x > 0)
    shares[last] = epsilon - math.fsum(shares[:last] + shares[last + 1 :])
    return tuple(shares)
