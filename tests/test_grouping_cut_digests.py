"""The lookup hashes kept per trace text with the message cut out (`cut_digests`) are the hashes the event's
own candidate is looked up by, whether they are worked out for it or kept from another occurrence with another
message; a repeat is found without parsing its trace; and a round places such repeats as it assigns them, also
when the memo is cleared between them."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_grouping_placement import assert_placed_as_assigned
from test_grouping_trace_cut import TEMPLATES, TRACES, TRICKY, _messages_of

from rounds_bot.grouping import cut_digests
from rounds_bot.grouping.candidates import Candidate, CandidateReader
from rounds_bot.grouping.components import render
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.stacktrace.go_key import dump_key
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.grouping.trace_cut import PLACEHOLDER, cut
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _event(trace: str, message: str, service: str = "shop", number: int = 1) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"{number:032x}", timestamp=EPOCH, service=service, message=message, stacktrace=trace
    )


def _reader() -> CandidateReader:
    return CandidateReader(InAppRules(), ShapeCache(), TemplateMiner(), previous_versions=True)


def _own_digests(event: ErrorEvent) -> tuple[str, ...]:
    """The hashes the event's candidate is looked up by, from a reader that saw nothing before."""
    candidate = _reader().candidate(event, None)
    return tuple(digest for _, digest in candidate.fingerprint.lookup_keys())


def _seen(candidate: Candidate) -> tuple[object, ...]:
    """All a candidate is read for (its fingerprint's tree as rendered: components compare by identity; of its
    trace, all but the values, which grouping reads normalised: a memo gives a message the reading of an
    earlier one it normalises alike, `trace_memo`)."""
    fingerprint, trace = candidate.fingerprint, candidate.trace
    return (
        fingerprint.lookup_keys(),
        fingerprint.version,
        render(fingerprint.tree),
        candidate.view,
        candidate.title,
        trace and (trace.runtime, trace.notes, [(e.type, e.relation, e.frames) for e in trace.exceptions]),
        candidate.roles,
        candidate.crash_site,
        candidate.site,
        candidate.template_id,
        candidate.code_key,
    )


def _assert_kept_digests_are_the_candidates(trace: str, messages: list[str]) -> int:
    """Each message's digests, worked out first or kept from the messages before it, are its candidate's
    (when the memo gives any); how many were given from an entry kept for another message."""
    reader = _reader()
    kept = 0
    for message in messages:
        event = _event(trace.replace("{message}", message) if "{message}" in trace else trace, message)
        hits, parses = reader.cut_digests.hits, reader._traces.parses
        place = reader.trace_place(event)
        digests = place.digests if place is not None else None
        # the candidate asked for next (an assignment's, when no signature is found) is the one worked out
        # afresh, whether the digests were worked out for it just now or kept
        assert _seen(reader.candidate(event, None)) == _seen(_reader().candidate(event, None))
        if place is not None and digests is not None:
            assert digests == _own_digests(event)
            # the earlier versions' hashes among them, which `found_earlier` tells from this version's
            assert place.earlier == len(_reader().candidate(event, None).fingerprint.legacy_hashes)
            if reader.cut_digests.hits > hits:
                kept += 1
                assert reader._traces.parses == parses  # found without reading the trace
    return kept


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_a_templates_messages_share_the_hashes_of_their_own_candidates(template: str) -> None:
    text = TEMPLATES[template].replace("{{", "{").replace("}}", "}")
    messages = ["cart 17 is empty", "cart 912 is empty", "invalid item 'order' in cart 4309829", *TRICKY]
    _assert_kept_digests_are_the_candidates(text, messages)
    assert _assert_kept_digests_are_the_candidates(text, ["cart 1 is empty", "card 22 declined"]) == 1


