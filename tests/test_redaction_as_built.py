"""The redaction boundary takes each event the moment the file source builds it (`Boundary`, a `Sink`): the
redacted event is the only one kept, so raw telemetry never reaches the round's spill or its temporary file,
and what comes out is what redacting the returned poll gives (`redact_poll`, still the way for other
sources): the same events in the same order, the same counts, the same records hidden as continuing a
secret. The split-secret rule decides from a byte kept per event (`StreamWatch`), never reading an event
again, and gives what reading the messages in each stream's time order gives."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from security_corpus import corpus
from security_harness import Outputs, leaks, now, plant_secrets, secret_file

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, redact_poll, split
from rounds_bot.redact import boundary as boundary_module
from rounds_bot.redact.boundary import Boundary
from rounds_bot.redact.keys import maybe_credential_name
from rounds_bot.redact.pair_values import maybe_credential
from rounds_bot.round.intake import read_new
from rounds_bot.sources import spill
from rounds_bot.sources.base import PollResult, PollsInto, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.spill import EventSpill
from rounds_bot.store import Store
from tests.security_shapes import shapes

WIDE = timedelta(days=30)


def _window(at: datetime) -> Window:
    return Window(start=at - WIDE, end=at + timedelta(days=1))


def _nothing_counted(ids: list[str]) -> set[str]:
    return set()


@pytest.fixture
def planted_file(tmp_path: Path) -> tuple[Path, datetime]:
    at = now()
    return secret_file(tmp_path / "telemetry.jsonl", plant_secrets(corpus()), at), at


def test_the_file_source_gives_each_event_to_the_boundary_as_it_builds_it() -> None:
    assert isinstance(OtlpFileSource("x.jsonl"), PollsInto)


def test_events_redacted_as_built_are_those_the_returned_poll_redacts_to(planted_file, monkeypatch) -> None:
    path, at = planted_file
    monkeypatch.setattr(spill, "IN_MEMORY", 5)  # the events go to disk, as a large round's do
    monkeypatch.setattr(spill, "CHUNK", 7)
    monkeypatch.setattr(boundary_module, "BOUNDARY_BATCH", 11)  # redacted a few at a time, as a large round's
    returned, as_built = Redactor(), Redactor()
    polled = OtlpFileSource(path).poll_new(_window(at), frozenset(), _nothing_counted)
    expected = redact_poll(returned, polled)
    given = read_new(OtlpFileSource(path), _window(at), Store.memory(), as_built)
    assert isinstance(given.events, EventSpill) and given.events.bytes_on_disk > 0
    assert len(given.events) == len(expected.events) > 300
    assert list(given.events) == list(expected.events)
    assert given.model_copy(update={"events": []}) == expected.model_copy(update={"events": []})
    assert as_built.counts == returned.counts and list(as_built.counts) == list(returned.counts)
    assert {"private_key", "key_value_secret"} <= set(as_built.counts)  # continuations were hidden


def test_no_raw_event_reaches_a_spill(planted_file, monkeypatch) -> None:
    path, at = planted_file
    monkeypatch.setattr(spill, "IN_MEMORY", 0)  # everything a spill takes is written to its file
    appended: list[ErrorEvent] = []
    append = EventSpill.append

    def recorded(self: EventSpill, event: ErrorEvent) -> None:
        appended.append(event)
        append(self, event)

    monkeypatch.setattr(EventSpill, "append", recorded)
    polled = read_new(OtlpFileSource(path), _window(at), Store.memory(), Redactor())
    # a record only its stream shows to continue a secret (a key's body line, a value after its name) is
    # hidden once every record was seen, its streams in time order: until then it is written as the record,
    # redacted alone, shows it; every other record is written as it comes out
    kept = list(polled.events)
    assert len(appended) == len(kept)
    hidden = [n for n, (was, out) in enumerate(zip(appended, kept, strict=True)) if was != out]
    assert hidden and all(
        re.fullmatch(r"\[REDACTED:(private_key|key_value_secret)\]", kept[n].message) for n in hidden
    )
    planted = corpus()
    written = Outputs(
        texts={"spill": "\n".join(e.model_dump_json() for n, e in enumerate(appended) if n not in hidden)}
    )
    assert leaks(written, planted) == []
    # the check can fail: the source's own spill, without the boundary, holds the raw events
    appended.clear()
    OtlpFileSource(path).poll_new(_window(at), frozenset(), _nothing_counted)
    assert leaks(Outputs(texts={"spill": "\n".join(e.model_dump_json() for e in appended)}), planted)


def test_a_poll_returned_and_a_poll_given_to_the_boundary_come_out_alike() -> None:
    events = _streams(random.Random(7), 400)
    by_poll = redact_poll(Redactor(), PollResult(events=events, notes=["read"]))
    boundary = Boundary(Redactor())
    for event in events[:150]:
        boundary(event)
    by_boundary = boundary.finish(PollResult(events=events[150:], notes=["read"]))  # the rest, returned
    assert list(by_boundary.events) == list(by_poll.events) and by_boundary.notes == by_poll.notes


# --- the split-secret rule, kept a byte an event ----------------------------------------------------------

_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")


def _by_reading_messages(events: Sequence[ErrorEvent]) -> dict[int, str]:
    """The rule as it reads each begun stream's messages again in time order (what `StreamWatch` keeps a byte
    for): the reference the byte must agree with."""
    streams: dict[tuple[str, str | None], list[tuple[datetime, int, str]]] = {}
    for index, event in enumerate(events):
        stream = (
            (event.service, event.environment)
            if event.kind == "log"
            else ("trace", event.trace_id)
            if event.trace_id
            else None
        )
        if stream is not None:
            streams.setdefault(stream, []).append((event.timestamp, index, event.message))
    hidden: dict[int, str] = {}
    for records in streams.values():
        records.sort(key=lambda record: record[0])
        in_key, named = 0, False
        for _, index, message in records:
            if in_key:
                body = message.strip()
                if split._END.search(body) or split._BODY_LINE.fullmatch(body):
                    hidden[index] = "private_key"
                    in_key = 0 if split._END.search(body) else in_key - 1
                    named = False
                    continue
                in_key = 0
            if split._begins_key(message):
                in_key = split._KEY_RECORDS
                continue
            if named and _continues(named, message):
                hidden[index] = "key_value_secret"
            named = _name_ending(message)
    return hidden


_ASSIGNED_AT_END = re.compile(
    r"""["']?([A-Za-z_][\w.-]{0,60})["']?[ \t]*(:|=|=>|[ \t](?:was|is|of|for))[ \t]*\Z"""
)


