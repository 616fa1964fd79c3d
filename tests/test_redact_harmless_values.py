"""What a secret's name or header stands beside but is no secret stays: the name of the next pair after an
OAuth token type (`token_type=Bearer expires_in=3600`), a session's state (`session=active`), cookies that
hold only a preference (`theme=dark`, `locale=en-US`), and a .NET assembly's public key token (eight bytes of
a hash of a public key, printed in every assembly name). Their secret neighbours are still redacted."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

KEPT = (
    "token_type=Bearer expires_in=3600",
    '{"access_token": "[REDACTED]", "token_type": "Bearer", "expires_in": 3600}',
    "oauth: token_type=bearer scope=read",
    "session=active",
    "session=expired user=bob",
    "session: closed",
    "Set-Cookie: theme=dark; Path=/",
    "Cookie: locale=en-US",
    "Cookie: theme=light; lang=de",
    "Set-Cookie: consent=true; Max-Age=31536000; SameSite=Lax; Secure",
    "System.IO.FileNotFoundException: Could not load file or assembly 'Newtonsoft.Json, Version=13.0.0.0, "
    "Culture=neutral, PublicKeyToken=30ad4fe6b2a6aeed'",
    "System.Private.CoreLib, Version=8.0.0.0, Culture=neutral, PublicKeyToken=7cec85d7bea7798e",
    "MyCompany.Plugins, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null",
)


@pytest.mark.parametrize("text", KEPT)
def test_what_stands_beside_a_secret_name_but_is_none_stays(text: str) -> None:
    assert redact(text) == text


SECRET = "Zk3qP9xLm2Rt7vWc8yNb4HsJ"
REDACTED = (
    (f"Authorization: Bearer {SECRET}", SECRET),
    (f"curl -H 'Authorization: Bearer {SECRET}=' https://x", SECRET),
    (f"bearer {SECRET} expires_in=3600", SECRET),
    (f"token_type=Bearer access_token={SECRET}", SECRET),
    (f"session={SECRET}", SECRET),
    ("session=a8f3k2", "a8f3k2"),
    (f"Cookie: sessionid={SECRET}; theme=dark", SECRET),
    (f"Set-Cookie: theme=dark; _app_session={SECRET}; Path=/", SECRET),
    ("Cookie: password=hunter; theme=dark", "hunter"),
    (f"PublicKeyToken={SECRET}", SECRET),  # not an assembly's eight bytes of hex
)


@pytest.mark.parametrize(("text", "secret"), REDACTED)
def test_the_secret_beside_them_is_still_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out


def test_every_engine_gives_the_reference_text_for_them() -> None:
    texts = list(KEPT) + [text for text, _ in REDACTED]
    assert assert_same(_rules("all"), texts) == len(texts)
