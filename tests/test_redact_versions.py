"""A four-part version is no IP address; an address in a log stays redacted. Only the context before it tells
them apart, never the value (`10.2.3.4` is both):

- a version's name right before it: the word `version` (`ver`, `release`, `build`), alone or as the last word
  of a name (`FileVersion`, `AssemblyVersion("`, `app_version=`), then blanks, `:` or `=` and a quote or
  parenthesis; .NET writes an assembly's as `Version=4.0.0.0` (its AssemblyName's display form);
- `v` joined to it (`v1.2.3.4`, a tag);
- a product token, `Name/` (RFC 9110 10.1.5, the User-Agent and Server headers: `product = token ["/"
  product-version]`): a name that starts a word, with no `/` before it (a path's segment is no product),
  and the version followed by a space, `;`, `)`, `,`, a quote or the end (a path or a port is not a version's
  end), unless the name says address (`host/`, `ip/`, `peer/`).

A word that merely ends in those letters (`server`, `driver`, `failover`, `rebuild`) is no version's name.
"""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact, redact_with_report
from rounds_bot.redact.text import _rules
from tests.redact_reference import reference_redact
from tests.test_redact_engine import assert_same

VERSIONS = (
    "version 10.2.3.4",
    "Version: 10.2.3.4",
    "app version=10.2.3.4 started",
    "v1.2.3.4",
    "upgrade to v10.2.3.4 failed",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
    "Safari/537.36 Edg/120.0.0.0",
    "Chrome/120.0.6099.109",
    "HeadlessChrome/120.0.0.0",
    "Could not load file or assembly 'System.Runtime, Version=4.2.2.0, Culture=neutral'",
    '[assembly: AssemblyVersion("1.0.0.0")]',
    '[assembly: AssemblyFileVersion("10.2.3.4")]',
    "FileVersion 10.0.19041.1",
    'ProductVersion="10.2.3.4"',
    "app_version=10.2.3.4",
    "appVersion: '10.2.3.4'",
    "build 10.2.3.4 deployed",
    "release: 10.2.3.4",
    "supported versions: 1.2.3.4",
)
#: (text, what redaction leaves of it)
ADDRESSES = (
    ("from 10.2.3.4", "from [REDACTED:ip_address]"),
    ("10.2.3.4:8080 refused", "[REDACTED:ip_address]:8080 refused"),
    ("host=10.2.3.4", "host=[REDACTED:ip_address]"),
    ("connecting to server 10.2.3.4", "connecting to server [REDACTED:ip_address]"),
    ("SERVER=10.2.3.4", "SERVER=[REDACTED:ip_address]"),
    ("jdbc driver: 10.2.3.4", "jdbc driver: [REDACTED:ip_address]"),
    ("failover 10.2.3.4", "failover [REDACTED:ip_address]"),
    ("rebuild 10.2.3.4", "rebuild [REDACTED:ip_address]"),
    ("observer=10.2.3.4", "observer=[REDACTED:ip_address]"),
    ("version 2 peer 10.2.3.4", "version 2 peer [REDACTED:ip_address]"),
    ("Version 10.2.3.4 from 10.2.3.5", "Version 10.2.3.4 from [REDACTED:ip_address]"),
    ("GET /api/hosts/10.2.3.4 404", "GET /api/hosts/[REDACTED:ip_address] 404"),
    ("hosts/10.2.3.4 unreachable", "hosts/[REDACTED:ip_address] unreachable"),
    ("ip/10.2.3.4", "ip/[REDACTED:ip_address]"),
    ("Chrome/10.2.3.4:443", "Chrome/[REDACTED:ip_address]:443"),
    ("nodes/10.2.3.4/status", "nodes/[REDACTED:ip_address]/status"),
    ("x-forwarded-for: 10.2.3.4", "x-forwarded-for: [REDACTED:ip_address]"),
)


@pytest.mark.parametrize("text", VERSIONS)
def test_a_four_part_version_is_no_ip_address(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "left"), ADDRESSES)
def test_an_ip_address_in_a_log_stays_redacted(text: str, left: str) -> None:
    assert redact(text) == left


def test_with_public_addresses_only_a_version_is_kept_too() -> None:
    text = "Chrome/120.0.0.0 from 203.0.113.9"
    assert redact(text, ips="public") == "Chrome/120.0.0.0 from [REDACTED:ip_address]"


def test_the_engines_tell_versions_from_addresses_as_the_reference_does() -> None:
    texts = list(VERSIONS) + [text for text, _ in ADDRESSES]
    for policy in ("all", "public"):
        rules = _rules(policy)
        assert assert_same(rules, texts) == len(texts)
        for text in texts:
            assert redact_with_report(text, ips=policy) == reference_redact(rules, text)
