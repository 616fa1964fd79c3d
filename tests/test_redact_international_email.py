"""An internationalised e-mail address is redacted as an ASCII one is.

RFC 6531 (SMTPUTF8) and RFC 6532 let a mailbox's local part hold any non-ASCII character, and a domain's
labels are IDNA U-labels (`exämple`, `例子`, `рф`) or their punycode A-labels (`xn--exmple-cua`, the top-level
`xn--p1ai`); RFC 3490 3.1 counts the ideographic and full-width full stops (U+3002, U+FF0E, U+FF61) as dots
between labels. The address ends where a space, a punctuation mark or a symbol stands, as an ASCII one does.
"""

from __future__ import annotations

import pytest

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, redact_poll, redact_with_report
from rounds_bot.redact import engine as engine_module
from rounds_bot.redact.text import _rules
from rounds_bot.sources.base import PollResult
from tests.redact_reference import reference_redact
from tests.test_redact_engine import assert_same

ADDRESSES = (
    "josé@exämple.com",
    "用户@例子.广告",
    "user@xn--exmple-cua.com",
    "ann@example.xn--p1ai",
    "почта@пример.рф",
    "δοκιμή@παράδειγμα.δοκιμή",
    "उपयोगकर्ता@उदाहरण.कॉम",  # Devanagari: vowel signs are combining marks, not letters
    "ユーザー@例え.jp",
    "用户@例子。广告",
    "müller.jürgen+billing@straße.de",
)
#: (text, what redaction leaves of it): the address ends at a space, punctuation or a symbol
BOUNDED = (
    ("邮件发送失败：用户@例子.广告，请重试", "邮件发送失败：[REDACTED:email]，请重试"),
    # an ideographic full stop is a dot of the domain (RFC 3490): what follows it is read as its last label
    ("退信：用户@例子.广告。请重试", "退信：[REDACTED:email]"),
    ("«josé@exämple.com» rejected", "«[REDACTED:email]» rejected"),
    ("to “ann@пример.рф”, cc bob@example.com", "to “[REDACTED:email]”, cc [REDACTED:email]"),
    ("mail josé@exämple.com\u00a0failed", "mail [REDACTED:email]\u00a0failed"),
)
KEPT = (
    "git@github.com:acme/billing.git fetched",
    "https://josé@exämple.com/x is a URL's user",
    "décor@ is no address",
    "user@localhost refused",
    "price 5€@shop",
)


@pytest.fixture(autouse=True)
def _scan_text_outside_ascii_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanning engine's database for text outside ASCII, from the first such text."""
    monkeypatch.setattr(engine_module, "OTHER_TEXT_WITH_KEYWORDS", 0)


@pytest.mark.parametrize("address", ADDRESSES)
def test_an_internationalised_address_is_redacted_as_an_ascii_one(address: str) -> None:
    report = redact_with_report(f"welcome mail to {address} bounced")
    assert report.text == "welcome mail to [REDACTED:email] bounced"
    assert report.counts["email"] == 1


@pytest.mark.parametrize(("text", "left"), BOUNDED)
def test_the_address_ends_where_a_space_punctuation_or_a_symbol_stands(text: str, left: str) -> None:
    assert redact(text) == left


@pytest.mark.parametrize("text", KEPT)
def test_what_is_no_address_stays(text: str) -> None:
    assert redact(text) == text


def test_an_internationalised_address_is_gone_after_the_event_boundary() -> None:
    events = [
        ErrorEvent(
            event_id=f"e{n}",
            timestamp="2026-11-28T12:00:00Z",
            service="mailer",
            message=f"bounce for {address}",
            attributes={"mail.to": f"<{address}>"},
        )
        for n, address in enumerate(ADDRESSES)
    ]
    seen = redact_poll(Redactor(), PollResult(events=events))
    for address, event in zip(ADDRESSES, seen.events, strict=True):
        assert address.split("@")[0] not in event.model_dump_json(ensure_ascii=False), address


def test_the_engines_redact_internationalised_addresses_as_the_reference_does() -> None:
    rules = _rules("all")
    texts = [f"mail to {address} bounced" for address in ADDRESSES]
    texts += [text for text, _ in BOUNDED] + list(KEPT)
    assert assert_same(rules, texts) == len(texts)
    for text in texts:
        assert redact_with_report(text) == reference_redact(rules, text)
