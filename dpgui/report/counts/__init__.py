"""The report code of the counts of one column: its CSV, manifest (its own schema) and publishing
through the budget ledger (never imports another statistic's package)."""
