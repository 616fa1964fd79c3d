"""Secrets split across the records of one log stream or trace: what no single record shows.

    continuations(events) -> {index: category}   the records whose message continues a secret begun earlier
    StreamWatch: the same, seeing each event once as it is redacted, then ordering by the kept events' keys

An application that logs a PEM key one line a record writes `-----BEGIN ... PRIVATE KEY-----` in one record
and the key's body in the records after it; one that logs `password was` and then the value writes the value
alone in the next record. Each record redacted alone shows nothing (a body line is just base64, a value just a
word), so the records of each stream (one service's log records, or one trace's spans, in time order) are read
in sequence: the records between a private key's BEGIN and END lines, and a lone value right after a record
that ends with a secret's name, are hidden whole. After a name that only may be a credential's
(`DROPBOX=`, `STRIPE_KEY:`, `asana_client_id =`: `keys.maybe_credential_name`) the value is hidden when it has
the shape the same name asks of a value in one record (`pair_values.maybe_credential`), and only after a name
followed by `:`, `=`, `=>` or `was`/`is`: a record that merely ends with a service's name (`calling dropbox`)
assigns nothing.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache
from itertools import accumulate
from operator import itemgetter

import ahocorasick

from rounds_bot.models import ErrorEvent
from rounds_bot.redact.keys import SECRET_NAME_WORDS, maybe_credential_name, secret_category
from rounds_bot.redact.pair_values import credential_shaped, service_shaped
from rounds_bot.sources.spill import keys_of
from rounds_bot.sources.spill_chunk import Key

_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_END = re.compile(r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
#: a record that ends with a secret's name: `password:`, `"api_token" =`, `secret was`, `DB_PASSWORD=`
#: (the name is read possessively: no character it holds can follow it, so giving one back finds nothing more)
_NAME_AT_END = re.compile(
    r"""["']?([A-Za-z_][\w.-]{0,60}+)["']?[ \t]*(:|=|=>|[ \t](?:was|is|of|for))?[ \t]*\Z"""
)
#: the last two runs of a name's characters of a text, and what follows them, read in the reversed text
_LAST_RUNS = re.compile(r"[^\w.-]*[\w.-]*[^\w.-]*[\w.-]*")
#: what a record that ends with a secret's name can end with, past spaces and tabs (`_NAME_AT_END`), beside a
#: letter or digit (`str.isalnum` is the regex's `\w` less `_`): a name's, a quote, `:`, `=`, `=>`
_NAME_END_CHARS = frozenset("_.-:=>\"'")
#: a record that is one value: no space in it, long enough to be a credential
_LONE_VALUE = re.compile(r"""[ \t]*["']?[^\s"']{6,500}["']?[ \t]*""")
#: a line of a PEM body: base64 (64 characters a line, the last shorter), or an encrypted key's headers
_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]{1,100}|Proc-Type: [^\n]{1,100}|DEK-Info: [^\n]{1,200}|")
#: the lines of a key's body that hold a space (`_BODY_LINE`)
_HEADERS = ("Proc-Type: ", "DEK-Info: ")
#: how far a key's body may run before the stream is taken to have moved on without its END line
_KEY_RECORDS = 200


def continuations(events: Sequence[ErrorEvent]) -> dict[int, str]:
    watch = StreamWatch()
    for event in events:
        watch.see(event, event.trace_id)
    return watch.hidden(keys_of(events))


#: what a record can do in its stream (`_in_stream`), read from its message once, as it is seen
_KEY_END = 1  # it holds a key's END line
_KEY_LINE = 2  # it is one line of a key's body
_BEGINS_KEY = 4  # it ends with a key's BEGIN line
_LONE = 8  # it is one value, not a word
_NAMED = 16  # it ends with a secret's name
# it ends with a name that may be a credential's, then `:`, `=`, `=>`, `was` ... (`keys.MaybeCredential`)
_NAMED_WEAK = 32  # `STRIPE_KEY:`
_NAMED_SERVICE = 64  # `DROPBOX=`
_NAMED_CLIENT = 128  # `ASANA_CLIENT_ID =`
# it is one value (`_LONE`) in the shape such a name asks of its value (`pair_values.maybe_credential`)
_LONE_GENERATED = 256  # `credential_shaped`: after any of them
_LONE_SERVICE = 512  # `service_shaped`: after a service's name
_LONE_CLIENT = 1024  # `service_shaped(client_id=True)`: after a service's client credential's name
#: any name a lone value after it continues
_ANY_NAME = _NAMED | _NAMED_WEAK | _NAMED_SERVICE | _NAMED_CLIENT
#: what a lone value must be marked to continue each name: a secret's name takes any lone value
_CONTINUES = {
    _NAMED: _LONE,
    _NAMED_WEAK: _LONE_GENERATED,
    _NAMED_SERVICE: _LONE_SERVICE,
    _NAMED_CLIENT: _LONE_CLIENT,
}
#: the mark of each kind of name that may be a credential's
_NAME_MARKS = {
    None: 0,
    "secret": _NAMED,
    "weak": _NAMED_WEAK,
    "service": _NAMED_SERVICE,
    "client": _NAMED_CLIENT,
}
#: `StreamWatch`'s stream of an event: none, the trace in its key (`Key`'s trace id), or from here on a log
#: stream's number
_NO_STREAM, _TRACE, _FIRST_LOG = 0, 1, 2