def test_golden_traces_give_their_candidates_hashes_with_each_message_they_print() -> None:
    for path in sorted(TRACES.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        for message in _messages_of(text):
            _assert_kept_digests_are_the_candidates(text, [message, message])


def test_the_scale_runs_repeats_share_their_hashes() -> None:
    scale_data = pytest.importorskip("bench.scale_data")
    rng = random.Random(7)
    kept = 0
    for number in range(1, 200, 9):
        bug = scale_data.bug(number)
        messages = [scale_data.message(bug, rng) for _ in range(3)]
        reader = _reader()
        for message in messages:
            event = _event(scale_data.stack_trace(bug, rng, message), message)
            hits = reader.cut_digests.hits
            digests = reader.trace_digests(event)
            assert _seen(reader.candidate(event, None)) == _seen(_reader().candidate(event, None))
            assert digests is None or digests == _own_digests(event)
            kept += reader.cut_digests.hits > hits and digests is not None
    assert kept > 20


def test_a_cut_texts_digest_and_dump_key_worked_out_around_its_message_are_the_cut_texts() -> None:
    pairs = [
        (TEMPLATES[name].replace("{{", "{").replace("}}", "}").replace("{message}", message), message)
        for name in sorted(TEMPLATES)
        for message in [*TRICKY, "panier 17 vidé", "\u00e9", "goroutine 7 leaked"]
    ]
    pairs += [
        (path.read_text(encoding="utf-8"), m)
        for path in sorted(TRACES.glob("*.txt"))
        for m in _messages_of(path.read_text(encoding="utf-8"))
    ]
    cuts = [found for text, message in pairs if (found := cut(text, message)) is not None]
    assert len(cuts) > 50 and any(found.source.isascii() for found in cuts)
    assert any(not found.source.isascii() for found in cuts)
    for found in cuts:
        assert found.text == found.source.replace(found.message, PLACEHOLDER)
        whole = hashlib.blake2b(found.text.encode("utf-8", "surrogatepass"), digest_size=16, person=b"text")
        assert cut_digests._text_digest(found) == whole.digest()
        assert found.dump == dump_key(found.text)
    assert any(found.dump is not None for found in cuts)


def test_the_hashes_are_kept_per_service() -> None:
    text = TEMPLATES["java"].replace("{message}", "cart 17 is empty")
    reader = _reader()
    shop = reader.trace_digests(_event(text, "cart 17 is empty", "shop"))
    billing = reader.trace_digests(_event(text, "cart 17 is empty", "billing"))
    assert shop is not None and billing is not None and shop != billing
    assert billing == _own_digests(_event(text, "cart 17 is empty", "billing"))


def _scale_events(bugs: int, per_bug: int) -> list[ErrorEvent]:
    scale_data = pytest.importorskip("bench.scale_data")
    rng = random.Random(11)
    events = []
    for round_ in range(per_bug):
        for number in range(bugs):
            bug = scale_data.bug(number)
            message = scale_data.message(bug, rng)
            service = scale_data.SERVICES[bug.service]
            trace = scale_data.stack_trace(bug, rng, message)
            events.append(_event(trace, message, service, number * per_bug + round_))
    return events


def test_a_round_places_the_scale_runs_repeats_as_it_assigns_them(tmp_path: Path) -> None:
    events = _scale_events(60, 3)
    without = assert_placed_as_assigned(events, GroupingEngine(), GroupingEngine())
    assert without > len(events) // 2


def test_repeats_are_placed_as_assigned_when_the_memo_is_cleared_between_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cut_digests, "MEMO_LIMIT", 7)  # cleared every seventh trace text
    events = _scale_events(40, 3)
    without = assert_placed_as_assigned(events, GroupingEngine(), GroupingEngine())
    assert without > len(events) // 3


def test_a_dump_keys_digest_tells_keys_apart_and_not_equal_keys_made_otherwise() -> None:
    """The digest of a dump key is the same for equal keys, whatever objects hold their parts (interned or
    not), and differs between keys that differ in a part, in None against an empty or a `None` text, or in
    where their parts break."""
    import sys

    part = "".join(["main.", "handle"])  # a new string object, not interned
    same = [("a\n", part, None, ""), ("a\n", sys.intern("main.handle"), None, "")]
    assert len({cut_digests._dump_digest(key) for key in same}) == 1
    different = [
        ("a\n", "main.handle", None, ""),
        ("a\n", "main.handle", "", ""),
        ("a\n", "main.handle", "None", ""),
        ("a\n", "main.handle", None, None),
        ("a\nmain.handle", None, ""),
        ("a\n", "main.handl", "e", None, ""),
        ("a\n", "main.handle\ud800", None, ""),
    ]
    assert len({cut_digests._dump_digest(key) for key in different}) == len(different)
