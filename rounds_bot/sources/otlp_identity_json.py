"""The spelling a log record's id hashes its attributes in (`otlp_build.log_event_id`): `json`'s, by key.

It must not change between releases: a round re-reads the records of its overlap window, and a record an
earlier release counted would be counted again under another id."""

from __future__ import annotations

import json

import orjson

from rounds_bot.models import AttributeValue


def identity_json(attributes: dict[str, AttributeValue]) -> str:
    """`json.dumps(attributes, sort_keys=True, default=str)`, the spelling a log record's id hashes.

    Attributes of ASCII text, integers and booleans, the usual ones, are spelled item by item with orjson,
    several times quicker over a stack trace than `json`'s escaping: for ASCII text but DEL, orjson escapes
    exactly as `json` does with `ensure_ascii`, and an integer or a boolean is written alike by both. Any
    other value (a float, text with other characters) is left to `json` itself."""
    spelled = []
    for key, value in sorted(attributes.items()):  # by key: keys are distinct
        head = _KEY_HEADS.get(key) or _key_head(key)
        if not head:
            return _IDENTITY_JSON.encode(attributes)
        if type(value) is str:
            if not _plain_text(value):
                return _IDENTITY_JSON.encode(attributes)
            spelled.append(head + _dumps(value).decode("ascii"))
        elif type(value) is bool:
            spelled.append(head + ("true" if value else "false"))
        elif type(value) is int:
            spelled.append(head + int.__repr__(value))  # as `json` writes an integer
        else:
            return _IDENTITY_JSON.encode(attributes)
    return "{" + ", ".join(spelled) + "}"


#: a key as `identity_json` spells it before its value (`"key": `), or "" for one it leaves to `json`;
#: remembered for the few keys a file's records share (at most `_MAX_KEY_HEADS`, then spelled each time)
_KEY_HEADS: dict[str, str] = {}
_MAX_KEY_HEADS = 4_096


def _key_head(key: str) -> str:
    head = _dumps(key).decode("ascii") + ": " if _plain_text(key) else ""
    if len(_KEY_HEADS) < _MAX_KEY_HEADS:
        _KEY_HEADS[key] = head
    return head


def _plain_text(text: str) -> bool:
    return text.isascii() and "\x7f" not in text


#: the encoder `identity_json` falls back on, made once rather than once a record
_IDENTITY_JSON = json.JSONEncoder(sort_keys=True, default=str)
_dumps = orjson.dumps
