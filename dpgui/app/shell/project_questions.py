"""The questions the project controller (:mod:`dpgui.app.shell.project`) asks: restore the last workspace
after a crash, save the changes before the workspace is closed or replaced, locate a moved data file. Each is
a window-modal message box made here and opened (not run) by the controller, so tests can answer it; the
file, column and project names are shown literally. GUI thread only."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from dpgui.app import text
from dpgui.report.project_file import Project


class RestorePrompt(QMessageBox):
    """The box of :func:`restore_prompt`, with its two buttons."""

    restore_button: QPushButton
    discard_button: QPushButton


class LocatePrompt(QMessageBox):
    """The box of :func:`locate_prompt`, with its Locate button."""

    locate_button: QPushButton


def restore_prompt(parent: QWidget, project: Project, when: str) -> RestorePrompt:
    """'dpgui did not close properly last time. Restore the workspace from <time>?' (Restore / Discard)."""
    box = RestorePrompt(QMessageBox.Icon.Question, "Restore the last workspace?",
                      f"dpgui did not close properly last time. Restore the workspace from {when}?", parent=parent)
    text.plain_text(box)  # the file and column names are shown literally
    releases = len(project.releases) + sum(len(part.releases) for part in project.sections.values())
    what = f"Data file: {project.name}" + (f", column '{project.column}'" if project.column else "")
    if releases:
        what += f"; {releases} release{'s' if releases != 1 else ''} made then"
    box.setInformativeText(f"{what}.\n\nRestoring reopens the file and your settings and shows the earlier "
                           "releases. It does not release anything and spends no privacy budget.")
    box.restore_button = box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole)
    box.discard_button = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(box.restore_button)
    return box


def save_changes_prompt(parent: QWidget, name: str | None, releases: int, closing: bool) -> QMessageBox:
    """Save / Discard / Cancel before the workspace is closed or replaced."""
    if name:
        question = f"Save the changes to the project '{name}'?"
    elif releases == 0:
        question = "The settings of this session are not saved in a project file. Save the project?"
    else:
        question = (f"The {'release' if releases == 1 else f'{releases} releases'} of this session "
                    f"{'is' if releases == 1 else 'are'} not saved in a project file. Save the project?")
    title = "Save the project before closing?" if closing else "Save the project first?"
    box = QMessageBox(QMessageBox.Icon.Warning, title, question, parent=parent)
    text.plain_text(box)  # the project's name is shown literally
    box.setInformativeText(("If you don't save, your changes since the last save are lost." if name else
                            "If you don't save, this workspace (its settings and releases) cannot be opened "
                            "again in dpgui.")
                           + " Discarding never undoes a release: budget already spent stays spent.")
    box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                           | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    return box


def locate_prompt(parent: QWidget, message: str) -> LocatePrompt:
    box = LocatePrompt(QMessageBox.Icon.Warning, "Data file not found", message, parent=parent)
    text.plain_text(box)  # the message quotes the file's path literally
    box.locate_button = box.addButton("Locate…", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(box.locate_button)
    return box