class StreamWatch:
    """`continuations` in two steps, without the events' messages: `see` each event once, in order (as it is
    redacted), then `hidden(keys)` with the keys (id, time, trace id) of the events as they are kept.

    What `_in_stream` asks of a message is asked once, when it is seen (`_marks`, one byte an event, beside
    its stream's number): the raw message is not kept, nor read again, and what was redacted of it does not
    change the answer. Only a stream holding a record that can begin a continuation (a key's BEGIN line, a
    secret's name at the end) can hide anything, so only such streams are put in time order by their keys.
    A trace is told by its trace id as kept (`see`'s `trace_id`): redaction keeps an id or replaces it by a
    hash of it (`Redactor.identifier`), so two traces are never taken for one, nor one for two."""

    def __init__(self) -> None:
        self._streams = array("I")  # each event's stream (`_TRACE`, a log stream's number, or none)
        self._marks = array("H")  # two bytes: `_marks` has eleven flags
        self._logs: dict[tuple[str, str | None], int] = {}
        self._begun: set[int | str] = set()

    def see(self, event: ErrorEvent, trace_id: str | None) -> None:
        """The next event as the source gave it (raw), and its trace id as the keys `hidden` reads show it."""
        self.see_many([event], [trace_id])

    def see_many(self, events: Sequence[ErrorEvent], trace_ids: Sequence[str | None]) -> None:
        """`see` of each of `events` in order, with its trace id as kept: the marks of their messages read
        together (`_marks_of`), as a batch of the boundary is redacted."""
        streams, logs, begun_streams = self._streams, self._logs, self._begun
        for event, trace_id, marks in zip(events, trace_ids, _marks_of(events), strict=True):
            begun: int | str | None
            if event.kind == "log":
                number = logs.setdefault((event.service, event.environment), len(logs) + _FIRST_LOG)
                streams.append(number)
                begun = number
            elif event.trace_id:
                streams.append(_TRACE)
                begun = trace_id
            else:
                streams.append(_NO_STREAM)
                self._marks.append(0)
                continue
            self._marks.append(marks)
            if marks & (_BEGINS_KEY | _ANY_NAME) and begun is not None:
                begun_streams.add(begun)

    def hidden(self, keys: Iterable[Key]) -> dict[int, str]:
        """The records (by index) that continue a secret, given the keys of the events seen, in order."""
        if not self._begun:
            return {}
        streams: dict[int | str, list[tuple[datetime, int, int]]] = {}
        for index, (number, (_, moment, trace_id)) in enumerate(zip(self._streams, keys, strict=True)):
            if number == _NO_STREAM:
                continue
            stream = trace_id if number == _TRACE else number
            if stream is not None and stream in self._begun:
                streams.setdefault(stream, []).append((moment, index, self._marks[index]))
        hidden: dict[int, str] = {}
        for records in streams.values():
            if len(records) > 1:
                records.sort(key=itemgetter(0))  # stable: file order among equal times
                hidden.update(_in_stream([(index, marks) for _, index, marks in records]))
        return hidden


def _marks_of(events: Sequence[ErrorEvent]) -> list[int]:
    """`_marks` of the messages of `events` that are in a stream (a log's, or a trace's), in order (0 for the
    others, which `see_many` keeps no marks for), with the words of a secret's name looked for in all their
    tails at once (`_may_end_with_names`): most records hold none, and then end with no secret's name."""
    messages = [event.message if event.kind == "log" or event.trace_id else "" for event in events]
    return list(map(_marks, messages, _may_end_with_names(messages)))


def _may_end_with_names(messages: list[str]) -> list[bool]:
    """For each message, False when `_name_at_end` is None for it as its tail (the last 80 characters it
    reads) holds none of the words of a secret's name, lowercased; True when it may hold one. The ASCII tails
    are read joined by newlines (no word holds one, so each word found is in one tail) and lowercased at
    once, which for ASCII text keeps every character where it was; a tail with other text (whose lowercase
    may be longer: `İ`) is left to `_name_at_end`, which reads it alone."""
    tails = [message[-80:] for message in messages]
    may = [not tail.isascii() for tail in tails]
    ascii_at = [index for index, other in enumerate(may) if not other]
    ascii_tails = [tails[index] for index in ascii_at]
    starts = list(accumulate([len(tail) + 1 for tail in ascii_tails], initial=0))
    for end, _ in _secret_words().iter("\n".join(ascii_tails).lower()):
        may[ascii_at[bisect_right(starts, end) - 1]] = True
    return may


