"""Secrets split across the records of one log stream or trace: what no single record shows.

    continuations(events) -> {index: category}   the records whose message continues a secret begun earlier
    StreamWatch: the same, seeing each event once as it is redacted, then reading again only what may matter

An application that logs a PEM key one line a record writes `-----BEGIN ... PRIVATE KEY-----` in one record
and the key's body in the records after it; one that logs `password was` and then the value writes the value
alone in the next record. Each record redacted alone shows nothing (a body line is just base64, a value just a
word), so the records of each stream (one service's log records, or one trace's spans, in time order) are read
in sequence: the records between a private key's BEGIN and END lines, and a lone value right after a record
that ends with a secret's name, are hidden whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from functools import cache

import ahocorasick

from rounds_bot.models import ErrorEvent
from rounds_bot.redact.keys import SECRET_NAME_WORDS, secret_category

_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_END = re.compile(r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
#: a record that ends with a secret's name: `password:`, `"api_token" =`, `secret was`, `DB_PASSWORD=`
#: (the name is read possessively: no character it holds can follow it, so giving one back finds nothing more)
_NAME_AT_END = re.compile(
    r"""["']?([A-Za-z_][\w.-]{0,60}+)["']?[ \t]*(?::|=|=>|[ \t](?:was|is|of|for))?[ \t]*\Z"""
)
#: a record that is one value: no space in it, long enough to be a credential
_LONE_VALUE = re.compile(r"""[ \t]*["']?[^\s"']{6,500}["']?[ \t]*""")
#: a line of a PEM body: base64 (64 characters a line, the last shorter), or an encrypted key's headers
_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]{1,100}|Proc-Type: [^\n]{1,100}|DEK-Info: [^\n]{1,200}|")
#: how far a key's body may run before the stream is taken to have moved on without its END line
_KEY_RECORDS = 200


def continuations(events: Sequence[ErrorEvent]) -> dict[int, str]:
    watch = StreamWatch()
    for index, event in enumerate(events):
        watch.see(index, event)
    return watch.hidden(events)


_Stream = tuple[str, str | None]


class StreamWatch:
    """`continuations` in two steps, so the events need not all be in memory: `see` each event once, in order
    (while redacting them), then `hidden(events)`. Only a stream holding a record that can begin a
    continuation (a key's BEGIN line, a secret's name at the end) can hide anything, so only such streams are
    read again, and only their records."""

    def __init__(self) -> None:
        self._begun: set[_Stream] = set()

    def see(self, index: int, event: ErrorEvent) -> None:
        stream = _stream_of(event)
        if stream is not None and stream not in self._begun and _may_begin(event.message):
            self._begun.add(stream)

    def hidden(self, events: Sequence[ErrorEvent]) -> dict[int, str]:
        if not self._begun:
            return {}
        streams: dict[_Stream, list[tuple[datetime, int, str]]] = {}
        for index, event in enumerate(events):
            stream = _stream_of(event)
            if stream in self._begun:
                streams.setdefault(stream, []).append((event.timestamp, index, event.message))
        hidden: dict[int, str] = {}
        for records in streams.values():
            if len(records) > 1:
                records.sort(key=lambda record: record[0])  # stable: file order among equal times
                hidden.update(_in_stream([message for _, _, message in records], [i for _, i, _ in records]))
        return hidden


def _stream_of(event: ErrorEvent) -> _Stream | None:
    if event.kind == "log":
        return (event.service, event.environment)
    if event.trace_id:
        return ("trace", event.trace_id)
    return None


def _may_begin(message: str) -> bool:
    """A record `_in_stream` would start a continuation after: a key's BEGIN line, or a secret's name at
    its end (whatever came before it)."""
    return _begins_key(message) or _ends_with_name(message)


def _begins_key(message: str) -> bool:
    return (
        "-----BEGIN" in message and bool(_BEGIN.search(message.rstrip()[-80:])) and not _END.search(message)
    )


def _in_stream(messages: list[str], indices: list[int]) -> dict[int, str]:
    hidden: dict[int, str] = {}
    in_key = 0
    named = False
    for message, index in zip(messages, indices, strict=True):
        if in_key:
            body = message.strip()
            if _END.search(body) or _BODY_LINE.fullmatch(body):
                hidden[index] = "private_key"
                in_key = 0 if _END.search(body) else in_key - 1
                named = False
                continue
            in_key = 0  # not a key's line: the stream moved on, and this record is judged as any other
        if _begins_key(message):
            in_key = _KEY_RECORDS  # the record ends with the BEGIN line: the key's body follows
            continue
        if named and _LONE_VALUE.fullmatch(message) and not _word(message.strip(" \t\"'")):
            hidden[index] = "key_value_secret"
        named = _ends_with_name(message)
    return hidden


def _ends_with_name(message: str) -> bool:
    tail = message[-80:]
    if next(_secret_words().iter(tail.lower()), None) is None:
        return (
            False  # a name `secret_category` takes holds one of the words, lowercased, and so the tail does
        )
    found = _NAME_AT_END.search(tail)
    return found is not None and secret_category(found.group(1)) is not None


@cache
def _secret_words() -> ahocorasick.Automaton:
    """Every word one of a secret's names holds (`keys.SECRET_NAME_WORDS`), found in one pass."""
    automaton = ahocorasick.Automaton()
    for word in SECRET_NAME_WORDS:
        automaton.add_word(word, word)
    automaton.make_automaton()
    return automaton


def _word(value: str) -> bool:
    """A lowercase word (`expired`), not a value."""
    return value.isalpha() and value.islower()
