"""The CDF statistic's steps: data, plan, bin tree and result, with their plots and panels."""
