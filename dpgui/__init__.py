"""dpgui: differentially private CDF and count releases for privacy officers."""

__version__ = "0.1.0"
