"""The report code of counts over a hierarchy: its CSV, manifest, publishing through the budget ledger
and its section of a project file (never imports another statistic's package)."""
