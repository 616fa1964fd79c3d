"""Sanitising invisible characters, redacting secrets and personal data in text, and the boundary that
redacts every field of what a source read."""

from __future__ import annotations

import sys
import unicodedata
from datetime import UTC, datetime

import pytest

from rounds_bot.models import CONTEXT_BODY_CHARS, ContextRecord, ErrorEvent
from rounds_bot.redact import Redactor, cut, keys, redact, redact_poll, redact_with_report, sanitize
from rounds_bot.redact.keys import personal_category, secret_category
from rounds_bot.sources.base import GroupCount, PollResult, SkippedRecord

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_invisible_bidi_and_control_characters_are_removed_newlines_and_tabs_stay():
    assert sanitize("ad\u200bmin\u202e\u2066x\ufeff\U000e0041") == "adminx"
    assert sanitize("a\x00b\x1bc\n\td\ud800") == "abc\n\td"


def test_the_sanitiser_knows_every_control_format_surrogate_and_private_use_character():
    hidden = [
        chr(cp)
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Co") and chr(cp) not in "\n\t"
    ]
    assert sanitize("".join(hidden)) == ""


def test_ascii_text_is_sanitised_as_the_pattern_sanitises_any_text():
    """ASCII text takes a faster way (`bytes.translate`); every ASCII character, alone and among others,
    comes out as the pattern for any text leaves it."""
    from rounds_bot.redact.text import _HIDDEN

    for code in range(128):
        for text in (chr(code), f"ab{chr(code)}cd", f"x\n{chr(code)}\ty"):
            assert sanitize(text) == _HIDDEN.sub("", text)


def test_redaction_names_its_category_and_counts():
    report = redact_with_report("mail bob@example.com and carol@example.org")
    assert report.text == "mail [REDACTED:email] and [REDACTED:email]"
    assert report.counts["email"] == 2 and report.total == 2


def test_card_numbers_need_luhn_and_a_card_networks_prefix_and_length():
    assert redact("card 4111 1111 1111 1111") == "card [REDACTED:card_number]"
    assert redact("order 4111 1111 1111 1112") == "order 4111 1111 1111 1112"
    # epoch milliseconds and nanoseconds, snowflake ids: Luhn-valid or not, they are not cards
    for number in ("1732300000018", "1732300000000000026", "1234567890123456789", "1700000000000000000"):
        assert redact(f"at {number}") == f"at {number}"


def test_a_card_number_followed_by_another_number_is_still_a_card():
    # found by the fuzzer: the stray digits made one 17-digit run that failed the check
    assert redact("card 4038 1066 0631 6522 0") == "card [REDACTED:card_number] 0"
    assert redact("card 4038106606316522 7 times") == "card [REDACTED:card_number] 7 times"
    assert redact("amex 3782 822463 10005 12") == "amex [REDACTED:card_number] 12"
    assert redact("at 1732300000018 5") == "at 1732300000018 5"


def test_a_secret_pair_in_a_percent_encoded_url_is_redacted():
    assert "abc123XYZ" not in redact("https://a.example/login?next=%2Fcb%3Fapi_key%3Dabc123XYZ%26x%3D1")
    assert "Hunter22" not in redact("GET /cb?state=1%26password%3DHunter22")
    assert redact("http%3A%2F%2Fexample.com%2Fpath") == "http%3A%2F%2Fexample.com%2Fpath"


def test_a_token_as_a_urls_user_name_is_redacted_once():
    dsn = "dsn https://1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d@o123456.ingest.sentry.io/1234567"
    assert redact(dsn) == "dsn https://[REDACTED:url_password]@o123456.ingest.sentry.io/1234567"
    remote = "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r"
    assert redact(remote) == "https://[REDACTED:github_token]@github.com/o/r"
    assert redact("https://john.doe@example.com/x") == "https://john.doe@example.com/x"


