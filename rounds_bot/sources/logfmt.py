"""A logfmt line read into its pairs: `level=error ts=2026-11-27T12:00:00Z msg="charge failed" order_id=7`.

logfmt is the key=value layout of go-kit's log, logrus's text formatter (what a Go service prints to a
console that is not a terminal), Heroku's router, and many others: pairs separated by spaces, a value bare
(no space, no quote) or double-quoted with backslash escapes (Go's `strconv.Quote`, which JSON's string
escapes cover but for `\\x`, `\\a` and the like, read here as the character after the backslash). A line is
logfmt only when it is pairs and nothing else: a key alone, a stray quote or prose makes it text.
"""

from __future__ import annotations

import re

import orjson

#: one pair, from where the last one ended: its key and its value, quoted or bare
_PAIR = re.compile(r'[ \t]*([A-Za-z_@][\w.\-/@]*)=("(?:[^"\\\n]|\\.)*"|[^\s"=]*)(?=[ \t]|$)')
#: at least this many pairs: `error=timeout` alone is a message, not a structured line
MIN_PAIRS = 2


def logfmt_pairs(line: str) -> dict[str, str] | None:
    """The line's pairs in order (a later key wins), or None when the line is not logfmt."""
    text = line.strip()
    if "=" not in text or "\n" in text:
        return None
    pairs: dict[str, str] = {}
    at = 0
    while at < len(text):
        found = _PAIR.match(text, at)
        if found is None:
            return None
        key, value = found.groups()
        pairs[key] = _unquoted(value) if value.startswith('"') else value
        at = found.end()
    return pairs if len(pairs) >= MIN_PAIRS else None


def _unquoted(value: str) -> str:
    """A quoted value's text: JSON's escapes, else each backslash taken for the character after it."""
    try:
        text = orjson.loads(value)
    except orjson.JSONDecodeError:
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return text if isinstance(text, str) else value[1:-1]
