"""Entry point of the frozen app (PyInstaller runs this file; it is the `dpgui` console script)."""

import sys

from dpgui.cli import main

if __name__ == "__main__":
    sys.exit(main())
