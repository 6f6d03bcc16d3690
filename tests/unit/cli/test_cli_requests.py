"""The commands' typed requests (:mod:`dpgui.cli.requests`): built once from the parsed options, frozen,
holding the vocabulary's members; and no function of the command line below a command's adapter takes
the argparse namespace."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from dpgui.cli.commands import build_parser
from dpgui.cli.requests import (
    HierarchyOptions, HierarchyReleaseRequest, PlanCommandRequest, ReleaseRequest, SimulateRequest, SourceRequest,
    with_neighbours,
)
from dpgui.errors import ParameterError
from dpgui.vocabulary import (
    AUTO, Allocation, CdfConsistency, Estimator, HierarchyConsistency, Neighbours, Noise, Objective,
)

CLI = Path(__file__).resolve().parents[3] / "dpgui" / "cli"


def parsed(*argv: str, neighbours: str = "change"):
    """The options as ``main`` hands them to a command: parsed, with the neighbour model decided."""
    return with_neighbours(build_parser().parse_args(list(argv)), neighbours)


def test_a_release_request_holds_the_vocabulary_members_and_is_frozen():
    request = ReleaseRequest.of(parsed(
        "release", "data.csv", "--column", "x", "--lower", "0", "--upper", "10", "--bins", "8", "--epsilon", "1",
        "--delta", "1e-9", "--noise", "gaussian", "--estimator", "covering", "--objective", "max",
        "--consistency", "l1", "--dataset", "d", "--out", "o.csv", neighbours="addremove"))
    options = request.options
    assert options.noise is Noise.GAUSSIAN and options.estimator is Estimator.COVERING
    assert options.objective is Objective.MAX and options.neighbours is Neighbours.ADDREMOVE
    assert request.consistency is CdfConsistency.L1 and options.delta_given
    assert request.source.location == "data.csv" and request.outputs.out == "o.csv" and request.outputs.bundle is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.dataset = "other"  # type: ignore[misc]


def test_without_delta_or_noise_the_plan_options_say_so():
    """The JSON shape of ``plan``/``release --json`` depends on whether δ or the noise was given."""
    plain = PlanCommandRequest.of(parsed("plan", "--bins", "16", "--epsilon", "1")).options
    assert plain.noise is None and plain.delta is None and not plain.delta_given
    auto = PlanCommandRequest.of(parsed("plan", "--bins", "16", "--epsilon", "1", "--noise", "auto")).options
    assert auto.noise == AUTO and auto.delta_given


def test_the_data_given_twice_is_refused_when_the_request_is_built():
    args = parsed("release", "a.csv", "--source", "b.csv", "--column", "x", "--lower", "0", "--upper", "1",
                  "--bins", "4", "--epsilon", "1")
    with pytest.raises(ParameterError, match="given twice"):
        SourceRequest.of(args)


def test_a_simulate_request_without_data_has_no_location():
    request = SimulateRequest.of(parsed("simulate", "--bins", "16", "--epsilon", "1", "--synthetic", "normal",
                                        "--n", "100"))
    assert request.synthetic == "normal" and request.source.location is None and request.consistency is CdfConsistency.L2


def test_hierarchy_options_hold_the_vocabulary_members():
    options = HierarchyOptions.of(parsed("hierarchy", "plan", "--levels", "a,b", "--epsilon", "1",
                                         "--allocation", "target:100", "--consistency", "gls", "--noise", "laplace",
                                         "--prior", "p.csv"))
    assert options.allocation is Allocation.TARGET and options.target == 100
    assert options.consistency is HierarchyConsistency.GLS and options.noise is Noise.LAPLACE
    assert options.levels == ("a", "b") and options.prior == "p.csv" and options.delta_or_zero == 0.0
    default = HierarchyOptions.of(parsed("hierarchy", "plan", "--levels", "a,b", "--epsilon", "1"))
    assert default.noise == AUTO and default.consistency == AUTO and default.allocation is Allocation.UNIFORM


#: Functions that may take the parsed namespace besides the commands' adapters (``cmd_*``) and the
#: builders of the requests (a request class's ``of``: the shared ones in :mod:`dpgui.cli.requests`, a
#: statistic's own in its command module): none. :mod:`dpgui.cli.requests` builds the shared requests.
NAMESPACE_READERS: dict[str, set[str]] = {}
NAMESPACE_MODULES = {"requests.py"}


def _namespace_takers(tree: ast.Module) -> list[tuple[int, str]]:
    """The functions of ``tree`` that take the parsed namespace, but a request class's ``of`` builder."""
    builders = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name.endswith("Request")
                for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "of"}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(node) in builders:
            continue
        names = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        annotations = [ast.unparse(a.annotation) for a in (*node.args.args, *node.args.kwonlyargs) if a.annotation]
        if "args" in names or any("Namespace" in text for text in annotations):
            found.append((node.lineno, node.name))
    return found


def test_only_the_adapters_take_the_parsed_options():
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        if path.name in NAMESPACE_MODULES:
            continue
        allowed = NAMESPACE_READERS.get(path.name, set())
        for line, name in _namespace_takers(ast.parse(path.read_text(encoding="utf-8"))):
            if not name.startswith("cmd_") and name not in allowed:
                offenders.append(f"{path.name}:{line} {name}")
    assert offenders == [], offenders
    assert len(list(CLI.glob("*.py"))) > 8  # (the package is where this test looks)


def test_a_function_that_reads_the_namespace_outside_a_request_is_caught():
    """Not vacuous: a helper taking ``args``, and an ``of`` outside a request class, are both found."""
    tree = ast.parse("class Options:\n    @classmethod\n    def of(cls, args): ...\n\n"
                     "class ThingRequest:\n    @classmethod\n    def of(cls, args): ...\n\n"
                     "def helper(args): ...\n")
    assert sorted(name for _, name in _namespace_takers(tree)) == ["helper", "of"]


def test_a_hierarchy_release_request_holds_its_options_and_outputs_and_is_frozen():
    request = HierarchyReleaseRequest.of(parsed("hierarchy", "release", "data.csv", "--levels", "a,b", "--epsilon", "1",
                                                "--categories-public", "--dataset", "d", "--new-dataset",
                                                "--out", "o.csv", "--noise", "laplace", neighbours="addremove"))
    assert request.options.levels == ("a", "b") and request.options.noise is Noise.LAPLACE
    assert request.options.neighbours is Neighbours.ADDREMOVE and request.options.source.location == "data.csv"
    assert request.categories_public and request.new_dataset and request.dataset == "d"
    assert request.outputs.out == "o.csv" and request.outputs.bundle is None and request.options.prior is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.dataset = "other"  # type: ignore[misc]