def test_a_token_given_to_curl_as_its_user_is_redacted_once_and_its_marker_kept_whole():
    # the `-u user:password` rule read the marker's `[REDACTED` as a user and rewrote the rest of it
    token = "ghp_" + "a1B2c3D4e5" * 4
    seen = redact(f"curl -u {token}: https://api.github.com/user")
    assert seen.startswith("curl -u [REDACTED:github_token]:") and token not in seen
    assert redact(f"curl --user '{token}:' -X GET") == "curl --user '[REDACTED:github_token]:' -X GET"
    assert redact("curl -u bob:hunter2hunter2 https://x") == "curl -u bob:[REDACTED:password] https://x"


def test_a_figma_personal_access_token_is_redacted_and_the_word_figd_alone_is_not():
    token = "figd_" + "Qx7-Lm2_" * 5
    assert redact(f"figma call with {token} failed") == "figma call with [REDACTED:api_token] failed"
    assert redact("the figd_ prefix names Figma's tokens") == "the figd_ prefix names Figma's tokens"


def test_an_age_secret_key_is_a_private_key():
    key = "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2
    assert redact(f"identity {key[:74]}") == "identity [REDACTED:private_key]"


def test_ip_addresses_follow_the_policy():
    text = "from 203.0.113.7 via 10.1.2.3 to 127.0.0.1 and 2001:db8::7"
    assert redact(text) == (
        "from [REDACTED:ip_address] via [REDACTED:ip_address] to 127.0.0.1 and [REDACTED:ip_address]"
    )
    assert redact(text, ips="public") == (
        "from [REDACTED:ip_address] via 10.1.2.3 to 127.0.0.1 and [REDACTED:ip_address]"
    )
    assert redact(text, ips="off") == text
    assert redact("version 1.2.3.4 at 12:30:45, mac 00:1a:2b:3c:4d:5e") == (
        "version 1.2.3.4 at 12:30:45, mac 00:1a:2b:3c:4d:5e"
    )


def test_key_value_secrets_keep_the_key():
    assert redact("password=hunter2&user=x") == "password=[REDACTED:key_value_secret]&user=x"
    assert redact('{"api_key": "abc123"}') == '{"api_key": "[REDACTED:key_value_secret]"}'
    assert redact("password=null") == "password=null"


def test_words_after_a_secret_name_are_kept_when_they_are_prose():
    for text in (
        "invalid token: signature has expired",
        "password must be at least 12 characters",
        "token bucket refilled",
        "Basic authentication failed",
        "the author: someone",
    ):
        assert redact(text) == text


def test_a_generated_value_under_a_name_that_may_be_secret_is_redacted_a_written_one_kept():
    # names gitleaks' generic rule looks at (`key`, `access`, `api`, `pat`): secret only by their value
    for text in (
        "STRIPE_KEY=rk9Zt2cWq8LmN4vB7xYa1sDf",
        "ADAFRUIT_IO_KEY = 'aio_Fq3k9ZL2mV8nB4xC7tR1yWpE'",
        'mailgunKey: "c0ffee12d4b5a6e7f8091a2b3c4d5e6f"',
        "gitlab_pat=roASiSJQgbMJWmnmzLcPiObVqSUEIdVX",
        "DATADOG=3f2a9c1b7d5e4f60a1b2c3d4e5f60718",  # a service gitleaks matches by its name
    ):
        assert "[REDACTED:key_value_secret]" in redact(text), text
    for text in (
        "cache_key=user:42:profile",
        "api_version=2024-01-01",
        "partition_key=orders-eu",
        "key=InvalidArgumentExceptionHandler",
        "access=read-only",
        "private=true",
        "key_count=1234567890123456789",
        "datadog_trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
        "sentry_release=2024.01.05-build7",
    ):
        assert redact(text) == text


def test_a_git_remote_is_not_an_email_address():
    assert (
        redact("push to git@github.com:acme/shop.git failed") == "push to git@github.com:acme/shop.git failed"
    )
    assert redact("mail git@example.com: bounced") == "mail [REDACTED:email]: bounced"


def test_a_jwt_is_redacted_whole_signature_included():
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    )
    assert redact(f"jwt {jwt} end") == "jwt [REDACTED:jwt] end"


