"""Signed release bundles: ``NAME.csv``, ``NAME.pdf``, ``NAME.manifest.json`` and its minisign signature.

The manifest records the public parameters of the release and the SHA-256 of the CSV and the PDF;
the signature (minisign format, Ed25519 over BLAKE2b-512 of the manifest's bytes) makes the
manifest, and through its hashes the two files, tamper-evident. Stock ``minisign -Vm
NAME.manifest.json -p KEY.pub`` checks the signature; :func:`verify_bundle` also checks the hashes
and the schema.

Only secure releases are signed: :func:`write_bundle` refuses a release drawn from a seeded
(test) source, and :func:`verify_bundle` fails on any manifest whose ``random_source`` is not
``os_csprng``. Callers sign through :func:`dpgui.report.publish.sign_release`, which also checks
the release against the budget ledger first (docs/privacy-model.md, "Signing and the ledger").

Never written: the confidential histogram, the true N under add/remove-one, or any hash or
fingerprint of the input file (a plain hash of a file can be confirmed by guessing).

Writing order (crash safety): every file is written to a temporary name in the bundle's folder
and fsynced; then the CSV, the PDF and the signature are renamed into place and the manifest
last. A bundle "exists" only once its manifest does. The budget was recorded in the ledger
before the noise was drawn (:mod:`dpgui.report.publish`), so a crash can waste budget but never
leave a bundle without its ledger entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from dpgui import __version__
from dpgui.core.mechanism import Release
from dpgui.core.missing import MISSING_DROP, MISSING_IMPUTE, missing_rule_text
from dpgui.core.plan import ZCDP_CONVERSION, Plan
from dpgui.core.quantiles import WholeNumbers, whole_number_step
from dpgui.core.tree import bin_edges
from dpgui.errors import DataError, ParameterError
from dpgui.formatting import iso_utc, utc_stamp
from dpgui.report.csv_export import CDF_COLUMNS, release_csv_bytes
from dpgui.report.files import (
    fsync_directory,
    parse_json,
    read_regular_file,
    remove_stale_temporaries,
    sha256_regular_file,
    write_temporary,
)
from dpgui.report.migrations import DROPPED_BEFORE_N, MANIFEST_VERSION, newer_manifest_problem, upgrade_manifest
from dpgui.report.signing import PublicKey, SecretKey, SignatureError
from dpgui.vocabulary import Noise, StatisticKind

#: The schema version of a CDF manifest: noise, δ, ρ, per-level ρ and σ², the charge (the versions that
#: :mod:`dpgui.report.migrations` reads are 1 to 5).
SCHEMA_VERSION = 2
#: The version of a manifest (either kind) that records its data ``source``; one without a source keeps
#: its kind's version (2 for a CDF, 3 for a hierarchy), so a release restored from a project that recorded
#: none writes the manifest it always did, and a dpgui that reads only up to that version says "newer
#: schema version" (not "an unknown property") when it meets one with a source.
SOURCE_SCHEMA_VERSION = 4
#: The version of a CDF manifest that records what the officer stated for it: the public value missing
#: values were counted as (``missing_values.value``), the region the plan was made for (``focus``), that
#: the column holds whole numbers (``whole_numbers``). A manifest without them keeps its version (2 or 4),
#: so a restored release writes what it always did.
STATEMENTS_SCHEMA_VERSION = MANIFEST_VERSION
SCHEMA_PATH = Path(__file__).with_name("manifest.schema.json")
MANIFEST_SUFFIX = ".manifest.json"
SECURE_SOURCE = "os_csprng"  # the only random_source a bundle that verifies may name
TEST_NOISE_FAILURE = "the release used test noise"  # how verify_bundle's failure for any other source begins
SIGNATURE_SUFFIX = ".minisig"  # minisign's default: the signed file's name + .minisig
LIBRARIES = ("numpy", "scipy", "cryptography")
_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")


@dataclass(frozen=True)
class ReleaseInfo:
    """Public facts about a release that the :class:`Release` itself does not carry."""

    dataset: str  # the officer's name for the data set (the ledger's id)
    column: str
    release_id: str  # the ledger entry of this release
    created_utc: datetime  # when the noise was drawn
    missing: str  # the missing-value rule the release applied (:class:`~dpgui.core.missing.MissingRule`)
    #: where the data was read and who counted it (:meth:`dpgui.data.source.DataSource.public_record`);
    #: None: not recorded
    source: dict[str, Any] | None = None
    #: why the column is known to hold whole numbers (:class:`~dpgui.core.quantiles.WholeNumbers`: the
    #: officer's statement or the file's declared type; public), None: not known
    whole_numbers: WholeNumbers | None = None


def source_text(record: dict[str, Any]) -> str:
    """The source in words for the reports, e.g. "table people in postgresql://alice@db/census;
    counted by the database (PostgreSQL 15.18)" or "a CSV file (semicolon-separated, decimal comma, as
    stated by the officer); counted by this computer"."""
    kind = record.get("kind")
    where = record.get("location") or "the Spark catalogue"
    if kind == "file":
        what = f"a {str(record.get('format', '')).upper() or 'data'} file"
    elif record.get("table") is not None:
        what = f"table {record['table']} in {where}"
    elif record.get("query") is not None:
        stated = record.get("row_count_public")  # absent in records made before the statement existed
        what = f"the query {record['query']!r} on {where}" + (
            " (its number of rows stated public by the publisher)" if stated is True else
            " (its number of rows kept private)" if stated is False else "")
    else:  # a Spark dataset read from its location
        what = f"the dataset {where}"
    dialect = record.get("dialect")
    if isinstance(dialect, dict):  # the names of dpgui.data.file_types.CSV_DELIMITERS/CSV_DECIMALS (report sits below data)
        names = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar", ".": "point"}
        delimiter, decimal = str(dialect.get("delimiter")), str(dialect.get("decimal"))
        # dpgui.data.csv_dialect.DialectOrigin's values; a record may have none (who decided was not recorded)
        origin = {"stated": ", as stated by the officer", "default": ", the default for its file name"}.get(
            str(dialect.get("origin")), "")
        what += f" ({names.get(delimiter, delimiter)}-separated, decimal {names.get(decimal, decimal)}{origin})"
    if record.get("encoding"):
        what += f", encoding {record['encoding']}"
    return f"{what}; counted by {record.get('engine', 'this computer')}"


