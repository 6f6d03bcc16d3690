"""The window's dialogs: ledger, keys, database, new dataset, export, verify, and step 1's public bounds and
CSV dialect."""