def test_a_token_longer_than_its_pattern_leaves_no_tail():
    assert redact("ghp_" + "a" * 400 + " end") == "[REDACTED:github_token] end"


def test_invisible_characters_cannot_split_a_secret():
    assert redact("ghp_abcdefghij\u200bklmnopqrstuvwxyz0123456789") == "[REDACTED:github_token]"


def test_ordinary_telemetry_is_left_alone():
    text = (
        "GET /api/orders/12345 took 250 ms trace_id=4bf92f3577b34da6a3ce929d0e0e4736 "
        "span 00f067aa0ba902b7 uuid 123e4567-e89b-12d3-a456-426614174000 at 2026-03-01T12:00:00Z"
    )
    assert redact(text) == text


def test_a_cut_is_made_at_a_space_and_says_how_much_was_cut():
    text = "word " * 1000
    cut_text = cut(text, 100)
    assert cut_text.startswith("word word") and cut_text.endswith("more characters cut by rounds]")
    assert "4,9" in cut_text
    assert cut("short", 100) == "short"


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("db.password", "password"),
        ("http.request.header.x-api-key", "api_key"),
        ("aws.secret_access_key", "secret"),
        ("SecretAccessKey", "secret"),
        ("http.request.header.authorization", "authorization"),
        ("http.request.header.cookie", "cookie"),
        ("session.id", "session"),
        ("connect.sid", "session"),
        ("mysql_pwd", "password"),
        ("author", None),
        ("passenger_count", None),
        ("gen_ai.usage.input_tokens", None),
        ("token_count", None),
        ("cache.key", None),
    ],
)
def test_secret_names(name, category):
    assert secret_category(name) == category


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("user.email", "email"),
        ("client.address", "ip_address"),
        ("http.client_ip", "ip_address"),
        ("user.phone", "phone"),
        ("customer.ssn", "ssn"),
        ("user.full_name", "personal_data"),
        ("service.name", None),
        ("server.address", None),
    ],
)
def test_personal_names(name, category):
    assert personal_category(name) == category