@dataclass(frozen=True)
class BundlePaths:
    csv: Path
    pdf: Path
    manifest: Path
    signature: Path

    @classmethod
    def of(cls, directory: Path, name: str) -> BundlePaths:
        return cls(directory / f"{name}.csv", directory / f"{name}.pdf", directory / f"{name}{MANIFEST_SUFFIX}",
                   directory / f"{name}{MANIFEST_SUFFIX}{SIGNATURE_SUFFIX}")

    def all(self) -> tuple[Path, Path, Path, Path]:
        return (self.csv, self.pdf, self.signature, self.manifest)  # rename order: manifest last


def default_bundle_name(info: ReleaseInfo) -> str:
    """``<dataset>-<column>-<UTC time>-<first 8 of the release id>``, safe as a file name."""
    stamp = utc_stamp(info.created_utc)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{info.dataset}-{info.column}").strip("._-") or "release"
    return f"{safe[:100]}-{stamp}-{info.release_id[:8]}"


def check_bundle_name(name: str) -> str:
    if not _NAME_PATTERN.match(name):
        raise ParameterError(f"{name!r} cannot be used as a bundle name",
                             "use letters, digits, '.', '-' or '_' (no spaces or folders), e.g. flights-2026")
    return name


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def software_versions() -> dict[str, str]:
    versions = {"dpgui": __version__, "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover - always installed with dpgui
            versions[name] = "unknown"
    return versions


def privacy_json(plan: Plan) -> dict[str, Any]:
    """The manifest's ``privacy``: the (ε, δ) set, the plan's zCDP ρ (Gaussian; null for Laplace), what
    the noise drawn spends, the δ the guarantee uses (0 for Laplace: a δ set is unused), the
    ρ → (ε, δ) conversion (Gaussian) and the (ε, δ, ρ) charged to the budget ledger
    (:meth:`Plan.ledger_charge`; a Laplace release is charged ρ = ε²/2)."""
    privacy = plan.privacy
    gaussian = plan.noise == Noise.GAUSSIAN
    epsilon, delta, rho = plan.ledger_charge()
    return {
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,
        "rho": privacy.rho if gaussian else None,
        # the noise scales are rounded so that their exact ε (and ρ) is ≤ what is charged
        "epsilon_from_noise_scales": float(plan.epsilon_spent()),
        "rho_from_noise_scales": float(plan.rho_spent()) if gaussian else None,
        "delta_used": plan.delta_spent,
        "conversion": ZCDP_CONVERSION if gaussian else None,
        "charged": {"epsilon": epsilon, "delta": delta, "rho": rho},
    }


def build_manifest(release: Release, info: ReleaseInfo, name: str, csv_bytes: bytes, pdf_bytes: bytes,
                   key_id: str) -> dict[str, Any]:
    """The manifest (public values only), as a JSON-ready dict that satisfies ``manifest.schema.json``.

    Laplace plans list ``tree.level_epsilons`` and ``tree.level_noise_scales`` (the scales t_l);
    Gaussian plans have those null and list ``tree.level_rhos`` and ``tree.level_sigma2`` (σ_l²)
    instead. ``noise_choice`` is there when a planner chose the noise (both noises' projected errors).
    """
    plan = release.plan
    privacy = plan.privacy
    plan_json = plan.to_json()
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": str(StatisticKind.CDF),
        "release_id": info.release_id,
        "created_utc": iso_utc(info.created_utc),
        "software": software_versions(),
        "dataset": info.dataset,
        "column": info.column,
        "mechanism": "tree of noisy counts (hierarchical histogram), post-processed",
        "noise": plan_json["noise"],
        "random_source": SECURE_SOURCE if release.secure else "seeded_test_only",
        "neighbours": privacy.neighbours,
        "records_per_person": privacy.records_per_person,
        "privacy": privacy_json(plan),
        "tree": {
            "branching": plan_json["branching"],
            "padded_bins": plan_json["padded_bins"],
            "levels": plan_json["levels"],
            "level_epsilons": plan_json["level_epsilons"],
            "level_noise_scales": plan_json["level_noise_scales"],
            "level_rhos": plan_json.get("level_rhos"),
            "level_sigma2": plan_json.get("level_sigma2"),
            "sensitivity_per_level": plan_json["sensitivity_per_level"],
            "l2_sensitivity_squared_per_level": plan_json.get("l2_sensitivity_squared_per_level"),
            "missing_leaf": bool(plan.shape.missing_leaf),  # one more leaf after the K bins counts missing values
        },
        "estimator": plan.estimator,
        "consistency": release.consistency,
        "bounds": {"lower": release.lower, "upper": release.upper},
        "bins": plan.shape.bins,
        "missing_values": missing_values_json(release, info.missing),
        "total_records": {"public": privacy.root_public,
                          "value": int(release.total) if privacy.root_public else None,
                          "released_estimate": float(release.total)},
        "files": {
            "csv": {"name": f"{name}.csv", "sha256": sha256_hex(csv_bytes), "columns": list(CDF_COLUMNS)},
            "pdf": {"name": f"{name}.pdf", "sha256": sha256_hex(pdf_bytes)},
        },
        "signer": {"key_id": key_id, "algorithm": "Ed25519, minisign format (BLAKE2b-512 prehash)"},
    }
    if "noise_choice" in plan_json:
        manifest["noise_choice"] = plan_json["noise_choice"]
    if info.source is not None:
        manifest["schema_version"] = SOURCE_SCHEMA_VERSION
        manifest["source"] = dict(info.source)
    focus = focus_json(plan, release.lower, release.upper)
    if focus is not None:
        manifest["focus"] = focus
    if info.whole_numbers is not None:
        whole = WholeNumbers(info.whole_numbers)
        step = whole_number_step(release.lower, release.upper, plan.shape.bins)
        manifest["whole_numbers"] = {
            "source": whole.value, "description": whole.description,
            "bins_centred": step is not None,
            "quantiles": ("whole numbers (bins centred on whole numbers)" if step is not None
                          else "interpolated within bins (the bins are not centred on whole numbers)")}
    if focus is not None or plan.privacy.impute is not None or info.whole_numbers is not None:
        manifest["schema_version"] = STATEMENTS_SCHEMA_VERSION
    return manifest


