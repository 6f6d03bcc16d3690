"""Privacy parameters and release plans: immutable, public, JSON-serialisable (docs/privacy-model.md, "The privacy model").

Neighbour models (sensitivities per tree level, ``L`` = records per person):

* ``change`` — one person's records change value; N is public, the root is published exactly,
  levels 1..h are noised; per level at most 2L node counts move by one: L1 sensitivity 2L.
* ``addremove`` — one person's records are added or removed; N is private, levels 0..h are
  noised (the root may get zero budget, then N is estimated from its children); L1 sensitivity L.

Two noises (docs/privacy-model.md, "(ε, δ): the Gaussian tree"):

* ``laplace`` (pure ε-DP, δ unused): discrete Laplace with scale ``t_l ≥ Δ₁/ε_l`` (a rational, see
  :func:`laplace_scale`), so level ``l`` is ``Δ₁/t_l ≤ ε_l``-DP and the release is
  ``Σ Δ₁/t_l ≤ ε``-DP by basic composition. Level budgets are ε_l, summing to ε.
* ``gaussian`` (needs δ > 0): discrete Gaussian with variance parameter ``σ_l² ≥ Δ₂²/(2ρ_l)``
  (a rational, see :func:`gaussian_sigma2`), so level ``l`` is ``ρ_l``-zCDP (CKS 2020, Thm 14), the
  release is ``ρ = Σ ρ_l``-zCDP by zCDP composition, and (ε, δ)-DP with ``ρ = zcdp_rho(ε, δ)``, the
  largest ρ that the Canonne–Kamath–Steinke conversion (:mod:`dpgui.core.accounting`) turns into
  (ε, δ). Level budgets are ρ_l, summing to that ρ.

L2 sensitivity of one level (the vector of its node counts), one person with L records:

* ``change``: each of the L records leaves one node and enters another, so the change vector has
  negative entries summing to −L and positive ones summing to +L. Its squared norm is largest when
  all L records leave the same node and enter the same node: (−L)² + L² = 2L², so Δ₂² = 2L².
* ``addremove``: L records are added (or removed); the change is non-negative and sums to L, with
  squared norm at most L² (all in one node): Δ₂² = L².

A level with budget 0 is not released at all (allowed for internal levels under GLS).

Missing values (docs/privacy-model.md "Missing values") are handled by the one rule the neighbour model
fixes, never by the data (:attr:`PrivacySpec.missing_rule`; the names: :mod:`dpgui.core.missing`):

* ``change`` — ``"bucket"``: N = all rows (public, exact); missing values are one more leaf of the
  tree after the K value bins (``TreeShape.missing_leaf``), so a value turning into a missing one is
  a change of one record's leaf: the change-one neighbour, sensitivity unchanged.
* ``addremove`` — ``"drop"``: missing rows are left out; a value turning into a missing one is the
  removal of one record, a neighbour, and the number of values is noised like any N.
* ``change`` with :attr:`PrivacySpec.impute` — ``"impute"``: missing values are counted as that public
  value (clamped into the bounds), no leaf of their own; a value turning into a missing one moves one
  record between two bins: the change-one neighbour, sensitivity unchanged. Refused under add/remove
  (:mod:`dpgui.core.missing` says why).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpgui.core.accounting import zcdp_rho
from dpgui.core.missing import (
    MISSING_BUCKET, MISSING_DROP, MISSING_IMPUTE, MissingRule, check_impute_value, missing_rule_for,
)
from dpgui.core.noise import MAX_LAPLACE_SCALE
from dpgui.core.noise_mechanisms import LAPLACE, NoiseMechanism, Sensitivity, mechanism_for, mechanism_named
from dpgui.core.tree import TreeShape
from dpgui.errors import ParameterError
from dpgui.vocabulary import AUTO, CDF_NOISES, Estimator, Neighbours, Noise, Objective

#: :attr:`NoiseChoice.objective` when accuracy came first: each noise at the least ε meeting a target.
ACCURACY_FIRST = "epsilon"

#: How a Gaussian release's ρ becomes (ε, δ), as recorded in plans and manifests.
ZCDP_CONVERSION = "Canonne, Kamath & Steinke 2020, Corollary 13 (ρ-zCDP to (ε, δ)-DP)"
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


#: The largest δ of a release. δ is the chance that a release tells more about one person than ε
#: allows; above 10⁻³ even in a dataset of 1,000 people one person's record could be published outright
#: (docs/privacy-model.md, "What δ means": δ must be far below 1/N). Refused when planned, and by ``verify``.
MAX_DELTA = 1e-3


def check_delta(delta: object, name: str = "delta", largest: float | None = MAX_DELTA) -> float:
    """δ must be a finite number with 0 ≤ δ ≤ ``largest`` (0: pure ε-DP); ``largest=None``: any
    probability below 1 (a budget cap's δ, a total over many releases)."""
    if isinstance(delta, str) and not delta.strip():
        raise ParameterError(f"{name} is empty", "give 0 for pure ε-DP, or a small probability such as 1e-9")
    try:
        value = float(delta)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {delta!r}",
                             "give 0 for pure ε-DP, or a small probability such as 1e-9") from None
    if not math.isfinite(value) or value < 0 or value >= 1:
        raise ParameterError(f"{name} must be a probability with 0 ≤ δ < 1, got {delta!r}",
                             "give 0 for pure ε-DP, or a small probability such as 1e-9 (well below 1/N)")
    if largest is not None and value > largest:
        raise ParameterError(f"{name} = {value:g} is far too large to protect anyone (with that probability the release "
                             "may tell more about a person than ε allows)",
                             f"use {name} ≤ {largest:g}, far below 1/N: typically 1e-6 to 1e-10")
    return value


