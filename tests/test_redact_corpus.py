"""How much the redactor catches, per category, on a labelled corpus.

Every positive line holds exactly one secret of its category (fake values in real formats); every
negative line holds none and must come out unchanged. The table printed by
`pytest -s tests/test_redact_corpus.py` is the measurement; the assertions pin the floor.
"""

from __future__ import annotations

from collections import defaultdict

from rounds_bot.redact import redact_with_report

POSITIVES: dict[str, list[str]] = {
    "github_token": [
        "token ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "GITHUB_TOKEN=ghs_abcdefghijklmnopqrstuvwxyzABCDEF1234",
        "using github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab",
        "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 expired",
    ],
    "aws_key": [
        "aws access key AKIAIOSFODNN7EXAMPLE rejected",
        "creds ASIAY34FZKBOKMUTVV7A expired",
    ],
    "slack_token": [
        "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx failed",
        "SLACK=xoxp-1111111111-2222222222-3333333333-abcdef0123456789abcdef0123456789",
    ],
    "jwt": [
        "session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c invalid",
    ],
    "authorization": [
        "Authorization: Bearer 0b79bab50daca910b000d4f1a2b675d604257e42",
        "header authorization=Bearer abc.def-ghi_jklmnopqrst rejected",
    ],
    "private_key": [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7Mx\n"
        "-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n"
        "-----END OPENSSH PRIVATE KEY-----",
    ],
    "url_password": [
        "connect postgres://app:S3cr3tPass@db.internal:5432/shop failed",
        "redis://default:hunter2hunter2@cache:6379/0 timeout",
    ],
    "key_value_secret": [
        "login failed password=correcthorse",
        'config {"api_key": "a1b2c3d4e5"}',
        "client_secret: 9f8e7d6c5b4a",
        "retry with apikey=QWERTY12345&region=eu",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ],
    "email": [
        "user alice@example.com not found",
        "notify ops.team+alerts@mail.example.co.uk failed",
    ],
    "card_number": [
        "charge declined for 4111-1111-1111-1111",
        "card 5555555555554444 expired",
        "amex 378282246310005 rejected",
    ],
}

NEGATIVES = [
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 deployed",
    "order 123e4567-e89b-12d3-a456-426614174000 not found",
    "timeout after 30000 ms at 2026-03-01T12:00:00Z",
    "invoice 4111111111111112 is not a valid card",
    "version 1.24.3 build 20260301",
    "password must be at least 12 characters",
    'File "/srv/app/shop/cart.py", line 7, in average_price',
    "at com.shop.Cart.total(Cart.java:42)",
    "token bucket refilled",
]


def measure() -> dict[str, tuple[int, int]]:
    caught: dict[str, int] = defaultdict(int)
    for category, lines in POSITIVES.items():
        for line in lines:
            if redact_with_report(line).counts.get(category, 0) >= 1:
                caught[category] += 1
    return {category: (caught[category], len(lines)) for category, lines in POSITIVES.items()}


def test_redaction_catches_every_labelled_secret_and_prints_the_table():
    table = measure()
    print("\ncategory            caught/total")
    for category, (caught, total) in table.items():
        print(f"{category:<20}{caught}/{total}")
    missed = {category: counts for category, counts in table.items() if counts[0] < counts[1]}
    assert not missed, f"missed: {missed}"


def test_no_secret_survives_in_the_redacted_positives():
    for lines in POSITIVES.values():
        for line in lines:
            text = redact_with_report(line).text
            assert "[REDACTED:" in text


def test_negatives_come_out_unchanged():
    changed = [line for line in NEGATIVES if redact_with_report(line).text != line]
    assert changed == []
