"""A release plan: several statistics of one table under one budget, one ledger entry, one bundle."""
