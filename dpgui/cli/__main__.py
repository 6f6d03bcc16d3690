"""``python -m dpgui.cli``: the command line (:func:`dpgui.cli.main`)."""

import sys

from dpgui.cli import main

sys.exit(main())