def hostile_event(**changes: object) -> ErrorEvent:
    base = ErrorEvent(
        event_id="evt-ghp_0123456789abcdefghijklmnopqrstuvwxyz",
        timestamp=AT,
        service="checkout alice@example.com",
        error_type="KeyError sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        message="login for bob@example.com failed",
        stacktrace="at x password=hunter2",
        error_code="E1 AKIAIOSFODNN7EXAMPLE",
        trace_id="Bearer abcdefghijklmnopqrstuvwxyz012345",
        service_version="1.2 npm_" + "a" * 36,
        environment="prod 203.0.113.9",
        attributes={
            "db.password": "opaque-value",
            "http.request.header.x-api-key": "opaque",
            "card": 4111111111111111,
            "user.phone": 14155550123,
            "retries": 3,
            "ok": True,
            "carol@example.com": "key that is personal",
        },
        source_url="https://signoz.example/trace?token=ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    )
    return base.model_copy(update=changes)


def test_every_field_and_attribute_of_an_event_is_redacted_at_the_boundary():
    event = Redactor().event(hostile_event())
    dumped = event.model_dump_json()
    for secret in (
        "alice@example.com",
        "bob@example.com",
        "carol@example.com",
        "sk_test_",
        "hunter2",
        "AKIAIOSFODNN7EXAMPLE",
        "abcdefghijklmnopqrstuvwxyz012345",
        "npm_aaaa",
        "203.0.113.9",
        "opaque",
        "4111111111111111",
        "14155550123",
        "ghp_0123",
    ):
        assert secret not in dumped, secret
    assert event.attributes["retries"] == 3 and event.attributes["ok"] is True
    assert event.attributes["db.password"] == "[REDACTED:password]"
    assert event.attributes["card"] == "[REDACTED:card_number]"
    assert event.event_id.startswith("sha256:") and event.trace_id and event.trace_id.startswith("sha256:")


def test_a_secret_in_a_record_before_an_error_log_is_redacted_and_its_body_capped():
    moment = datetime(2026, 3, 14, 9, 0, tzinfo=UTC)
    before = [
        ContextRecord(
            timestamp=moment, severity="INFO", body="calling stripe with sk_live_4eC39HqLyjWDarjtT1zdp7dc"
        ),
        ContextRecord(timestamp=moment, severity="DEBUG", body="mail to alice@example.com " + "word " * 400),
    ]
    event = Redactor().event(hostile_event(kind="log", context=before))
    dumped = event.model_dump_json()
    assert "sk_live_4eC39HqLyjWDarjtT1zdp7dc" not in dumped and "alice@example.com" not in dumped
    assert event.context[0].body.startswith("calling stripe with [REDACTED:")
    assert len(event.context[1].body) < CONTEXT_BODY_CHARS + 60
    assert event.context[1].body.endswith("more characters cut by rounds]")
    assert [record.severity for record in event.context] == ["INFO", "DEBUG"]


def test_a_parent_span_id_is_hashed_like_a_span_id_so_the_two_still_match():
    secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
    redactor = Redactor()
    child = redactor.event(hostile_event(parent_span_id=secret))
    parent = redactor.event(hostile_event(span_id=secret))
    assert child.parent_span_id is not None and child.parent_span_id.startswith("sha256:")
    assert child.parent_span_id == parent.span_id  # a cascade still finds the parent span
    plain = redactor.event(hostile_event(parent_span_id="00f067aa0ba902b7"))
    assert plain.parent_span_id == "00f067aa0ba902b7"


def test_the_boundary_is_deterministic_so_an_occurrence_is_counted_once():
    assert Redactor().event(hostile_event()) == Redactor().event(hostile_event())
    assert (
        Redactor().event(hostile_event()).event_id
        != Redactor().event(hostile_event(event_id="evt-ghp_1123456789abcdefghijklmnopqrstuvwxyz")).event_id
    )


def test_a_huge_field_is_cut_before_any_rule_runs_and_the_cut_is_stated():
    event = Redactor().event(hostile_event(message="x " * 5_000_000, attributes={"a": "y " * 100_000}))
    assert len(event.message) < 17_000 and event.message.endswith("more characters cut by rounds]")
    assert str(event.attributes["a"]).endswith("more characters cut by rounds]")


def test_too_many_attributes_are_cut_and_counted():
    event = Redactor().event(hostile_event(attributes={f"k{n}": n for n in range(300)}))
    assert len(event.attributes) == 201 and event.attributes["rounds.attributes_cut"] == 100


def test_a_poll_is_redacted_whole_skips_notes_and_group_counts_included():
    polled = PollResult(
        events=[hostile_event()],
        known_group_counts=[
            GroupCount(
                source_group_id="g1", service="svc bob@example.com", count=1, first_seen=AT, last_seen=AT
            )
        ],
        skipped=[SkippedRecord(where="f.jsonl:1", reason="bad value password=hunter2")],
        notes=["saw token ghp_0123456789abcdefghijklmnopqrstuvwxyz"],
    )
    dumped = redact_poll(Redactor(), polled).model_dump_json()
    for secret in ("bob@example.com", "hunter2", "ghp_0123"):
        assert secret not in dumped


def test_the_answers_remembered_for_names_seen_in_telemetry_are_bounded() -> None:
    """Names come from telemetry (attribute keys, a `name=` in a message): a round of records each naming a
    new attribute must not grow the memory of the name checks without bound, and each answer stays right."""
    checks = (keys.words, keys.maybe_secret, keys.maybe_credential_name, keys.secret_category)
    for n in range(keys.NAMES_REMEMBERED + 5_000):
        name = f"order_{n}_password" if n % 2 else f"dropbox_{n}"
        assert keys.secret_category(name) == ("password" if n % 2 else None)
        assert keys.maybe_credential_name(name) == (None if n % 2 else "service")
    assert all(check.cache_info().currsize <= keys.NAMES_REMEMBERED for check in checks)
    assert keys.personal_category.cache_info().maxsize == keys.NAMES_REMEMBERED
