"""A secret written as a Python string literal with a prefix (`b'...'` bytes, `r'...'` raw, `rb'...'`;
the Python reference, "String and Bytes literals") under a secret's name, as a traceback prints the line: the
literal's text is the secret, not the prefix's letter. A pattern that only names a password stays."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules, redact_text
from tests.test_redact_engine import assert_same

SECRET = "Hunter2xyzQ"
WRITTEN = (
    "    conn = psycopg2.connect(host='db', password=b'{v}')",
    "    conn = psycopg2.connect(host='db', password=r'{v}')",
    '    client = Client(api_key=rb"{v}")',
    "    token = B'{v}'",
    "{{'X-Amz-Security-Token': b'{v}', 'Host': 'b.s3.amazonaws.com'}}",
    "    es = Elasticsearch(url, api_key=('VuaCfGcBCdbkQm-e5aOx', '{v}'))",
    "{{'api_key': ('VuaCfGcBCdbkQm-e5aOx', '{v}')}}",
    "    es = Elasticsearch(url, basic_auth=('elastic', '{v}'))",
    "    r = requests.get(url, auth=('me', '{v}'))",
    # a tuple of secrets under a secret's name: every item
    "SECRET_KEY_FALLBACKS = ('{v}', 'other')",
    "SECRET_KEY_FALLBACKS = ('other', '{v}')",
    # Django's settings reference gives the fallbacks as a list
    "SECRET_KEY_FALLBACKS = ['other', '{v}']",
    "SECRET_KEY_FALLBACKS = ['{v}']",
    # Django's key alphabet holds `(` and `[`: one inside an earlier item is no opening of the list
    "SECRET_KEY_FALLBACKS = ['a7(b5v3c1x9z8l6k4j2h0g!f@d#s$a%p^o&i*u-y-t_r=e+w-q1m3n5', '{v}']",
    "SECRET_KEY_FALLBACKS = ('a7[b5v3c1x9z8l6k4j2h0g!f@d#s$a%p^o&i*u-y-t_r=e+w-q1m3n5', '{v}')",
    "SECRET_KEY_FALLBACKS = ['x(', 'a7[b5v3c1x9z8(l6k4j2', '{v}']",
    # an annotated assignment (the Python reference, "Annotated assignment statements")
    "    password: bytes = b'{v}'",
    # f-strings' prefixes
    "    password=f'{v}'",
    "    password=fr'{v}'",
    '    password=rf"{v}"',
)
KEPT = (
    "pattern = re.compile(r'password')",
    "pattern = re.compile(r'password', re.I)",
    "if re.search(r'password=(\\S+)', line):",
    "data = b'password'",
    "password=b''",
    "    es = Elasticsearch(url, api_key=(key_id, key_secret))",
    # a pair of literals under a name that is no client's credential pair
    "token_range=('a', 'z')",
    "password_choices=('weak','strong')",
    "password_choices=['weak','strong']",
    # a setting's list of dotted import paths (Django's `PASSWORD_HASHERS`) names classes, not secrets
    "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']",
    "    r = requests.get(url, auth=['me', 'Hunter2xyzQ'][0])",
    # a compiled pattern is code, not a secret
    "PASSWORD_RE = re.compile(r'password')",
    'TOKEN_PATTERN = Pattern.compile("token")',
    "SECRET_RE = regex.compile(r'secret', re.I)",
)


#: a header's value written as bytes: each secret one marker, the text around it whole
HEADERS = (
    ("headers = {{'Authorization': b'Basic {b}'}}", "headers = {{'Authorization': b'Basic [REDACTED:{c}]'}}"),
    (
        "headers = {{'Proxy-Authorization': b'Basic {b}'}}",
        "headers = {{'Proxy-Authorization': b'Basic [REDACTED:{c}]'}}",
    ),
)


@pytest.mark.parametrize("text", WRITTEN)
def test_a_secret_in_a_prefixed_literal_is_redacted(text: str) -> None:
    out = redact(text.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_a_prefixed_literal_that_holds_no_secret_stays(text: str) -> None:
    assert redact(text) == text


def test_every_item_of_a_key_list_goes_when_an_item_holds_an_opening() -> None:
    first = "a7(b5v3c1x9z8l6k4j2h0g!f@d#s$a%p^o&i*u-y-t_r=e+w-q1m3n5"
    second = "n7b5v3c1x9(z8l6k4j2h0g!f@d#s$a%p^o&i*u-y-t_r=e+w-q1m3x"
    out = redact(f"SECRET_KEY_FALLBACKS = ['{first}', '{second}']")
    assert first[:12] not in out and second[:12] not in out, out
    assert out.startswith("SECRET_KEY_FALLBACKS = ['[REDACTED:") and out.endswith("]']"), out


@pytest.mark.parametrize(("text", "expected"), HEADERS)
def test_a_header_written_as_bytes_keeps_its_structure(text: str, expected: str) -> None:
    result = redact_text(text.format(b="dXNlcjpwYXNzd29yZA=="))
    assert result.text == expected.format(c="authorization"), result.text
    assert sum(result.counts.values()) == 1, result.counts


def test_a_bearer_token_written_as_bytes_is_one_marker() -> None:
    result = redact_text("Authorization: b'Bearer q8Zr2LmN5pWx7TyK3vB9zQ1a'")
    assert "q8Zr2LmN5pWx7TyK3vB9zQ1a" not in result.text
    assert result.text.endswith("'") and result.text.count("[REDACTED:") == 1, result.text
    assert sum(result.counts.values()) == 1, result.counts


def test_every_engine_gives_the_reference_text_for_them() -> None:
    texts = (
        [text.format(v=SECRET) for text in WRITTEN]
        + list(KEPT)
        + [t.format(b="dXNlcjpw") for t, _ in HEADERS]
    )
    assert assert_same(_rules("all"), texts) == len(texts)
