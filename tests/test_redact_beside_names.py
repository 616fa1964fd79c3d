"""Secrets that stand beside what names them in ways the first rules did not read: an encoded run right after
`=`, a value before a JSON-escaped line break, a Telegram bot's token, a password a sentence gives, an AWS
secret beside its key id or after its name and a tab; and what stays beside them (prose about a password, an
image pinned by its digest). Every engine redacts them as the reference does."""

from __future__ import annotations

import base64
import json

import pytest

from rounds_bot.redact import engine as engine_module
from rounds_bot.redact import redact, redact_text
from rounds_bot.redact import scan as scan_module
from rounds_bot.redact.rule import RuleSet
from rounds_bot.redact.text import _rules
from tests.redact_reference import reference_redact
from tests.security_corpus import BESIDE_NAMES, KEPT_BESIDE_NAMES
from tests.test_redact_engine import assert_same

GITHUB_TOKEN = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PASSWORD = "Zq8vN2mX7pL4"
AWS_SECRET = "Hq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3Kl9Pq2W"


def _leaks(secret: str, out: str) -> bool:
    """The secret, or any run of 12 of its characters, is in `out`."""
    return any(secret[start : start + 12] in out for start in range(max(len(secret) - 11, 1)))


def test_a_base64_run_right_after_an_equals_sign_is_decoded_and_judged() -> None:
    encoded = "eyJ0b2tlbiI6ICJnaHBfYTFCMmMzRDRlNUY2ZzdIOGk5SjBrMUwybTNONG81UDZxN1I4In0="
    assert base64.b64decode(encoded) == json.dumps({"token": GITHUB_TOKEN}).encode()
    assert redact(f"payload={encoded}") == "payload=[REDACTED:github_token]"
    state = "Z2hwX2ExQjJjM0Q0ZTVGNmc3SDhpOUowazFMMm0zTjRvNVA2cTdSOA=="
    assert redact(f"GET /cb?state={state}") == "GET /cb?state=[REDACTED:github_token]"
    # after a space it always was
    assert redact(f"payload {encoded}") == "payload [REDACTED:github_token]"


def test_a_hex_run_right_after_an_equals_sign_is_decoded_and_judged() -> None:
    assert redact(f"data={GITHUB_TOKEN.encode().hex()}") == "data=[REDACTED:github_token]"


def test_a_run_after_an_equals_sign_that_decodes_to_no_secret_stays() -> None:
    for text in (
        "trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
        "state=" + base64.b64encode(b'{"page": 2, "sort": "name"}').decode(),
        "sha=9fceb02d0ae598e95dc970b74767f19372d61af8",
    ):
        assert redact(text) == text


@pytest.mark.parametrize("name", ["STRIPE_KEY", "codecov", "DROPBOX", "etsy", "GITLAB_PAT", "sendgrid_key"])
@pytest.mark.parametrize("escape", ["\\n", "\\t", "\\r"])
def test_a_value_before_a_json_escaped_line_break_keeps_its_protection(name: str, escape: str) -> None:
    value = "llgll9ibmwpvu9lll36pdqx2t1imcv3x"
    out = redact(f'{{"log": "env dump {name}={value}{escape}next"}}')
    assert value not in out and "next" in out, out


def test_an_escaped_line_break_in_a_text_without_a_secret_stays_escaped() -> None:
    for text in ('{"log": "line one\\nline two\\tcolumn"}', "C:\\temp\\new\\report.txt not found"):
        assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # gitleaks' own true positive (telegram-bot-api-token)
        ("telegram bot: 24197559:ASBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN", "ASBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN"),
        (
            "POST https://api.telegram.org/bot73914052:AHq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3K/sendMessage"
            " failed 403",
            "AHq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3K",
        ),
        (
            "InvalidToken: 5432109876:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
            "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
        ),
    ],
)
def test_a_telegram_bot_token_is_redacted_alone_and_in_the_apis_url(text: str, secret: str) -> None:
    out = redact(text)
    assert "[REDACTED:api_token]" in out and not _leaks(secret, out), out


