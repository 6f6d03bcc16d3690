"""The exact samplers and optimisers give the same outputs as the frozen copy in golden/frozen_outputs.json.

The file was written once, by :func:`compute_all` run on the code before its functions were split into named
steps and its modules into rooms (the ℓ1 consistency's bisection, the multiplicative mechanism's parameters,
the noise's samplers and moments, the α-mRMSE projections). Each case holds its inputs and the outputs
of that code: seeded draws, integer optima, parameters (floats compared exactly, through ``repr``),
error messages. Never rewrite the file to make a test pass: a difference is a changed output.

Regenerate (only for new cases, on code known to be unchanged): ``python tests/unit/core/test_core_frozen_outputs.py``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpgui.core.consistency import consistent_l1
from dpgui.core.counting_trees import multiplicative_params, release_multiplicative
from dpgui.core.counting_trees_accuracy import (
    projected_alpha_mrmse, recommend_alpha_mechanism, release_gaussian_baseline, simulate_alpha_mrmse,
)
from dpgui.core.noise import SeededRandom, bernoulli_exp, sample_discrete_gaussian, sample_discrete_laplace
from dpgui.core.noise_moments import (
    discrete_gaussian_pmf, discrete_gaussian_variance, discrete_laplace_pmf, discrete_laplace_variance,
)
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DpguiError
from dpgui.vocabulary import Neighbours, Noise

GOLDEN = Path(__file__).with_name("golden") / "frozen_outputs.json"


def _digest(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()


def _noisy_cdf(rng: np.random.Generator, k: int, n: int, kind: int) -> np.ndarray:
    true = np.cumsum(rng.multinomial(n, rng.dirichlet(np.ones(k)))).astype(np.float64)
    scale = float(rng.uniform(0.3, 30.0))
    noise = rng.laplace(0.0, scale, size=k)
    if kind == 0:
        return true + noise
    if kind == 1:
        return true + np.cumsum(noise)
    if kind == 2:
        return np.round(true + noise)
    if kind == 3:
        return np.round(2.0 * (true + noise)) / 2.0
    return rng.uniform(-0.2 * n - 5.0, 1.2 * n + 5.0, size=k)


# ------------------------------------------------------------------------------------------------
# the cases: inputs (JSON) → outputs (JSON)
# ------------------------------------------------------------------------------------------------


def l1_cases() -> list[dict[str, Any]]:
    """ℓ1 consistency on small inputs (stored whole) over sizes, totals, noise shapes and weights."""
    rng = np.random.default_rng(20261128)
    cases = []
    for i in range(300):
        k = int(rng.integers(1, 41))
        n = int(rng.choice([0, 1, 3, 10, 100, 1000, 10**6]))
        y = _noisy_cdf(rng, k, n, i % 5)
        weights = None
        if i % 3 == 1:
            weights = rng.uniform(0.1, 3.0, size=k).tolist()
        elif i % 3 == 2:
            weights = rng.integers(1, 5, size=k).astype(np.float64).tolist()
        cases.append({"y": y.tolist(), "total": n, "weights": weights})
    return cases


def l1_output(case: dict[str, Any]) -> list[int]:
    weights = None if case["weights"] is None else np.array(case["weights"])
    return consistent_l1(np.array(case["y"]), case["total"], weights).tolist()


def l1_large_cases() -> list[dict[str, Any]]:
    """Larger inputs, stored as a seed; the input's and the output's digests are frozen."""
    return [{"seed": s, "k": k, "n": n, "kind": s % 5, "weighted": s % 2 == 1}
            for s, (k, n) in enumerate([(2000, 10**4), (5000, 10**7), (20000, 50000), (3000, 10**9),
                                        (8000, 8000), (1000, 10**5)])]


def _l1_large_input(case: dict[str, Any]) -> tuple[np.ndarray, np.ndarray | None]:
    rng = np.random.default_rng(case["seed"])
    y = _noisy_cdf(rng, case["k"], case["n"], case["kind"])
    weights = rng.uniform(0.1, 3.0, size=case["k"]) if case["weighted"] else None
    return y, weights


def l1_large_output(case: dict[str, Any]) -> dict[str, str]:
    y, weights = _l1_large_input(case)
    return {"input": _digest(y), "output": _digest(consistent_l1(y, case["n"], weights))}


def sampler_cases() -> list[dict[str, Any]]:
    """Seeded draws of the exact samplers (scales and σ² as fractions)."""
    cases: list[dict[str, Any]] = []
    for seed in range(25):
        for scale in ("1/3", "5/2", "1000", "123456789/65536"):
            cases.append({"sampler": "laplace", "seed": seed, "scale": scale, "size": 40})
        for sigma2 in ("1/4", "7", "1000000", "98765/3"):
            cases.append({"sampler": "gaussian", "seed": seed, "scale": sigma2, "size": 40})
        cases.append({"sampler": "bernoulli", "seed": seed, "scale": f"{seed * 7 + 1}/{seed % 4 + 1}", "size": 60})
    return cases


def sampler_output(case: dict[str, Any]) -> list[int]:
    src = SeededRandom(case["seed"])
    value = Fraction(case["scale"])
    if case["sampler"] == "laplace":
        return sample_discrete_laplace(src, value, case["size"]).tolist()
    if case["sampler"] == "gaussian":
        return sample_discrete_gaussian(src, value, case["size"]).tolist()
    size = case["size"]
    draws = bernoulli_exp(src, np.full(size, value.numerator), np.full(size, value.denominator))
    return [int(b) for b in draws]


def moment_cases() -> list[dict[str, Any]]:
    """The closed-form variances and pmfs at scales across their branches."""
    return [{"scale": s} for s in (1e-4, 0.001, 0.3, 1.0, 2.5, 3.999, 4.0, 15.9, 16.0, 100.0, 2.5e3, 1e4)]


def moment_output(case: dict[str, Any]) -> dict[str, Any]:
    s = case["scale"]
    x = np.array([-3.0, -1.0, 0.0, 2.0, 10.0])
    large = [s * 1e8, s * 1e16]
    return {"laplace_variance": [discrete_laplace_variance(v) for v in [s, *large]],
            "gaussian_variance": discrete_gaussian_variance([s, *large]).tolist(),
            "laplace_pmf": discrete_laplace_pmf(x, s).tolist(),
            "gaussian_pmf": discrete_gaussian_pmf(x, s).tolist()}


def _privacy(case: dict[str, Any]) -> PrivacySpec:
    return PrivacySpec(case["epsilon"], Neighbours(case["neighbours"]), case["records"], case["delta"])


def params_cases() -> list[dict[str, Any]]:
    """The multiplicative mechanism's parameters over shapes, budgets, neighbour models, α and η."""
    cases = []
    shapes = ([1, 10], [1, 10, 100, 1000, 100000], [1, 3, 9, 27], [1, 2, 2, 2, 2, 2, 2, 2])
    for i, shape in enumerate(shapes):
        for epsilon in (0.5, 1.0, 8.0):
            for delta in (1e-9, 1e-6, 1e-3):
                for neighbours in ("change", "addremove"):
                    records = 1 if (i + len(cases)) % 3 else 4
                    alpha = (0.5, 0.1, 0.9, 0.3)[(i + len(cases)) % 4]
                    eta = (0.05, 0.2, 0.01)[len(cases) % 3]
                    cases.append({"sizes": shape, "epsilon": epsilon, "delta": delta, "neighbours": neighbours,
                                  "records": records, "alpha": alpha, "eta": eta})
    cases.append({"sizes": [1, 10], "epsilon": 1.0, "delta": 0.0, "neighbours": "change", "records": 1,
                  "alpha": 0.5, "eta": 0.05})
    cases.append({"sizes": [1, 10], "epsilon": 0.01, "delta": 1e-9, "neighbours": "change", "records": 1,
                  "alpha": 1e-7, "eta": 0.05})
    return cases


