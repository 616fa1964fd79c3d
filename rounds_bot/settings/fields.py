"""What every part of the settings declares its fields with (`settings/model.py`, `settings/diagnosis.py`,
`settings/fixing.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices
from pydantic_settings import NoDecode

#: A comma-separated list in one environment variable (`NoDecode`: not read as JSON).
CommaList = Annotated[list[str], NoDecode]


def env(name: str) -> AliasChoices:
    """Bind a field to exactly one environment variable name."""
    return AliasChoices(name)