def test_a_number_before_a_class_name_is_no_telegram_token() -> None:
    text = "offset 123456:AbstractSingletonProxyFactoryBeanConfig failed"
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"Authentication failed: password is '{PASSWORD}'",
            "Authentication failed: password is '[REDACTED:key_value_secret]'",
        ),
        (
            f"DB password was {PASSWORD} for user app",
            "DB password was [REDACTED:key_value_secret] for user app",
        ),
        (
            f"using password {PASSWORD} for user app",
            "using password [REDACTED:key_value_secret] for user app",
        ),
        (f"set password to '{PASSWORD}'", "set password to '[REDACTED:key_value_secret]'"),
        ("api key is Zq8vN2mX7pL4kR9sW3eTzz", "api key is [REDACTED:key_value_secret]"),
        (f"PASSWORD -> {PASSWORD}.", "PASSWORD -> [REDACTED:key_value_secret]."),
    ],
)
def test_a_generated_password_a_sentence_gives_is_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "password is incorrect",
        "password was changed",
        "password is required",
        "Password is incorrect.",
        "password was changed at 2024-01-01T00:00:00Z by admin",
        "token is expired",
        "the api key is invalid or missing",
        "secret is not set",
        "password was reset to default",
        "password for user1234 expired",
        "password PasswordPolicyV2 violated",
        "secret my-app-tls-2024 not found",
        "token is v1.2.3-beta",
    ],
)
def test_prose_about_a_password_stays(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f"aws_secret_access_key\t{AWS_SECRET}",
        f"credentials AKIAY34FZKBOKMUTVV7A / {AWS_SECRET}",
        f"AKIAY34FZKBOKMUTVV7A:{AWS_SECRET}",
    ],
)
def test_an_aws_secret_beside_its_key_id_or_after_its_name_and_a_tab_is_redacted(text: str) -> None:
    out = redact(text)
    assert not _leaks(AWS_SECRET, out) and "AKIAY34FZKBOKMUTVV7A" not in out, out


def test_a_sha1_beside_an_aws_key_id_stays() -> None:
    text = "key AKIAY34FZKBOKMUTVV7A / 9fceb02d0ae598e95dc970b74767f19372d61af8"
    assert redact(text) == "key [REDACTED:aws_key] / 9fceb02d0ae598e95dc970b74767f19372d61af8"


@pytest.mark.parametrize(
    "text",
    [
        "image ghcr.io/acme/api@sha256:4a5f3c2b1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"
        " pull failed",
        "FROM docker.io/acme/secret-service"
        "@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ],
)
def test_an_image_pinned_by_its_digest_stays(text: str) -> None:
    assert redact(text) == text


def test_a_secret_under_a_name_that_ends_like_a_digest_is_still_redacted() -> None:
    assert redact(f"api_key@sha256:{AWS_SECRET}") == "api_key@sha256:[REDACTED:key_value_secret]"


def test_the_corpus_of_these_shapes_leaks_nothing_and_keeps_its_prose() -> None:
    for text, secret in BESIDE_NAMES:
        assert not _leaks(secret, redact(text)), text
    for text in KEPT_BESIDE_NAMES:
        assert redact(text) == text


def test_every_engine_redacts_these_shapes_as_the_reference_does() -> None:
    rules = _rules("all")
    texts = [text for text, _ in BESIDE_NAMES] + KEPT_BESIDE_NAMES
    assert_same(rules, texts)
    for text in texts:
        assert redact_text(text) == reference_redact(rules, text), text


def test_without_hyperscan_these_shapes_are_redacted_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_module, "hyperscan", None)
    monkeypatch.setattr(engine_module, "_SETS", {})
    rules = _rules("all")
    assert isinstance(engine_module.rule_set(rules), RuleSet)
    for text in [text for text, _ in BESIDE_NAMES] + KEPT_BESIDE_NAMES:
        assert redact_text(text) == reference_redact(rules, text), text
