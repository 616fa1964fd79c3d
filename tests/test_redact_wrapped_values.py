"""A secret's value that a log wrapped at a fixed width runs on at the start of the next line: the break
falls inside the value (no blank on either side of it), so both halves are the secret and both go. A line
that starts with a word, a blank, a timestamp, a date, a version, a level, a trace id or a pair of its own
is the next record, and stays.

And the encoded forms a log really holds a secret in, which the decoding step already judges decoded: HTTP
Basic credentials in a header, a curl command line and a dict's repr, tokens in JSON-escaped strings, and
percent-encoded queries and form bodies."""

from __future__ import annotations

import base64

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "s3cr3tP4ssw0rd2024Zq"
TOKEN = "Zk3qP9xLm2Rt7vWc8yNb4HsJ"
#: a record as a log line holds it, before the wrap
_RECORD = "2024-05-01T10:00:00.123Z ERROR [auth-service] login failed for user=bob "
LINES = (
    _RECORD + "password=" + SECRET,
    _RECORD + "password=" + SECRET + " retry=3",
    _RECORD + "db_password: " + SECRET + ", retrying",
    _RECORD + "api_key=" + TOKEN,
    _RECORD[:40] + "Authorization: Bearer " + TOKEN + " status=401",
    _RECORD + 'client_secret="' + TOKEN + '" rejected',
)


def _wrap(line: str, secret: str, cut: int) -> str:
    """`line` broken as a fixed-width wrap breaks it: inside `secret`, `cut` characters into it."""
    at = line.index(secret) + cut
    return line[:at] + "\n" + line[at:]


WRAPPED = [
    (_wrap(line, secret, cut), secret, cut)
    for line in LINES
    for secret in (SECRET if SECRET in line else TOKEN,)
    for cut in (4, 11)
]


@pytest.mark.parametrize(("text", "secret", "cut"), WRAPPED)
def test_both_halves_of_a_value_wrapped_onto_the_next_line_are_redacted(
    text: str, secret: str, cut: int
) -> None:
    out = redact(text)
    assert secret[:cut] not in out and secret[cut:] not in out, out
    assert "[REDACTED:" in out
    assert out.startswith(_RECORD[:40])


KEPT = (
    _RECORD + "password=" + SECRET + "\nConnection refused",  # the next record's words
    _RECORD + "password=" + SECRET + "\n2024-01-01T00:00:00Z retry",  # a timestamp starts a record
    _RECORD + "password=" + SECRET + "\n  at com.acme.Db.connect(Db.java:42)",  # an indented frame
    _RECORD + "password=" + SECRET + "\nexpires_in=3600",  # a pair of its own
    _RECORD + "password=" + SECRET + "\nERROR",
    _RECORD + "password=" + SECRET + "\nRetryPolicy",
    _RECORD + "password=" + SECRET + "\n42",
    "password=" + SECRET + "\nX9f2kQ7",  # a short line was not cut by a wrap
    "session=active\nX9f2kQ7",
)


@pytest.mark.parametrize("text", KEPT)
def test_the_next_record_after_a_value_stays(text: str) -> None:
    out = redact(text)
    assert SECRET not in out
    assert out.split("\n", 1)[1] == text.split("\n", 1)[1], out


#: what a record starts with, each ending at a blank as a value's rest would: a date (Python logging's
#: asctime, Tomcat's, logcat's), an ISO 8601 basic timestamp, epoch seconds, a version, a level (glog's
#: `I0501` too), a trace id (W3C trace context's trace-id and parent-id, a UUID, AWS X-Ray's)
NEXT_RECORDS = (
    "2024-05-01 12:00:01,456 INFO retrying",
    "2024/05/01 12:00:01 retrying",
    "01-May-2024 12:00:01.456 INFO [main] retrying",
    "05-01 12:00:01.456  1234  1234 I Auth: retrying",
    "20240501T120001Z retrying",
    "1714564801.456 retrying",
    "4bf92f3577b34da6a3ce929d0e0e4736 GET /api/v1/users",
    "00f067aa0ba902b7 GET /api/v1/users",
    "0f8fad5b-d9cb-469f-a165-70867728950e GET /api/v1/users",
    "1-5759e988-bd862e3fe1be46a994272793 GET /api/v1/users",
    "v1.2.3 deployed",
    "2.14.0-rc1 deployed",
    "I0501 12:00:01.456789 1 main.go:42] retrying",
    "WARN retrying",
)
_PAD = "2024-05-01 12:00:00,123 WARNING auth middleware rejected the request from gateway "


