"""Redaction of secrets and personal data in the shapes and places an attacker would try
(`security_shapes.py`), and of nothing else: a frame's file and line, class names, and what tells two log
errors apart stay.

Every value is generated fresh from its public format (see `security_shapes.py` for the references); the proof
through real rounds is `test_security_corpus.py`, which plants the same corpus.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import phonenumbers
import pytest
from mnemonic import Mnemonic
from security_corpus import Planted
from security_shapes import (
    DISTINCT_LOG_PAIRS,
    IDENTIFIER_SHAPES,
    KEPT_FRAMES,
    KEPT_IDENTIFIERS,
    PHONE_REGIONS,
    iban_registry,
    shapes,
)

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, redact_poll, redact_with_report
from rounds_bot.redact.personal import PHONE_REGIONS as REDACTED_REGIONS
from rounds_bot.sources.base import PollResult


def _texts() -> list[Planted]:
    return [item for item in shapes() if item.kind == "text" and not item.place.startswith("span.attribute")]


@pytest.mark.parametrize("item", _texts(), ids=lambda item: f"{item.category}:{item.family}")
def test_a_secret_in_an_attackers_shape_is_redacted(item):
    assert item.secret not in redact(item.carrier)


def _log(message: str, n: int, service: str = "billing") -> ErrorEvent:
    at = datetime(2026, 11, 25, 12, tzinfo=UTC) + timedelta(milliseconds=n)
    return ErrorEvent(event_id=f"e{n}", timestamp=at, service=service, kind="log", message=message)


def _through_the_boundary(lines: list[str], service: str = "billing") -> str:
    polled = PollResult(events=[_log(line, n, service) for n, line in enumerate(lines)])
    return redact_poll(Redactor(), polled).model_dump_json()


@pytest.mark.parametrize(
    "item", [item for item in shapes() if item.kind == "records"], ids=lambda item: item.family
)
def test_a_secret_logged_across_the_records_of_one_stream_is_redacted(item):
    seen = _through_the_boundary(item.carrier.splitlines())
    assert item.secret not in seen


def test_a_key_logged_across_the_spans_of_one_trace_is_redacted():
    lines = next(item for item in shapes() if item.family == "pem-one-record-per-line").carrier.splitlines()
    events = [
        _log(line, n).model_copy(
            update={"kind": "span_error", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}
        )
        for n, line in enumerate(lines)
    ]
    seen = redact_poll(Redactor(), PollResult(events=events))
    assert [event.message for event in seen.events[1:-1]] == ["[REDACTED:private_key]"] * (len(lines) - 2)


def test_records_of_another_service_do_not_continue_a_key_begun_elsewhere():
    events = [
        _log("-----BEGIN PRIVATE KEY-----", 0, "auth"),
        _log("payment declined for order 1842", 1, "billing"),
    ]
    seen = redact_poll(Redactor(), PollResult(events=events))
    assert seen.events[1].message == "payment declined for order 1842"


def test_a_record_that_only_names_a_keys_armour_hides_nothing_after_it():
    seen = _through_the_boundary(
        ["invalid key: expected -----BEGIN PRIVATE KEY----- first", "payment declined for order 1842"]
    )
    assert "payment declined for order 1842" in seen


def test_a_keys_records_end_where_the_stream_moves_on():
    lines = [
        "-----BEGIN PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
        "payment declined for order 1842",
    ]
    seen = _through_the_boundary(lines)
    assert "payment declined for order 1842" in seen and "MIIEvQIBADANBgkq" not in seen


def test_a_word_after_a_secrets_name_in_the_next_record_stays():
    seen = _through_the_boundary(["password check failed, reason was", "expired"])
    assert "expired" in seen


def test_an_attribute_named_like_a_session_holds_no_credential_shaped_value():
    secret = "o28vwhZs2yjPNUxU5a437cW6E5GH6G7u7e8q"
    event = _log("login failed", 0).model_copy(
        update={"attributes": {"http.request.header.x-sso-ticket": secret, "app.ticket_count": 3}}
    )
    seen = Redactor().event(event)
    assert seen.attributes["http.request.header.x-sso-ticket"] == "[REDACTED:key_value_secret]"
    assert seen.attributes["app.ticket_count"] == 3


# --- what decoding must leave alone --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "GET /search?q=red%20shoes&page=2 500",
        '{"msg": "{\\"order\\": 1842, \\"status\\": \\"declined\\"}"}',
        "payload " + base64.b64encode(b'{"order": 1842, "status": "declined"}').decode(),
        "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
        "frame dump " + b"order 1842 declined by provider".hex(),
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ],
)
def test_an_encoded_text_without_a_secret_comes_out_as_it_went_in(text):
    assert redact(text) == text


# --- private keys and seed phrases -----------------------------------------------------------------------


def test_a_seed_phrase_is_redacted_and_list_words_without_its_checksum_stay():
    english = Mnemonic("english")
    phrase = english.generate(128)
    assert phrase not in redact(f"wallet restore failed: {phrase}")
    words = phrase.split()
    broken = " ".join(
        [*words[:-1], next(w for w in english.wordlist if not english.check(" ".join([*words[:-1], w])))]
    )
    assert redact(f"wallet restore failed: {broken}") == f"wallet restore failed: {broken}"


def test_a_json_web_keys_public_members_stay():
    text = json.dumps({"kty": "RSA", "kid": "2026-11", "e": "AQAB", "alg": "RS256", "use": "sig"})
    assert redact(text) == text


# --- personal data outside US formats ----------------------------------------------------------------------


def test_the_corpus_plants_phones_of_regions_redaction_reads():
    assert set(PHONE_REGIONS) <= set(REDACTED_REGIONS)


@pytest.mark.parametrize("region", REDACTED_REGIONS)
def test_a_phone_number_of_each_region_is_redacted_in_every_format(region):
    number = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    assert number is not None
    for style in (
        phonenumbers.PhoneNumberFormat.E164,
        phonenumbers.PhoneNumberFormat.INTERNATIONAL,
        phonenumbers.PhoneNumberFormat.NATIONAL,
    ):
        shown = phonenumbers.format_number(number, style)
        assert shown not in redact(f"sms to {shown} bounced"), shown


@pytest.mark.parametrize("region", sorted(phonenumbers.SUPPORTED_REGIONS))
def test_a_phone_number_of_every_region_is_redacted_in_international_formats(region):
    for kind in (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE):
        number = phonenumbers.example_number_for_type(region, kind)
        for style in (phonenumbers.PhoneNumberFormat.E164, phonenumbers.PhoneNumberFormat.INTERNATIONAL):
            shown = "" if number is None else phonenumbers.format_number(number, style)
            assert number is None or shown not in redact(f"call {shown} now"), shown


def test_every_country_of_the_iban_registry_is_covered():
    countries = {item.family.removeprefix("iban-") for item in shapes() if item.family.startswith("iban-")}
    assert countries == {country for country, _ in iban_registry()}


def _wrong_aadhaar() -> str:
    from stdnum import verhoeff

    body = "23456789012"
    wrong = (int(verhoeff.calc_check_digit(body)) + 1) % 10
    digits = body + str(wrong)
    return f"{digits[:4]} {digits[4:8]} {digits[8:]}"


@pytest.mark.parametrize(
    "text",
    [
        "deployed 2026-11-25 12:00:00 in 1842 ms",
        "version 1.24.3 build 20261125",
        "retry 3 of 5 after 250 ms",
        "order 1234 5678 shipped",
        "AB123456E is not a National Insurance number",  # suffix past D
        "cpf 123.456.789-00 has wrong check digits",
        "GB00 NWBK 6016 1331 9268 19 has wrong check digits",
        "listening on 0.0.0.0:8080, pid 4242",
        # from Loghub's BGL and Defects4J's Time: a German number could be read in each, none is written so
        "Fan speeds ( 3552 3534 3375 4530 3515 3479 )",
        "Fan speeds ( 3552 3534 3375 **** 3515 3479 )",
        "expected:<AD AD AD AD 2003 [2003 03 20]03 January Jan 01 1 ...>",
    ],
)
def test_numbers_that_are_not_personal_data_stay(text):
    assert redact(text) == text


def test_an_aadhaar_number_with_a_wrong_check_digit_is_not_one():
    # (grouped 4-4-4 it can still be a valid German phone number: libphonenumber says which)
    assert "national_id" not in redact_with_report(f"aadhaar {_wrong_aadhaar()} rejected").counts


@pytest.mark.parametrize("after", ["", " 0", " 12", " 0,1", " 12345", " attempts"])
def test_an_aadhaar_number_followed_by_a_lone_number_is_still_redacted(after):
    # found by fuzzing: `ekyc failed for 5360 4870 4954 0` kept the number whole
    text = f"ekyc failed for 5360 4870 4954{after}"
    assert "5360 4870 4954" not in redact(text)
    assert "national_id" in redact_with_report(text).counts


# --- what must come out as it went in -----------------------------------------------------------------------


@pytest.mark.parametrize("frame", KEPT_FRAMES)
def test_a_frames_file_and_line_stay_when_its_name_holds_a_secrets_word(frame):
    assert redact(frame) == frame


@pytest.mark.parametrize("name", KEPT_IDENTIFIERS)
def test_a_class_named_after_a_secret_stays_with_what_follows_it(name):
    for shape in IDENTIFIER_SHAPES:
        line = shape.format(x=name)
        assert redact(line) == line


@pytest.mark.parametrize("pair", DISTINCT_LOG_PAIRS, ids=lambda pair: pair[0])
def test_two_different_log_errors_stay_different_after_redaction(pair):
    first, second = pair
    assert redact(first) != redact(second)


def test_a_value_under_a_classs_name_is_still_redacted_when_it_is_a_secret():
    assert "S3cr3tPassw0rd!" not in redact("PasswordResetController password=S3cr3tPassw0rd!")
