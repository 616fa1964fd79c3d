"""A secret's value that a log wrapped at a fixed width: `password=s3cr3tP4s` at the end of one line and
`sw0rd2024` at the start of the next.

A terminal, a log shipper or a console that breaks lines at a fixed column breaks inside a word, with no
blank on either side of the break and none added before the rest; a writer that wraps prose breaks at a
blank. So a value under a secret's name that runs to its line's end, with the next line starting at once
with more of a value's characters, is one value: both halves are replaced together (the line the wrap cut
is joined again). The rest is taken only when it looks generated (a digit or mixed case, not a word or a
number) and ends at a blank, a delimiter or the line's end: a line that starts with a word (`Connection
refused`), a level (`ERROR`), a timestamp, an indented frame or a pair of its own (`expires_in=3600`) is the
next record, and so is one that starts with what a record starts with, whatever its characters: a date
(`2024-05-01 12:00:01,456 INFO`), a timestamp, a number, a version (`v1.2.3`), glog's level (`I0501`) or
a trace id. Applied before `pairs.py`, which would take the first half alone.
"""

from __future__ import annotations

import re

from rounds_bot.redact.keys import _SECRET_WORDS, _SUFFIXES, secret_category
from rounds_bot.redact.pair_values import _placeholder
from rounds_bot.redact.rule import Rule, rule

#: what a generated value is made of (base64 and URL-safe tokens, percent-encoding): a wrap cuts inside it
_PART = r"[A-Za-z0-9+/=_.~%-]"
_WRAPPED = (
    r"""(?<![\w.-])["']?(?P<key>[A-Za-z_][\w.-]{0,60}+)["']?[ \t]{0,3}(?:=|:)[ \t]{0,3}["']?"""
    # `Authorization: Bearer <token>`: the scheme is no part of the value
    r"(?:(?i:basic|bearer|token)[ \t]+)?"
    # the first half runs to the line's end (read possessively: the break must follow it at once)
    rf"(?P<value>{_PART}{{1,500}}+\r?\n(?P<rest>{_PART}{{2,500}}+))"
    r"""(?=["']?(?:[\s,;)\]}]|\Z))"""
)
#: a padded base64 value's tail ends in `=`; an `=` inside it is a pair's (`expires_in=3600`)
_REST = re.compile(r"[A-Za-z0-9+/_.~%-]+=*")


#: words as a line starts with them: `Connection`, `ERROR`, `RetryPolicy`, `refused`
_WORDS = re.compile(r"(?:[A-Z]?[a-z]+)+|[A-Z]+")
#: the narrowest width a fixed-width wrap cuts lines at: PEM's base64 lines (RFC 7468), MIME's are 76
#: (RFC 2045), a terminal's 80; a shorter line ended where its writer ended it
_WRAP_WIDTH = 64


#: what a record starts with, whole: a value's rest that has one of these shapes is the next record's first
#: token. A date (ISO 8601's `2024-05-01` as Python's asctime writes it, `2024/05/01`, `05/01/2024`,
#: Tomcat's `01-May-2024`, logcat's `05-01`), an ISO 8601 basic timestamp (`20240501T120001Z`), a number
#: (epoch seconds, `1714564801.456`), a version (`v1.2.3`, `2.14.0-rc1`), glog's level and date (`I0501`;
#: a level in words, `INFO`, is a word), a trace or span id (W3C trace context's 32 and 16 lowercase hex
#: digits, a UUID, AWS X-Ray's `1-<8 hex>-<24 hex>`). A hex value cut to leave exactly an id's length, or a
#: glog level's shape, alone on its line is the value's rest (`_ID_LIKE`).
_RECORD_START = re.compile(
    r"\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2,4}|\d{1,2}-[A-Za-z]{3}-\d{2,4}|\d{2}-\d{2}"
    r"|\d{8}T\d{2,6}(?:[.,]\d{1,9})?Z?|\d+(?:[.,]\d+)?"
    r"|[vV]?\d{1,4}(?:\.\d{1,4}){1,3}(?:[-+][\w.-]{1,40})?"
    r"|[IWEF]\d{4}"
    r"|[0-9a-f]{32}|[0-9a-f]{16}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}|1-[0-9a-f]{8}-[0-9a-f]{24}"
)


#: record starts that are also what a cut hex or generated value leaves (an id's length of hex, a capital and
#: digits): taken as the value's rest when nothing follows them on their line, as a record's would
_ID_LIKE = re.compile(r"[IWEF]\d{4}|[0-9a-f]{32}|[0-9a-f]{16}")


def _generated(rest: str, alone: bool = False) -> bool:
    """The rest of a value, not the next record's first word, number, date, version, level or id: a digit,
    or case that changes inside a word (`HsJkQ`), and no `=` but a base64 value's padding. A rest with an
    id's or glog's shape is the value's when it stands `alone` on its line (a record goes on after them)."""
    if not _REST.fullmatch(rest):
        return False
    if _RECORD_START.fullmatch(rest) and not (alone and _ID_LIKE.fullmatch(rest)):
        return False
    return any(ch.isdigit() for ch in rest) or not _WORDS.fullmatch(rest.strip("+/_.~%=-"))


def _accept_wrapped(match: re.Match[str]) -> bool:
    if secret_category(match["key"]) is None:
        return False
    head = match["value"].split("\n", 1)[0].rstrip("\r")
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    wide = match.start("rest") - 1 - line_start >= _WRAP_WIDTH
    after = match.string[match.end("rest") : match.end("rest") + 2].lstrip("\"'")
    alone = after[:1] in {"", "\n", "\r"}
    return wide and not _placeholder(head) and _generated(match["rest"], alone)


#: every name `secret_category` takes holds one of these (a whole word, `key` after its prefix, or an
#: ending): a text with none has no such value, so the rule is not run on it (and the rules after it run
#: line by line there, as a rule that reads across lines would stop them)
_NAME_WORDS = tuple(sorted({*_SECRET_WORDS, "key", *_SUFFIXES}))

WRAPPED: tuple[Rule, ...] = (
    rule("key_value_secret", _WRAPPED, *_NAME_WORDS, group=2, accept=_accept_wrapped),
)
