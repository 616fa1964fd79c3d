"""How a telemetry source is written (`ROUNDS_SOURCE`): `scheme` or `scheme:argument`.

Settings check a spec's form here (so a bad one is reported with every other invalid setting); `factory.py`
builds the source it names. Neither opens or contacts anything.
"""

from __future__ import annotations

#: How each supported spec is written, for error messages and documentation.
SUPPORTED_SPECS = ("otlp-file:PATH", "signoz")
SCHEMES = frozenset(spec.partition(":")[0] for spec in SUPPORTED_SPECS)


def split_spec(spec: str) -> tuple[str, str]:
    """The lower-cased scheme and the argument of a spec."""
    scheme, _, argument = spec.strip().partition(":")
    return scheme.strip().lower(), argument


def spec_problem(spec: str) -> str | None:
    """What is wrong with how a spec is written, or None."""
    scheme, argument = split_spec(spec)
    if scheme not in SCHEMES:
        return f"unknown telemetry source; must be one of: {', '.join(SUPPORTED_SPECS)}"
    if scheme == "otlp-file" and not argument.strip():
        return "names no file: write it as otlp-file:PATH"
    if scheme == "signoz" and argument:
        return "signoz takes no argument: write ROUNDS_SOURCE=signoz and set SIGNOZ_API_URL"
    return None