def check_noise(noise: object, allowed: Sequence[str] = CDF_NOISES) -> str:
    """The noise, if it is one of ``allowed``: its :class:`Noise` member, or :data:`AUTO` when ``allowed``
    holds it (a planner's choice, never a plan's)."""
    if noise not in allowed:
        raise ParameterError(f"unknown noise {noise!r}", "use " + ", ".join(repr(n) for n in allowed))
    return AUTO if noise == AUTO else Noise(noise)


def check_neighbours(neighbours: object) -> Neighbours:
    """The neighbour model named ``neighbours`` (its token or member), else ParameterError."""
    if neighbours not in tuple(Neighbours):
        raise ParameterError(
            f"unknown neighbour model {neighbours!r}", "use 'change' (N public) or 'addremove' (N private)"
        )
    return Neighbours(neighbours)


def _round_up(value: float, digits: int = 3) -> float:
    """``value`` rounded up to ``digits`` significant digits (for limits quoted in messages)."""
    step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return math.ceil(value / step * (1 - 1e-12)) * step * (1 + 1e-12)


@dataclass(frozen=True)
class PrivacySpec:
    """Total budget (ε, δ), neighbour model, records per person (L ≥ 1) and the public value missing
    values are counted as (``impute``; None: the neighbour model's own rule, see :attr:`missing_rule`).

    δ = 0 (the default) is pure ε-DP: only Laplace plans are possible. With δ > 0 a Gaussian plan
    spends ρ = :attr:`rho`, the largest ρ whose CKS conversion is (ε, δ); a Laplace plan spends ε and
    leaves δ unused. ``impute`` is allowed under ``change`` only (module docstring).
    """

    epsilon: float
    neighbours: Neighbours = Neighbours.CHANGE
    records_per_person: int = 1
    delta: float = 0.0
    impute: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "neighbours", check_neighbours(self.neighbours))
        if self.impute is not None:
            object.__setattr__(self, "impute", check_impute_value(self.impute))
            if self.neighbours is not Neighbours.CHANGE:
                raise ParameterError(
                    "missing values cannot be counted as a chosen value under add/remove: there a missing row is "
                    "already left out at no cost (its removal is a neighbour), and imputing would only add made-up "
                    "values", "leave out the imputation under add/remove (missing rows are dropped)")
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
        return (2 if self.neighbours is Neighbours.CHANGE else 1) * self.records_per_person

    @property
    def level_l2_sensitivity_squared(self) -> int:
        """Squared L2 sensitivity Δ₂² of one tree level's node counts: 2L² (change) or L² (add/remove);
        derivation in the module docstring."""
        return (2 if self.neighbours is Neighbours.CHANGE else 1) * self.records_per_person**2

    @property
    def sensitivity(self) -> Sensitivity:
        """Both sensitivities of one tree level's node counts (:attr:`level_sensitivity`,
        :attr:`level_l2_sensitivity_squared`), as a noise mechanism takes them."""
        return Sensitivity(self.level_sensitivity, self.level_l2_sensitivity_squared)

    @property
    def rho(self) -> float | None:
        """The zCDP ρ a Gaussian plan may spend: the largest ρ that is (ε, δ)-DP by the CKS conversion
        (:func:`dpgui.core.accounting.zcdp_rho`); None when δ = 0 (no Gaussian release possible)."""
        return zcdp_rho(self.epsilon, self.delta) if self.delta > 0 else None

    def with_epsilon(self, epsilon: float) -> PrivacySpec:
        """The same spec (δ, neighbours, L, imputation) at another ε."""
        return PrivacySpec(epsilon, self.neighbours, self.records_per_person, self.delta, self.impute)

    def pure(self) -> PrivacySpec:
        """The same ε, neighbours, L and imputation with δ = 0: all a Laplace plan depends on."""
        return PrivacySpec(self.epsilon, self.neighbours, self.records_per_person, impute=self.impute)

    @property
    def root_public(self) -> bool:
        return self.neighbours is Neighbours.CHANGE

    @property
    def missing_rule(self) -> MissingRule:
        """How missing values are released: ``"impute"`` when a value is given, else ``"bucket"`` under
        change (N = all rows is public), ``"drop"`` under add/remove (N is private)."""
        return MISSING_IMPUTE if self.impute is not None else missing_rule_for(self.neighbours)

    @property
    def missing_leaf(self) -> bool:
        """Does the tree hold a leaf for the count of missing values (the ``bucket`` rule)?"""
        return self.missing_rule == MISSING_BUCKET

    def first_noised_level(self) -> int:
        return 1 if self.root_public else 0


