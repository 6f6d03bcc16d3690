"""The report code of a CDF release: its CSV, manifest, publishing through the budget ledger, release
records (never imports another statistic's package)."""