def _name_ending(message: str) -> str | None:
    """The kind of name a record ends with, read as the rule states it: a secret's name, with or without a
    separator; a name that only may be a credential's (`keys.maybe_credential_name`) only before one."""
    if split._ends_with_name(message):
        return "secret"
    assigned = _ASSIGNED_AT_END.search(message[-80:])
    return maybe_credential_name(assigned.group(1)) if assigned else None


def _continues(named: str, message: str) -> bool:
    """Whether a lone value in `message` continues a name of kind `named`: any value after a secret's name;
    after the others, a value `maybe_credential` would take under such a name in one record."""
    value = message.strip(" \t\"'")
    if not split._LONE_VALUE.fullmatch(message) or split._word(value):
        return False
    if named == "secret":
        return True
    return maybe_credential(_NAME_OF_KIND[named], value)


#: a name of each kind `keys.maybe_credential_name` tells
_NAME_OF_KIND = {"weak": "STRIPE_KEY", "service": "DROPBOX", "client": "ASANA_CLIENT_ID"}


_MESSAGES = [
    *(line for item in shapes() if item.kind == "records" for line in item.carrier.splitlines()),
    "-----BEGIN RSA PRIVATE KEY-----",
    "  MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun  ",
    "-----END RSA PRIVATE KEY-----",
    "Proc-Type: 4,ENCRYPTED",
    "the db password was",
    "api_token =",
    "Zq8vR2mT4xLp",
    "'Zq8vR2mT4xLp'",
    "expired",
    "",
    "   ",
    "payment declined for order 1842",
    "java.lang.NullPointerException",
    "invalid key: expected -----BEGIN PRIVATE KEY----- first",
    # names that may be a credential's, then values of the shapes each asks for (and a word, and an id)
    "DROPBOX=",
    "hubspot:",
    "STRIPE_KEY =",
    "ASANA_CLIENT_ID was",
    "retrying the call to dropbox",
    "sl.BCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMn",
    "a8Kq2Lm9Zx4Pw7N",
    "'3f2b8c1d-9e4a-4b7c-8d2e-1a5f6b7c8d9e'",
    "1205934477123456",
    "photosbackup",
]


