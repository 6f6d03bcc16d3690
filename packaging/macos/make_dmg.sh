#!/usr/bin/env bash
# Builds dist/dpgui-<version>-macos-<arch>.dmg from dist/dpgui.app (macOS only).
#
#   pyinstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller packaging/dpgui.spec
#   packaging/macos/make_dmg.sh
#
# The disk image holds dpgui.app and a link to /Applications, so users drag one onto the other.
#
# Without the variables below the .dmg is unsigned (PyInstaller's ad-hoc signature only): it works on
# the Mac that built it, and elsewhere Gatekeeper asks before the first start (see docs/install.md).
#   MACOS_SIGN_IDENTITY   a "Developer ID Application: NAME (TEAMID)" certificate in the keychain:
#                         signs every binary of the app with the hardened runtime and a secure
#                         timestamp, innermost first (no `codesign --deep`), then the app and the .dmg.
#   APPLE_ID, APPLE_TEAM_ID, APPLE_APP_PASSWORD (an app-specific password of that Apple ID), together
#                         with MACOS_SIGN_IDENTITY: submits the .dmg to Apple's notary service, waits
#                         for the verdict and staples the ticket to the .dmg.
# DPGUI_VERSION and DPGUI_ARCH override the version (default: dpgui/__init__.py) and the architecture
# in the file name (default: the architectures of the built app: arm64, x86_64 or universal2).
set -euo pipefail

die() {
    echo "make_dmg.sh: $*" >&2
    exit 1
}

cd "$(dirname "$0")/../.."
APP="dist/dpgui.app"

[[ "$(uname -s)" == Darwin ]] || die "needs macOS (hdiutil, codesign, xcrun)"
[[ -d "$APP" ]] || die "$APP is missing; build it first:
  pyinstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller packaging/dpgui.spec"

VERSION="${DPGUI_VERSION:-$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' dpgui/__init__.py)}"
[[ -n "$VERSION" ]] || die "could not read __version__ from dpgui/__init__.py"
ARCH="${DPGUI_ARCH:-}"
if [[ -z "$ARCH" ]]; then
    case "$(lipo -archs "$APP/Contents/MacOS/dpgui" 2>/dev/null || uname -m)" in
        arm64) ARCH=arm64 ;;
        x86_64) ARCH=x86_64 ;;
        *arm64*x86_64* | *x86_64*arm64*) ARCH=universal2 ;;
        *) ARCH="$(uname -m)" ;;
    esac
fi
DMG="dist/dpgui-${VERSION}-macos-${ARCH}.dmg"

IDENTITY="${MACOS_SIGN_IDENTITY:-}"
NOTARISE=no
if [[ -n "${APPLE_ID:-}" && -n "${APPLE_TEAM_ID:-}" && -n "${APPLE_APP_PASSWORD:-}" ]]; then
    if [[ -n "$IDENTITY" ]]; then
        NOTARISE=yes
    else
        echo "make_dmg.sh: APPLE_ID etc. are set but MACOS_SIGN_IDENTITY is not: Apple notarises only signed apps; not notarising" >&2
    fi
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

codesign_hardened() {
    codesign --force --timestamp --options runtime --sign "$IDENTITY" "$@"
}

