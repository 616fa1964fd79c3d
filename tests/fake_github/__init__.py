"""A fake GitHub REST API for tests, checked against GitHub's published REST description."""

from .server import ApiError, Exchange, FakeGitHub, Fault
from .spec import DescriptionMissing, description_path

__all__ = ["ApiError", "DescriptionMissing", "Exchange", "FakeGitHub", "Fault", "description_path"]