def _or_error(make: Callable[[], Any]) -> Any:
    try:
        return make()
    except DpguiError as exc:
        return {"error": str(exc)}


def _summary(params: dict[str, Any]) -> dict[str, Any]:
    """The scalars whole; each per-round list by its first three values and one digest of all of them."""
    lists = {key: value for key, value in params.items() if isinstance(value, list)}
    summary = {key: value for key, value in params.items() if key not in lists}
    summary["first rounds"] = {key: value[:3] for key, value in lists.items()}
    summary["lists sha256"] = hashlib.sha256(json.dumps(lists, sort_keys=True).encode()).hexdigest()
    return summary


def params_output(case: dict[str, Any]) -> Any:
    return _or_error(lambda: _summary(multiplicative_params(case["sizes"], _privacy(case), case["alpha"],
                                                           case["eta"]).to_json()))


def _tree(seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A random 4-level tree (parents per level) and its counts, leaves drawn from a heavy tail."""
    rng = np.random.default_rng(seed)
    sizes = [1, 3, 12, 60]
    parents = [np.sort(rng.integers(0, sizes[j - 1], size=sizes[j])) for j in range(1, len(sizes))]
    for j, p in enumerate(parents, start=1):
        p[: sizes[j - 1]] = np.arange(sizes[j - 1])
        parents[j - 1] = np.sort(p)
    leaves = rng.pareto(1.2, size=sizes[-1]).astype(np.int64) * int(rng.choice([1, 100, 10**4]))
    levels = [leaves]
    for p, n in zip(reversed(parents), reversed(sizes[:-1])):
        levels.insert(0, np.bincount(p, weights=levels[0], minlength=n).astype(np.int64))
    return parents, levels


def release_cases() -> list[dict[str, Any]]:
    """Seeded releases of the multiplicative mechanism and of the Gaussian baseline on random trees."""
    return [{"seed": s, "epsilon": (1.0, 4.0, 0.5)[s % 3], "delta": 1e-6, "records": 1 + s % 2,
             "neighbours": ("change", "addremove")[s % 2], "alpha": (0.5, 0.2)[s % 2], "eta": 0.05}
            for s in range(12)]


def release_output(case: dict[str, Any]) -> dict[str, Any]:
    parents, levels = _tree(case["seed"])
    privacy = _privacy(case)
    params = multiplicative_params([v.size for v in levels], privacy, case["alpha"], case["eta"])
    multiplicative = release_multiplicative(parents, levels, params, SeededRandom(case["seed"]))
    gaussian = release_gaussian_baseline(levels, privacy, SeededRandom(case["seed"]))
    return {"multiplicative": [v.tolist() for v in multiplicative], "gaussian": [v.tolist() for v in gaussian]}


def projection_output(case: dict[str, Any]) -> dict[str, Any]:
    parents, levels = _tree(case["seed"])
    privacy = _privacy(case)
    sizes = [v.size for v in levels]
    out: dict[str, Any] = {}
    for name, prior in (("no prior", None), ("prior", levels)):
        choice, g, m = recommend_alpha_mechanism(sizes, privacy, case["alpha"], prior, eta=case["eta"])
        out[name] = {"choice": str(choice), "gaussian": [f.alpha_rmse for f in g.levels], "gaussian_method": g.method,
                     "multiplicative": [f.alpha_rmse for f in m.levels], "multiplicative_note": m.note}
    for mechanism in (Noise.GAUSSIAN, Noise.MULTIPLICATIVE):
        sim = simulate_alpha_mrmse(parents, levels, privacy, case["alpha"], mechanism, eta=case["eta"], trials=3,
                                   seed=case["seed"])
        out[f"simulated {mechanism}"] = [f.alpha_rmse for f in sim.levels]
    out["projected"] = projected_alpha_mrmse(sizes, privacy, case["alpha"], Noise.MULTIPLICATIVE).alpha_mrmse
    return out


KINDS: dict[str, tuple[Callable[[], list[dict[str, Any]]], Callable[[dict[str, Any]], Any]]] = {
    "l1": (l1_cases, l1_output),
    "l1 large": (l1_large_cases, l1_large_output),
    "samplers": (sampler_cases, sampler_output),
    "moments": (moment_cases, moment_output),
    "multiplicative params": (params_cases, params_output),
    "releases": (release_cases, release_output),
    "projections": (release_cases, projection_output),
}


def compute_all() -> dict[str, list[dict[str, Any]]]:
    return {kind: [{"input": c, "output": output(c)} for c in cases()] for kind, (cases, output) in KINDS.items()}


def _frozen() -> dict[str, list[dict[str, Any]]]:
    data: dict[str, list[dict[str, Any]]] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


def _same(a: Any, b: Any) -> bool:
    """Exact equality through JSON (floats by repr, NaN equal to NaN)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_outputs_are_the_frozen_ones(kind: str) -> None:
    frozen = _frozen()[kind]
    _, output = KINDS[kind]
    assert len(frozen) >= 6
    changed = [i for i, case in enumerate(frozen) if not _same(output(case["input"]), case["output"])]
    assert not changed, f"{kind}: {len(changed)} of {len(frozen)} cases changed, first {frozen[changed[0]]['input']}"


def test_large_l1_inputs_are_the_frozen_ones() -> None:
    """Guards the large ℓ1 cases' meaning: their inputs come from numpy's generator, not from the file."""
    for case in _frozen()["l1 large"]:
        y, _ = _l1_large_input(case["input"])
        assert _digest(y) == case["output"]["input"]


def test_the_frozen_file_covers_errors_and_both_l1_branches() -> None:
    frozen = _frozen()
    assert any("error" in c["output"] for c in frozen["multiplicative params"])
    assert any("tau_min" in c["output"] for c in frozen["multiplicative params"])
    small = frozen["l1"]
    assert any(c["input"]["total"] <= 4 * len(c["input"]["y"]) for c in small)
    assert any(c["input"]["total"] > 4 * len(c["input"]["y"]) for c in small)


if __name__ == "__main__":
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(compute_all(), sort_keys=True) + "\n", encoding="utf-8")
