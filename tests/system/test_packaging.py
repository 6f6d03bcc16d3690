"""The installer recipes, checked as far as Linux can check them.

The installers themselves are built on their own systems (Inno Setup's iscc runs on Windows, hdiutil and
codesign on macOS: see .github/workflows/installers.yml). Here: the workflow against GitHub's schema and
its shape (one spec on three systems, self-test before upload, signing only when secrets exist), the
Inno Setup script's per-user install and .dpgui association, the macOS Info.plist, the Windows version
resource template after the spec's substitution, and the disk-image script's syntax.
"""

from __future__ import annotations

import ast
import importlib
import os
import plistlib
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path, PureWindowsPath

import pytest
from ruamel.yaml import YAML

import dpgui

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "installers.yml"
SPEC = ROOT / "packaging" / "dpgui.spec"
ISS = ROOT / "packaging" / "windows" / "dpgui.iss"
VERSION_TEMPLATE = ROOT / "packaging" / "windows" / "version_info.txt"
INFO_PLIST = ROOT / "packaging" / "macos" / "Info.plist"
MAKE_DMG = ROOT / "packaging" / "macos" / "make_dmg.sh"
PYINSTALLER_COMMAND = "pyinstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller packaging/dpgui.spec"


# ----------------------------------------------------------------------------------------------------
# The GitHub Actions workflow


def _check_workflow(path: Path) -> subprocess.CompletedProcess:
    """check-jsonschema with its vendored GitHub-workflow schema: no network needed."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def workflow() -> dict:
    return YAML(typ="safe").load(WORKFLOW.read_text(encoding="utf-8"))


def _jobs_by_os(workflow: dict) -> dict[str, dict]:
    """The build jobs by operating system (the release job, which only gathers their files, is not one)."""
    jobs = {}
    for name, job in workflow["jobs"].items():
        if name == "release":
            continue
        runner = job["runs-on"]
        for os_name, prefix in (("linux", "ubuntu-"), ("windows", "windows-"), ("macos", "macos-")):
            if runner.startswith(prefix):
                assert os_name not in jobs, f"two {os_name} jobs"
                jobs[os_name] = job
    return jobs


def _step_index(job: dict, predicate) -> int:
    """Index of the first step for which predicate(step) holds; fails if there is none."""
    for index, step in enumerate(job["steps"]):
        if predicate(step):
            return index
    raise AssertionError(f"no matching step in job {job.get('name')!r}")


def _runs(text: str):
    return lambda step: text in step.get("run", "")


def _uses(action: str):
    return lambda step: step.get("uses", "").split("@")[0] == action


def _all_values(node, key: str):
    """Every value stored under `key`, at any depth."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                yield v
            yield from _all_values(v, key)
    elif isinstance(node, list):
        for item in node:
            yield from _all_values(item, key)