@dataclass(frozen=True)
class NoiseChoice:
    """Why a plan has its noise: both noises' best plans at the user's (ε, δ), and the one chosen.

    ``laplace``/``gaussian`` are (projected total squared error Σ_j Var Ĉ_j, projected worst
    variance max_j Var Ĉ_j) in counts² of the best plan with that noise, or None where that noise was
    not planned (Gaussian at δ = 0, or noise beyond the sampler). ``requested`` is what the user asked
    for (auto, laplace or gaussian); ``objective`` the figure that decided: 'total' or 'max' at the
    user's ε, or 'epsilon' for accuracy first, where each noise's plan is at the smallest ε meeting the
    target (``laplace_epsilon``/``gaussian_epsilon``) and the smaller ε decided. ``alternative`` is the
    other noise's best plan itself at the same (ε, δ) when the planner made it (in memory only: not
    saved, not compared), so that whoever shows both plans need not plan it again.
    """

    requested: str
    chosen: Noise
    objective: str
    laplace: tuple[float, float] | None
    gaussian: tuple[float, float] | None
    laplace_epsilon: float | None = None
    gaussian_epsilon: float | None = None
    alternative: Plan | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:  # the words as members where they are the vocabulary's
        object.__setattr__(self, "chosen", Noise(self.chosen))
        if self.requested in tuple(Noise):
            object.__setattr__(self, "requested", Noise(self.requested))
        if self.objective in tuple(Objective):
            object.__setattr__(self, "objective", Objective(self.objective))

    def to_json(self) -> dict[str, Any]:
        def figures(pair: tuple[float, float] | None) -> dict[str, float] | None:
            return None if pair is None else {"total_sq_error": pair[0], "max_variance": pair[1],
                                              "max_std_error": math.sqrt(pair[1])}

        out: dict[str, Any] = {"requested": self.requested, "chosen": self.chosen, "objective": self.objective,
                               Noise.LAPLACE: figures(self.laplace), Noise.GAUSSIAN: figures(self.gaussian)}
        if self.objective == ACCURACY_FIRST:
            out.update(laplace_epsilon=self.laplace_epsilon, gaussian_epsilon=self.gaussian_epsilon)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NoiseChoice:
        def pair(figures: dict[str, float] | None) -> tuple[float, float] | None:
            return None if figures is None else (float(figures["total_sq_error"]), float(figures["max_variance"]))

        def number(value: object) -> float | None:
            return None if value is None else float(value)  # type: ignore[arg-type]

        return cls(str(data["requested"]), Noise(str(data["chosen"])), str(data["objective"]), pair(data.get(Noise.LAPLACE)),
                   pair(data.get(Noise.GAUSSIAN)), number(data.get("laplace_epsilon")), number(data.get("gaussian_epsilon")))


