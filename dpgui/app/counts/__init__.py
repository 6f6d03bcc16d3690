"""The window's "Counts of one column" mode: its page (:mod:`.mode`) and its export dialog."""
