"""silvia-client: a typed client for Silvia's chat API, built around citation targets."""

from ._version import __version__

__all__ = ["__version__"]
