"""The credentials of the `Authorization:` schemes that put their secret after a parameter's name: HTTP
Digest's (RFC 7616, 3.4: `response` is a hash of the password that can be cracked offline, beside the user's
name) and Rails' token scheme (`Token token="..."`, `ActionController::HttpAuthentication::Token`)."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

RESPONSE = "6629fae49393a05397450978507c4ef1"
DIGEST = (
    'Authorization: Digest username="svc", realm="api@acme.io", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093",'
    f' uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="{RESPONSE}",'
    ' opaque="5ccc069c403ebaf9f0171e9517f40e41"'
)
TOKEN = "Zr4Tn7Wp3Vb6Hm1Cy5Df0Gs8"
HEADERS = (
    (DIGEST, RESPONSE),
    (DIGEST.replace("Authorization", "Proxy-Authorization"), RESPONSE),
    (f'{{"headers": {{"Authorization": "{DIGEST[15:].replace(chr(34), chr(92) + chr(34))}"}}}}', RESPONSE),
    (f'Authorization: Token token="{TOKEN}"', TOKEN),
    (f'Authorization: Token token="{TOKEN}", nonce="def"', TOKEN),
    (f"authorization: Token token={TOKEN}", TOKEN),
    # RFC 7616 3.4.4: a name that is not ASCII is sent extended (`username*=UTF-8''...`, RFC 8187)
    (DIGEST.replace('username="svc"', "username*=UTF-8''J%C3%A4s%C3%B8n"), RESPONSE),
    # a Windows domain account: the quoted-string escapes its backslash (RFC 9110 5.6.4's quoted-pair)
    (DIGEST.replace('username="svc"', 'username="CORP\\\\svc"'), RESPONSE),
    # a long request URI (a signed URL's query) stands before the response
    (DIGEST.replace('uri="/dir/index.html"', f'uri="/dir/index.html?{"q=1&" * 300}"'), RESPONSE),
)


@pytest.mark.parametrize(("header", "secret"), HEADERS)
def test_the_credentials_after_a_parameters_name_are_redacted(header: str, secret: str) -> None:
    out = redact(header)
    assert secret not in out, out


def test_a_digest_header_loses_the_users_name_and_keeps_what_follows_it() -> None:
    out = redact(DIGEST + " status=401")
    assert '"svc"' not in out, out
    assert out.endswith(" status=401"), out


def test_every_engine_gives_the_reference_text_for_authorization_schemes() -> None:
    texts = [header for header, _ in HEADERS] + [DIGEST + " status=401"]
    assert assert_same(_rules("all"), texts) == len(texts)
