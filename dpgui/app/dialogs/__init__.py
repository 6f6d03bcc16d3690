"""The window's dialogs shared by every statistic: ledger, keys, database, new dataset, export, verify."""
