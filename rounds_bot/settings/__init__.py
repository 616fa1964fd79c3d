"""Settings: the one home of every setting of rounds and its default.

`Settings` (the one settings object) is in `model.py`, `load_settings` and `env_name` in `loading.py`; the
fields are declared by concept in `diagnosis.py`, `fixing.py` and `model.py`, with what they share in
`fields.py`;
the grouping defaults are in `grouping.py` and `error_codes.py`, the form of a source spec in
`source_spec.py`.

The settings object is imported on first use (PEP 562): building it loads pydantic-settings and about a
hundred fields, which the grouping engine, importing its defaults from here, does not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rounds_bot.settings.loading import env_name, load_settings
    from rounds_bot.settings.model import Settings

__all__ = ["Settings", "env_name", "load_settings"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from rounds_bot.settings import loading, model

        return getattr(model if name == "Settings" else loading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
