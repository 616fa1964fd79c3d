"""Build the source a user configured: `otlp-file:PATH` or `signoz`."""

from __future__ import annotations

from rounds_bot.config import Settings
from rounds_bot.errors import ConfigError
from rounds_bot.sources.base import Source

SCHEMES = "`signoz` (with SIGNOZ_API_URL) or `otlp-file:PATH`"


def source_from_settings(settings: Settings) -> Source:
    spec = settings.effective_source()
    if spec == "signoz":
        return _signoz(settings)
    if spec and spec.startswith("otlp-file:"):
        from rounds_bot.sources.factory import source_from_spec

        return source_from_spec(spec)
    raise ConfigError(f"ROUNDS_SOURCE={spec!r} is not a source rounds knows", hint=f"use {SCHEMES}")


def _signoz(settings: Settings) -> Source:
    missing = [name for name, value in (("SIGNOZ_API_URL", settings.signoz_api_url),) if not value]
    if missing:
        raise ConfigError(
            f"ROUNDS_SOURCE=signoz needs {', '.join(missing)}",
            hint="set it to your SigNoz URL with its port, e.g. http://localhost:8080",
        )
    from rounds_bot.sources.signoz.source import SignozSource

    return SignozSource.from_settings(settings)
