"""What looks like a secret's place but holds none stays: a SASL mechanism's name given to a driver's
`auth` (RFC 4422's registered names: `SCRAM-SHA-256`), an Android dimension or other value resource named
after a password field (`<dimen name="password_padding">16dp</dimen>`), a user name after Windows'
`net user /domain`, a duration's setting named after a token (`..._EXPIRY_HOURS=24`), and Bearer in prose.
Their secret neighbours are still redacted."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

KEPT = (
    "    client.auth(mech, 'SCRAM-SHA-256')",
    "    client.auth(mechanism, 'SCRAM-SHA-1')",
    "db.auth(source, 'MONGODB-X509')",
    '<dimen name="password_padding">16dp</dimen>',
    '<dimen name="token_field_height">48dp</dimen>',
    '<integer name="password_min_length">12</integer>',
    '<bool name="show_password">true</bool>',
    '<color name="password_hint">#FF888888</color>',
    "net user /domain jsmith",
    "C:\\> net user /domain jsmith",
    "net user /domain jsmith | findstr Active",
    "PASSWORD_RESET_TOKEN_EXPIRY_HOURS=24",
    "token_refresh_minutes=15",
    "Use Bearer authentication for this endpoint",
    "helm install db bitnami/postgresql --set auth.database=app",
    # Android's `<item type="dimen">` and the value tags holding what their type holds
    '<item type="dimen" name="password_width">16dp</item>',
    '<item name="password_field_weight" type="integer">2</item>',
    '<color name="token_tint">@color/accent</color>',
    '<bool name="password_toggle">false</bool>',
    "token_ttl_hours=1h30m",
    "SESSION_TOKEN_DAYS=30",
    "auth_database=admin",
    "the Bearer token is missing",
    "expected Bearer scheme, got Basic",
)
REDACTED = (
    ("client.auth('admin', 'Zq9vK2mLp8Rw')", "Zq9vK2mLp8Rw"),
    (
        '<string name="x">a</string><setting name="db_password"><value>Zq9vK2mLp8Rw</value></setting>',
        "Zq9vK2mLp8Rw",
    ),
    ("net user jsmith Zq9vK2mLp8Rw /add", "Zq9vK2mLp8Rw"),
    ("net user /add jsmith Zq9vK2mLp8Rw", "Zq9vK2mLp8Rw"),
    ("net user /domain jsmith Zq9vK2mLp8Rw", "Zq9vK2mLp8Rw"),
    ("Authorization: Bearer q8Zr2LmN5pWx7TyK3vB9zQ1a", "q8Zr2LmN5pWx7TyK3vB9zQ1a"),
    ("helm install db bitnami/postgresql --set auth.postgresPassword=Zq9vK2mLp8Rw", "Zq9vK2mLp8Rw"),
    # an Android value tag holding what its type never holds: a secret named by the tag's `name`/`key`
    ('<item name="password">S3cr3tPw9x</item>', "S3cr3tPw9x"),
    ('<item key="api_key">S3cr3tPw9x</item>', "S3cr3tPw9x"),
    ('<item type="string" name="password">S3cr3tPw9x</item>', "S3cr3tPw9x"),
    ('<color name="secret">S3cr3tPw9x</color>', "S3cr3tPw9x"),
    ('<bool name="secret_token">S3cr3tPw9x</bool>', "S3cr3tPw9x"),
    ('<dimen name="db_password">S3cr3tPw9x</dimen>', "S3cr3tPw9x"),
    # a duration's or a database's name keeps only a duration's or a database's value
    ("TOKEN_DAYS=S3cr3tPw9x", "S3cr3tPw9x"),
    ("client_secret_ms=xyzS3cr3tPw9x", "xyzS3cr3tPw9x"),
    ("secret_database=S3cr3tPw9x", "S3cr3tPw9x"),
    ("password_database=appdb", "appdb"),
    # a Bearer token of lower-case letters alone is no word of prose
    ("'Bearer thisisaverysecretkey'", "thisisaverysecretkey"),
    ("Authorization: Bearer zxcvbnmasdfghjklqwer", "zxcvbnmasdfghjklqwer"),
    ("curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz'", "abcdefghijklmnopqrstuvwxyz"),
)


@pytest.mark.parametrize("text", KEPT)
def test_a_lookalike_of_a_secret_stays(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "secret"), REDACTED)
def test_the_secret_beside_a_lookalike_is_still_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out
    assert "[REDACTED:" in out


def test_every_engine_gives_the_reference_text_for_them() -> None:
    texts = list(KEPT) + [text for text, _ in REDACTED]
    assert assert_same(_rules("all"), texts) == len(texts)