def _streams(rng: random.Random, count: int) -> list[ErrorEvent]:
    """Records of a few log streams and traces, their times out of file order now and then, some equal."""
    at = datetime(2026, 11, 25, 12, tzinfo=UTC)
    events = []
    for n in range(count):
        kind = rng.choice(["log", "log", "span_error", "exception"])
        events.append(
            ErrorEvent(
                event_id=f"e{n}",
                timestamp=at + timedelta(seconds=n // 3 + rng.choice([0, 0, 0, 0, -5, 2])),
                service=rng.choice(["billing", "auth"]),
                environment=rng.choice(["prod", None]),
                kind=kind,
                trace_id=rng.choice([None, "4bf92f3577b34da6a3ce929d0e0e4736", "trace two", ""]),
                message=rng.choice(_MESSAGES),
            )
        )
    return events


@pytest.mark.parametrize("seed", range(40))
def test_a_byte_an_event_hides_what_reading_the_messages_in_time_order_hides(seed: int) -> None:
    events = _streams(random.Random(seed), 300)
    expected = _by_reading_messages(events)
    assert expected  # each seed's streams continue secrets
    # the same records, in the same order (streams as they first appear, each in time order): the order the
    # boundary counts them in
    assert list(split.continuations(events).items()) == list(expected.items())


def _log_stream(*messages: str) -> list[ErrorEvent]:
    at = datetime(2026, 11, 25, 12, tzinfo=UTC)
    return [
        ErrorEvent(
            event_id=f"e{n}", timestamp=at + timedelta(seconds=n), service="api", kind="log", message=text
        )
        for n, text in enumerate(messages)
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DROPBOX=", "a8Kq2Lm9Zx4Pw7N"),  # Dropbox's short key: 15 letters and digits
        ("hubspot:", "3f2b8c1d-9e4a-4b7c-8d2e-1a5f6b7c8d9e"),  # HubSpot's key is a UUID
        ("ASANA_CLIENT_ID =", "1205934477123456"),  # Asana's client id: 16 digits
        ("MAPBOX was", "'sl.BCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMn'"),
        ("STRIPE_KEY:", "Zq8vR2mT4xLpW9sK3nB7yD1c"),
    ],
)
def test_a_value_logged_alone_after_a_name_that_may_be_a_credentials_is_hidden(name: str, value: str) -> None:
    """An application that logs `DROPBOX=` and then the key in the next record: each record alone shows
    nothing; the pair is hidden as the same name and value in one record are (`maybe_credential`)."""
    one_record = f"{name.split()[0].rstrip('=:')}={value.strip(chr(39))}"
    assert redact(one_record) != one_record  # in one record: taken
    seen = redact_poll(Redactor(), PollResult(events=_log_stream("sync failed", name, value, "retrying")))
    assert [event.message for event in seen.events] == [
        "sync failed",
        name,
        "[REDACTED:key_value_secret]",
        "retrying",
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("retrying the call to dropbox", "a8Kq2Lm9Zx4Pw7N"),  # a service named, nothing assigned
        ("DROPBOX=", "photosbackup"),  # a lowercase word, not a key
        ("hubspot:", "00000000-0000-0000-0000-000000000000"),  # a placeholder UUID
        (
            "STRIPE_KEY:",
            "a8Kq2Lm9Zx4Pw7N",
        ),  # a weak name asks for a generated value, not a service's plainer one
        ("ASANA_CLIENT_ID =", "2026"),  # too short to be a client id
    ],
)
def test_a_value_after_a_name_that_may_be_a_credentials_stays_when_the_name_would_not_take_it(
    name: str, value: str
) -> None:
    seen = redact_poll(Redactor(), PollResult(events=_log_stream(name, value)))
    assert [event.message for event in seen.events] == [name, value]


