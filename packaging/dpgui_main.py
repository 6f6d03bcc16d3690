"""Entry point of the frozen app (PyInstaller runs this file; it is the `dpgui` console script)."""

import multiprocessing
import sys

from dpgui.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # harmless where unused; needed if a worker pool ever spawns processes
    sys.exit(main())
