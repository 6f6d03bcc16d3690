; Inno Setup 6 script: the per-user Windows installer of dpgui.
;
; Build the app first (from the repository root):
;   pyinstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller packaging/dpgui.spec
; then compile this script with Inno Setup 6.3 or later (its ISCC.exe):
;   iscc /DAppVersion=0.1.0 packaging\windows\dpgui.iss
; which writes dist\dpgui-0.1.0-windows-x64-setup.exe.
;
; The installer needs no administrator rights: it installs for the current user only, into
; %LOCALAPPDATA%\Programs\dpgui ({autopf} in non-administrative mode), with a Start menu entry, an
; optional desktop icon and the .dpgui file association under HKEY_CURRENT_USER\Software\Classes.
; Uninstalling removes the program, its shortcuts and the association; it leaves the user's data
; folder (%LOCALAPPDATA%\dpgui: signing keys, budget ledger, autosaves) alone.

; The version: pass /DAppVersion=X.Y.Z (CI passes dpgui.__version__). The default below must equal
; __version__ in dpgui\__init__.py (tests/system/test_packaging.py checks it).
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "dpgui"
#define AppExe "dpgui.exe"
#define ProgId "dpgui.project"

[Setup]
; Identifies the application to Windows (Apps & features) and to later installers of new versions,
; which then update this installation in place. Never change it. ("{{" is a literal "{".)
AppId={{4AA47944-156F-4B5A-89F1-DB35283B7FFC}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=dpgui developers
AppCopyright=Copyright (c) dpgui developers. MIT License.
; Every relative path below ([Files] Source, SetupIconFile, OutputDir) is relative to the repository
; root, two levels above this script.
SourceDir=..\..
OutputDir=dist
OutputBaseFilename=dpgui-{#AppVersion}-windows-x64-setup
SetupIconFile=resources\icons\dpgui.ico
; Per-user installation: no UAC prompt. {autopf} is %LOCALAPPDATA%\Programs in this mode, {group}
; is the user's Start menu, HKCU is the user's registry hive.
PrivilegesRequired=lowest
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; The frozen app is 64-bit and needs Windows 10 or later (Qt 6).
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
; Tell Explorer that file associations changed, so .dpgui files get the new icon and handler at once.
ChangesAssociations=yes
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName} {#AppVersion}
WizardStyle=modern
Compression=lzma2/max
SolidCompression=yes
; If dpgui is running, offer to close it before its files are replaced (Restart Manager).
CloseApplications=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An update replaces the whole program folder: no library of an older version stays behind.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
; The whole PyInstaller one-folder build: dpgui.exe (windowed), dpgui-cli.exe (console) and _internal\.
Source: "dist\dpgui\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{userdocs}"; Comment: "Publish differentially private CDFs"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{userdocs}"; Tasks: desktopicon

[Registry]
; .dpgui project files (JSON) open in dpgui: the extension names the ProgID, the ProgID says how to
; open a file ("dpgui.exe" "C:\path\x.dpgui") and which icon to show. All under HKCU\Software\Classes,
; removed again by the uninstaller.
Root: HKCU; Subkey: "Software\Classes\.dpgui"; ValueType: string; ValueName: ""; ValueData: "{#ProgId}"; Flags: uninsdeletevalue uninsdeletekeyifempty
Root: HKCU; Subkey: "Software\Classes\.dpgui"; ValueType: string; ValueName: "Content Type"; ValueData: "application/json"; Flags: uninsdeletevalue uninsdeletekeyifempty
Root: HKCU; Subkey: "Software\Classes\.dpgui\OpenWithProgids"; ValueType: string; ValueName: "{#ProgId}"; ValueData: ""; Flags: uninsdeletevalue uninsdeletekeyifempty
Root: HKCU; Subkey: "Software\Classes\{#ProgId}"; ValueType: string; ValueName: ""; ValueData: "dpgui project"; Flags: uninsdeletekey
Root: HKCU; Subkey: "Software\Classes\{#ProgId}\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\{#AppExe},0"
Root: HKCU; Subkey: "Software\Classes\{#ProgId}\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" ""%1"""
; "Open with" lists dpgui for .dpgui files.
Root: HKCU; Subkey: "Software\Classes\Applications\{#AppExe}"; ValueType: string; ValueName: "FriendlyAppName"; ValueData: "{#AppName}"; Flags: uninsdeletekey
Root: HKCU; Subkey: "Software\Classes\Applications\{#AppExe}\SupportedTypes"; ValueType: string; ValueName: ".dpgui"; ValueData: ""

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent
