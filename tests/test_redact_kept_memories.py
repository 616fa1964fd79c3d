"""What the redactor's memories say is kept as it is is not redacted again (`Redactor._changed`): an event
whose names were all kept before, and attributes that are all text attributes kept before, are looked up,
not redacted. Pinned to the long way (those two memories never holding anything) on the security corpus's
events, each seen several times, with the memories emptied now and then as a long round's are: the same
events, the same counts."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from security_corpus import corpus
from security_harness import now, plant_secrets, secret_file

from rounds_bot.models import AttributeValue, ErrorEvent
from rounds_bot.redact import Redactor
from rounds_bot.redact import boundary as boundary_module
from rounds_bot.redact import event as event_module
from rounds_bot.redact.boundary import Boundary
from rounds_bot.redact.ids import id_shaped, ids_shaped
from rounds_bot.redact.text import cut
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from tests.test_redact_engine import FRAGMENTS
from tests.test_redact_lines import PIECES


class _Forgetful(set[object]):
    """A memory that never holds anything: the long way."""

    def add(self, element: object) -> None:
        pass


def _long_way() -> Redactor:
    redactor = Redactor()
    redactor._kept_pairs = _Forgetful()  # type: ignore[assignment]
    redactor._kept_names = _Forgetful()  # type: ignore[assignment]
    return redactor


def _raw_events(tmp_path: Path) -> list[ErrorEvent]:
    at = now()
    path = secret_file(tmp_path / "telemetry.jsonl", plant_secrets(corpus()), at)
    window = Window(start=at - timedelta(days=30), end=at + timedelta(days=1))
    return list(OtlpFileSource(path).poll_new(window, frozenset(), lambda ids: set()).events)


def _repeated(events: list[ErrorEvent]) -> list[ErrorEvent]:
    """The events three times over, with new ids: a bug's records share names and attributes, not ids."""
    again = []
    for round_ in range(3):
        for number, event in enumerate(events):
            again.append(event.model_copy(update={"event_id": f"{round_:02x}{number:030x}"}))
    return again


def _through(redactor: Redactor, events: list[ErrorEvent]) -> list[dict[str, object]]:
    boundary = Boundary(redactor)
    for event in events:
        boundary(event)
    boundary._redact_waiting()
    return [event.model_dump() for event in boundary.events]


@pytest.mark.parametrize("memo_chars", [event_module.MEMO_CHARS, 2_000])
def test_events_seen_again_are_made_and_counted_as_the_long_way_makes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memo_chars: int
) -> None:
    monkeypatch.setattr(event_module, "MEMO_CHARS", memo_chars)  # 2,000: emptied every few events
    monkeypatch.setattr(boundary_module, "BOUNDARY_BATCH", 17)
    events = _repeated(_raw_events(tmp_path))
    quick, slow = Redactor(), _long_way()
    assert _through(quick, events) == _through(slow, events)
    assert quick.counts == slow.counts
    assert any(event.attributes for event in events) and sum(slow.counts.values()) > 0
    if memo_chars == event_module.MEMO_CHARS:  # the memories were used, not only allowed
        assert quick._kept_pairs and quick._kept_names


def test_attributes_of_other_types_are_never_taken_for_text_attributes_kept() -> None:
    """A number equal to no text, and a flag, go the long way: the kept pairs are text attributes."""
    redactor = Redactor()
    made = redactor.attributes({"user.id": "4111111111111111", "count": "1"})
    assert made["user.id"] != "4111111111111111" and ("count", "1") in redactor._kept_pairs
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for attributes in ({"count": 1}, {"count": True}, {"card": 4111111111111111}):
        event = ErrorEvent(event_id="e1", timestamp=at, message="m", attributes=attributes)
        assert redactor.event(event) == _long_way().event(event)


def test_many_ids_are_told_an_ids_shape_as_each_is() -> None:
    values = ["ab" * 16, "", "a" * 129, "a" * 128, "x:y/z", "naïve", "a b", "0" * 16, "A-Z_09.:/"]
    for group in (values, ["ab" * 16, "0" * 16], ["ab" * 16, "a" * 129], [""]):
        assert ids_shaped(group) == [value for value in group if id_shaped(value)]


def _one_at_a_time(redactor: Redactor, events: list[ErrorEvent]) -> list[dict[str, object]]:
    """Each event redacted alone, nothing foreseen: no id proven and no text scanned with others."""
    return [redactor.event(event).model_dump() for event in events]


