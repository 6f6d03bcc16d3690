"""Print the Debian `Depends:` value for a frozen dpgui bundle: the packages of the system libraries it links to.

    python packaging/linux/deb_depends.py dist/dpgui

Reads DT_NEEDED of every ELF file in the bundle (``readelf -d``); sonames the bundle ships itself
are dropped; each remaining soname is found with ``ldconfig -p`` and mapped to its package with
``dpkg -S``. This is what dpkg-shlibdeps does for a normal package; it is done by hand because
dpkg-shlibdeps wants a debian/ source tree and refuses libraries it cannot attribute (the bundled
ones). Fails (exit 1, naming them) if a soname is neither bundled nor provided by an installed
package, so a library the build machine lacks is never silently left out of `Depends:`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

# Qt loads these with dlopen (no DT_NEEDED), and draws no text without a font.
EXTRA = ["libegl1", "libgl1", "fonts-dejavu-core | fonts-liberation2 | fonts-noto-core"]


def elf_files(root: Path) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def needed(path: Path) -> list[str]:
    output = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", output)


def glibc_needed(path: Path) -> list[tuple[int, ...]]:
    """The GLIBC_x.y symbol versions ``path`` requires (its minimum glibc)."""
    output = subprocess.run(["readelf", "--version-info", str(path)], capture_output=True, text=True, check=True).stdout
    return [tuple(map(int, v.split("."))) for v in re.findall(r"Name: GLIBC_(\d+(?:\.\d+)+)", output)]


def system_library_paths() -> dict[str, str]:
    output = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    paths: dict[str, str] = {}
    for soname, arch, path in re.findall(r"^\s*(\S+) \(([^)]*)\) => (\S+)$", output, re.MULTILINE):
        if "x86-64" in arch or "64bit" in arch:
            paths.setdefault(soname, path)
    return paths


def package_of(path: str) -> str | None:
    for candidate in dict.fromkeys([path, os.path.realpath(path), path.replace("/usr/lib/", "/lib/", 1),
                                    os.path.realpath(path).replace("/usr/lib/", "/lib/", 1)]):
        result = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(":", 1)[0].strip()
    return None


def main(bundle: str) -> int:
    root = Path(bundle)
    files = elf_files(root)
    shipped = {path.name for path in root.rglob("*")}
    wanted = sorted({soname for path in files for soname in needed(path)} - shipped)
    system = system_library_paths()
    packages, unresolved = set(), []
    for soname in wanted:
        package = package_of(system[soname]) if soname in system else None
        if package is None:
            unresolved.append(soname)
        else:
            packages.add(package)
    if unresolved:
        print(f"deb_depends: no installed package provides {', '.join(unresolved)}; install the packages that "
              "ship them (see SYSTEM_PACKAGES in the Makefile) and rebuild", file=sys.stderr)
        return 1
    # Like dpkg-shlibdeps: libc6 at least as new as the newest glibc symbol version used, so the .deb does
    # not install on an older system where it could not start.
    newest = max((v for path in files for v in glibc_needed(path)), default=None)
    depends = [f"libc6 (>= {'.'.join(map(str, newest))})" if name == "libc6" and newest else name
               for name in sorted(packages)]
    print(", ".join(depends + [extra for extra in EXTRA if extra not in packages]))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: deb_depends.py BUNDLE_DIR")
    sys.exit(main(sys.argv[1]))