def test_a_trace_is_told_by_its_id_as_kept_so_a_hashed_id_still_holds_its_stream() -> None:
    secret_trace = "trace password=hunter2hunter2"  # an id the boundary replaces by its hash
    lines = ["-----BEGIN PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"]
    at = datetime(2026, 11, 25, 12, tzinfo=UTC)
    events = [
        ErrorEvent(
            event_id=f"e{n}",
            timestamp=at + timedelta(seconds=n),
            service="api",
            kind="span_error",
            trace_id=secret_trace,
            message=line,
        )
        for n, line in enumerate(lines)
    ]
    seen = redact_poll(Redactor(), PollResult(events=events))
    assert seen.events[0].trace_id != secret_trace
    assert seen.events[1].message == "[REDACTED:private_key]"


def test_the_byte_kept_of_a_message_says_what_the_patterns_say_of_it() -> None:
    chosen = random.Random(26)
    pieces = ["-----BEGIN RSA PRIVATE KEY-----", "-----END PRIVATE KEY-----", "MIIEvQIBADAN", "+/=", " ",
              "\t", "\n", "'", '"', "Proc-Type: ", "DEK-Info: ", "4,ENCRYPTED", "password", " was", ":", "=",
              "expired", "x", "9", "é", ")", "\u00a0", "\u2003"]  # fmt: skip
    texts = ["".join(chosen.choice(pieces) for _ in range(chosen.randint(0, 12))) for _ in range(20_000)]
    texts += _MESSAGES
    flags = (split._KEY_END, split._KEY_LINE, split._BEGINS_KEY, split._LONE, split._NAMED)
    for text in texts:
        body = text.strip()
        said = (
            bool(split._END.search(body)),
            bool(split._BODY_LINE.fullmatch(body)),
            split._begins_key(text),
            bool(split._LONE_VALUE.fullmatch(text)) and not split._word(text.strip(" \t\"'")),
            split._ends_with_name(text),
        )
        marks = split._marks(text)
        assert tuple(bool(marks & flag) for flag in flags) == said, text


def test_the_marks_of_a_batch_read_together_are_each_messages_marks_read_alone() -> None:
    """`StreamWatch.see_many` reads the marks of a batch's messages together (`_marks_of`: the words of a
    secret's name looked for in all their tails at once, lowercased); each must be the `_marks` of its
    message alone, whatever the batch (words at a tail's edges, capitals, text outside ASCII)."""
    chosen = random.Random(27)
    pieces = ["password", "PASSWORD", "Api_Key", "token", "secret", " was", " is", ":", "=", " ", "x", "9",
              "é", "İ", ")", "\n", "'", '"', "-----BEGIN RSA PRIVATE KEY-----", "MIIEvQIBADAN", "expired",
              "order 1842 failed", "a" * 70]  # fmt: skip
    texts = ["".join(chosen.choice(pieces) for _ in range(chosen.randint(0, 10))) for _ in range(3_000)]
    texts += _MESSAGES
    at = datetime(2026, 11, 25, 12, tzinfo=UTC)
    events = [
        ErrorEvent(
            event_id=f"e{n}",
            timestamp=at,
            kind=chosen.choice(["log", "span_error"]),
            trace_id=chosen.choice([None, "4bf92f3577b34da6a3ce929d0e0e4736"]),
            message=text,
        )
        for n, text in enumerate(texts)
    ]
    ascii_only = [event for event in events if event.message.isascii()]
    for batch in (events, ascii_only, ascii_only[:1], events[-40:], []):
        marks = split._marks_of(batch)
        assert len(marks) == len(batch)
        for made, event in zip(marks, batch, strict=True):
            if event.kind == "log" or event.trace_id:  # a message in a stream: the others keep no marks
                assert made == split._marks(event.message), event.message
    assert any(split._ends_with_name(event.message) for event in ascii_only)  # names at the end were read
    assert not any("\n" in word for word in split.SECRET_NAME_WORDS)  # so no word found joins two tails
