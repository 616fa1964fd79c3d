"""rounds: a diagnostic bot that makes rounds on running software."""

__version__ = "0.1.0"
