"""packaging/linux/slim_icu.py: the Linux bundle's smaller ICU data gives Qt the same answers.

Built here from the venv's own PySide6 (the library the bundle copies), then loaded into a fresh
Python with LD_PRELOAD: the dynamic linker then resolves Qt's libicudata.so.NN to it. Needs
icupkg (Debian icu-devtools) and binutils, which `make system-deps` installs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from script_modules import script_module

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF libraries: the Linux bundle")

ROOT = Path(__file__).resolve().parents[2]

# What libQt6Core asks ICU for: collation, locale case mapping, time-zone names and ids, codecs.
PROBE = r"""
import json
from PySide6.QtCore import QCollator, QDateTime, QLocale, QStringDecoder, QTimeZone
answers = {}
for locale, a, b in (("de_DE", "ä", "z"), ("sv_SE", "z", "ä"), ("cs_CZ", "h", "ch"), ("en_US", "Zebra", "apple")):
    answers[f"collate {locale} {a} {b}"] = QCollator(QLocale(locale)).compare(a, b)
natural = QCollator(QLocale("en_US"))
natural.setNumericMode(True)
answers["numeric file2 file10"] = natural.compare("file2", "file10")
answers["upper tr i"] = QLocale("tr_TR").toUpper("i")
answers["upper de straße"] = QLocale("de_DE").toUpper("straße")
when = QDateTime.fromString("2026-07-01T12:00:00Z", "yyyy-MM-ddTHH:mm:ssZ")
for zone in (b"Europe/Berlin", b"America/New_York", b"Asia/Kolkata"):
    tz = QTimeZone(zone)
    for locale in ("en_US", "de_DE", "ja_JP"):
        answers[f"zone {zone.decode()} {locale}"] = tz.displayName(
            QTimeZone.TimeType.StandardTime, QTimeZone.NameType.LongName, QLocale(locale))
    answers[f"offset {zone.decode()}"] = tz.offsetFromUtc(when)
for codec in ("Shift_JIS", "windows-1252", "UTF-16LE"):
    answers[f"codec {codec}"] = QStringDecoder(codec).isValid()
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def slim_icu():
    """packaging/linux/slim_icu.py, a script (not in a package), loaded as a module."""
    with script_module(ROOT / "packaging" / "linux" / "slim_icu.py") as module:
        yield module


@pytest.fixture(scope="module")
def full_library() -> Path:
    import PySide6

    found = sorted((Path(PySide6.__file__).parent / "Qt" / "lib").glob("libicudata.so.*"))
    assert found, "PySide6 brings no libicudata.so: Qt changed how it uses ICU; revisit slim_icu.py"
    return found[0]


def _run_with(library: Path | None, *command: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    if library is not None:
        env["LD_PRELOAD"] = str(library)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)


def _answers(library: Path | None) -> dict:
    result = _run_with(library, sys.executable, "-c", PROBE)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def slim_library(tmp_path_factory, slim_icu, full_library) -> Path:
    slim = tmp_path_factory.mktemp("icu") / full_library.name
    kept, removed = slim_icu.slim_icu_data(full_library, slim)
    assert kept > 1000 and removed > 1000
    return slim


def test_slim_icu_data_is_a_third_of_the_size(slim_library, slim_icu, full_library):
    assert slim_library.stat().st_size < 0.4 * full_library.stat().st_size
    assert slim_icu.soname(slim_library) == slim_icu.soname(full_library)


def test_qt_gets_the_same_collation_case_and_time_zones_from_the_slim_data(slim_library):
    full, slim = _answers(None), _answers(slim_library)
    assert full["collate de_DE ä z"] < 0 and full["zone Europe/Berlin de_DE"]  # the probe reads real ICU data
    lost = {key for key in full if full[key] != slim[key]}
    # Only the codec tables are gone (documented in slim_icu.py); UTF codecs need none.
    assert lost == {"codec Shift_JIS", "codec windows-1252"}, {key: (full[key], slim[key]) for key in lost}
    assert slim["codec UTF-16LE"] is True


def test_the_self_test_fails_when_collation_or_time_zone_data_is_missing(tmp_path, slim_icu, full_library):
    """The frozen app's self-test step "Qt text services" is what would catch an over-eager trim."""
    stripped = tmp_path / full_library.name
    slim_icu.slim_icu_data(full_library, stripped, re.compile(r"^(coll|zone)/"))
    result = _run_with(stripped, sys.executable, "-m", "dpgui.cli", "--self-test")  # DPGUI_HOME: conftest's
    assert result.returncode == 1, result.stdout
    assert re.search(r"\[\d+/\d+\] FAILED Qt text services .*: German collation does not sort ä before z",
                     result.stdout), result.stdout
