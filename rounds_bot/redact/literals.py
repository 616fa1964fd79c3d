"""Secrets a Python line gives a secret's name in the shapes a pair's value is not read in, as a traceback
prints the line that failed:

    password=b'...'   api_key=rb"..."  f'...'  a string literal with a prefix (the Python reference, "String
                                              and Bytes literals" and "f-strings": `b`, `r`, `u`, `f`, `br`,
                                              `rb`, `fr`, `rf`, any case); the text inside the quotes goes,
                                              the prefix and the quotes stay; an annotated
                                              assignment too (`password: bytes = b'...'`)
    api_key=('id', '...')  auth=('u', '...')  a client's credential pair, the secret second: Elasticsearch's
                                              client takes its API key as `(id, api_key)` and its `basic_auth`
                                              / `http_auth` as `(user, password)` (elasticsearch-py), and
                                              requests its `auth` as `(user, password)`
    SECRET_KEY_FALLBACKS = ['...', '...']     a tuple or a list under another secret's name: each item
                                              that looks generated (`token_range=('a', 'z')` names no
                                              secret's values)

The name is a secret's as `keys.secret_category` reads it; a placeholder stays, and so does a pattern that
only names a password (`re.compile(r'password')`: no name before it). An `Authorization` header's value is
left to `pairs.py`, which reads its scheme (`b'Basic ...'`). Applied before `pairs.py`, whose value would
otherwise be the prefix's letter alone.
"""

from __future__ import annotations

import re

from rounds_bot.redact.keys import secret_category
from rounds_bot.redact.pair_values import _placeholder, maybe_credential, password_shaped
from rounds_bot.redact.rule import Rule, rule

#: a name, maybe quoted (a dict's key: `{'X-Amz-Security-Token': b'...'}`), and `=` or `:` (Python's
#: keyword argument, assignment, dict display), or an annotated assignment's `: bytes =` (the Python
#: reference, "Annotated assignment statements")
_NAME = (
    r"""(?<![\w.-])["']?(?P<key>[A-Za-z_][\w.-]{0,60}+)["']?[ \t]{0,3}"""
    r"""(?::[ \t]{0,3}(?:bytes|str)[ \t]{0,3}=|[=:])[ \t]{0,3}"""
)
#: a literal's prefix, its quote, then its body up to the same quote, escapes read whole (`b'\x00...'`)
_PREFIXED = _NAME + r"""(?i:[rbuf]|br|rb|fr|rf)(?P<q>['"])(?P<value>(?:(?!(?P=q))[^\\\n]|\\.){1,500})(?P=q)"""
#: one quoted item of a tuple or a list (Django's settings reference gives `SECRET_KEY_FALLBACKS` as a list),
#: after its opening or the comma before it, before a comma or its closing
_ITEM = r"""(?<=[(\[,])[ \t]{0,3}(?P<q>['"])(?P<value>[^'"\n]{1,500})(?P=q)[ \t]{0,3}(?P<end>[,)\]])"""
#: the items of the tuple before an item, and the name before the tuple's opening
_ITEMS_BEFORE = re.compile(r"""(?:[ \t]{0,3}(?:'[^'\n]{0,500}'|"[^"\n]{0,500}")[ \t]{0,3},){0,20}""")
_NAME_BEFORE = re.compile(
    r"""(?<![\w.-])["']?(?P<key>[A-Za-z_][\w.-]{0,60})["']?[ \t]{0,3}[=:][ \t]{0,3}\Z"""
)
#: a dotted import path, its modules lower-case (PEP 8's package and module names): a setting's class
#: (Django's `PASSWORD_HASHERS = ['django.contrib.auth.hashers.PBKDF2PasswordHasher']`), not a secret
_IMPORT_PATH = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*\.[A-Za-z_]\w*")
#: the names a client takes a credential pair under, its secret second (elasticsearch-py, requests)
_PAIR_NAMES = frozenset({"api_key", "auth", "basic_auth", "http_auth"})
#: how many brackets before an item are tried as its list's opening (each key may hold a few `(`)
_OPENINGS = 24


def _accept_literal(match: re.Match[str]) -> bool:
    """Under a secret's name (a header's left to its own rules), the literal's text no placeholder."""
    category = secret_category(match.group("key"))
    return category not in (None, "authorization") and not _placeholder(match.group("value").strip())


def _openings(text: str, reach: int, start: int) -> list[int]:
    """The places of `(` and `[` in `text[reach:start]`, nearest first, at most `_OPENINGS` of them: two
    cursors walk back, so each bracket kind is scanned once."""
    found: list[int] = []
    paren, square = text.rfind("(", reach, start), text.rfind("[", reach, start)
    while len(found) < _OPENINGS and max(paren, square) >= 0:
        if paren > square:
            found.append(paren)
            paren = text.rfind("(", reach, paren)
        else:
            found.append(square)
            square = text.rfind("[", reach, square)
    return found


def _tuple_name(match: re.Match[str]) -> tuple[str, int] | None:
    """The name the item's tuple (or list) stands under and the item's place in it, when only quoted items
    come between its opening and the item (on the item's line, within a bounded reach). The opening is the
    nearest bracket from which the quoted items lead to the item: a nearer one may stand inside an earlier
    item (Django's key alphabet holds `(`: `['a7(b5...', '...']`), and the items read from it do not."""
    text, start = match.string, match.start()
    line_start = text.rfind("\n", max(0, start - 2000), start) + 1  # a bounded look back: linear
    reach = max(line_start, start - 2000)
    for opening in _openings(text, reach, start):
        before = _ITEMS_BEFORE.fullmatch(text, opening + 1, start)
        if before is not None:
            name = _NAME_BEFORE.search(text, max(line_start, opening - 80), opening)
            return (name.group("key"), before.group(0).count(",")) if name else None
    return None


def _tuple_item(match: re.Match[str]) -> bool:
    """The second of a client's credential pair (`auth=('user', '...')`), or an item that looks generated
    of a tuple under another secret's name (`SECRET_KEY_FALLBACKS`)."""
    value = match.group("value").strip()
    found = _tuple_name(match)
    if found is None or _placeholder(value):
        return False
    name, place = found
    if name.strip("\"'").lower() in _PAIR_NAMES:  # a client's pair is a tuple: its `)` closes it
        return place == 1 and match.group("end") == ")"
    if _IMPORT_PATH.fullmatch(value):
        return False
    if secret_category(name) is None:
        # a plural of a name that only may be secret (`api_keys = ['...', '...']`): each generated item
        return maybe_credential(name, value)
    return secret_category(name) != "authorization" and password_shaped(value)


LITERALS: tuple[Rule, ...] = (
    rule(
        "key_value_secret",
        _PREFIXED,
        *("b'", 'b"', "r'", 'r"', "u'", 'u"', "f'", 'f"'),
        group=3,
        accept=_accept_literal,
    ),
    rule(
        "key_value_secret",
        _ITEM,
        *("('", '("', "( '", '( "', "['", '["', "[ '", '[ "'),
        group=2,
        accept=_tuple_item,
    ),
)
