#!/usr/bin/env bash
# `make package`: the frozen Linux app, a .deb and a .tar.gz, each checked with the self-test.
#
# Outputs (in dist/): dpgui/ (the one-folder bundle), dpgui_<version>_amd64.deb and
# dpgui-<version>-linux-x86_64.tar.gz. Needs the venv with the `package` extra and the Debian
# packages of `make system-deps` (Qt's system libraries must be installed for `Depends:` to be found).
# The venv is first brought to the versions of packaging/constraints.txt (`make constraints`).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
VERSION=$($PY -c 'import dpgui; print(dpgui.__version__)')
ARCH=$(dpkg --print-architecture)
BUNDLE=dist/dpgui

echo "== dependencies: the versions of packaging/constraints.txt (what a release is built from)"
$PY -m pip install --quiet -e ".[package]" -c packaging/constraints.txt

echo "== PyInstaller (packaging/dpgui.spec)"
$PY -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller packaging/dpgui.spec

echo "== ICU data: only the parts Qt uses (packaging/linux/slim_icu.py)"
$PY packaging/linux/slim_icu.py "$BUNDLE"/_internal/PySide6/Qt/lib/libicudata.so.[0-9]*

echo "== strip symbols (not from auditwheel's *.libs, which strip would break)"
before=$(du -sm "$BUNDLE" | cut -f1)
find "$BUNDLE" -type f \( -name '*.so' -o -name '*.so.*' \) -not -path '*.libs/*' -print0 \
    | xargs -0 strip --strip-unneeded
echo "bundle: ${before} MB before, $(du -sm "$BUNDLE" | cut -f1) MB after"

echo "== one copy of the libraries two wheels ship identically (packaging/linux/dedupe_libs.py)"
$PY packaging/linux/dedupe_libs.py "$BUNDLE"

echo "== self-test of the bundle"
"$BUNDLE/dpgui-cli" --self-test

echo "== tar.gz"
tarball=dist/dpgui-$VERSION-linux-x86_64.tar.gz
tar -C dist -czf "$tarball.part" dpgui && mv "$tarball.part" "$tarball"

echo "== deb"
root=build/deb/root
rm -rf build/deb && mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" \
    "$root/usr/share/mime/packages" "$root/usr/share/icons/hicolor/256x256/apps" "$root/usr/share/icons/hicolor/512x512/apps"
cp -al "$BUNDLE" "$root/opt/dpgui"   # hard links: the staging tree costs no disk space
install -m 0755 packaging/linux/dpgui-launcher.sh "$root/usr/bin/dpgui"
install -m 0644 packaging/linux/dpgui.desktop "$root/usr/share/applications/dpgui.desktop"
install -m 0644 packaging/linux/dpgui-mime.xml "$root/usr/share/mime/packages/dpgui.xml"
install -m 0644 resources/icons/dpgui-256.png "$root/usr/share/icons/hicolor/256x256/apps/dpgui.png"
install -m 0644 resources/icons/dpgui.png "$root/usr/share/icons/hicolor/512x512/apps/dpgui.png"
depends=$($PY packaging/linux/deb_depends.py "$BUNDLE")
installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$installed_kb/" \
    packaging/linux/control.in > "$root/DEBIAN/control"
chmod -R u+rwX,go+rX,go-w "$root"
deb=dist/dpgui_${VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb.part" >/dev/null && mv "$deb.part" "$deb"
rm -rf build/deb build/pyinstaller   # staging and PyInstaller's work files: ~90 MB nobody reads again
echo "Depends: $depends"
ls -l "$deb" "$tarball"
echo "unpacked bundle: $(du -sm "$BUNDLE" | cut -f1) MB ($(du -s --apparent-size --block-size=1M "$BUNDLE" | cut -f1) MB apparent)"
echo "largest parts (MB):"
# awk, not head: head would close the pipe early, and under pipefail sort's SIGPIPE fails the build.
du -sm "$BUNDLE"/_internal/* "$BUNDLE"/dpgui | sort -rn | awk -v prefix="$BUNDLE/" 'NR <= 8 { sub(prefix, ""); print }'