@pytest.mark.parametrize("batch", [1, 17, 512])
def test_a_batch_foreseen_is_redacted_and_counted_as_each_event_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """The boundary scans a batch's ids and texts together (`Redactor.foresee`: `IdProof`, `TextProof`);
    what it gives must be what redacting each event on its own gives, on the security corpus."""
    monkeypatch.setattr(boundary_module, "BOUNDARY_BATCH", batch)
    events = _repeated(_raw_events(tmp_path))
    batched, alone = Redactor(), Redactor()
    assert _through(batched, events) == _one_at_a_time(alone, events)
    assert batched.counts == alone.counts
    assert sum(alone.counts.values()) > 0


def test_a_batch_foreseen_scans_its_texts_as_they_will_be_redacted_cut_to_their_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message or trace longer than its limit is redacted cut (`text.cut`): the batch's scan reads the cut
    text, never the uncut tail (which could be megabytes), and gives what each event alone gives."""
    long_message = "order 12345 failed " + "1234 5678 " * 20_000
    long_trace = "Traceback (most recent call last):\n" + '  File "/srv/app.py", line 1, in f\n' * 5_000
    event = ErrorEvent(
        event_id="0" * 32,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        service="checkout",
        message=long_message,
        stacktrace=long_trace,
    )
    proven: list[str] = []
    batched = Redactor()
    prove = batched._texts.prove
    monkeypatch.setattr(batched._texts, "prove", lambda texts: prove(proven.extend(texts) or proven))
    batched.foresee([event])
    assert sorted(proven) == sorted(
        [cut(long_message, event_module.MESSAGE_CHARS), cut(long_trace, event_module.STACKTRACE_CHARS)]
    )
    assert batched.event(event) == Redactor().event(event)


def _attributed(rng: random.Random, number: int) -> ErrorEvent:
    """An event whose attributes mix what a bug's records share (kept before, looked up) with values new in
    every record: a log record's body, with now and then a secret or a personal value, under plain names,
    secret names and names that look secret; a value past its cap; values that are not text."""
    value = " ".join(rng.choice(PIECES + FRAGMENTS) for _ in range(rng.randint(0, 3)))
    attributes: dict[str, AttributeValue] = {
        "service.name": "checkout",
        "http.route": f"/api/{number % 3}",
        rng.choice(["log.body", "db.password", "app.stripe_key", "user.email", "note"]): (
            f"request {number} failed: {value}"
        ),
    }
    if rng.random() < 0.2:
        attributes["long"] = f"{number} " + "1234 5678 " * 500 + value
    if rng.random() < 0.2:
        attributes["count"] = rng.choice([number, 4111111111111111, True, 0.5, ""])
    return ErrorEvent(
        event_id=f"{number:032x}",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        message="m",
        attributes=attributes,
    )


@pytest.mark.parametrize("seed", range(4))
def test_a_batch_foreseen_scans_its_new_text_attributes_and_makes_them_as_each_event_alone(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """`foresee` scans with the batch's messages and traces the text attributes no memory holds, cut to
    their cap (`Redactor._new_attribute_texts`): the events and counts are what each event alone makes."""
    monkeypatch.setattr(boundary_module, "BOUNDARY_BATCH", 23)
    rng = random.Random(seed)
    events = [_attributed(rng, number) for number in range(200)]
    proven: list[str] = []
    batched = Redactor()
    prove = batched._texts.prove
    monkeypatch.setattr(batched._texts, "prove", lambda texts: prove(proven.extend(texts) or proven))
    alone = Redactor()
    assert _through(batched, events) == _one_at_a_time(alone, events)
    assert batched.counts == alone.counts
    assert sum(alone.counts.values()) > 0
    values = [value for event in events for value in event.attributes.values() if isinstance(value, str)]
    assert {cut(value, event_module.ATTRIBUTE_CHARS) for value in values} & set(proven)  # the proof took them


@pytest.mark.parametrize("seed", range(3))
def test_a_text_the_proof_kept_is_given_at_once_as_the_long_way_gives_it_at_every_cap(seed: int) -> None:
    """`Redactor.text` gives a text the batch's proof found kept (`TextProof.proven`), asked within its cap,
    without redacting it: the same text, counts and memory as the long way (nothing proven) gives, whatever
    the cap it is asked at (one shorter than the text cuts it: that goes the long way)."""
    rng = random.Random(seed)
    planted = [planted.carrier for planted in corpus()]
    texts = [
        " ".join(rng.choice([*PIECES, *FRAGMENTS, *planted]) for _ in range(rng.randint(1, 4)))
        for _ in range(300)
    ] + [f"order {number} failed: coupon not found" for number in range(100)]
    quick, slow = Redactor(), Redactor()
    quick._texts.prove(texts)
    assert quick._proven_texts and quick._proven_texts is quick._texts.proven  # the look-up was used
    asked = [
        (text, limit) for text in texts for limit in (32, event_module.NAME_CHARS, len(text), len(text) - 1)
    ]
    rng.shuffle(asked)
    for text, limit in asked:
        if limit > 0:
            assert quick.text(text, limit) == slow.text(text, limit)
    assert quick.counts == slow.counts and sum(slow.counts.values()) > 0
    assert quick._done == slow._done


def test_the_texts_a_batch_proves_are_each_events_message_and_trace_cut_as_redacted() -> None:
    """`_cut_texts` calls `cut` only past a limit: the texts, in order, are what cutting each gives."""
    rng = random.Random(7)
    lengths = [
        0,
        1,
        event_module.MESSAGE_CHARS,
        event_module.MESSAGE_CHARS + 1,
        event_module.STACKTRACE_CHARS,
    ]
    events = [
        ErrorEvent(
            event_id=f"{number:032x}",
            timestamp=datetime(2026, 1, 1, tzinfo=UTC),
            message="m " * (rng.choice(lengths) // 2) + "x" * rng.randint(0, 1),
            stacktrace=rng.choice([None, "", "at f\n" * (rng.choice([*lengths, 70_000]) // 5)]),
        )
        for number in range(60)
    ]
    expected = [
        cut(text, limit)
        for event in events
        for text, limit in (
            (event.message, event_module.MESSAGE_CHARS),
            (event.stacktrace, event_module.STACKTRACE_CHARS),
        )
        if text
    ]
    made = list(event_module._cut_texts(events))
    assert made == expected
    assert any(len(event.message) > event_module.MESSAGE_CHARS for event in events)  # some were cut
    assert any(len(event.stacktrace or "") > event_module.STACKTRACE_CHARS for event in events)


class _Watched(Redactor):
    """A redactor that notes the events whose attributes `events` did not look up again."""

    def __init__(self) -> None:
        super().__init__()
        self.not_looked_up: list[ErrorEvent] = []

    def _event(self, event: ErrorEvent, attributes_kept: bool) -> ErrorEvent:
        if attributes_kept and event.attributes:
            self.not_looked_up.append(event)
        return super()._event(event, attributes_kept)


@pytest.mark.parametrize(
    ("memo_attributes", "memo_chars"),
    [(event_module.MEMO_ATTRIBUTES, event_module.MEMO_CHARS), (7, 2_000), (40, 30_000)],
)
def test_attributes_a_batch_found_kept_are_redacted_as_each_event_alone_though_the_memory_empties(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memo_attributes: int, memo_chars: int
) -> None:
    """`Redactor.events` does not look up again the attributes `foresee` found all kept before, unless the
    memory of kept attributes was emptied since (full, or with the texts' memory): pinned to each event
    redacted alone, with both memories emptied within batches, on the security corpus's events seen again."""
    emptied = memo_attributes < event_module.MEMO_ATTRIBUTES
    monkeypatch.setattr(event_module, "MEMO_ATTRIBUTES", memo_attributes)
    monkeypatch.setattr(event_module, "MEMO_CHARS", memo_chars)
    events = _repeated(_raw_events(tmp_path))
    # a bug's records with plain attributes too (a route, a region): all kept after their first sight
    plain = [{"http.route": f"/cart/{number % 3}", "region": "eu"} for number in range(len(events))]
    events += [
        event.model_copy(update={"attributes": made}) for event, made in zip(events, plain, strict=True)
    ]
    random.Random(7).shuffle(events)
    for size in (5, 64, 1_000):  # the boundary's batches (`BOUNDARY_BATCH`), and smaller
        batched, alone = _Watched(), Redactor()
        made = [
            event
            for start in range(0, len(events), size)
            for event in batched.events(events[start : start + size])
        ]
        assert [event.model_dump() for event in made] == _one_at_a_time(alone, events)
        assert batched.counts == alone.counts
        assert sum(alone.counts.values()) > 0
        if memo_chars > 2_000:  # memories that outlive a batch: its answer was acted on
            assert batched.not_looked_up
        assert batched._pairs_cleared > 0 if emptied else not batched._pairs_cleared


def test_a_batch_says_which_events_have_their_attributes_all_kept_before() -> None:
    """`foresee`'s answer, which `events` acts on: all of an event's attributes kept before (none is past
    `MAX_ATTRIBUTES`), as `_changed` would find them."""
    redactor = Redactor()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    kept: dict[str, AttributeValue] = {"http.route": "/cart", "region": "eu"}
    redactor.attributes(kept)
    events = [
        ErrorEvent(event_id="e1", timestamp=at, message="m", attributes=kept),
        ErrorEvent(event_id="e2", timestamp=at, message="m", attributes={**kept, "job": "sync"}),
        ErrorEvent(event_id="e3", timestamp=at, message="m", attributes={"count": 1}),
        ErrorEvent(event_id="e4", timestamp=at, message="m"),
    ]
    assert redactor.foresee(events) == [True, False, False, True]
