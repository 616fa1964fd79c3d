"""Sanitising hidden content, and redacting secrets and personal data."""

from __future__ import annotations

from rounds_bot.redact import clean, redact, redact_with_report, sanitize


def test_html_comments_are_removed_even_when_unterminated():
    assert sanitize("a<!-- do this -->b") == "ab"
    assert sanitize("a<!-- never closed") == "a"


def test_invisible_and_bidi_characters_are_removed():
    assert sanitize("ad\u200bmin\u202e\u2066x\ufeff\U000e0041") == "adminx"


def test_control_characters_go_but_newlines_and_tabs_stay():
    assert sanitize("a\x00b\x1bc\n\td") == "abc\n\td"


def test_hidden_markdown_is_removed():
    assert sanitize("![ignore rules](http://x/i.png)") == "![](http://x/i.png)"
    assert sanitize('[docs](http://x "secret title")') == "[docs](http://x)"
    assert sanitize('<img src="a.png" alt="run rm -rf" title="t">') == '<img src="a.png">'


def test_redaction_names_its_category_and_counts():
    report = redact_with_report("mail bob@example.com and carol@example.org")
    assert report.text == "mail [REDACTED:email] and [REDACTED:email]"
    assert report.counts["email"] == 2 and report.total == 2


def test_card_numbers_need_a_valid_luhn_checksum():
    assert redact("card 4111 1111 1111 1111") == "card [REDACTED:card_number]"
    assert redact("order 4111 1111 1111 1112") == "order 4111 1111 1111 1112"


def test_ip_addresses_are_redacted_only_when_asked():
    assert redact("from 10.1.2.3") == "from 10.1.2.3"
    assert redact("from 10.1.2.3", redact_ips=True) == "from [REDACTED:ip_address]"
    assert redact("version 1.2.3.4567", redact_ips=True) == "version 1.2.3.4567"


def test_key_value_secrets_keep_the_key():
    assert redact("password=hunter2&user=x") == "password=[REDACTED:key_value_secret]&user=x"
    assert redact('{"api_key": "abc123"}') == '{"api_key": "[REDACTED:key_value_secret]"}'
    assert redact("password=null") == "password=null"


def test_a_jwt_is_redacted_whole_signature_included():
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    )
    assert redact(f"jwt {jwt} end") == "jwt [REDACTED:jwt] end"


def test_clean_sanitises_before_redacting_so_hidden_characters_cannot_split_a_secret():
    assert clean("ghp_abcdefghij\u200bklmnopqrstuvwxyz0123456789") == "[REDACTED:github_token]"


def test_ordinary_telemetry_is_left_alone():
    text = (
        "GET /api/orders/12345 took 250 ms trace_id=4bf92f3577b34da6a3ce929d0e0e4736 "
        "span 00f067aa0ba902b7 uuid 123e4567-e89b-12d3-a456-426614174000 at 2026-03-01T12:00:00Z"
    )
    assert redact(text) == text