@dataclass(frozen=True)
class Plan:
    """Everything that decides the noise, and nothing that depends on the confidential data.

    ``level_budgets[i]`` is the budget of level ``first_noised_level + i`` (root first under
    add/remove): ε_l for Laplace (summing to ``privacy.epsilon``), ρ_l for Gaussian (summing to
    ``privacy.rho``). ``scales[l]`` is level l's noise parameter: the Laplace scale t_l, or the
    Gaussian variance parameter σ_l² (both exact rationals), None where the level is not noised.
    ``noise_choice`` (not part of equality) says how the noise was chosen, when a planner chose it.
    ``focus`` (not part of equality, for the record only: it changes no noise) is the region the
    planner optimised the shape and budgets for, when it did: prefix lengths ``(first, last)``, the CDF
    points ``C_first … C_last`` (docs/engine.md, "Where do you need accuracy").
    """

    shape: TreeShape
    privacy: PrivacySpec
    level_budgets: tuple[float, ...]
    estimator: Estimator = Estimator.GLS
    noise: Noise = Noise.LAPLACE
    noise_choice: NoiseChoice | None = field(default=None, compare=False)
    focus: tuple[int, int] | None = field(default=None, compare=False)
    scales: tuple[Fraction | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.estimator not in tuple(Estimator):
            raise ParameterError(f"unknown estimator {self.estimator!r}", "use 'gls' or 'covering'")
        object.__setattr__(self, "estimator", Estimator(self.estimator))
        object.__setattr__(self, "noise", Noise(check_noise(self.noise)))
        if self.noise is Noise.GAUSSIAN and self.privacy.delta <= 0:
            raise ParameterError("Gaussian noise needs δ > 0 (with δ = 0 only pure ε-DP Laplace noise is possible)",
                                 "set δ, e.g. 1e-9, or choose Laplace noise")
        if self.shape.missing_leaf and not self.privacy.missing_leaf:
            dropped = self.privacy.impute is None
            raise ParameterError(
                "the tree has a leaf for missing values but " + ("the neighbour model is add/remove (missing rows "
                                                                 "are dropped)" if dropped else
                                                                 "missing values are counted as a chosen value"),
                "make the tree without the missing leaf" + (" for add/remove" if dropped else ""),
            )
        first = self.privacy.first_noised_level()
        expected = self.shape.height + 1 - first
        budgets = tuple(float(e) for e in self.level_budgets)
        unit = self.budget_name
        if len(budgets) != expected:
            which = "levels 1..h" if first == 1 else "the root and levels 1..h"
            raise ParameterError(
                f"{len(budgets)} level budgets given for a tree with {expected} noised levels",
                f"give one budget for each of {which} (here {expected})",
            )
        if any(not math.isfinite(e) or e < 0 for e in budgets):
            raise ParameterError(f"level budgets must be finite and ≥ 0, got {list(budgets)}", "give positive budgets")
        if budgets[-1] <= 0:
            raise ParameterError("the leaf level has no budget", "give the last level a budget > 0")
        total = math.fsum(budgets)
        expected_total = self.budget_total
        if abs(total - expected_total) > BUDGET_RTOL * expected_total:
            raise ParameterError(
                f"level budgets sum to {unit} = {total:.12g}, not {unit} = {expected_total:.12g}",
                f"make the budgets add up to {unit}" + (" (the ρ of ε and δ)" if unit == "ρ" else ""),
            )
        object.__setattr__(self, "level_budgets", budgets)
        if self.focus is not None:
            object.__setattr__(self, "focus", self._checked_focus(self.focus))
        scales: list[Fraction | None] = [None] * (self.shape.height + 1)
        for offset, e in enumerate(budgets):
            level = first + offset
            if e <= 0:
                continue
            scale, problem, least = self._level_scale(e)
            scales[level] = scale
            if problem is not None:
                raise ParameterError(
                    f"level {level}'s budget {unit} = {e:.3g} is too small: {problem}",
                    f"give level {level} a budget of at least {_round_up(least):g}"
                    + (" (or 0 to leave this internal level out)" if level < self.shape.height else "") + ", or raise ε")
        object.__setattr__(self, "scales", tuple(scales))

    def _checked_focus(self, focus: object) -> tuple[int, int]:
        """``focus`` as two whole prefix lengths with 1 ≤ first ≤ last ≤ leaves, else ParameterError."""
        leaves = self.shape.leaves
        values = list(focus) if isinstance(focus, (tuple, list)) else []
        whole = [int(v) for v in values if isinstance(v, (int, np.integer)) and not isinstance(v, bool)]
        if len(values) != 2 or len(whole) != 2 or not 1 <= whole[0] <= whole[1] <= leaves:
            raise ParameterError(f"the plan's focus must be two prefix lengths 1 ≤ first ≤ last ≤ {leaves}, "
                                 f"got {focus!r}", "plan again with a region inside the bounds")
        return whole[0], whole[1]

    def _level_scale(self, budget: float) -> tuple[Fraction, str | None, float]:
        """(noise parameter, why the sampler cannot draw it or None, the least budget it can draw)."""
        sensitivity = self.privacy.sensitivity
        scale = self.mechanism.scale(sensitivity, budget)
        return scale, self.mechanism.scale_problem(scale), self.mechanism.least_budget(sensitivity)

    # ----- derived, public quantities -----
    @property
    def mechanism(self) -> NoiseMechanism:
        """The plan's noise (:mod:`dpgui.core.noise_mechanisms`)."""
        return mechanism_for(self.noise)

    @property
    def budget_name(self) -> str:
        """The unit of :attr:`level_budgets`: "ε" (Laplace) or "ρ" (Gaussian)."""
        return self.mechanism.budget_unit

    @property
    def budget_total(self) -> float:
        """What the level budgets sum to: ε (Laplace) or ρ = zcdp_rho(ε, δ) (Gaussian)."""
        return budget_total(self.privacy, self.noise)

    @property
    def level_epsilons(self) -> tuple[float, ...]:
        """Per-level ε of a Laplace plan. A Gaussian plan's levels have ρ budgets (:attr:`level_rhos`)
        and no ε of their own: asking for them is a programming error."""
        if self.noise is not Noise.LAPLACE:
            raise ValueError("a Gaussian plan's level budgets are ρ, not ε: use level_budgets or level_rhos")
        return self.level_budgets

    @property
    def level_rhos(self) -> tuple[float, ...] | None:
        """Per-level ρ of a Gaussian plan; None for Laplace."""
        return self.level_budgets if self.noise is Noise.GAUSSIAN else None

    @property
    def missing_rule(self) -> MissingRule:
        """The rule this plan releases with: ``"impute"`` if its privacy gives a value, ``"bucket"`` if
        the tree has the missing leaf, else ``"drop"``. A change-model plan without the leaf or a value
        (older project files) is not the current rule (:attr:`PrivacySpec.missing_rule`) and is refused
        for new releases."""
        if self.privacy.impute is not None:
            return MISSING_IMPUTE
        return MISSING_BUCKET if self.shape.missing_leaf else MISSING_DROP

    def released(self) -> list[bool]:
        """Per level 0..h: is the level's node count known (exact root or noised)?"""
        out = [s is not None for s in self.scales]
        if self.privacy.root_public:
            out[0] = True
        return out

    def level_variances(self) -> np.ndarray:
        """Noise variance per level 0..h: 0 for the public root, inf for unreleased, else the exact
        variance of the level's noise: discrete Laplace 2p/(1−p)², p = exp(−1/t_l), or discrete
        Gaussian (:func:`discrete_gaussian_variance`, slightly below σ_l² for σ_l < 2)."""
        out = np.full(self.shape.height + 1, np.inf)
        for level, scale in enumerate(self.scales):
            if scale is not None:
                out[level] = self.mechanism.variance(float(scale))
        if self.privacy.root_public:
            out[0] = 0.0
        return out

    def rho_spent(self) -> Fraction:
        """Exact zCDP ρ of the release. Gaussian: Σ_l Δ₂²/(2σ_l²) over noised levels (≤ Σ_l ρ_l, which may
        exceed the planned ρ by a relative :data:`BUDGET_RTOL`: :meth:`ledger_charge`).
        Laplace: ε²/2 of :meth:`epsilon_spent`, since pure ε-DP implies ε²/2-zCDP (Bun & Steinke 2016,
        Prop. 1.4), which lets the ledger compose Laplace and Gaussian releases under zCDP."""
        return self.mechanism.rho_of(self.mechanism.spent(self.privacy.sensitivity, self.scales))

    def epsilon_spent(self) -> Fraction:
        """ε of the release (≤ Σ_l ε_l, which may exceed the planned ε by a relative :data:`BUDGET_RTOL`:
        :meth:`ledger_charge`). Laplace: exactly Σ_l Δ₁/t_l over noised levels.
        Gaussian: the CKS conversion of :meth:`rho_spent` at δ (rounded towards more ε)."""
        return self.mechanism.epsilon_of(self.mechanism.spent(self.privacy.sensitivity, self.scales), self.privacy.delta)

    @property
    def delta_spent(self) -> float:
        """δ of the release: the plan's δ for Gaussian noise, 0 for Laplace (pure ε-DP; δ unused)."""
        return self.ledger_charge()[1]

    def ledger_charge(self) -> tuple[float, float, float]:
        """(ε, δ, ρ) the budget ledger charges for this plan's release, by the one rule of every plan
        (:func:`dpgui.core.noise_mechanisms.ledger_charge`): the planned figures — Laplace (ε, 0, ε²/2), pure
        ε-DP being ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4), so Laplace releases compose with Gaussian ones
        under zCDP; Gaussian (ε, δ, ρ = zcdp_rho(ε, δ)) — unless the noise spends more. It can: the level
        budgets may sum to the planned total within a relative :data:`BUDGET_RTOL` (a saved plan, or budgets
        given with ``--budgets``; the window's editor splits the total to the float), so
        :meth:`epsilon_spent` may exceed ε by up to 10⁻⁹ of it; then the larger figures of what is spent are
        charged (never less than the noise spends)."""
        charge = self.mechanism.charge(self.privacy.epsilon, self.privacy.delta,
                                       self.mechanism.spent(self.privacy.sensitivity, self.scales))
        assert charge.rho is not None  # a per-count noise is charged a ρ (ledger_charge)
        return charge.epsilon, charge.delta, charge.rho

    def to_json(self) -> dict[str, Any]:
        first = self.privacy.first_noised_level()
        gaussian = self.noise is Noise.GAUSSIAN
        noised_scales = [float(s) if s is not None else None for s in self.scales[first:]]
        out: dict[str, Any] = {
            "bins": self.shape.bins,
            "missing_leaf": self.shape.missing_leaf,
            "padded_bins": self.shape.padded_bins,
            "branching": list(self.shape.branching),
            "levels": list(range(first, self.shape.height + 1)),
            "level_epsilons": None if gaussian else list(self.level_budgets),
            "level_noise_scales": None if gaussian else noised_scales,
            "epsilon": self.privacy.epsilon,
            "epsilon_spent": float(self.epsilon_spent()),
            "neighbours": self.privacy.neighbours,
            "records_per_person": self.privacy.records_per_person,
            "sensitivity_per_level": self.privacy.level_sensitivity,
            "estimator": self.estimator,
            "noise": self.mechanism.manifest_name,
        }
        if gaussian or self.privacy.delta > 0:
            out.update({
                "delta": self.privacy.delta,
                "delta_spent": self.delta_spent,
                "rho": self.privacy.rho if gaussian else None,
                "rho_spent": float(self.rho_spent()) if gaussian else None,
                "level_rhos": list(self.level_budgets) if gaussian else None,
                "level_sigma2": noised_scales if gaussian else None,
                "l2_sensitivity_squared_per_level": self.privacy.level_l2_sensitivity_squared if gaussian else None,
                "conversion": ZCDP_CONVERSION if gaussian else None,
            })
        if self.noise_choice is not None:
            out["noise_choice"] = self.noise_choice.to_json()
        if self.focus is not None:
            out["focus"] = {"first_prefix": self.focus[0], "last_prefix": self.focus[1]}
        if self.privacy.impute is not None:
            out["missing_impute"] = self.privacy.impute
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], privacy_type: type[PrivacySpec] = PrivacySpec) -> Plan:
        """The plan :meth:`to_json` wrote; ``privacy_type``: the class of its privacy (a subclass for a tree
        whose root is never public, :class:`dpgui.core.grouped_cdf.GroupTreePrivacy`)."""
        # Plans saved before the missing leaf existed have no "missing_leaf" key: no leaf; before δ, no "delta".
        shape = TreeShape(int(data["bins"]), tuple(int(b) for b in data["branching"]), bool(data.get("missing_leaf", False)))
        impute = data.get("missing_impute")  # plans saved before imputation existed have none
        privacy = privacy_type(float(data["epsilon"]), data["neighbours"], int(data["records_per_person"]),
                               float(data.get("delta") or 0.0), None if impute is None else float(impute))
        mechanism = mechanism_named(str(data.get("noise", LAPLACE.manifest_name)))
        if mechanism is None:
            raise ParameterError(f"unknown noise {data.get('noise')!r} in a saved plan", "make the plan again")
        noise = mechanism.noise
        budgets = data["level_rhos"] if noise is Noise.GAUSSIAN else data["level_epsilons"]
        choice = data.get("noise_choice")
        focus = data.get("focus")  # plans saved before the focus existed have none
        return cls(shape, privacy, tuple(budgets), data["estimator"], noise,
                   NoiseChoice.from_json(choice) if isinstance(choice, dict) else None,
                   None if focus is None else (focus["first_prefix"], focus["last_prefix"]))