sign_app() {
    # Python's ctypes (libffi closures) needs writable+executable memory under the hardened runtime.
    local entitlements="$WORK/entitlements.plist"
    cat >"$entitlements" <<'PLIST'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>com.apple.security.cs.allow-unsigned-executable-memory</key>
	<true/>
</dict>
</plist>
PLIST
    local path count=0
    echo "signing $APP as: $IDENTITY"
    # 1. Every Mach-O library and extension module (PyInstaller puts code in Contents/Frameworks;
    #    Contents/Resources should hold none, but anything found there is signed too).
    while IFS= read -r -d '' path; do
        if file -b "$path" | grep -q 'Mach-O'; then
            codesign_hardened "$path"
            count=$((count + 1))
        fi
    done < <(find "$APP/Contents/Frameworks" "$APP/Contents/Resources" -type f -print0)
    # 2. The .framework bundles (Qt's), after their contents; -depth lists nested ones first.
    while IFS= read -r -d '' path; do
        codesign_hardened "$path"
        count=$((count + 1))
    done < <(find "$APP/Contents/Frameworks" -depth -type d -name '*.framework' -print0)
    # 3. The helper executable(s) next to the main one (dpgui-cli).
    while IFS= read -r -d '' path; do
        if [[ "$(basename "$path")" != dpgui ]] && file -b "$path" | grep -q 'Mach-O'; then
            codesign_hardened --entitlements "$entitlements" "$path"
            count=$((count + 1))
        fi
    done < <(find "$APP/Contents/MacOS" -maxdepth 1 -type f -print0)
    # 4. The bundle itself: signs the main executable and seals every resource.
    codesign_hardened --entitlements "$entitlements" "$APP"
    echo "signed $count nested binaries and the app bundle"
    codesign --verify --strict --deep --verbose=2 "$APP"
}

if [[ -n "$IDENTITY" ]]; then
    sign_app
fi

# The staging folder becomes the image's contents: the app and a link to /Applications.
STAGING="$WORK/dmg"
mkdir -p "$STAGING"
ditto "$APP" "$STAGING/dpgui.app"
ln -s /Applications "$STAGING/Applications"
rm -f "$DMG"
# hdiutil sometimes fails with "Resource busy" on CI machines; a retry helps.
for attempt in 1 2 3; do
    if hdiutil create -volname "dpgui $VERSION" -srcfolder "$STAGING" -fs HFS+ -format UDZO \
        -imagekey zlib-level=9 -ov "$DMG"; then
        break
    fi
    [[ $attempt -lt 3 ]] || die "hdiutil create failed 3 times"
    echo "hdiutil create failed (attempt $attempt); retrying in 10 s" >&2
    sleep 10
done

if [[ -n "$IDENTITY" ]]; then
    codesign --force --timestamp --sign "$IDENTITY" "$DMG"
    codesign --verify --verbose=2 "$DMG"
fi

if [[ "$NOTARISE" == yes ]]; then
    echo "notarising $DMG (usually a few minutes)"
    RESULT="$WORK/notary.json"
    if ! xcrun notarytool submit "$DMG" --apple-id "$APPLE_ID" --team-id "$APPLE_TEAM_ID" \
        --password "$APPLE_APP_PASSWORD" --wait --output-format json >"$RESULT"; then
        cat "$RESULT" >&2
        die "notarytool submit failed"
    fi
    json_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$RESULT" "$1"; }
    STATUS="$(json_field status)"
    if [[ "$STATUS" != Accepted ]]; then
        # The log names each file Apple rejected and why.
        xcrun notarytool log "$(json_field id)" --apple-id "$APPLE_ID" --team-id "$APPLE_TEAM_ID" \
            --password "$APPLE_APP_PASSWORD" >&2 || true
        die "notarisation status: ${STATUS:-unknown}"
    fi
    xcrun stapler staple "$DMG"
    xcrun stapler validate "$DMG"
    spctl --assess --type open --context context:primary-signature --verbose=2 "$DMG"
    echo "$DMG: signed, notarised and stapled"
elif [[ -n "$IDENTITY" ]]; then
    echo "$DMG: signed but NOT notarised (set APPLE_ID, APPLE_TEAM_ID and APPLE_APP_PASSWORD):"
    echo "  Gatekeeper still blocks a downloaded copy until the user allows it."
else
    echo "$DMG: UNSIGNED and not notarised (set MACOS_SIGN_IDENTITY, and APPLE_ID, APPLE_TEAM_ID,"
    echo "  APPLE_APP_PASSWORD to sign and notarise): on other Macs Gatekeeper asks before the first start."
fi
shasum -a 256 "$DMG"