def focus_json(plan: Plan, lower: float, upper: float) -> dict[str, Any] | None:
    """The region the plan was optimised for (docs/engine.md "Where do you need accuracy"), as the
    manifest states it: its CDF points (prefix lengths) and their bin edges in the column's units
    (:func:`dpgui.core.tree.bin_edges`), or None for a plan made for the whole range. Public: the plan
    and the bounds only. O(K)."""
    if plan.focus is None:
        return None
    first, last = plan.focus
    edges = bin_edges(lower, upper, plan.shape.bins)
    low, high = float(edges[first]), float(edges[min(last, plan.shape.bins)])
    return {"first_prefix": first, "last_prefix": last, "from": low, "to": high,
            "description": f"the tree and the level budgets were chosen for the CDF at the bin edges from {low:g} "
                           f"to {high:g} (the same ε is spent; accuracy moves there from the rest of the range)"}


def plan_from_manifest(manifest: dict[str, Any]) -> Plan:
    """The plan a CDF manifest of any schema version describes (read from its copy in today's shape,
    :func:`dpgui.report.migrations.upgrade_manifest`). Raises KeyError/TypeError for a manifest that lacks
    the plan's fields, :class:`~dpgui.errors.ParameterError` for values no plan can have, and
    :class:`~dpgui.errors.DataError` for a manifest of a newer version."""
    manifest = upgrade_manifest(manifest, "")
    tree, privacy, missing = manifest["tree"], manifest["privacy"], manifest["missing_values"]
    return Plan.from_json({
        "bins": manifest["bins"], "branching": tree["branching"], "missing_leaf": bool(tree["missing_leaf"]),
        "epsilon": privacy["epsilon"], "delta": privacy["delta"], "neighbours": manifest["neighbours"],
        "records_per_person": manifest["records_per_person"], "estimator": manifest["estimator"],
        "noise": manifest["noise"], "level_epsilons": tree["level_epsilons"], "level_rhos": tree["level_rhos"],
        "missing_impute": float(missing["value"]) if missing["rule"] == MISSING_IMPUTE else None,
    })