def test_workflow_is_valid_for_github():
    result = _check_workflow(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflow_schema_check_can_fail(tmp_path):
    """The check above is not vacuous: a job without `runs-on` is refused."""
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "\n    runs-on: windows-latest\n" in text
    broken = tmp_path / "installers.yml"
    broken.write_text(text.replace("\n    runs-on: windows-latest\n", "\n"), encoding="utf-8")
    result = _check_workflow(broken)
    assert result.returncode != 0
    assert "runs-on" in result.stdout + result.stderr


def test_workflow_triggers(workflow):
    on = workflow["on"]
    assert on["push"]["tags"] == ["v*"]
    assert "workflow_dispatch" in on
    assert set(on["pull_request"]["paths"]) >= {"packaging/**", ".github/workflows/installers.yml"}


def test_three_jobs_build_from_the_one_spec_and_self_test_before_upload(workflow):
    jobs = _jobs_by_os(workflow)
    assert set(jobs) == {"linux", "windows", "macos"}
    assert jobs["linux"]["runs-on"] == "ubuntu-22.04"  # the oldest: widest glibc reach
    assert jobs["macos"]["runs-on"] == "macos-14"
    frozen_self_test = {
        "linux": "dist/dpgui/dpgui-cli --self-test",
        "windows": "dist\\dpgui\\dpgui-cli.exe --self-test",
        "macos": "dist/dpgui.app/Contents/MacOS/dpgui-cli --self-test",
    }
    for os_name, job in jobs.items():
        _step_index(job, _uses("actions/checkout"))
        python = job["steps"][_step_index(job, _uses("actions/setup-python"))]
        assert str(python["with"]["python-version"]) == "3.11"
        if os_name == "linux":
            # `make package` runs packaging/linux/build.sh, which runs PyInstaller on the same spec.
            build = _step_index(job, _runs("make package"))
            assert _step_index(job, _runs("make system-deps")) < build
            assert "packaging/linux/build.sh" in (ROOT / "Makefile").read_text(encoding="utf-8")
            assert "packaging/dpgui.spec" in (ROOT / "packaging" / "linux" / "build.sh").read_text(encoding="utf-8")
        else:
            install = _step_index(job, _runs('pip install -e ".[package]"'))
            build = _step_index(job, _runs(PYINSTALLER_COMMAND))
            assert install < build
        self_test = _step_index(job, _runs(frozen_self_test[os_name]))
        upload = _step_index(job, _uses("actions/upload-artifact"))
        assert build < self_test < upload, os_name
        assert job["steps"][upload]["uses"] == "actions/upload-artifact@v4"
        assert job["steps"][upload]["with"]["if-no-files-found"] == "error"


def test_jobs_build_and_upload_the_installers(workflow):
    jobs = _jobs_by_os(workflow)
    windows, macos, linux = jobs["windows"], jobs["macos"], jobs["linux"]
    iscc = _step_index(windows, _runs("packaging\\windows\\dpgui.iss"))
    assert "/DAppVersion=" in windows["steps"][iscc]["run"]
    dmg = _step_index(macos, _runs("packaging/macos/make_dmg.sh"))
    uploads = {os_name: job["steps"][_step_index(job, _uses("actions/upload-artifact"))]["with"]["path"]
               for os_name, job in jobs.items()}
    assert "dpgui-*-windows-x64-setup.exe" in uploads["windows"]
    assert "dpgui-*-macos-*.dmg" in uploads["macos"]
    assert "dpgui_*_amd64.deb" in uploads["linux"] and "dpgui-*-linux-x86_64.tar.gz" in uploads["linux"]
    assert iscc < _step_index(windows, _uses("actions/upload-artifact"))
    assert dmg < _step_index(macos, _uses("actions/upload-artifact"))
    # The installed (not only the built) app passes its self-test.
    _step_index(linux, _runs("apt-get install -y ./dist/dpgui_"))
    _step_index(windows, _runs("/VERYSILENT"))
    _step_index(macos, _runs("hdiutil attach"))


def test_a_tag_drafts_a_release_from_the_self_tested_installers(workflow):
    release = workflow["jobs"]["release"]
    assert release["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert sorted(release["needs"]) == ["linux", "macos", "windows"]  # only after every job self-tested
    assert release["permissions"] == {"contents": "write"} and workflow["permissions"] == {"contents": "read"}
    download = release["steps"][_step_index(release, _uses("actions/download-artifact"))]
    assert download["with"]["merge-multiple"] is True and download["with"]["path"] == "dist"
    create = release["steps"][_step_index(release, _runs("gh release create"))]
    assert download is not create and "--draft" in create["run"] and "dist/*" in create["run"]
    assert create["env"]["GH_TOKEN"] == "${{ github.token }}"
    other_jobs = [job for name, job in workflow["jobs"].items() if name != "release"]
    assert all("permissions" not in job for job in other_jobs)  # the build jobs keep read-only access


def test_secrets_never_in_conditions_and_signing_is_guarded(workflow):
    conditions = [str(condition) for condition in _all_values(workflow, "if")]
    assert conditions, "no conditional step at all"
    assert not [c for c in conditions if "secrets." in c], conditions
    # Secret values reach scripts through `env` only (never pasted into a script's text).
    assert not [run for run in _all_values(workflow, "run") if "secrets." in run]
    jobs = _jobs_by_os(workflow)
    signing_commands = ("signtool", "security import", "codesign ")
    signing_steps = 0
    for job in jobs.values():
        job_env = job.get("env", {})
        for step in job["steps"]:
            if any(command in step.get("run", "") for command in signing_commands):
                signing_steps += 1
                condition = str(step.get("if", ""))
                guards = re.findall(r"env\.([A-Z_][A-Z0-9_]*)", condition)
                assert guards, f"signing step {step.get('name')!r} runs unconditionally"
                for name in guards:
                    assert name in job_env or name in workflow.get("env", {}), f"env.{name} is never set"
    assert signing_steps >= 3  # Windows: the programs and the installer; macOS: the certificate
    assert "secrets.WINDOWS_CERT_PFX_BASE64" in str(jobs["windows"]["env"])
    assert "secrets.MACOS_CERT_P12_BASE64" in str(jobs["macos"]["env"])


# ----------------------------------------------------------------------------------------------------
# The Inno Setup script


def _iss_defines(text: str) -> dict[str, str]:
    return dict(re.findall(r'^\s*#define\s+(\w+)\s+"([^"]*)"', text, flags=re.MULTILINE))


def _iss_sections(text: str) -> dict[str, list[str]]:
    """Section name (lower case) -> its lines, with ISPP's {#Name} defines expanded; comments dropped."""
    defines = _iss_defines(text)
    text = re.sub(r"\{#(\w+)\}", lambda match: defines[match.group(1)], text)
    sections: dict[str, list[str]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            current = header.group(1).lower()
            sections.setdefault(current, [])
        else:
            assert current is not None, f"line outside any section: {line}"
            sections[current].append(line)
    return sections


def _iss_setup(sections) -> dict[str, str]:
    return {key.strip().lower(): value.strip() for key, value in
            (line.split("=", 1) for line in sections["setup"])}


def _iss_entries(lines: list[str]) -> list[dict[str, str]]:
    """`Name: "value"; Flags: a b` lines as dicts (keys lower case, quotes removed, "" unescaped)."""
    entries = []
    for line in lines:
        entry = {}
        for key, value in re.findall(r'(\w+)\s*:\s*("(?:[^"]|"")*"|[^;]*)', line):
            value = value.strip()
            if value.startswith('"'):
                value = value[1:-1].replace('""', '"')
            entry[key.lower()] = value
        entries.append(entry)
    return entries


@pytest.fixture(scope="module")
def iss():
    text = ISS.read_text(encoding="utf-8")
    sections = _iss_sections(text)
    return {"text": text, "sections": sections, "setup": _iss_setup(sections)}


def _iss_path(setup: dict, relative: str) -> Path:
    """A path in the script, relative to SourceDir (itself relative to the script's folder)."""
    source_dir = ISS.parent / PureWindowsPath(setup.get("sourcedir", ".")).as_posix()
    return (source_dir / PureWindowsPath(relative).as_posix()).resolve()


def test_inno_setup_installs_per_user(iss):
    setup = iss["setup"]
    assert setup["privilegesrequired"] == "lowest"
    assert "privilegesrequiredoverridesallowed" not in setup  # never an all-users (HKLM) install
    assert setup["defaultdirname"].startswith(("{autopf}", "{localappdata}\\Programs", "{userpf}"))
    assert setup["changesassociations"] == "yes"
    assert setup["uninstalldisplayicon"] == "{app}\\dpgui.exe"
    assert re.fullmatch(r"\{\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}", setup["appid"])
    assert setup["appversion"] == dpgui.__version__  # the default when no /DAppVersion= is given
    assert setup["outputbasefilename"] == f"dpgui-{dpgui.__version__}-windows-x64-setup"
    assert _iss_path(setup, setup["outputdir"]) == ROOT / "dist"
    assert _iss_path(setup, ".") == ROOT


def test_inno_setup_version_default_is_overridable():
    text = ISS.read_text(encoding="utf-8")
    assert re.search(r'#ifndef AppVersion\s+#define AppVersion "[^"]+"\s+#endif', text)
    assert "AppVersion={#AppVersion}" in text


def test_inno_setup_associates_dpgui_files_for_the_user(iss):
    registry = _iss_entries(iss["sections"]["registry"])
    assert registry and all(entry["root"] in ("HKCU", "HKA") for entry in registry)
    assert all(entry["subkey"].startswith("Software\\Classes\\") for entry in registry)
    extension = [e for e in registry if e["subkey"] == "Software\\Classes\\.dpgui" and e["valuename"] == ""]
    assert len(extension) == 1
    progid = extension[0]["valuedata"]
    commands = [e for e in registry if e["subkey"] == f"Software\\Classes\\{progid}\\shell\\open\\command"]
    assert [e["valuedata"] for e in commands] == ['"{app}\\dpgui.exe" "%1"']
    removed = [e for e in registry if e["subkey"] == f"Software\\Classes\\{progid}"]
    assert any("uninsdeletekey" in e.get("flags", "") for e in removed)  # the uninstaller removes it


def test_inno_setup_start_menu_desktop_and_files(iss):
    icons = _iss_entries(iss["sections"]["icons"])
    assert any(e["name"].startswith("{group}\\") and e["filename"] == "{app}\\dpgui.exe" for e in icons)
    desktop = [e for e in icons if e["name"].startswith(("{autodesktop}", "{userdesktop}"))]
    assert desktop and all(e.get("tasks") == "desktopicon" for e in desktop)
    assert any(e["name"] == "desktopicon" and "unchecked" in e.get("flags", "")
               for e in _iss_entries(iss["sections"]["tasks"]))
    files = _iss_entries(iss["sections"]["files"])
    assert any(e["source"] == "dist\\dpgui\\*" and "recursesubdirs" in e["flags"] for e in files)
    setup = iss["setup"]
    referenced = [e["source"] for e in files]
    referenced += [setup[key] for key in ("setupiconfile", "licensefile", "infobeforefile", "infoafterfile",
                                          "wizardimagefile", "wizardsmallimagefile") if key in setup]
    assert setup["setupiconfile"] == "resources\\icons\\dpgui.ico"
    for source in referenced:
        if PureWindowsPath(source).parts[0] == "dist":
            continue  # the PyInstaller build, made before iscc runs
        path = _iss_path(setup, source)
        assert list(path.parent.glob(path.name)), f"{source} (as {path}) does not exist"


# ----------------------------------------------------------------------------------------------------
# macOS


def test_info_plist_declares_the_project_document_type():
    info = plistlib.loads(INFO_PLIST.read_bytes())
    assert info["CFBundleName"] == info["CFBundleDisplayName"] == "dpgui"
    assert info["CFBundleIdentifier"] == "org.dpgui.dpgui"
    assert info["LSMinimumSystemVersion"] == "11.0"
    assert info["NSHighResolutionCapable"] is True
    assert info["NSHumanReadableCopyright"]
    (document,) = [d for d in info["CFBundleDocumentTypes"] if "org.dpgui.project" in d["LSItemContentTypes"]]
    assert document["CFBundleTypeRole"] == "Editor"
    assert document["LSHandlerRank"] == "Owner"
    (declared,) = [t for t in info["UTExportedTypeDeclarations"] if t["UTTypeIdentifier"] == "org.dpgui.project"]
    assert "public.json" in declared["UTTypeConformsTo"]
    assert declared["UTTypeTagSpecification"]["public.filename-extension"] == ["dpgui"]
    # PyInstaller copies the bundle icon to Contents/Resources under its own name.
    for icon in (document.get("CFBundleTypeIconFile"), declared.get("UTTypeIconFile")):
        assert icon in (None, "dpgui.icns")
    assert (ROOT / "resources" / "icons" / "dpgui.icns").is_file()
    # What packaging/dpgui.spec does with it: add the version and hand the dict to BUNDLE.
    info["CFBundleShortVersionString"] = info["CFBundleVersion"] = dpgui.__version__
    assert plistlib.loads(plistlib.dumps(info)) == info


def test_make_dmg_script_syntax():
    result = subprocess.run(["bash", "-n", str(MAKE_DMG)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert os.access(MAKE_DMG, os.X_OK)
    text = MAKE_DMG.read_text(encoding="utf-8")
    assert "set -euo pipefail" in text
    assert "hdiutil create" in text and "UDZO" in text and "ln -s /Applications" in text
    assert 'dist/dpgui-${VERSION}-macos-${ARCH}.dmg' in text
    # Signing never uses --deep (only the verification does); notarisation waits for the verdict.
    for line in text.splitlines():
        if re.search(r"\bcodesign\b", line) and "--deep" in line and not line.lstrip().startswith("#"):
            assert "--verify" in line, line
    assert "notarytool submit" in text and "--wait" in text and "stapler staple" in text


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the script would build a disk image")
def test_make_dmg_refuses_to_run_off_macos():
    result = subprocess.run(["bash", str(MAKE_DMG)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "needs macOS" in result.stderr


def test_shell_scripts_pass_shellcheck(workflow, tmp_path):
    assert shutil.which("shellcheck"), "shellcheck is not installed: run `make system-deps` (Debian package shellcheck)"
    scripts = [MAKE_DMG]
    for job in _jobs_by_os(workflow).values():
        if job.get("defaults", {}).get("run", {}).get("shell", "bash") != "bash":
            continue  # PowerShell
        for index, step in enumerate(job["steps"]):
            if "run" in step:
                script = tmp_path / f"{job['runs-on']}-{index}.sh"
                script.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"], encoding="utf-8")
                scripts.append(script)
    result = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


# ----------------------------------------------------------------------------------------------------
# The Windows version resource


def _version_numbers(version: str) -> tuple[int, int, int, int]:
    major, minor, patch = (int(part) for part in re.match(r"(\d+)\.(\d+)\.(\d+)", version).groups())
    return major, minor, patch, 0


def _render_version_info(version: str) -> str:
    """The template after the substitution packaging/dpgui.spec makes."""
    numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:3]) + (0,)
    return (VERSION_TEMPLATE.read_text(encoding="utf-8")
            .replace("{VERSION}", version).replace("{VERSION_TUPLE}", repr(numbers[:4])))


def test_spec_substitutes_the_placeholders_of_the_template():
    spec = SPEC.read_text(encoding="utf-8")
    assert "packaging\" / \"windows\" / \"version_info.txt" in spec
    for placeholder in ("{VERSION}", "{VERSION_TUPLE}"):
        assert placeholder in spec and placeholder in VERSION_TEMPLATE.read_text(encoding="utf-8")


@pytest.mark.parametrize("version", [dpgui.__version__, "1.12.3"])
def test_version_template_is_one_python_expression(version):
    """Checked without PyInstaller: the structure PyInstaller evaluates, with the right numbers."""
    tree = ast.parse(_render_version_info(version), mode="eval")
    assert isinstance(tree.body, ast.Call) and tree.body.func.id == "VSVersionInfo"
    calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert calls <= {"VSVersionInfo", "FixedFileInfo", "StringFileInfo", "StringTable", "StringStruct",
                     "VarFileInfo", "VarStruct"}
    expected = _version_numbers(version)
    keywords = {kw.arg: ast.literal_eval(kw.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
                and node.func.id == "FixedFileInfo" for kw in node.keywords}
    assert keywords["filevers"] == keywords["prodvers"] == expected
    strings = {node.args[0].value: node.args[1].value for node in ast.walk(tree)
               if isinstance(node, ast.Call) and node.func.id == "StringStruct"}
    assert strings["FileVersion"] == strings["ProductVersion"] == version
    assert strings["ProductName"] == "dpgui"


def test_version_template_loads_in_pyinstaller(tmp_path, monkeypatch):
    """PyInstaller's own loader (what EXE(version=...) calls) accepts the rendered template."""
    import PyInstaller.compat  # in the test extra (through dpgui[package])

    # The module imports Windows-only helpers at the top; loading a text file needs neither.
    try:
        importlib.import_module("pefile")
    except ImportError:
        monkeypatch.setitem(sys.modules, "pefile", types.ModuleType("pefile"))
    if not hasattr(PyInstaller.compat, "win32api"):
        monkeypatch.setattr(PyInstaller.compat, "win32api", None, raising=False)
    versioninfo = importlib.import_module("PyInstaller.utils.win32.versioninfo")

    rendered = tmp_path / "windows-version.txt"
    rendered.write_text(_render_version_info(dpgui.__version__), encoding="utf-8")
    info = versioninfo.load_version_info_from_text_file(str(rendered))
    assert isinstance(info, versioninfo.VSVersionInfo)
    major, minor, patch, _ = _version_numbers(dpgui.__version__)
    assert info.ffi.fileVersionMS == (major << 16) | minor
    assert info.ffi.fileVersionLS == patch << 16
    assert info.ffi.productVersionMS == info.ffi.fileVersionMS
    assert isinstance(info.toRaw(), bytes)
    text = str(info)
    assert f"StringStruct('FileVersion', '{dpgui.__version__}')" in text
    assert "VarStruct('Translation', [1033, 1200])" in text


def test_every_manifest_schema_is_package_data():
    """A statistic's manifest schema lives beside its module (dpgui/report/, dpgui/report/counts/, …) and is
    read when a bundle is signed or verified: a wheel that lacks one signs nothing of that kind. Every
    ``*.schema.json`` under dpgui/ matches a package-data glob of pyproject.toml (the frozen app collects them
    all by the same suffix, and its self-test signs and verifies every statistic)."""
    import fnmatch
    import tomllib

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["dpgui"]
    schemas = sorted(p.relative_to(ROOT / "dpgui").as_posix() for p in (ROOT / "dpgui").rglob("*.schema.json"))
    assert len(schemas) >= 2  # the shared one and the counts'
    missing = [s for s in schemas if not any(fnmatch.fnmatchcase(s, g) and s.count("/") == g.count("/") for g in globs)]
    assert missing == [], missing
    assert 'rglob("*.schema.json")' in SPEC.read_text()
