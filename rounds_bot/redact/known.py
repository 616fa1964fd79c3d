"""The secrets rounds itself holds, removed from text that code it did not write produced, in every encoding
that code could cheaply print them in.

    known = KnownSecrets.from_environment(os.environ)   # GITHUB_TOKEN, ANTHROPIC_API_KEY, ... when set
    known.scrub(text) -> str                             # plain, base64 (any alignment), hex, percent-encoded

The format rules (`tokens.py`) find a token that looks like one; a test run that read a token and printed
`base64(token)` or `token.hex()` produces text no format rule recognises. Here the values are known exactly,
so each encoding is computed once and searched for literally. Base64 depends on where the value starts inside
the encoded bytes: the value is encoded at each of the three alignments, and only the characters made of the
value's own bits are searched for, so a copy inside a longer encoded blob is found too.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote

#: the settings and variables whose values are rounds' own secrets
SECRET_VARIABLES = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "SIGNOZ_API_KEY",
    "ZULIP_API_KEY",
    "ROUNDS_OPENAI_API_KEY",
    "ROUNDS_STATE_KEY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
)
#: shorter values would match by chance: none of the secrets above is this short
MIN_SECRET_CHARS = 12
#: what replaces every copy
MARK = "[secret of rounds removed]"


@dataclass(frozen=True)
class KnownSecrets:
    """Exact secret values and the literal forms each can be printed in."""

    forms: tuple[str, ...]

    @classmethod
    def of(cls, values: Iterable[str]) -> KnownSecrets:
        found: set[str] = set()
        for value in values:
            if len(value) >= MIN_SECRET_CHARS:
                found.update(encodings(value))
        # longest first: a form never leaves a piece of a longer one behind
        return cls(tuple(sorted(found, key=len, reverse=True)))

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> KnownSecrets:
        return cls.of(environ[name] for name in SECRET_VARIABLES if environ.get(name))

    def scrub(self, text: str) -> str:
        if not self.forms:
            return text
        pattern = re.compile("|".join(re.escape(form) for form in self.forms))
        return pattern.sub(MARK, text)


def encodings(value: str) -> set[str]:
    """The value as it is, as base64 (standard and URL-safe, every alignment), hex and percent-encoded."""
    raw = value.encode("utf-8")
    forms = {value, raw.hex(), raw.hex().upper(), quote(value, safe="")}
    for offset in range(3):
        forms.update(_base64_core(raw, offset))
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def _base64_core(raw: bytes, offset: int) -> set[str]:
    """The base64 characters made only of `raw`'s bits, `raw` starting `offset` bytes into a 3-byte group."""
    encoded = base64.b64encode(bytes(offset) + raw).decode().rstrip("=")
    first_bit, end_bit = offset * 8, (offset + len(raw)) * 8
    start = -(-first_bit // 6)  # the first character that starts at or after the value's first bit
    stop = end_bit // 6  # characters that end at or before the value's last bit
    core = encoded[start:stop]
    return {core, core.replace("+", "-").replace("/", "_")}
