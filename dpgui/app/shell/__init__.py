"""The window's frame: the main window with its menus, steps and status, the start page, the project
file and the session's releases."""
