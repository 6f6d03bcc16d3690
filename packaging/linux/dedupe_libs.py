"""One copy of each library that two wheels ship byte for byte in their auditwheel folders (``*.libs``).

auditwheel gives every library it copies into a wheel a name with a hash of its contents
(``libgfortran-040039e1-0352e75f.so.5.0.0``), so two wheels built with the same toolchain carry identical
files under the same name: NumPy's and SciPy's both bring libgfortran and libquadmath (3 MB). The later
copy (folders in name order) becomes a relative symbolic link to the first; the extensions still find it
by their RPATH (``$ORIGIN/../../scipy.libs``) and the loader follows the link. Files are compared byte for
byte: a name alone never decides. Not stripped or otherwise changed (``strip`` breaks auditwheel's libraries).

    python packaging/linux/dedupe_libs.py BUNDLE        (BUNDLE: dist/dpgui, with its _internal/ folder)
"""

from __future__ import annotations

import argparse
import filecmp
import sys
from pathlib import Path


def dedupe_libs(internal: Path) -> list[tuple[Path, Path]]:
    """Replace each file of ``internal/*.libs/`` that has the name and the bytes of one in an earlier such
    folder by a relative symbolic link to it; returns (link, target) pairs."""
    first: dict[str, Path] = {}
    linked: list[tuple[Path, Path]] = []
    for folder in sorted(internal.glob("*.libs")):
        for library in sorted(folder.iterdir()):
            if library.is_symlink() or not library.is_file():
                continue
            kept = first.setdefault(library.name, library)
            if kept is not library and filecmp.cmp(kept, library, shallow=False):
                partial = library.with_name(library.name + ".link")
                partial.symlink_to(Path("..") / kept.parent.name / kept.name)
                partial.replace(library)
                linked.append((library, kept))
    return linked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path, help="the one-folder bundle (dist/dpgui)")
    args = parser.parse_args(argv)
    internal = args.bundle / "_internal"
    if not internal.is_dir():
        raise SystemExit(f"{internal} is not a folder: give the bundle made by PyInstaller (dist/dpgui)")
    saved = 0
    for link, target in dedupe_libs(internal):
        saved += target.stat().st_size
        print(f"{link.relative_to(internal)} -> {target.relative_to(internal)}")
    print(f"identical libraries linked: {saved / 1e6:.1f} MB saved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