def missing_values_json(release: Release, rule: str) -> dict[str, Any]:
    """The manifest's account of missing values: the rule, in words, and (``bucket``) the released
    noisy count N − C_K with its standard error (docs/privacy-model.md "Missing values")."""
    impute = release.plan.privacy.impute
    description = missing_rule_text(rule, impute)
    if rule == MISSING_DROP and release.plan.privacy.root_public:  # restored: no release applies it now
        description = DROPPED_BEFORE_N
    out: dict[str, Any] = {"rule": str(rule), "description": description,
                           "released_count": None if release.missing is None else float(release.missing),
                           "std_error": release.missing_std_error}
    if rule == MISSING_IMPUTE:
        out["value"] = impute
    return out


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_problems(manifest: Any) -> list[str]:
    """Every way ``manifest`` breaks the JSON Schema, as short one-line sentences that name the field
    (``privacy/delta: must be at most 0.001``) and never repeat a value longer than a few characters
    (a hostile manifest's value can be megabytes); empty when valid."""
    problems = []
    for error in sorted(_validator().iter_errors(manifest), key=lambda e: [str(p) for p in e.absolute_path]):
        where = "/".join(str(p) for p in error.absolute_path) or "the manifest"
        problems.append(f"{_clipped(where, 80)}: {_schema_rule_text(error)}")
    return problems


