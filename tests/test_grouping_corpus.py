"""The labelled grouping corpus: one signature per bug in every class, the same partition in any
arrival order, and old groups kept by a database an earlier version made.

The corpus (`tests/fixtures/grouping_corpus/`) is written by `python -m tools.grouping_corpus.generate`
through the OpenTelemetry SDK; `saved_rounds-fp2.jsonl` is what the `rounds-fp:2` engine saved of
it (`python -m tools.grouping_corpus.saved_states` run on that version).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from tests.signature_samples import a_signature

CORPUS = Path(__file__).parent / "fixtures" / "grouping_corpus"
TRUTH = json.loads((CORPUS / "truth.json").read_text(encoding="utf-8"))


def corpus_events() -> list[ErrorEvent]:
    window = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(9999, 1, 1, tzinfo=UTC))
    return list(OtlpFileSource(CORPUS / "corpus.otlp.jsonl").poll(window, frozenset()).events)


EVENTS = corpus_events()


def groups_per_bug(
    events: list[ErrorEvent], signatures: list[str]
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    signatures_of: dict[str, set[str]] = defaultdict(set)
    bugs_in: dict[str, set[str]] = defaultdict(set)
    for event, signature in zip(events, signatures, strict=True):
        bug = TRUTH["events"][event.event_id]
        signatures_of[bug].add(signature)
        bugs_in[signature].add(bug)
    return signatures_of, bugs_in


def grouped(events: list[ErrorEvent]) -> list[str]:
    engine = GroupingEngine()
    return [a.signature_id for a in engine.assign_all(events)]  # one batch, as a round's


def test_the_corpus_holds_every_class_with_its_ground_truth() -> None:
    classes = {info["class"] for info in TRUTH["bugs"].values()}
    assert classes == set(range(1, 10))
    assert {TRUTH["events"][event.event_id] for event in EVENTS} == set(TRUTH["bugs"])


@pytest.mark.parametrize("number", range(1, 10))
def test_each_bug_of_the_class_gets_one_signature_of_its_own(number: int) -> None:
    signatures_of, bugs_in = groups_per_bug(EVENTS, grouped(EVENTS))
    bugs = [bug for bug, info in TRUTH["bugs"].items() if info["class"] == number]
    assert {bug: len(signatures_of[bug]) for bug in bugs} == dict.fromkeys(bugs, 1)
    for bug in bugs:
        (signature,) = signatures_of[bug]
        assert bugs_in[signature] == {bug}


def test_no_signature_holds_two_bugs_and_signatures_per_bug_stay_within_the_target() -> None:
    signatures_of, bugs_in = groups_per_bug(EVENTS, grouped(EVENTS))
    assert all(len(bugs) == 1 for bugs in bugs_in.values())
    total = sum(len(signatures) for signatures in signatures_of.values())
    assert total / len(signatures_of) <= 1.15


def test_the_partition_is_the_same_in_any_arrival_order() -> None:
    def partition(events: list[ErrorEvent]) -> frozenset[frozenset[str]]:
        members: dict[str, set[str]] = defaultdict(set)
        for event, signature in zip(events, grouped(events), strict=True):
            members[signature].add(event.event_id)
        return frozenset(frozenset(ids) for ids in members.values())

    expected = partition(EVENTS)
    rng = random.Random(24)
    for _ in range(5):
        shuffled = list(EVENTS)
        rng.shuffle(shuffled)
        assert partition(shuffled) == expected


def test_a_database_of_the_previous_fingerprint_version_keeps_its_groups(fresh_db: Store) -> None:
    states, old_signature = [], {}
    for line in (CORPUS / "saved_rounds-fp2.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if "event" in item:
            old_signature[item["event"]] = item["signature"]
        else:
            states.append(SignatureState.model_validate(item))
    assert {state.fingerprint_version for state in states} == {"rounds-fp:2"}
    with fresh_db.transaction():
        for state in states:
            fresh_db.save(a_signature(state.signature_id, service=state.service, grouping_state=state))
    engine = GroupingEngine(lookup=fresh_db.grouping_lookup())
    moved = {}
    for event, assignment in zip(EVENTS, engine.assign_all(EVENTS), strict=True):
        if assignment.signature_id != old_signature[event.event_id]:
            moved[event.event_id] = (old_signature[event.event_id], assignment.signature_id, assignment.tier)
    assert moved == {}


def test_a_database_of_the_previous_fingerprint_version_keeps_its_groups_round_after_round(
    fresh_db: Store,
) -> None:
    """Its signatures, found by their `rounds-fp:2` hashes, are registered under this version's after each
    batch (`found_earlier`) and saved, as a round saves them: no event moves in the rounds after, and the
    states a round saves stop changing after the first."""
    states = [
        SignatureState.model_validate(item)
        for item in map(
            json.loads, (CORPUS / "saved_rounds-fp2.jsonl").read_text(encoding="utf-8").splitlines()
        )
        if "event" not in item
    ]
    with fresh_db.transaction():
        for state in states:
            fresh_db.save(a_signature(state.signature_id, service=state.service, grouping_state=state))
    placed, saved = [], []
    for _ in range(3):
        engine = GroupingEngine(lookup=fresh_db.grouping_lookup())
        placed.append([a.signature_id for a in engine.assign_all(EVENTS)])
        after = {s: engine.state(s) for s in sorted(set(placed[-1]))}
        saved.append(after)
        with fresh_db.transaction():
            for signature_id, state in after.items():
                stored = fresh_db.signature(signature_id)
                assert stored is not None  # (no event starts a signature: each keeps its group)
                fresh_db.save(stored.model_copy(update={"grouping_state": state}))
    assert placed[0] == placed[1] == placed[2]
    assert any(
        len(saved[0][s].hashes) > len(next(t for t in states if t.signature_id == s).hashes) for s in saved[0]
    )
    assert saved[0] == saved[1] == saved[2]


def test_signatures_saved_before_words_could_vary_keep_their_events() -> None:
    """Saved by an engine that took each word as the statement's (event by event, no batch: the
    engine before per-position variability): the batch engine sends every event where it went."""
    before = GroupingEngine()
    old_signature = [before.assign(event).signature_id for event in EVENTS]
    states = [
        SignatureState.model_validate_json(before.state(s).model_dump_json()) for s in set(old_signature)
    ]
    after = GroupingEngine(known=states)
    assert [a.signature_id for a in after.assign_all(EVENTS)] == old_signature


def test_a_varying_word_says_so_in_why_grouped() -> None:
    engine = GroupingEngine()
    assignments = engine.assign_all(EVENTS)
    varied = [
        a.explanation
        for event, a in zip(EVENTS, assignments, strict=True)
        if TRUTH["bugs"][TRUTH["events"][event.event_id]]["class"] == 4 and a.tier == "fingerprint"
    ]
    assert varied
    assert all("a word that varies across the statement's lines" in text for text in varied)


def test_a_batch_places_every_event_where_one_by_one_does_when_no_word_varies() -> None:
    others = [e for e in EVENTS if TRUTH["bugs"][TRUTH["events"][e.event_id]]["class"] != 4]
    one_by_one = GroupingEngine()
    expected = [(a.signature_id, a.tier, a.explanation) for a in map(one_by_one.assign, others)]
    assert [(a.signature_id, a.tier, a.explanation) for a in GroupingEngine().assign_all(others)] == expected


def test_a_later_round_sends_a_new_value_to_the_signature_a_stored_varying_template_made(
    fresh_db: Store,
) -> None:
    words = [e for e in EVENTS if TRUTH["bugs"][TRUTH["events"][e.event_id]]["class"] == 4]
    engine = GroupingEngine(lookup=fresh_db.grouping_lookup())
    made = {e.message: a.signature_id for e, a in zip(words, engine.assign_all(words), strict=True)}
    with fresh_db.transaction():
        for signature_id in set(made.values()):
            state = engine.state(signature_id)
            fresh_db.save(a_signature(signature_id, service=state.service, grouping_state=state))
    known = next(m for m in made if m.startswith("job ") and m.endswith("destination unreachable"))
    new_value = words[0].model_copy(
        update={"event_id": "f" * 32, "message": "job archive-orders failed: destination unreachable"}
    )
    (assignment,) = GroupingEngine(lookup=fresh_db.grouping_lookup()).assign_all([new_value])
    assert assignment.signature_id == made[known]