@pytest.mark.parametrize("head", ["password=hunter2x", "token=abc123def456", "api_key=k1234567890"])
@pytest.mark.parametrize("line", NEXT_RECORDS)
def test_a_line_that_starts_with_a_date_a_version_a_level_or_an_id_is_the_next_record(
    head: str, line: str
) -> None:
    text = _PAD + head + "\n" + line
    out = redact(text)
    assert out.endswith("\n" + line), out
    assert head.partition("=")[2] not in out


@pytest.mark.parametrize("end", ('"', ";", '" '))
def test_a_value_that_ends_before_the_line_break_keeps_the_next_line(end: str) -> None:
    text = _RECORD + 'password="' + SECRET + end + "\nX9f2kQ7"
    assert redact(text).endswith("\nX9f2kQ7")


def test_every_engine_gives_the_reference_text_for_wrapped_values() -> None:
    records = [_PAD + "token=abc123def456\n" + line for line in NEXT_RECORDS]
    texts = [text for text, _, _ in WRAPPED] + list(KEPT) + records
    assert assert_same(_rules("all"), texts) == len(texts)


_BASIC = base64.b64encode(b"deploy:hunter2").decode()
ENCODED = (
    (f"Authorization: Basic {_BASIC}", _BASIC),
    (f'curl -H "Authorization: Basic {_BASIC}" https://api.example.com', _BASIC),
    (f"headers={{'Authorization': 'Basic {_BASIC}', 'Accept': 'json'}}", _BASIC),
    (f'msg="{{\\"Authorization\\":\\"Basic {_BASIC}\\"}}"', _BASIC),
    (f"basic auth header Basic {_BASIC} rejected", _BASIC),
    (f'{{\\"token\\":\\"{TOKEN}\\"}}', TOKEN),
    (f"{{\\u0022token\\u0022:\\u0022{TOKEN}\\u0022}}", TOKEN),
    ("body=user%3Dbob%26password%3Dhunter2", "hunter2"),
    ("next=%2Flogin%3Fpassword%253Dhunter2", "hunter2"),
    (f"grant_type=client_credentials&client_id=app&client_secret={TOKEN}", TOKEN),
    ("%22password%22%3A%22hunter2%22", "hunter2"),
)


@pytest.mark.parametrize(("text", "secret"), ENCODED)
def test_a_secret_in_an_encoded_or_escaped_form_is_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out
    assert "[REDACTED:" in out


_HEX_KEY = "9f2c4e7a1b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"


@pytest.mark.parametrize("left", [32, 16])
def test_a_hex_rest_of_a_trace_ids_length_alone_on_its_line_is_the_values(left: int) -> None:
    line = "2024-05-01 12:00:01 ERROR auth failed api_key=" + _HEX_KEY
    text = line[:-left] + "\n" + line[-left:]
    assert _HEX_KEY[-left:] not in redact(text)


def test_a_rest_of_a_glog_levels_shape_alone_on_its_line_is_the_values() -> None:
    text = "2024-05-01 12:00:01 ERROR request failed client_secret=abcdEFGH1234ijklMNOP5678qrstUV\nW9012"
    assert "W9012" not in redact(text)


def test_a_trace_id_that_starts_the_next_record_stays() -> None:
    line = "2024-05-01 12:00:01 ERROR auth failed api_key=" + _HEX_KEY[:40]
    text = line + "\n" + _HEX_KEY[:32] + " GET /orders 500"
    assert redact(text).endswith("\n" + _HEX_KEY[:32] + " GET /orders 500")
