"""Whether an address-shaped run of numbers is a version: `10.2.3.4` is an IPv4 address and a four-part
version both, so only what stands before it tells (never the value itself):

- a version's name: the word `version`, `ver`, `release` or `build` (plural too), alone or as the last word of
  a name (`FileVersion`, `AssemblyVersion("`, `app_version=`), then blanks, `:` or `=`, and a quote or a
  parenthesis; .NET writes an assembly's version so (`System.Runtime, Version=4.2.2.0`). Letters before
  the word make another word (`server`, `driver`, `failover`, `rebuild`): no version's name.
- a product token (RFC 9110 10.1.5, the User-Agent and Server headers: `product = token ["/"
  product-version]`, `Chrome/120.0.0.0`): a name that starts a word (after a blank, `(`, `;`, `,`, a quote
  or at the start; after `/` it is a path's segment), its version followed by what ends a product (a blank,
  `;`, `)`, `,`, a quote, the end; not a port's `:` or a path's `/`), and a name that says address (`host/`,
  `ip/`, `peer/`) is none.

`v` joined to the number (`v1.2.3.4`) needs no look here: the address rules never start after a letter.
"""

from __future__ import annotations

import re

from rounds_bot.redact.keys import words

_VERSION_NAME = re.compile(
    r"(?:(?<![A-Za-z])(?:[Vv]ersion|VERSION|[Vv]er|VER|[Rr]elease|RELEASE|[Bb]uild|BUILD)"
    r"|(?<=[a-z0-9])(?:Version|Release|Build))"
    r"[sS]?[ \t]{0,3}(?:[:=][ \t]{0,3})?[\"'(]{0,2}\Z"
)
#: how far before the number a version's name (with its blanks, sign and quotes) can start
_NAME_REACH = 24
_PRODUCT = re.compile(r"(?:^|[\s(;,\"'])([A-Za-z][A-Za-z0-9._-]{0,39})/\Z")
#: a product's name, its character before it and its `/`
_PRODUCT_REACH = 42
_ENDS_PRODUCT = frozenset(" \t\r\n;),\"'")
#: words of a name before `/` that say what follows is an address, not a product's version
_ADDRESS_WORDS = frozenset(
    {"ip", "ip4", "ipv4", "ip6", "ipv6", "host", "hosts", "hostname", "addr", "address", "addresses", "peer",
     "peers", "server", "servers", "node", "nodes", "client", "clients", "remote", "proxy", "gateway", "from",
     "to", "via", "src", "dst", "source", "destination", "target", "upstream", "endpoint", "route", "routes"}
)  # fmt: skip


def is_version(text: str, start: int, end: int) -> bool:
    """Whether the address-shaped `text[start:end]` is a version, by what stands before it (and, after a
    product's name, by what follows it)."""
    if _VERSION_NAME.search(text, max(start - _NAME_REACH, 0), start):
        return True
    product = _PRODUCT.search(text, max(start - _PRODUCT_REACH, 0), start)
    if product is None or (end < len(text) and text[end] not in _ENDS_PRODUCT):
        return False
    return not _ADDRESS_WORDS.intersection(words(product.group(1)))
