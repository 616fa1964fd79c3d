"""Whether an address-shaped run of numbers is a version: `10.2.3.4` is an IPv4 address and a four-part
version both, so only the text around it tells (never the value itself):

- a version's name: the word `version`, `ver`, `release` or `build` (plural too), alone or as the last word of
  a name (`FileVersion`, `AssemblyVersion("`, `app_version=`), then blanks, `:` or `=`, and a quote or a
  parenthesis; .NET writes an assembly's version so (`System.Runtime, Version=4.2.2.0`). Letters before
  the word make another word (`server`, `driver`, `failover`, `rebuild`): no version's name.
- a product's version in a User-Agent-like list. RFC 9110 writes User-Agent and Server (10.1.5, 10.2.4) as
  `product *( RWS ( product / comment ) )`, `product = token ["/" product-version]`, comments in
  parentheses. So `Name/` must be an item of such a list: it starts after a blank, a quote, `=` or at the
  start (after `/` it is a path's segment, after `(` or `;` a comment's words), its version ends at a blank,
  a quote or the end (not at a port's `:`, a path's `/` or a `,`), and another product with a version
  (`Safari/537.36`, not itself address-shaped) stands beside it, across blanks and comments only
  (`Chrome/120.0.0.0 Safari/537.36`, `(KHTML, like Gecko) Chrome/120.0.0.0`). Java's
  `InetAddress.toString()` and most logs write a host and its address as `hostname/address`, so a name with
  a dot or a hyphen (`mail.example.com/`, `web-1/`), a name that says address (`host/`, `ip/`, `peer/`) and
  a name with nothing User-Agent-like beside it (`connect to redis/10.0.0.5`) give no version.

When unsure it is an address: a kept address leaks, a redacted version costs little.
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
#: RFC 9110's token, as products are named in practice (a letter first); a name with `.` or `-` is read whole
#: so that a host's name (`mail.example.com`, `web-1`) is seen as one and refused
_TOKEN = r"[A-Za-z][A-Za-z0-9_.+-]{0,39}"
#: where an item of the list starts: the text's start, a blank, a quote or an `=` (`ua="...`)
_ITEM_START = r"(?:^|(?<=[\s\"'=]))"
_PRODUCT = re.compile(_ITEM_START + f"({_TOKEN})/\\Z")
#: a product's name, its character before it and its `/`
_PRODUCT_REACH = 42
_ENDS_PRODUCT = frozenset(" \t\r\n\"'")
#: another product beside it: `token/version` (a version starts with a digit, so a path's `api/users` is
#: none), across blanks and comments (a comment is bounded, and never holds a line break or a parenthesis)
_VERSION_TOKEN = r"\d[A-Za-z0-9_.+-]{0,39}"
_BETWEEN = r"(?:[ \t]+\([^()\n]{0,200}\))*[ \t]+"
_PRODUCT_BEFORE = re.compile(_ITEM_START + f"{_TOKEN}/({_VERSION_TOKEN}){_BETWEEN}\\Z")
_PRODUCT_AFTER = re.compile(f"{_BETWEEN}{_TOKEN}/({_VERSION_TOKEN})(?=[\\s\"']|\\Z)")
#: how far before a product's name another product (with the comments between) is looked for
_LIST_REACH = 400
_ADDRESS_SHAPED = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
#: words of a name before `/` that say what follows is an address, not a product's version
_ADDRESS_WORDS = frozenset(
    {"ip", "ip4", "ipv4", "ip6", "ipv6", "host", "hosts", "hostname", "addr", "address", "addresses", "peer",
     "peers", "server", "servers", "node", "nodes", "client", "clients", "remote", "proxy", "gateway", "from",
     "to", "via", "src", "dst", "source", "destination", "target", "upstream", "endpoint", "route", "routes"}
)  # fmt: skip


def is_version(text: str, start: int, end: int) -> bool:
    """Whether the address-shaped `text[start:end]` is a version, by what stands before it (and, for a
    product's version, by the list it stands in)."""
    if _VERSION_NAME.search(text, max(start - _NAME_REACH, 0), start):
        return True
    product = _PRODUCT.search(text, max(start - _PRODUCT_REACH, 0), start)
    if product is None or (end < len(text) and text[end] not in _ENDS_PRODUCT):
        return False
    name = product.group(1)
    if "." in name or "-" in name or _ADDRESS_WORDS.intersection(words(name)):
        return False  # a host's name, or one that says address
    return _beside_another_product(text, product.start(1), end)


def _beside_another_product(text: str, first: int, end: int) -> bool:
    """Whether another product with a version stands beside the item `text[first:end]` (across blanks and
    comments): a list of products, as User-Agent and Server write them. An address-shaped version beside it
    counts for nothing, so a list of host/address pairs (`kafka1/10.0.0.1 kafka2/10.0.0.2`) is no list."""
    before = _PRODUCT_BEFORE.search(text, max(first - _LIST_REACH, 0), first)
    if before is not None and not _ADDRESS_SHAPED.fullmatch(before.group(1)):
        return True
    after = _PRODUCT_AFTER.match(text, end)
    return after is not None and not _ADDRESS_SHAPED.fullmatch(after.group(1))
