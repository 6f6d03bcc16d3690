"""The counts-over-a-hierarchy statistic's mode: its page (levels, plan, tree, result) and its views."""
