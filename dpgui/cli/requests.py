"""The typed requests of the commands: one frozen dataclass per command, and the parts they share (the
data source, the outputs, a CDF plan's options, a hierarchy's options), each built in one place from the
parsed options by its ``of(args)``, which holds the domain words as :mod:`dpgui.vocabulary` members. A
statistic's own release request lives in its command module (:mod:`dpgui.cli.counts`,
:mod:`dpgui.cli.grouped_cdf`), built the same way from these parts.

A command is an adapter: ``cmd_x(args)`` builds its request here and hands it to the function that runs
it (the workspace flow or the planner, then the rendering); no function below it reads the argparse
namespace. ``of`` makes the checks of the options alone that come first in their command (the data
given twice, ``--missing``); the checks that come after the data's location has been checked on disk stay
in the command, in their order, so that the first error a user sees is unchanged. Nothing is read or
computed here (public values only: paths, names and numbers the user typed).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpgui.core.missing import IMPUTE_PREFIX, MISSING_AUTO, MISSING_RULE_TEXT, missing_rule_for
from dpgui.errors import ParameterError
from dpgui.vocabulary import (
    AUTO, Allocation, CdfConsistency, Estimator, HierarchyConsistency, Neighbours, Noise, Objective,
)

if TYPE_CHECKING:
    from dpgui.core.plan import PrivacySpec
    from dpgui.core.privacy_unit import PrivacyUnit


def command_name(args: argparse.Namespace) -> str:
    """The command as the user typed it, for messages: ``release``, ``hierarchy release``, ``counts release``
    (a group's subcommand is the namespace's ``<word>_command``, as every group's parser names it)."""
    group = f"{args.command}_command" if args.command else ""
    return " ".join(filter(None, (args.command, getattr(args, group, None) if group else None)))


def _noise_or_auto(token: str | None) -> str | None:
    """``--noise`` as a :class:`~dpgui.vocabulary.Noise` member, ``auto`` as given, None when not given."""
    return None if token is None else AUTO if token == AUTO else Noise(token)


@dataclass(frozen=True)
class SourceRequest:
    """Where a command's data lives (docs/cli.md "Data sources"): the ``location`` (INPUT or
    ``--source``/``--input``; None: not given), ``--table``/``--query``, ``--engine`` (the word typed: an
    unknown engine is refused by :func:`dpgui.data.source.parse_source` in its own words), ``--spark-master``,
    the CSV dialect as stated, the encoding and ``--n-public``; ``command`` names the command in notes."""

    location: str | None
    table: str | None
    query: str | None
    engine: str
    spark_master: str | None
    delimiter: str | None
    decimal: str | None
    encoding: str | None
    n_public: bool
    command: str

    @classmethod
    def of(cls, args: argparse.Namespace) -> SourceRequest:
        """The source options of a command that reads data; the data given twice (INPUT and ``--source``)
        is refused."""
        positional, option = getattr(args, "input", None), getattr(args, "source", None)
        if positional is not None and option is not None:
            raise ParameterError(f"the data was given twice (INPUT {positional!r} and --source {option!r})",
                                 "give it once: INPUT or --source URL|FILE")
        return cls(positional if positional is not None else option, args.table, args.query, args.engine,
                   args.spark_master, args.delimiter, args.decimal, args.encoding, getattr(args, "n_public", False),
                   command_name(args))


@dataclass(frozen=True)
class NeighboursRequest:
    """``--neighbours`` of a command that has one: the model ``asked`` for (None: the data source's default)
    and the ``source`` it depends on (None: the command reads no data source here: ``plan``, ``--synthetic``)."""

    asked: str | None
    source: SourceRequest | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> NeighboursRequest | None:
        """None for a command without ``--neighbours``."""
        if not hasattr(args, "neighbours"):
            return None
        reads_a_source = getattr(args, "synthetic", None) is None and "engine" in args
        return cls(asked_neighbours(args), SourceRequest.of(args) if reads_a_source else None)


def asked_neighbours(args: argparse.Namespace) -> str | None:
    """``--neighbours`` as typed; not given with ``--person-column``: ``addremove`` (the privacy unit's model: one
    person with at most L records added or removed); else None (the data source's default)."""
    if args.neighbours is None and getattr(args, "person_column", None) is not None:
        return str(Neighbours.ADDREMOVE)
    return args.neighbours  # type: ignore[no-any-return]


def privacy_unit_of(person_column: str | None, records_per_person: int, privacy: PrivacySpec | None = None
                    ) -> PrivacyUnit | None:
    """``--person-column``'s privacy unit with L = ``--records-per-person`` (None without it: L declared), checked
    against the plan's ``privacy`` when given (:meth:`PrivacyUnit.check_privacy`: addremove, the same L) — from
    the options alone, before anything is read or spent."""
    if person_column is None:
        return None
    from dpgui.core.privacy_unit import PrivacyUnit

    unit = PrivacyUnit(person_column, records_per_person)
    if privacy is not None:
        unit.check_privacy(privacy)
    return unit


def with_neighbours(args: argparse.Namespace, neighbours: str | None) -> argparse.Namespace:
    """The command's options with the neighbour model decided (:func:`dpgui.cli.sources._choose_neighbours`;
    None: the command has none): a new namespace, the parsed one is left as the user typed it."""
    if neighbours is None:
        return args
    return argparse.Namespace(**{**vars(args), "neighbours": neighbours})


@dataclass(frozen=True)
class OutputRequest:
    """Where a release is written (paths the user typed; public): ``--out`` (an existing file replaced only
    with ``--force``), and the signed ``--bundle`` folder with its ``--key``, ``--passphrase-file`` and
    ``--name``."""

    out: str | None
    force: bool
    bundle: str | None
    key: str | None
    passphrase_file: str | None
    name: str | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> OutputRequest:
        """The outputs of ``release`` or ``hierarchy release``'s options."""
        return cls(args.out, args.force, args.bundle, args.key, args.passphrase_file, args.name)


def _check_missing_option(missing: str, neighbours: str) -> None:
    """``--missing``: "auto" (the default), the neighbour model's own rule, or ``impute:VALUE`` (its value
    is checked by the plan's privacy: a number, change only); anything else is refused before anything
    is read or spent, saying what happens instead."""
    if neighbours not in tuple(Neighbours):
        return  # reported by the plan, with its own message
    rule = missing_rule_for(neighbours)
    instead = f"leave out --missing: under {neighbours} missing values are {MISSING_RULE_TEXT[rule]}"
    if neighbours == Neighbours.CHANGE:
        instead += ", or give impute:VALUE to count them as a value you choose"
    if str(missing).strip().lower().startswith(IMPUTE_PREFIX):
        return
    if missing not in (MISSING_AUTO, rule):
        raise ParameterError(f"--missing {missing} is not a rule of the {neighbours} model", instead)


@dataclass(frozen=True)
class CdfPlanOptions:
    """The options of a CDF plan (``plan``, ``release``, ``simulate``): K ``bins``; ε, δ (None: not given,
    0), the neighbour model (decided in :func:`dpgui.cli.sources._choose_neighbours`), records per person;
    ``noise`` (a :class:`~dpgui.vocabulary.Noise`, ``auto``, or None: not given); the tree (``branching``
    as typed), the level ``budgets`` (a planner word or numbers), estimator, objective, ``--missing`` as
    typed, ``--focus`` as typed (None: everywhere) and ``--person-column`` (None: L declared)."""

    bins: int
    epsilon: float
    delta: float | None
    neighbours: Neighbours
    records_per_person: int
    noise: str | None
    branching: str
    budgets: str | tuple[float, ...]
    estimator: Estimator
    objective: Objective
    missing: str
    focus: str | None
    person_column: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> CdfPlanOptions:
        return cls(args.bins, args.epsilon, args.delta, Neighbours(args.neighbours), args.records_per_person,
                   _noise_or_auto(args.noise), args.branching, args.budgets, Estimator(args.estimator),
                   Objective(args.objective), args.missing, args.focus, getattr(args, "person_column", None))

    @property
    def delta_given(self) -> bool:
        """Did the user give ``--delta`` or ``--noise``? Without either, every output is what it was
        before δ existed (pure ε-DP, Laplace; no δ keys, no noise choice in the JSON)."""
        return self.delta is not None or self.noise is not None


@dataclass(frozen=True)
class PlanCommandRequest:
    """``dpgui plan``: the plan's options, the bounds ``--focus`` is in (None: not given), a public N
    (``--n``: the user's own figure, to express the errors) and ``--json``."""

    options: CdfPlanOptions
    lower: float | None
    upper: float | None
    n: int | None
    json: bool

    @classmethod
    def of(cls, args: argparse.Namespace) -> PlanCommandRequest:
        return cls(CdfPlanOptions.of(args), args.lower, args.upper, args.n, args.json)


@dataclass(frozen=True)
class ReleaseRequest:
    """``dpgui release``: the data and its ``column`` with the public bounds, ``--whole-numbers`` (the
    officer's statement), the plan's options, the consistency, the ledger's ``dataset`` (None: not given,
    refused before anything is read) and ``--new-dataset``, the outputs, the quantiles' probabilities and
    ``--json``. ``--missing`` is checked here, before the source."""

    source: SourceRequest
    column: str
    lower: float
    upper: float
    whole_numbers: bool
    options: CdfPlanOptions
    consistency: CdfConsistency
    dataset: str | None
    new_dataset: bool
    outputs: OutputRequest
    probabilities: tuple[float, ...]
    json: bool

    @classmethod
    def of(cls, args: argparse.Namespace) -> ReleaseRequest:
        _check_missing_option(args.missing, args.neighbours)
        return cls(SourceRequest.of(args), args.column, args.lower, args.upper, args.whole_numbers,
                   CdfPlanOptions.of(args), CdfConsistency(args.consistency), args.dataset, args.new_dataset,
                   OutputRequest.of(args), tuple(args.probabilities), args.json)


@dataclass(frozen=True)
class SimulateRequest:
    """``dpgui simulate``: the plan's options, the consistency, the trials and ``seed`` (None: a fresh
    one), ``--json``; the data (``source``, ``column`` and its bounds) or a ``synthetic`` shape of ``n``
    values (None: simulate on the data)."""

    options: CdfPlanOptions
    consistency: CdfConsistency
    trials: int
    seed: int | None
    json: bool
    source: SourceRequest
    synthetic: str | None
    column: str | None
    lower: float | None
    upper: float | None
    n: int | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> SimulateRequest:
        return cls(CdfPlanOptions.of(args), CdfConsistency(args.consistency), args.trials, args.seed, args.json,
                   SourceRequest.of(args), args.synthetic, args.column, args.lower, args.upper, args.n)


@dataclass(frozen=True)
class QuantilesRequest:
    """``dpgui quantiles``: a bundle's manifest or a released CSV, the plan beside a CSV (``--plan``),
    the probabilities and ``--json``."""

    release: str
    plan: str | None
    probabilities: tuple[float, ...]
    json: bool

    @classmethod
    def of(cls, args: argparse.Namespace) -> QuantilesRequest:
        return cls(args.release, args.plan, tuple(args.probabilities), args.json)


@dataclass(frozen=True)
class VerifyRequest:
    """``dpgui verify``: a bundle's manifest and the signer's public key."""

    manifest: str
    pubkey: str

    @classmethod
    def of(cls, args: argparse.Namespace) -> VerifyRequest:
        return cls(args.manifest, args.pubkey)


@dataclass(frozen=True)
class KeyRequest:
    """``dpgui key create``: the key's name, its passphrase file (None: asked twice) and the folder."""

    name: str
    passphrase_file: str | None
    folder: str

    @classmethod
    def of(cls, args: argparse.Namespace) -> KeyRequest:
        return cls(args.name, args.passphrase_file, args.dir)


@dataclass(frozen=True)
class LedgerShowRequest:
    """``dpgui ledger show``: one dataset (None: all) and ``--json``."""

    dataset: str | None
    json: bool


@dataclass(frozen=True)
class LedgerCapRequest:
    """``dpgui ledger cap``: the dataset, its new cap (ε, δ) and the reason logged with it."""

    dataset: str
    epsilon: float
    delta: float
    reason: str


def ledger_request(args: argparse.Namespace) -> LedgerShowRequest | LedgerCapRequest:
    """The request of ``ledger show`` or ``ledger cap``."""
    if args.ledger_command == "cap":
        return LedgerCapRequest(args.dataset, args.epsilon, args.delta, args.reason)
    return LedgerShowRequest(args.dataset, args.json)


@dataclass(frozen=True)
class ColumnsRequest:
    """``dpgui columns``: the data and ``--json``."""

    source: SourceRequest
    json: bool

    @classmethod
    def of(cls, args: argparse.Namespace) -> ColumnsRequest:
        return cls(SourceRequest.of(args), args.json)


@dataclass(frozen=True)
class HierarchyOptions:
    """The options of a hierarchy plan (``hierarchy plan|release|simulate``): the ``levels``' columns, root
    first; ε, δ (None: not given, 0), the neighbour model, records per person; ``noise`` (a
    :class:`~dpgui.vocabulary.Noise` or ``auto``); the ``allocation`` and its ``target`` weighted MSE (None
    unless target), the levels' ``weights``, the ``consistency`` (a
    :class:`~dpgui.vocabulary.HierarchyConsistency` or ``auto``), Ghazi et al.'s ``alpha``,
    ``--counts-from-data``, ``--n``, the public ``prior`` file (None: none), the data, ``--json`` and
    ``--person-column`` (None: L declared)."""

    levels: tuple[str, ...]
    epsilon: float
    delta: float | None
    neighbours: Neighbours
    records_per_person: int
    noise: str
    allocation: Allocation
    target: float | None
    weights: tuple[float, ...] | None
    consistency: str
    alpha: float | None
    counts_from_data: bool
    n: int | None
    prior: str | None
    source: SourceRequest
    json: bool
    person_column: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> HierarchyOptions:
        allocation, target = args.allocation
        consistency = args.consistency if args.consistency == AUTO else HierarchyConsistency(args.consistency)
        return cls(tuple(args.levels), args.epsilon, args.delta, Neighbours(args.neighbours), args.records_per_person,
                   _noise_or_auto(args.noise) or AUTO, Allocation(allocation), target, args.weights, consistency,
                   args.alpha, bool(args.counts_from_data), args.n, getattr(args, "prior", None),
                   SourceRequest.of(args), args.json, getattr(args, "person_column", None))

    @property
    def delta_or_zero(self) -> float:
        """δ, 0 when not given (pure ε-DP)."""
        return self.delta or 0.0


@dataclass(frozen=True)
class HierarchySimulateRequest:
    """``dpgui hierarchy simulate``: the hierarchy's options, the trials and ``seed`` (None: a fresh one)."""

    options: HierarchyOptions
    trials: int
    seed: int | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> HierarchySimulateRequest:
        return cls(HierarchyOptions.of(args), args.trials, args.seed)


@dataclass(frozen=True)
class HierarchyReleaseRequest:
    """``dpgui hierarchy release``: the hierarchy's options (with the data and the public ``--prior``),
    ``--categories-public`` (the officer's statement that the data's categories are public; needed without
    ``--prior``), the ledger's ``dataset`` (None: not given, refused before anything is read) and
    ``--new-dataset``, and the outputs."""

    options: HierarchyOptions
    categories_public: bool
    dataset: str | None
    new_dataset: bool
    outputs: OutputRequest

    @classmethod
    def of(cls, args: argparse.Namespace) -> HierarchyReleaseRequest:
        return cls(HierarchyOptions.of(args), bool(args.categories_public), args.dataset, bool(args.new_dataset),
                   OutputRequest.of(args))