def _marks(message: str, may_end_with_name: bool = True) -> int:
    """What `_in_stream` needs to know of a record, from its message (`may_end_with_name`: False when
    `_may_end_with_names` found it cannot end with a secret's name)."""
    body = message.strip()
    marks = 0
    # the END line begins and ends with dashes: found in the message as in its stripped body
    if "-----END" in message and _END.search(message):
        marks |= _KEY_END
    # a space between two other characters: neither one value (spaces and tabs only at its ends) nor a line
    # of a key's body (base64, or an encrypted key's header): most records
    if " " not in body or body.startswith(_HEADERS):
        if _BODY_LINE.fullmatch(body):
            marks |= _KEY_LINE
        if _LONE_VALUE.fullmatch(message) and not _word(value := message.strip(" \t\"'")):
            marks |= _LONE | _value_shapes(value)
    if _begins_key(message):
        marks |= _BEGINS_KEY
    if may_end_with_name:
        marks |= _NAME_MARKS[_name_at_end(message)]
    return marks


def _value_shapes(value: str) -> int:
    """The marks of a lone value's shapes (`_LONE_GENERATED`, `_LONE_SERVICE`, `_LONE_CLIENT`): each a value
    under such a name in one record would be taken in (`pair_values.maybe_credential`)."""
    if credential_shaped(value):
        return _LONE_GENERATED | _LONE_SERVICE | _LONE_CLIENT
    if service_shaped(value, client_id=True):  # takes every value `service_shaped` takes
        return _LONE_CLIENT | (_LONE_SERVICE if service_shaped(value) else 0)
    return 0


def _begins_key(message: str) -> bool:
    return (
        "-----BEGIN" in message and bool(_BEGIN.search(message.rstrip()[-80:])) and not _END.search(message)
    )


def _in_stream(records: list[tuple[int, int]]) -> dict[int, str]:
    """Of one stream's records (index, `_marks`), in time order, those that continue a secret."""
    hidden: dict[int, str] = {}
    in_key = 0
    wanted = 0  # the marks a lone value needs to continue the name the record before ended with
    for index, marks in records:
        if in_key:
            if marks & (_KEY_END | _KEY_LINE):
                hidden[index] = "private_key"
                in_key = 0 if marks & _KEY_END else in_key - 1
                wanted = 0
                continue
            in_key = 0  # not a key's line: the stream moved on, and this record is judged as any other
        if marks & _BEGINS_KEY:
            in_key = _KEY_RECORDS  # the record ends with the BEGIN line: the key's body follows
            continue
        if marks & wanted:
            hidden[index] = "key_value_secret"
        wanted = _CONTINUES.get(marks & _ANY_NAME, 0)
    return hidden


def _ends_with_name(message: str) -> bool:
    """Whether `message` ends with a secret's name (`secret_category`)."""
    return _name_at_end(message) == "secret"


def _name_at_end(message: str) -> str | None:
    """What the name `message` ends with is: a secret's ("secret", `secret_category`), or followed by an
    assignment one that may be a credential's (`keys.maybe_credential_name`: "weak", "service", "client"),
    or None."""
    tail = message[-80:]
    last = tail.rstrip(" \t")[-1:]
    if not last or not (last.isalnum() or last in _NAME_END_CHARS):
        return None  # most records end with what no name, quote, `:`, `=` or `=>` ends with: `)`, `!`, ...
    start = _where_a_name_may_start(tail)
    if next(_secret_words().iter(tail[start:].lower()), None) is None:
        # every name either function takes holds one of the words, lowercased, so the tail from `start` does
        return None
    found = _NAME_AT_END.search(tail, start)
    if found is None:
        return None
    if secret_category(found.group(1)) is not None:
        return "secret"
    # a name that only may be a credential's assigns a value only with a separator: `DROPBOX=`, not `dropbox`
    return maybe_credential_name(found.group(1)) if found.group(2) else None


def _where_a_name_may_start(tail: str) -> int:
    """Where in `tail` a match of `_NAME_AT_END` may start: at the quote before the last run of a name's
    characters or before the run before it (`_LAST_RUNS`, read from the end), never earlier. The name is
    possessive, so it ends where its run ends (a run's character cannot follow it), and what follows it to
    the end holds one run at most (`was`, `is`, `of`, `for`). Searching from there finds the match a search
    of the whole tail finds (the leftmost), without trying every position before it."""
    runs = _LAST_RUNS.match(tail[::-1])  # every part optional: it matches every text
    return max(len(tail) - (runs.end() if runs else 0) - 1, 0)


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
