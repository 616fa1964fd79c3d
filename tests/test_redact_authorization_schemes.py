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


#: schemes services define beside RFC 9110's registry, each as its documentation writes the header: Okta's
#: `SSWS`, Splunk HEC's `Splunk`, Discord's `Bot`, Opsgenie's `GenieKey`, Zoho's `Zoho-oauthtoken`, RFC
#: 9449's `DPoP`, Klaviyo's `Klaviyo-API-Key`
OTHER_SCHEMES = (
    ("SSWS", "00QCjAl4MlV-WPXM_bJ4KxOVUKcS4tBtmvnc2pBf3s"),
    ("Splunk", "b4c1e0f2-9d3a-4e8b-a7c6-5f2d1e0c9b8a"),
    ("Bot", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ("GenieKey", "eb243592-faa2-4ba2-a551-1afdf565c889"),
    ("Zoho-oauthtoken", "1000.41d9f2cfbd1b7a8f9e314b7aff7bc2d1.8fcc9810810a216793f385b9dd6e125f"),
    ("DPoP", "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
    ("Klaviyo-API-Key", "pk_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e"),
)


@pytest.mark.parametrize(("scheme", "secret"), OTHER_SCHEMES)
def test_the_credentials_after_any_scheme_are_redacted(scheme: str, secret: str) -> None:
    for header in (f"Authorization: {scheme} {secret}", f'{{"Authorization": "{scheme} {secret}"}}'):
        out = redact(header)
        assert secret not in out, out
        assert "[REDACTED:authorization]" in out, out


@pytest.mark.parametrize(("scheme", "secret"), OTHER_SCHEMES)
def test_the_scheme_word_stays_before_the_redacted_credentials(scheme: str, secret: str) -> None:
    # as in the JSON form: the scheme tells the reader what kind of credentials went, and is no secret
    assert redact(f"Authorization: {scheme} {secret}") == f"Authorization: {scheme} [REDACTED:authorization]"


def test_an_azure_shared_key_goes_with_its_account_name() -> None:
    # Azure Storage's `SharedKey <AccountName>:<Signature>` (its REST API's "Authorize with Shared Key")
    header = "Authorization: SharedKey myaccount:ctzMq410TV3wS7upTBcunJTDLEJwMAZuFPfr0mrrA08="
    assert redact(header) == "Authorization: SharedKey [REDACTED:authorization]"


def test_the_words_of_a_sentence_after_the_header_name_are_no_scheme() -> None:
    # a word before a short one is not a scheme before its credential: the second word stays
    assert redact("Authorization: invalid token").endswith(" token")
    assert redact("Authorization header missing") == "Authorization header missing"


#: a header's token with no scheme, before a long word on its line (a URL, a time, another header read on)
TOKENS_BEFORE_LONG_WORDS = (
    ("abcd1234efgh5678", "Authorization: abcd1234efgh5678 https://api.example.com/v1/users"),
    ("abcd1234efgh5678", "Authorization: abcd1234efgh5678 2024-05-01T10:00:00.000Z"),
    ("S3cr3tT0k3nValue", "authorization: S3cr3tT0k3nValue trace_id:4bf92f3577b34da6a3ce929d0e0e4736"),
    ("apikey_live_abc123def456", "GET / Authorization: apikey_live_abc123def456 User-Agent:requests/2.31"),
    ("tok_9f8e7d6c5b4a39", "Authorization: tok_9f8e7d6c5b4a39 10.0.0.1:8080/path/x"),
    ("s3cr3tKey42", "Authorization: s3cr3tKey42 Accept-Encoding:gzip,deflate,br"),
)


@pytest.mark.parametrize(("token", "text"), TOKENS_BEFORE_LONG_WORDS)
def test_a_token_with_no_scheme_is_no_scheme_before_a_long_word(token: str, text: str) -> None:
    # a scheme is a short word of letters (RFC 9110 11.1's registered schemes, `Klaviyo-API-Key`): a token of
    # digits, underscores or mixed case before a long word was taken for one, and left in the clear
    assert token not in redact(text)


def test_every_engine_gives_the_reference_text_for_other_schemes() -> None:
    texts = [f"Authorization: {scheme} {secret}" for scheme, secret in OTHER_SCHEMES]
    texts += [text for _, text in TOKENS_BEFORE_LONG_WORDS]
    assert assert_same(_rules("all"), texts) == len(texts)
