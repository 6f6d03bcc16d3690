"""The report code of the CDF of a numeric column for each group: its CSV, manifest (its own schema),
publishing through the budget ledger and its part of a project file (never imports another statistic's
package)."""