def _clipped(text: str, limit: int) -> str:
    text = text.encode("unicode_escape").decode("ascii")  # no control character reaches the terminal
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _schema_rule_text(error: Any) -> str:
    """What the rule broken by a jsonschema ``error`` asks for, without the value that broke it."""
    rule, wanted = error.validator, error.validator_value
    bounds = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
              "exclusiveMaximum": "less than"}
    if rule in bounds:
        return f"must be {bounds[rule]} {wanted:g}"
    if rule == "type":
        return f"must be of type {wanted if isinstance(wanted, str) else ' or '.join(wanted)}"
    if rule in ("enum", "const"):
        return f"must be {_clipped(' or '.join(json.dumps(v) for v in (wanted if rule == 'enum' else [wanted])), 120)}"
    if rule == "pattern":
        return f"must match {_clipped(str(wanted), 60)}"
    if rule in ("oneOf", "anyOf"):
        return "is none of the forms the schema allows"
    if rule in ("required", "additionalProperties"):
        return _clipped(str(error.message), 120)  # names the key, not the value
    return f"breaks the schema's rule '{rule}'"


# ------------------------------------------------------------------ writing
def check_bundle_folder(directory: str | os.PathLike[str]) -> Path:
    """Fail before any budget is spent if no bundle can be written in ``directory``: it must be an
    existing folder in which a file can be created (tried: a temporary file is made and removed)."""
    folder = Path(directory)
    try:
        what = "" if folder.is_dir() else "is not a folder" if folder.exists() else "does not exist"
    except OSError as err:  # a name longer than the system allows
        what = f"cannot be used ({err.strerror or err})"
    if what:
        raise DataError(f"the bundle folder {_clipped(str(folder), 80)} {what}", "create it or choose another folder")
    try:
        os.unlink(write_temporary(folder / "bundle", b""))
    except OSError as err:
        raise DataError(f"the bundle folder {folder} is not writable ({err.strerror or err})",
                        "choose another folder or fix its permissions") from None
    return folder


def check_bundle_target(directory: str | os.PathLike[str], name: str) -> BundlePaths:
    """Fail before any budget is spent if the bundle cannot be written or would overwrite one."""
    folder = check_bundle_folder(directory)
    remove_stale_temporaries(folder)  # left by a dpgui that was killed while writing
    paths = BundlePaths.of(folder, check_bundle_name(name))
    existing = [p.name for p in paths.all() if p.exists()]
    if existing:
        raise DataError(f"{existing[0]} already exists in {folder}",
                        "choose another bundle name; dpgui never overwrites a bundle")
    return paths


