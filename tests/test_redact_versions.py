"""A four-part version is no IP address; an address in a log stays redacted. Only the context around it tells
them apart, never the value (`10.2.3.4` is both):

- a version's name right before it: the word `version` (`ver`, `release`, `build`), alone or as the last word
  of a name (`FileVersion`, `AssemblyVersion("`, `app_version=`), then blanks, `:` or `=` and a quote or
  parenthesis; .NET writes an assembly's as `Version=4.0.0.0` (its AssemblyName's display form);
- `v` joined to it (`v1.2.3.4`, a tag);
- a product's version in a User-Agent-like list (RFC 9110 10.1.5 and 10.2.4, the User-Agent and Server
  headers: `product *( RWS ( product / comment ) )`, `product = token ["/" product-version]`): `Name/`
  standing as an item of its own (after a blank, a quote, `=` or at the start; the version followed by a
  blank, a quote or the end), with another product `Token/1.2` beside it, across blanks and `( ... )`
  comments only. A name with a dot or a hyphen (`mail.example.com/`, `web-1/`: a host, as Java's
  `InetAddress.toString()` writes `hostname/address`), a name that says address (`host/`, `ip/`) or a
  product with nothing User-Agent-like beside it (`redis/10.0.0.5`) is no product's version.

A word that merely ends in those letters (`server`, `driver`, `failover`, `rebuild`) is no version's name.
When unsure it is an address: a kept address leaks, a redacted version costs little.
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
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 "
    "Safari/537.36",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile "
    "Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
    "Safari/537.36 OPR/106.0.0.0",
    'user_agent="YaBrowser/24.1.0.0 Safari/537.36"',
    "MyApp/1.2.3.4 CFNetwork/1410.0.3 Darwin/22.6.0",
    "Version=4.0.0.0",
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
    # a host name and its address, as Java's InetAddress.toString() and most logs write them
    (
        "Failed to connect to mail.example.com/203.0.113.7 after 3 attempts",
        "Failed to connect to mail.example.com/[REDACTED:ip_address] after 3 attempts",
    ),
    (
        "Connection refused to api.example.com/203.0.113.7",
        "Connection refused to api.example.com/[REDACTED:ip_address]",
    ),
    (
        "No route to host: db-primary.corp/198.51.100.23",
        "No route to host: db-primary.corp/[REDACTED:ip_address]",
    ),
    ("Could not connect to redis/10.0.0.5", "Could not connect to redis/[REDACTED:ip_address]"),
    ("(web-1/203.0.113.7)", "(web-1/[REDACTED:ip_address])"),
    ("'api.example.com/203.0.113.7'", "'api.example.com/[REDACTED:ip_address]'"),
    ("kafka1.example.com/203.0.113.10,", "kafka1.example.com/[REDACTED:ip_address],"),
    (
        "InetAddress: localhost.localdomain/203.0.113.7",
        "InetAddress: localhost.localdomain/[REDACTED:ip_address]",
    ),
    # a product with nothing User-Agent-like beside it: a comment alone, a list of host/address pairs
    ("redis/10.0.0.5 (timeout after 3 s)", "redis/[REDACTED:ip_address] (timeout after 3 s)"),
    ("HeadlessChrome/120.0.0.0", "HeadlessChrome/[REDACTED:ip_address]"),
    (
        "brokers: kafka1/203.0.113.10 kafka2/203.0.113.11",
        "brokers: kafka1/[REDACTED:ip_address] kafka2/[REDACTED:ip_address]",
    ),
    ("web-1/203.0.113.7 Safari/537.36", "web-1/[REDACTED:ip_address] Safari/537.36"),
    ("Safari/537.36 (compatible; redis/10.0.0.5)", "Safari/537.36 (compatible; redis/[REDACTED:ip_address])"),
)


@pytest.mark.parametrize("text", VERSIONS)
def test_a_four_part_version_is_no_ip_address(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "left"), ADDRESSES)
def test_an_ip_address_in_a_log_stays_redacted(text: str, left: str) -> None:
    assert redact(text) == left


def test_with_public_addresses_only_a_version_is_kept_too() -> None:
    text = "Chrome/120.0.0.0 Safari/537.36 from 203.0.113.9"
    assert redact(text, ips="public") == "Chrome/120.0.0.0 Safari/537.36 from [REDACTED:ip_address]"


def test_the_engines_tell_versions_from_addresses_as_the_reference_does() -> None:
    texts = list(VERSIONS) + [text for text, _ in ADDRESSES]
    for policy in ("all", "public"):
        rules = _rules(policy)
        assert assert_same(rules, texts) == len(texts)
        for text in texts:
            assert redact_with_report(text, ips=policy) == reference_redact(rules, text)
