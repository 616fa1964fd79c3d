"""From a source spec (`ROUNDS_SOURCE`) to a Source.

Specs are `scheme` or `scheme:argument`. Each scheme has one builder here; a new backend adds its
builder and its line in `specs.SUPPORTED_SPECS`, and nothing else in rounds changes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rounds_bot.errors import ConfigError
from rounds_bot.settings.source_spec import SUPPORTED_SPECS, split_spec
from rounds_bot.sources.base import Source
from rounds_bot.sources.otlp_file import OtlpFileSource

if TYPE_CHECKING:
    from rounds_bot.settings import Settings


_Builder = Callable[[str, "Settings | None"], Source]


def source_from_spec(spec: str, settings: Settings | None = None) -> Source:
    """The source a spec names; raises ConfigError for a spec rounds does not know.

    `settings` carries what a spec cannot hold (the SigNoz URL and API key); a file source
    needs none.
    """
    scheme, argument = split_spec(spec)
    builder = _BUILDERS.get(scheme)
    if builder is None:
        raise ConfigError(
            f"unknown telemetry source {spec!r}",
            hint=f"ROUNDS_SOURCE must be one of: {', '.join(SUPPORTED_SPECS)}",
        )
    return builder(argument, settings)


def _otlp_file(argument: str, settings: Settings | None) -> Source:
    path = argument.strip()
    if not path:
        raise ConfigError(
            "the source 'otlp-file:' names no file",
            hint="write it as otlp-file:PATH, PATH being the file the OpenTelemetry Collector's "
            "file exporter writes",
        )
    return OtlpFileSource(Path(path), name=f"otlp-file:{path}")


def _signoz(argument: str, settings: Settings | None) -> Source:
    # The URL and key are settings, not part of the spec: a spec is safe to print, a key is not.
    if argument:
        raise ConfigError(
            f"the source 'signoz:{argument}' takes no argument",
            hint="write ROUNDS_SOURCE=signoz and set SIGNOZ_API_URL and SIGNOZ_API_KEY",
        )
    if settings is None or not settings.signoz_api_url:
        raise ConfigError(
            "the signoz source needs SIGNOZ_API_URL",
            hint="set it to your SigNoz URL with its port, e.g. http://localhost:8080",
        )
    from rounds_bot.sources.signoz.source import SignozSource

    return SignozSource(
        settings.signoz_api_url,
        settings.signoz_api_key,
        timeout_seconds=settings.signoz_timeout_seconds,
        deadline_seconds=settings.signoz_deadline_seconds,
        overlap_seconds=max(settings.signoz_overlap_seconds, settings.cursor_overlap_seconds),
        max_window_seconds=settings.signoz_max_window_hours * 3600,
        chunk_seconds=settings.signoz_chunk_minutes * 60,
        ui_url=settings.signoz_ui_url,
        error_code_attributes=tuple(settings.grouping_config().error_code_attributes),
    )


_BUILDERS: dict[str, _Builder] = {
    "otlp-file": _otlp_file,
    "signoz": _signoz,
}