def write_bundle(directory: str | os.PathLike[str], name: str, release: Release, info: ReleaseInfo,
                 pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """Write the four files of a bundle (crash-safe order, see the module docstring).

    ``pdf_bytes``: the human-readable report (rendered by the app layer, which owns Qt).
    Raises DataError if the release is not secure (test noise), the folder is not writable or any
    bundle file already exists. Use :func:`dpgui.report.publish.sign_release`, which checks the
    release against the budget ledger and records the bundle there.
    """
    if not release.secure:
        raise DataError(f"release {info.release_id} was drawn with test noise (a seeded generator), which must never be "
                        "signed or published", "release the data again with dpgui's normal (secure) noise")
    paths = check_bundle_target(directory, name)
    csv_bytes = release_csv_bytes(release)
    manifest = build_manifest(release, info, name, csv_bytes, pdf_bytes, key.public_key.key_id_hex)
    return write_signed_files(paths, info.release_id, csv_bytes, pdf_bytes, manifest, key)


def write_signed_files(paths: BundlePaths, release_id: str, csv_bytes: bytes, pdf_bytes: bytes,
                       manifest: dict[str, Any], key: SecretKey) -> BundlePaths:
    """Sign ``manifest`` and write the four files of any kind of bundle in the crash-safe order of the
    module docstring (``paths`` from :func:`check_bundle_target`). The manifest is checked against
    the schema first (a failure is a bug: never sign what the verifier would reject)."""
    problems = schema_problems(manifest)
    if problems:  # a bug, not a user error: never sign a manifest that the verifier would reject
        raise RuntimeError(f"manifest does not satisfy its schema: {problems[0]}")
    body = manifest_bytes(manifest)
    trusted = f"dpgui release {release_id} file:{paths.manifest.name} signed:{iso_utc(datetime.now(timezone.utc))}"
    signature = key.sign(body, trusted).encode("utf-8")
    contents = {paths.csv: csv_bytes, paths.pdf: pdf_bytes, paths.signature: signature, paths.manifest: body}
    temporary: dict[Path, str] = {}
    try:
        for target in paths.all():
            temporary[target] = write_temporary(target, contents[target])
        for target in paths.all():
            if target.exists():  # appeared since the check: never overwrite
                raise DataError(f"{target.name} appeared while writing", "choose another bundle name")
            os.replace(temporary.pop(target), target)
        fsync_directory(paths.manifest.parent)
    finally:
        for tmp in temporary.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
    return paths


# ------------------------------------------------------------------ verifying
@dataclass(frozen=True)
class Verification:
    """The outcome of checking a bundle: ``ok`` only when every check held."""

    ok: bool
    checks: tuple[tuple[str, bool], ...]  # (plain sentence, passed) in the order they were made
    manifest: dict[str, Any] | None
    key_id: str | None
    trusted_comment: str | None

    @property
    def failure(self) -> str | None:
        """The first failed check's sentence (None when all held)."""
        return next((text for text, passed in self.checks if not passed), None)


def verify_bundle(manifest_path: str | os.PathLike[str], public_key: PublicKey) -> Verification:
    """Check the signature of the manifest, the schema, the noise (secure source only), and the
    SHA-256 of the CSV and the PDF.

    Stops at the first failure (later checks would rest on an untrusted manifest). O(file sizes).
    """
    path = Path(manifest_path)
    checks: list[tuple[str, bool]] = []

    def fail(text: str, manifest: dict[str, Any] | None = None, comment: str | None = None) -> Verification:
        checks.append((text, False))
        return Verification(False, tuple(checks), manifest, public_key.key_id_hex, comment)

    signature_path = path.with_name(path.name + SIGNATURE_SUFFIX)
    try:
        body = read_regular_file(path, "manifest")
    except DataError as err:
        return fail(str(err.problem))
    try:
        signature_text = read_regular_file(signature_path, "signature").decode("utf-8")
    except DataError as err:
        return fail(str(err.problem))
    except UnicodeDecodeError:
        return fail(f"the signature {signature_path.name} is not a minisign signature file")
    try:
        comment = public_key.verify(body, signature_text)
    except SignatureError as err:
        return fail(f"signature: {err.problem}")
    checks.append((f"the manifest is signed by key {public_key.key_id_hex}", True))
    try:
        manifest = parse_json(body, "the manifest")  # strictly: no key twice, no NaN, no deep nesting
    except DataError as err:
        return fail(err.problem, comment=comment)
    newer = newer_manifest_problem(manifest) if isinstance(manifest, dict) else None
    if newer is not None:
        return fail(newer, comment=comment)
    problems = schema_problems(manifest)
    if problems:
        return fail(f"the manifest does not follow the dpgui manifest schema ({problems[0]})", comment=comment)
    checks.append((f"the manifest follows schema version {manifest['schema_version']}", True))
    if manifest["random_source"] != SECURE_SOURCE:
        return fail(f"{TEST_NOISE_FAILURE} (random_source {manifest['random_source']!r}, not the operating "
                    "system's secure source): it must not be published", manifest, comment)
    checks.append(("the noise came from the operating system's secure random source", True))
    if manifest["signer"]["key_id"] != public_key.key_id_hex:
        return fail(f"the manifest names signer {manifest['signer']['key_id']}, not {public_key.key_id_hex}",
                    manifest, comment)
    for kind in ("csv", "pdf"):
        entry = manifest["files"][kind]
        file_path = path.with_name(entry["name"])
        try:
            digest = sha256_regular_file(file_path, f"{kind.upper()} file")
        except DataError as err:
            return fail(str(err.problem), manifest, comment)
        if digest != entry["sha256"]:
            return fail(f"the {kind.upper()} file {entry['name']} does not match the SHA-256 in the manifest "
                        "(it was changed after signing)", manifest, comment)
        checks.append((f"the {kind.upper()} file {entry['name']} matches its SHA-256", True))
    return Verification(True, tuple(checks), manifest, public_key.key_id_hex, comment)
