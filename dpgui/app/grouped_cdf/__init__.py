"""The window's "CDF for each group" mode: its page (:mod:`.mode`) and its Export dialog (:mod:`.export_dialog`)."""
