"""Shrink the ICU data library that PySide6's Qt brings (``libicudata.so.NN``, 32 MB) to what Qt uses.

Qt 6 calls ICU for four things only (the ICU symbols ``libQt6Core`` imports; ``nm -D --undefined-only``):
collation (QCollator, which also sorts the file dialog), locale case mapping (QLocale::toUpper),
time-zone ids and names (QTimeZone), and text codecs other than UTF-8/16/32 and Latin-1
(QStringDecoder). No other library of the bundle links ICU.

Kept: collation (``coll/``), time zones (``zone/``, ``zoneinfo64``, ``metaZones``, …), the locale tree
(``*.res``: locale fallback and week data) and the core tables (normalisation, properties).
Removed (about 21 MB): break iteration (Qt breaks text with its own tables), currency, language,
region and unit names, number spell-out, transliteration and character names (Qt asks ICU for
none of them), and the converter tables: the app reads files with pyarrow and Python, never with
Qt's codecs, and Qt on Linux takes UTF-8 as the system encoding (it needs no table).

How: the data is one symbol, ``icudtNN_dat``, in ``.rodata`` (``readelf`` finds it); ``icupkg``, ICU's own
package tool (Debian ``icu-devtools``), removes the items; ``as`` and ``ld`` wrap the result in a
library with the same soname and symbol. ``dpgui --self-test`` then checks collation, Turkish case
mapping and time-zone names in the frozen app (step "Qt text services").

    python packaging/linux/slim_icu.py LIBRARY [--out OUT]     (in place without --out)

Linux only (ELF). Takes about a second.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Item names as `icupkg -l` prints them (tree/item, without the package prefix).
REMOVED = re.compile(r"^(brkitr|curr|lang|region|unit|rbnf|translit)/|\.cnv$|^unames\.icu$")


TOOLS = {"icupkg": "icu-devtools", "readelf": "binutils", "as": "binutils", "ld": "binutils"}


def _run(*command: str) -> str:
    # Debian installs icupkg in /usr/sbin, which is not on a normal user's PATH.
    tool = shutil.which(command[0], path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))
    if tool is None:
        raise SystemExit(f"{command[0]} not found: install the Debian package {TOOLS[command[0]]} (`make system-deps`)")
    result = subprocess.run([tool, *command[1:]], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {result.returncode}:\n{result.stderr.strip()}")
    return result.stdout


def data_symbol(library: Path) -> tuple[str, int, int]:
    """(symbol name, file offset, size in bytes) of the ``icudtNN_dat`` blob in an ICU data library."""
    symbols = re.findall(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+OBJECT\s+GLOBAL\s+\S+\s+(\d+)\s+(icudt\d+_dat)$",
                         _run("readelf", "-Ws", str(library)), flags=re.MULTILINE)
    if not symbols:
        raise SystemExit(f"{library}: no icudtNN_dat symbol (not an ICU data library?)")
    address, size, section, name = symbols[0]
    for line in _run("readelf", "-SW", str(library)).splitlines():
        fields = re.match(r"\s*\[\s*(\d+)\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s", line)
        if fields and fields.group(1) == section:
            offset = int(address, 16) - int(fields.group(2), 16) + int(fields.group(3), 16)
            return name, offset, int(size, 0)
    raise SystemExit(f"{library}: section {section} of {name} not found")


def soname(library: Path) -> str:
    """The DT_SONAME of a shared library (``readelf -d``)."""
    found = re.search(r"\(SONAME\).*\[(.+)\]", _run("readelf", "-d", str(library)))
    if found is None:
        raise SystemExit(f"{library}: no soname")
    return found.group(1)


def slim_icu_data(library: Path, out: Path, removed_items: re.Pattern[str] = REMOVED) -> tuple[int, int]:
    """Write to ``out`` a copy of ``library`` without the items ``removed_items`` matches; returns (kept, removed)."""
    name, offset, size = data_symbol(library)
    version = re.fullmatch(r"icudt(\d+)_dat", name).group(1)  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory(prefix="dpgui-icu-") as folder:
        work = Path(folder)
        package = work / f"icudt{version}l.dat"  # icupkg names the ToC after the file: keep ICU's name
        with library.open("rb") as stream:
            stream.seek(offset)
            data = stream.read(size)
        if data[12:16] != b"CmnD":
            raise SystemExit(f"{library}: {name} is not an ICU common data package")
        package.write_bytes(data)
        items = _run("icupkg", "-l", str(package)).split()
        removed = [item for item in items if removed_items.search(item)]
        (work / "removed.txt").write_text("\n".join(removed) + "\n")
        slim = work / "slim" / package.name
        slim.parent.mkdir()
        _run("icupkg", "--auto_toc_prefix", "-r", str(work / "removed.txt"), str(package), str(slim))
        (work / "data.S").write_text(
            f'    .section .rodata\n    .globl {name}\n    .type {name}, @object\n    .balign 16\n'
            f'{name}:\n    .incbin "{slim}"\n    .size {name}, . - {name}\n'
            '    .section .note.GNU-stack,"",@progbits\n')
        _run("as", "-o", str(work / "data.o"), str(work / "data.S"))
        partial = out.with_name(out.name + ".part")
        _run("ld", "-shared", "-soname", soname(library), "-o", str(partial), str(work / "data.o"))
        os.replace(partial, out)
    return len(items) - len(removed), len(removed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", type=Path, help="libicudata.so.NN to shrink")
    parser.add_argument("--out", type=Path, help="where to write the smaller library (default: in place)")
    args = parser.parse_args(argv)
    before = args.library.stat().st_size
    out = args.out or args.library
    kept, removed = slim_icu_data(args.library, out)
    print(f"{args.library.name}: {before / 1e6:.1f} MB -> {out.stat().st_size / 1e6:.1f} MB "
          f"({kept} items kept, {removed} removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
