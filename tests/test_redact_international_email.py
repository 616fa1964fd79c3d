"""An internationalised e-mail address is redacted as an ASCII one is.

RFC 6531 (SMTPUTF8) and RFC 6532 let a mailbox's local part hold any non-ASCII character, and a domain's
labels are IDNA U-labels (`exämple`, `例子`, `рф`) or their punycode A-labels (`xn--exmple-cua`, the top-level
`xn--p1ai`); RFC 3490 3.1 counts the ideographic and full-width full stops (U+3002, U+FF0E, U+FF61) as dots
between labels. The address ends where a space, a punctuation mark or a symbol stands, as an ASCII one does.

CJK text runs on without spaces and ends its sentences with `。`, so a non-ASCII top-level label is one only
where it can be a real one: IANA's IDN top-level domains (its root zone list's `XN--` entries), its IDN
evaluation domains and the labels examples copy (`用户@例子.广告`). A sentence with an `@` in it
(`エラー@ログイン処理。再試行してください`) is no address, and one that goes on after an address keeps
the rest.
"""

from __future__ import annotations

import codecs
from importlib import resources

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
    # the internationalised examples of the "Email address" article, which test suites copy
    "अजय@डाटा.भारत",
    "квіточка@пошта.укр",
    "θσερ@εχαμπλε.ψομ",
    "二ノ宮@黒川.日本",
    "коля@пример.РФ",  # a domain's labels are read in any case
    "info@vermögensberatung.Vermögensberater",
    "zhang@例子。中国",
    "zhang@qq。com",  # a full stop typed with a CJK input method
)
#: (text, what redaction leaves of it): the address ends at a space, punctuation or a symbol
BOUNDED = (
    ("邮件发送失败：用户@例子.广告，请重试", "邮件发送失败：[REDACTED:email]，请重试"),
    # a sentence that goes on after the address, with an ideographic full stop: the address ends at its
    # real top-level domain and the rest stays
    ("退信：用户@例子.广告。请重试", "退信：[REDACTED:email]。请重试"),
    ("用户@例子.广告。请重试", "[REDACTED:email]。请重试"),
    ("用户@例子。广告。请重试", "[REDACTED:email]。请重试"),
    ("发送至：用户@例子．中国．失败", "发送至：[REDACTED:email]．失败"),
    # the shape of `почта@пример.рф`: a Cyrillic name at a real top-level domain is an address
    ("Ошибка@сервер.рф недоступен", "[REDACTED:email] недоступен"),
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
    # `@` in running CJK text, a full stop, and no top-level domain after it
    "エラー@ログイン処理。再試行してください",
    "错误@支付模块。请重试",
    "価格は@100円。です",
    "错误@支付模块。中国银行拒绝了付款",  # a top-level domain's letters that begin a longer word
    "错误@支付模块.请重试",
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


def test_every_idn_top_level_domain_of_ianas_list_ends_an_address() -> None:
    """The built-in set holds every `XN--` entry of IANA's root zone list (the copy the test dependencies
    vendor, data.iana.org/TLD/tlds-alpha-by-domain.txt), decoded to its U-label."""
    from rounds_bot.redact.personal import _IDN_TLDS

    listed = resources.files("hypothesis.vendor").joinpath("tlds-alpha-by-domain.txt").read_text("utf-8")
    labels = [line.strip().lower() for line in listed.splitlines() if line.startswith("XN--")]
    decoded = {codecs.decode(label[4:].encode("ascii"), "punycode") for label in labels}
    assert len(decoded) >= 150
    assert decoded <= _IDN_TLDS, sorted(decoded - _IDN_TLDS)
    for label in sorted(decoded):
        assert redact(f"bounce for user@example.{label} today") == "bounce for [REDACTED:email] today", label


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
