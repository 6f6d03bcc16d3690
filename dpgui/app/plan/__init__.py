"""The window's release plan mode: several statistics of one table under one budget."""
