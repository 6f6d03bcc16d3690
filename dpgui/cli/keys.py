"""``dpgui key create``, ``dpgui verify`` and ``dpgui --version``: signing keys, the check of a signed
bundle, and the software's versions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpgui.cli.requests import KeyRequest, VerifyRequest
from dpgui.errors import DpguiError, ParameterError


def _passphrase(path: str | None, confirm: bool) -> str:
    """The passphrase from ``--passphrase-file``, else asked on the terminal (twice when ``confirm``)."""
    from dpgui.report.keystore import read_passphrase_file

    if path is not None:
        return read_passphrase_file(Path(path))
    if not sys.stdin.isatty():
        raise ParameterError("no passphrase given and no terminal to ask on", "give --passphrase-file F")
    import getpass

    try:
        first = getpass.getpass("Passphrase: ")
        if confirm and getpass.getpass("Passphrase again: ") != first:
            raise ParameterError("the two passphrases differ", "type the same passphrase twice")
    except EOFError:  # Ctrl-D at the prompt
        raise ParameterError("no passphrase was typed (the input ended)",
                             "type the passphrase and press Enter, or give --passphrase-file F") from None
    return first


def cmd_verify(args: argparse.Namespace) -> int:
    """``dpgui verify``: an adapter of :func:`verify_command`."""
    return verify_command(VerifyRequest.of(args))


def verify_command(request: VerifyRequest) -> int:
    """Every check of a signed bundle (:func:`dpgui.workspace.statistics.verify`): exit 0 only if all hold."""
    from dpgui.formatting import printable_text
    from dpgui.report.keystore import load_public_key
    from dpgui.workspace.statistics import verify

    try:
        key = load_public_key(request.pubkey)  # type: ignore[arg-type]  # as typed: its messages quote it so
    except DpguiError as err:
        print(f"FAILED: the public key: {printable_text(str(err))}", file=sys.stderr)
        return 1
    result = verify(request.manifest, key)
    if not result.ok:
        print(f"FAILED: {printable_text(result.failure or '')}", file=sys.stderr)
        return 1
    for text, _ in result.checks:
        print(f"ok: {text}")
    manifest = result.manifest or {}
    privacy = manifest.get("privacy", {})
    delta = f", δ = {privacy['delta']:g}" if isinstance(privacy.get("delta"), (int, float)) and privacy["delta"] > 0 else ""
    print(f"VERIFIED: release {manifest.get('release_id')} of dataset {manifest.get('dataset')!r}, "
          f"ε = {privacy.get('epsilon')}{delta}, signed by key {result.key_id}")
    return 0


def cmd_key(args: argparse.Namespace) -> int:
    """``dpgui key create``: an adapter of :func:`create_key_command`."""
    return create_key_command(KeyRequest.of(args))


def create_key_command(request: KeyRequest) -> int:
    """A new signing key pair in the request's folder (the secret one encrypted with the passphrase)."""
    from dpgui.report.keystore import create_key

    files = create_key(request.name, _passphrase(request.passphrase_file, True), Path(request.folder))
    print(f"created key {files.key_id_hex}:\n  secret (keep it private): {files.secret_path}\n"
          f"  public (give it to anyone who verifies): {files.public_path}")
    return 0


def version_text() -> str:
    """``dpgui --version``: dpgui, Python, Qt and the libraries whose versions the manifests record."""
    from dpgui.workspace.publishing import software_versions

    versions = software_versions()
    lines = [f"dpgui {versions.pop('dpgui')}" + (" (frozen app)" if getattr(sys, "frozen", False) else "")]
    try:
        import PySide6
        from PySide6.QtCore import qVersion

        versions["PySide6"] = f"{PySide6.__version__} (Qt {qVersion()})"
    except ImportError as err:
        versions["PySide6"] = f"not loadable ({err})"
    lines += [f"  {name} {version}" for name, version in versions.items()]
    return "\n".join(lines)
