"""The tokens and keys a process holds, where the code a model wrote may run.

    in_reach(settings, environ)     the names of every token and key this process could hand to a child
                                    (the settings' secrets, and the environment's well-known credentials)
    refuse_tests_beside(...)        outside GitHub Actions' separate jobs: the test command runs code the
                                    model wrote, as this user; it does not run while any of them is in reach
                                    unless ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS=true says the person accepts it
    scrub(text, values)             every copy of those values in text that came from such code: as they are,
                                    in base64 (at each of the three alignments, standard and URL-safe) and in
                                    hex, so an encoded token in a test's output is never published

The test command's own environment is an allow-list (`testcommand.environment_for_tests`), but code it starts
runs as the same user: it can read `/proc/<parent>/environ` and any process's memory it may trace. The
boundary is therefore the process, or on GitHub Actions the job: see docs/fixes.md, "The boundary".
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from rounds_bot.errors import ConfigError

if TYPE_CHECKING:
    from rounds_bot.settings import Settings

#: credentials other programs (and rounds) read from the environment
WELL_KNOWN = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "SIGNOZ_API_KEY",
    "ZULIP_API_KEY",
    "ROUNDS_STATE_KEY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
)
#: prefixes of variables that hold a credential of rounds (the App wiring of earlier versions)
PREFIXES = ("ROUNDS_APP_",)
#: the settings that hold a credential
SECRET_SETTINGS = (
    "github_token",
    "anthropic_api_key",
    "openai_api_key",
    "zulip_api_key",
    "signoz_api_key",
    "state_key",
)
#: shorter values are not scrubbed (they would match ordinary text)
MIN_SCRUBBED = 8
REPLACEMENT = "[redacted: a secret of the run]"


def in_reach(settings: Settings, environ: Mapping[str, str]) -> list[str]:
    """The names of the tokens and keys this process holds, settings and environment alike."""
    names = [
        name
        for name, value in environ.items()
        if value.strip() and (name in WELL_KNOWN or name.startswith(PREFIXES))
    ]
    for field in SECRET_SETTINGS:
        if _setting(settings, field):
            names.append(_env_name(settings, field))
    return sorted(set(names))


def values_in_reach(settings: Settings, environ: Mapping[str, str]) -> list[str]:
    """The values behind `in_reach`, for `scrub`."""
    found = [value for name, value in environ.items() if name in WELL_KNOWN or name.startswith(PREFIXES)]
    found += [_setting(settings, field) for field in SECRET_SETTINGS]
    return sorted({value.strip() for value in found if value and len(value.strip()) >= MIN_SCRUBBED})


def refuse_tests_beside(settings: Settings, environ: Mapping[str, str], *, doing: str) -> None:
    """Stop before the test command runs while a token is in reach, unless the person opted in."""
    if settings.fix_local_tests_with_tokens:
        return
    names = in_reach(settings, environ)
    if names:
        raise ConfigError(
            f"{doing} would run the repository's test command, which runs code the model wrote, while "
            f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} in reach of it",
            hint="run `rounds fix test` where no token is set, or set "
            "ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS=true to accept that (docs/fixes.md, The boundary)",
        )


def scrub(text: str, values: Iterable[str]) -> str:
    """`text` without any copy of `values`: plain, base64 (any alignment, standard or URL-safe), or hex."""
    if not text:
        return text
    for value in values:
        for form in sorted(_forms(value), key=len, reverse=True):
            if form in text:
                text = text.replace(form, REPLACEMENT)
    return text


def _forms(value: str) -> set[str]:
    raw = value.encode()
    forms = {value, raw.hex(), raw.hex().upper()}
    for offset in range(3):
        padded = b"\0" * offset + raw
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(padded).decode()
            start = -(-8 * offset // 6)  # the first character made of the value's bits only
            end = (8 * (offset + len(raw))) // 6  # past the last one
            piece = encoded[start:end]
            if len(piece) >= MIN_SCRUBBED:
                forms.add(piece)
    return forms


def _setting(settings: Settings, field: str) -> str:
    value = getattr(settings, field, None)
    if value is None:
        return ""
    secret = getattr(value, "get_secret_value", None)
    return str(secret() if callable(secret) else value)


def _env_name(settings: Settings, field: str) -> str:
    alias = type(settings).model_fields[field].validation_alias
    choices = getattr(alias, "choices", None)
    return str(choices[0]) if choices else field.upper()
