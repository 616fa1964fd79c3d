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
    "session=idle",
    "Session=revoked",
    "Set-Cookie: theme=dark; Path=/",
    "Cookie: locale=en-US",
    "Cookie: theme=light; lang=de",
    "Set-Cookie: consent=true; Max-Age=31536000; SameSite=Lax; Secure",
    "System.IO.FileNotFoundException: Could not load file or assembly 'Newtonsoft.Json, Version=13.0.0.0, "
    "Culture=neutral, PublicKeyToken=30ad4fe6b2a6aeed'",
    "System.Private.CoreLib, Version=8.0.0.0, Culture=neutral, PublicKeyToken=7cec85d7bea7798e",
    "MyCompany.Plugins, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null",
    # a key's identifier names the key, not its secret (AWS' "access key ID" beside the "secret access key",
    # a JWK's `kid`): an id under it stays
    "map[api_key_id:[42] region:[us-east-1]]",
    "api_key_id=42 scope=read",
    '{"signing_key_id": "k-2024-06"}',
    # a moment named after a secret (`*_at`, as Rails and Django name a timestamp's column) is no secret
    "password_reset_sent_at=2024-01-01 user_id=42",
    '{"token_expires_at": "2024-06-01T00:00:00Z"}',
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
    (f"api_key_id=42 api_key={SECRET}", SECRET),  # beside its id, the key itself goes
    # a service account's private key's id goes as the file it is read from does
    ('"private_key_id": "e1881d38f555e1e9a4148f253b3383926644e475"', "e1881d38f555e1e9a4148f"),
    (f"password_reset_sent_at=2024-01-01 password={SECRET}", SECRET),
)

#: a session's secret, key or id is no state even when it is a word (Express' `secret: 'keyboard cat'`), and
#: a session cookie is no preference however it is spelt
SESSION_SECRETS = (
    ("SESSION_SECRET=keyboardcat", "keyboardcat"),
    ('{"session_secret": "tangerinepassphrase"}', "tangerinepassphrase"),
    ("SESSION_KEY=mysupersecretkey", "mysupersecretkey"),
    ("SESSION_TOKEN=abcdefghijklmnopqrstuvw", "abcdefghijklmnopqrstuvw"),
    ("sessionid=KqZvBwMpTrLh", "KqZvBwMpTrLh"),
    ("session=KqZvBwMpTrLh", "KqZvBwMpTrLh"),
    ("session=tangerine", "tangerine"),
    ("Cookie: theme=dark; sid=qwxzkvbnmplrtyhg", "qwxzkvbnmplrtyhg"),
    ("Set-Cookie: sessionid=qwxzkvbnmplrtyhgfdsa; Path=/; HttpOnly", "qwxzkvbnmplrtyhgfdsa"),
    ("Cookie: lang=en; csrftoken=qwxzkvbnmplrtyhgfdsa", "qwxzkvbnmplrtyhgfdsa"),
    ("Cookie: session=active", "active"),
)


@pytest.mark.parametrize(("text", "secret"), SESSION_SECRETS)
def test_a_session_secret_or_cookie_that_is_a_word_is_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out


#: a token with an `=` inside it is no RFC 6750 `b64token`, but it is sent as one: all of it goes
BEARER_WITH_EQUALS = (
    ("retrying with bearer abcdEFGH1234=5678ijklmnop", ("abcdEFGH1234", "5678ijklmnop")),
    ("Authorization: Bearer Zk3qP9xLm2Rt==7vWc8yNb", ("Zk3qP9xLm2Rt", "7vWc8yNb")),
)


@pytest.mark.parametrize(("text", "parts"), BEARER_WITH_EQUALS)
def test_a_bearer_token_with_an_equals_sign_inside_is_redacted_whole(
    text: str, parts: tuple[str, ...]
) -> None:
    out = redact(text)
    assert not any(part in out for part in parts), out


#: a pair after the word `Bearer` (OAuth's token type) keeps its name, in snake, kebab or camel case
@pytest.mark.parametrize(
    "text", ["token_type=Bearer refresh_expires_in=7200", "type: bearer expiresIn=3600", "Bearer max-age=60"]
)
def test_a_pair_after_the_token_type_stays(text: str) -> None:
    assert redact(text) == text


#: the next pair after a path or a sentence that ends with a secret's name keeps its value, in snake, kebab or
#: camel case; a value a sentence gives a password is still redacted, an `=` inside it or not
AFTER_THE_WORD = (
    "PUT /v1/account/password user_id=42",
    "POST /api/users/42/password request_id=7f3a9c2e1b duration_ms=31",
    "reset password request-id=7f3a9c2e1b",
    "vault kv get secret/app/password version=3",
    "GET /settings/token requestId=c0ffee42",
    "secret_name=prod/db/password region=us-east-1",
)
PROSE_PASSWORDS = (
    ("using password Xk9=pq2Lm for user bob", "Xk9=pq2Lm"),
    ("password was set to Xq7=Lm2pZ9v.", "Xq7=Lm2pZ9v"),
    ("password is 7f3a9c2e1bQ", "7f3a9c2e1bQ"),
)


@pytest.mark.parametrize("text", AFTER_THE_WORD)
def test_a_pair_after_a_secret_word_ending_a_path_or_a_sentence_stays(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "secret"), PROSE_PASSWORDS)
def test_a_password_a_sentence_gives_with_an_equals_sign_is_redacted(text: str, secret: str) -> None:
    assert secret not in redact(text)


@pytest.mark.parametrize(("text", "secret"), REDACTED)
def test_the_secret_beside_them_is_still_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out


def test_every_engine_gives_the_reference_text_for_them() -> None:
    texts = list(KEPT + AFTER_THE_WORD) + [
        text for text, _ in (*REDACTED, *SESSION_SECRETS, *BEARER_WITH_EQUALS, *PROSE_PASSWORDS)
    ]
    assert assert_same(_rules("all"), texts) == len(texts)