def budget_total(privacy: PrivacySpec, noise: str) -> float:
    """What a plan's level budgets sum to: ε for Laplace, ρ = zcdp_rho(ε, δ) for Gaussian (δ > 0)."""
    mechanism = mechanism_for(check_noise(noise))
    if mechanism.noise.is_zcdp and privacy.delta <= 0:
        raise ParameterError("Gaussian noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
    return mechanism.budget_total(privacy.epsilon, privacy.delta)


def equal_budgets(shape: TreeShape, privacy: PrivacySpec, noise: str = Noise.LAPLACE) -> tuple[float, ...]:
    """The budget (ε, or ρ for Gaussian) split equally over the noised levels (the paper's ε̂·1)."""
    count = shape.height + 1 - privacy.first_noised_level()
    return split_budget(budget_total(privacy, noise), [1.0] * count)


def split_budget(epsilon: float, weights: Sequence[float] | np.ndarray) -> tuple[float, ...]:
    """ε·w_i/Σw, with the last nonzero share adjusted so the floats sum to ε exactly (fsum)."""
    w = np.asarray(weights, dtype=float)
    shares = [epsilon * float(x) / float(w.sum()) for x in w]
    last = max(i for i, x in enumerate(shares) if x > 0)
    shares[last] = epsilon - math.fsum(shares[:last] + shares[last + 1 :])
    return tuple(shares)
