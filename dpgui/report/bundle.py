"""Signed release bundles of any statistic: ``NAME.csv``, ``NAME.pdf``, ``NAME.manifest.json`` and its
minisign signature (the paths, the schema, the signing and the verification; each statistic's manifest
is built in its own package, :mod:`dpgui.report.cdf.bundle`, :mod:`dpgui.report.hierarchy.bundle`).

The manifest records the public parameters of the release and the SHA-256 of the CSV and the PDF;
the signature (minisign format, Ed25519 over BLAKE2b-512 of the manifest's bytes) makes the
manifest, and through its hashes the two files, tamper-evident. Stock ``minisign -Vm
NAME.manifest.json -p KEY.pub`` checks the signature; :func:`verify_bundle` also checks the hashes
and the schema.

Only secure releases are signed: a statistic's ``write_bundle`` refuses a release drawn from a seeded
(test) source, and :func:`verify_bundle` fails on any manifest whose ``random_source`` is not
``os_csprng``. Callers sign through :func:`dpgui.report.cdf.publish.sign_release`, which also checks
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from dpgui import __version__
from dpgui.errors import DataError, ParameterError
from dpgui.formatting import iso_utc
from dpgui.report.files import (
    fsync_directory, parse_json, read_regular_file, remove_stale_temporaries, sha256_regular_file, write_temporary,
)
from dpgui.report.migrations import newer_manifest_problem
from dpgui.report.signing import PublicKey, SecretKey, SignatureError
from dpgui.vocabulary import SourceKind

#: The version of a manifest (either kind) that records its data ``source``; one without a source keeps
#: its kind's version (2 for a CDF, 3 for a hierarchy), so a release restored from a project that recorded
#: none writes the manifest it always did, and a dpgui that reads only up to that version says "newer
#: schema version" (not "an unknown property") when it meets one with a source.
SOURCE_SCHEMA_VERSION = 4
SCHEMA_PATH = Path(__file__).with_name("manifest.schema.json")
MANIFEST_SUFFIX = ".manifest.json"
SECURE_SOURCE = "os_csprng"  # the only random_source a bundle that verifies may name
TEST_NOISE_FAILURE = "the release used test noise"  # how verify_bundle's failure for any other source begins
SIGNATURE_SUFFIX = ".minisig"  # minisign's default: the signed file's name + .minisig
LIBRARIES = ("numpy", "scipy", "cryptography")
_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")


def source_text(record: dict[str, Any]) -> str:
    """The source in words for the reports, e.g. "table people in postgresql://alice@db/census;
    counted by the database (PostgreSQL 15.18)" or "a CSV file (semicolon-separated, decimal comma, as
    stated by the officer); counted by this computer"."""
    kind = record.get("kind")
    where = record.get("location") or "the Spark catalogue"
    if kind == SourceKind.FILE:
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


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


@lru_cache(maxsize=8)
def _validator(schema: Path) -> Any:
    import jsonschema

    document = json.loads(schema.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(document)


def schema_problems(manifest: Any, schema: Path = SCHEMA_PATH) -> list[str]:
    """Every way ``manifest`` breaks the JSON Schema, as short one-line sentences that name the field
    (``privacy/delta: must be at most 0.001``) and never repeat a value longer than a few characters
    (a hostile manifest's value can be megabytes); empty when valid. ``schema``: the JSON Schema file
    of the manifest's statistic (:attr:`dpgui.workspace.statistic.Statistic.manifest_schema`)."""
    problems = []
    for error in sorted(_validator(schema).iter_errors(manifest), key=lambda e: [str(p) for p in e.absolute_path]):
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


def write_signed_files(paths: BundlePaths, release_id: str, csv_bytes: bytes, pdf_bytes: bytes,
                       manifest: dict[str, Any], key: SecretKey, schema: Path = SCHEMA_PATH,
                       more: Mapping[Path, bytes] | None = None) -> BundlePaths:
    """Sign ``manifest`` and write the four files of any kind of bundle in the crash-safe order of the
    module docstring (``paths`` from :func:`check_bundle_target`), and ``more`` files (a release plan's
    parts' CSVs, checked not to exist by its caller) before the signature and the manifest. The manifest is
    checked against ``schema`` (its statistic's) first (a failure is a bug: never sign what the verifier
    would reject)."""
    problems = schema_problems(manifest, schema)
    if problems:  # a bug, not a user error: never sign a manifest that the verifier would reject
        raise RuntimeError(f"manifest does not satisfy its schema: {problems[0]}")
    body = manifest_bytes(manifest)
    trusted = f"dpgui release {release_id} file:{paths.manifest.name} signed:{iso_utc(datetime.now(timezone.utc))}"
    signature = key.sign(body, trusted).encode("utf-8")
    contents = {paths.csv: csv_bytes, paths.pdf: pdf_bytes, **dict(more or {}), paths.signature: signature,
                paths.manifest: body}  # in the order of renaming: the manifest last
    temporary: dict[Path, str] = {}
    try:
        for target in contents:
            temporary[target] = write_temporary(target, contents[target])
        for target in contents:
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


def verify_bundle(manifest_path: str | os.PathLike[str], public_key: PublicKey,
                  schema_of: Callable[[dict[str, Any]], Path] | None = None) -> Verification:
    """Check the signature of the manifest, the schema, the noise (secure source only), and the
    SHA-256 of the CSV and the PDF. ``schema_of``: the JSON Schema file of a (signed) manifest's
    statistic, picked by its ``kind`` (:func:`dpgui.workspace.statistics.verify`); default: the schema of
    the CDF and the hierarchy.

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
    problems = schema_problems(manifest, SCHEMA_PATH if schema_of is None or not isinstance(manifest, dict)
                               else schema_of(manifest))
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
    for number, part in enumerate(manifest.get("parts", ()), 1):  # a release plan's parts (its schema says how)
        entry, words = part["csv"], f"part {number} ({_clipped(str(part['title']), 80)})"
        try:
            digest = sha256_regular_file(path.with_name(entry["name"]), f"CSV file of {words}")
        except DataError as err:
            return fail(f"{words}: {err.problem}", manifest, comment)
        if digest != entry["sha256"]:
            return fail(f"{words}: the CSV file {entry['name']} does not match the SHA-256 in the manifest (it was "
                        "changed, or swapped with another file, after signing)", manifest, comment)
        checks.append((f"{words}: the CSV file {entry['name']} matches its SHA-256", True))
    return Verification(True, tuple(checks), manifest, public_key.key_id_hex, comment)
