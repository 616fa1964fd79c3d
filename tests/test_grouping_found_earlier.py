"""After an upgrade, a signature an earlier reading made is found by that reading's hashes, and is registered
under this reading's hashes too (`grouping/found_earlier.py`): the next deploy's events, which no earlier
reading finds (bundles renamed, a recursion reached at another depth, other library frames, another browser),
join it instead of starting a duplicate issue. One case per earlier reading, end to end with rounds over a
database whose signature holds what that reading registered; then the rules a registration keeps: first
registration wins, the batch's partition does not depend on its order (a deploy within the batch that first
finds the earlier signature joins it, whichever came first), the oldest signature wins a hash two claim, it
is idempotent, and a round placing repeats by their hashes alone registers what `assign_all` does. Last, a
log line an earlier version's quoted template finds keeps its statement together."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from known_states import KnownStates
from test_grouping_browser_extensions import BEFORE_EXTENSIONS, OTHER_EXTENSION, OTHER_LIBRARY
from test_grouping_browser_extensions import MESSAGE as EXTENSION_MESSAGE
from test_grouping_browser_extensions import TRACE as EXTENSION_TRACE
from test_grouping_browser_traces import (
    BEFORE_HASHES,
    BEFORE_SITE,
    CHROME_DEPLOY_1,
    CHROME_DEPLOY_2,
    FIREFOX_DEPLOY_1,
    MESSAGE,
)
from test_grouping_builtins import MESSAGE as BUILTIN_MESSAGE
from test_grouping_builtins import TRACE as BUILTIN_TRACE
from test_grouping_builtins import _earlier_state as builtins_earlier_state
from test_round import ListSource

from rounds_bot.grouping.candidates import CandidateReader
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.templates import TemplateMiner, template_id_for
from rounds_bot.models import ErrorEvent
from rounds_bot.round.report import RoundReport
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
#: a round every quarter of an hour; each round's events ten minutes before it
EVERY = timedelta(minutes=15)


class Case:
    """An error, what an earlier reading registered of it, and the next deploy's form of it."""

    def __init__(
        self,
        service: str,
        error_type: str | None,
        message: str,
        made_from: str | None,
        found_by: str,
        next_deploy: str,
        earlier: Callable[[SignatureState, ErrorEvent], SignatureState],
    ) -> None:
        self.service, self.error_type, self.message = service, error_type, message
        #: the trace the signature was made from (None: a message alone, as an unread stack went)
        self.made_from = made_from
        #: what the first round after the upgrade sees (found by the earlier reading)
        self.found_by = found_by
        #: what a later deploy prints: no earlier reading finds it, this one gives it the same hashes
        self.next_deploy = next_deploy
        #: the state that reading saved, from the state this one made of the same events
        self.earlier = earlier

    def event(self, number: int, stacktrace: str | None, at: datetime) -> ErrorEvent:
        return ErrorEvent(
            event_id=f"e{number}",
            timestamp=at,
            service=self.service,
            error_type=self.error_type,
            message=self.message,
            stacktrace=stacktrace,
        )


def _legacy_hashes(event: ErrorEvent, previous_versions: bool = True) -> tuple[str, ...]:
    """The hashes earlier readings gave the event, as this version works them out to look up (without
    `previous_versions`: those of this version's readings before bundles and builtins alone)."""
    reader = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner(), previous_versions=previous_versions)
    return reader.candidate(event, None).fingerprint.legacy_hashes


def _before_bundles(state: SignatureState, _: ErrorEvent) -> SignatureState:
    return state.model_copy(update={"hashes": list(BEFORE_HASHES), "crash_site": BEFORE_SITE})


def _builtins_in_app(state: SignatureState, _: ErrorEvent) -> SignatureState:
    earlier = builtins_earlier_state()
    return state.model_copy(update={"hashes": list(earlier.hashes), "crash_site": earlier.crash_site})


def _extensions_in_app(state: SignatureState, _: ErrorEvent) -> SignatureState:
    hashes, crash_site = BEFORE_EXTENSIONS["TRACE"]
    return state.model_copy(update={"hashes": list(hashes), "crash_site": crash_site})


def _fp2(state: SignatureState, event: ErrorEvent) -> SignatureState:
    # its app and all-frames hashes, read the `rounds-fp:2` way, come before `rounds-fp:1`'s all-frames hash
    # and the crash site as it read it: the innermost frame as printed, by its file's name
    app, system, _ = _legacy_hashes(event)
    update = {"hashes": [app, system], "fingerprint_version": "rounds-fp:2", "crash_site": "tree.py:walk"}
    return state.model_copy(update=update)


def _fp1(state: SignatureState, event: ErrorEvent) -> SignatureState:
    # its all-frames hash (its in-app hash is no longer worked out), and its crash site as `_fp2`'s
    update = {"hashes": [_legacy_hashes(event)[-1]], "fingerprint_version": "rounds-fp:1"}
    return state.model_copy(update={**update, "crash_site": "tree.py:walk"})


def _as_made(state: SignatureState, _: ErrorEvent) -> SignatureState:
    return state


def _recursion(depth: int) -> str:
    """A recursion of two functions, the innermost call raising: `rounds-fp:2` hashed the frames as printed,
    this reading keeps the cycle's outermost pass, the same at any depth."""
    lines = ["Traceback (most recent call last):", '  File "/app/shop/main.py", line 3, in main']
    lines += [
        f'  File "/app/shop/tree.py", line {10 + i % 2}, in {("walk", "visit")[i % 2]}' for i in range(depth)
    ]
    return "\n".join([*lines, "RecursionError: maximum recursion depth exceeded"])


#: the body's JSON read by the runtime's fetch instead of a builtin `JSON.parse`: a frame with a file, a
#: library's, so this reading gives it the app frames and site of `BUILTIN_TRACE`; the reading that took
#: builtins for the app's gave it other frames and another site
BUILTIN_REDEPLOYED = BUILTIN_TRACE.replace(
    "at JSON.parse (<anonymous>)", "at parseJSONFromBytes (node:internal/deps/undici/undici:5584:19)"
)

RECURSION = "maximum recursion depth exceeded"
CASES = {
    "bundles renamed": Case(
        "shop-web", "Error", MESSAGE, CHROME_DEPLOY_1, CHROME_DEPLOY_1, CHROME_DEPLOY_2, _before_bundles
    ),
    "builtins taken for the app's": Case(
        "api", "SyntaxError", BUILTIN_MESSAGE, *(BUILTIN_TRACE,) * 2, BUILTIN_REDEPLOYED, _builtins_in_app
    ),
    # found by the frames the release before read (the extension's `fetch` the app's); the next event comes
    # through another extension, whose frames and crash site that release read otherwise
    "browser extensions taken for the app's": Case(
        "shop-web",
        "TypeError",
        EXTENSION_MESSAGE,
        EXTENSION_TRACE,
        OTHER_LIBRARY,
        OTHER_EXTENSION,
        _extensions_in_app,
    ),
    "rounds-fp:2, a recursion at another depth": Case(
        "shop", "RecursionError", RECURSION, *(_recursion(5),) * 2, _recursion(4), _fp2
    ),
    "rounds-fp:1, a recursion at another depth": Case(
        "shop", "RecursionError", RECURSION, *(_recursion(5),) * 2, _recursion(4), _fp1
    ),
    "a Firefox stack that went to its message": Case(
        "shop-web", "Error", MESSAGE, None, FIREFOX_DEPLOY_1, CHROME_DEPLOY_2, _as_made
    ),
}


def _upgraded_rounds(case: Case, db: Store, folder: Path, later: list[list[str]]) -> list[RoundReport]:
    """A round that makes the signature, the database turned into what the earlier reading left of it, then
    a round of each of `later`'s traces."""
    settings = load_settings()
    made = case.event(0, case.made_from, NOW - timedelta(minutes=10))
    source = ListSource([made])
    first = run_round(settings, source, DryRunTracker(folder), db, now=NOW)
    assert len(first.new) == 1
    stored = db.signature(first.new[0].signature_id)
    assert stored is not None and stored.grouping_state is not None
    with db.transaction():
        db.save(stored.model_copy(update={"grouping_state": case.earlier(stored.grouping_state, made)}))
    reports = []
    for number, traces in enumerate(later, start=1):
        at = NOW + number * EVERY
        source.events += [
            case.event(number * 10 + i, text, at - timedelta(minutes=10)) for i, text in enumerate(traces)
        ]
        reports.append(run_round(settings, source, DryRunTracker(folder), db, now=at))
    return reports


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_next_deploy_after_an_upgrade_joins_the_signature_an_earlier_reading_made(
    name: str, clean_env, fresh_db: Store, tmp_path: Path
) -> None:
    case = CASES[name]
    found, deployed, again = _upgraded_rounds(
        case, fresh_db, tmp_path, [[case.found_by], [case.next_deploy], [case.found_by, case.next_deploy]]
    )
    signature_id = found.updated[0].signature_id
    assert not found.new and [line.round_count for line in found.updated] == [1]
    # the next deploy, which no earlier reading finds: the same signature, no second issue
    assert not deployed.new and [line.signature_id for line in deployed.updated] == [signature_id]
    assert not again.new and [line.round_count for line in again.updated] == [2]
    assert len(list(tmp_path.glob("*.md"))) == 1


def _states_after(states: list[SignatureState], batches: list[list[ErrorEvent]]) -> list[SignatureState]:
    """`states` after a round's engine (looking them up) placed each batch, saved between them."""
    for batch in batches:
        engine = GroupingEngine(lookup=KnownStates(states))
        engine.assign_all(batch)
        loaded = set(engine.signature_ids())
        kept = {s.signature_id: s for s in states}
        states = [engine.state(s) if s in loaded else kept[s] for s in sorted(kept.keys() | loaded)]
    return states


def _engine_after(states: list[SignatureState], batches: list[list[ErrorEvent]]) -> GroupingEngine:
    return GroupingEngine(lookup=KnownStates(_states_after(states, batches)))


def _state(states: list[SignatureState], signature_id: str) -> SignatureState:
    return next(s for s in states if s.signature_id == signature_id)


def _bundle_event(stacktrace: str) -> ErrorEvent:
    case = CASES["bundles renamed"]
    return case.event(0, stacktrace, NOW)


def _earlier_signature(signature_id: str, seq: int, stacktrace: str) -> SignatureState:
    """A signature made before bundles were known, from `stacktrace`: filed under its bundles' names."""
    return SignatureState(
        signature_id=signature_id,
        service="shop-web",
        seq=seq,
        hashes=list(_legacy_hashes(_bundle_event(stacktrace), previous_versions=False)),
        crash_site=BEFORE_SITE,
    )


#: one bug over three deploys: each renamed the bundles
DEPLOY_3 = CHROME_DEPLOY_2.replace("index-Bq7Xw9Lp", "index-Zt5Qm2Rc").replace(
    "vendor-D1k9aZzQ", "vendor-Hp3Lx8Wn"
)


def test_the_oldest_of_two_signatures_that_claim_one_hash_gets_it_in_any_order() -> None:
    """Two deploys before bundles were known made two signatures of one bug: after the upgrade a batch finds
    each by its bundles' names, and the next deploy's events join the older, whichever came first."""
    older = _earlier_signature("sig_older", 0, CHROME_DEPLOY_1)
    newer = _earlier_signature("sig_newer", 1, CHROME_DEPLOY_2)
    batch = [_bundle_event(CHROME_DEPLOY_1), _bundle_event(CHROME_DEPLOY_2)]
    for order in (batch, batch[::-1]):
        engine = _engine_after([newer, older], [order])
        assert engine.assign(_bundle_event(DEPLOY_3)).signature_id == "sig_older"


def test_a_deploy_within_the_batch_that_first_finds_the_earlier_signature_joins_it_in_any_order() -> None:
    """The batch's claims are registered before it is placed: the deploy it holds beside the one an earlier
    reading finds joins the earlier signature by this reading's hashes (and says so), whichever came first;
    so do the deploys after it."""
    older = _earlier_signature("sig_older", 0, CHROME_DEPLOY_1)
    events = [_bundle_event(CHROME_DEPLOY_1), _bundle_event(CHROME_DEPLOY_2)]
    for order in (events, events[::-1]):
        engine = GroupingEngine(lookup=KnownStates([older]))
        assigned = engine.assign_all(order)
        assert [a.signature_id for a in assigned] == ["sig_older"] * 2
        deployed = next(a for a, e in zip(assigned, order, strict=True) if e.stacktrace == CHROME_DEPLOY_2)
        assert "frames of the app's own code" in deployed.explanation.splitlines()[-1]
        assert engine.assign(_bundle_event(DEPLOY_3)).signature_id == "sig_older"


def test_a_claim_never_joins_what_this_readings_hashes_keep_apart() -> None:
    """Only the hashes the found event itself gives are claimed: another problem in the same batch, whose
    hashes differ, still starts its own signature."""
    older = _earlier_signature("sig_older", 0, CHROME_DEPLOY_1)
    other = ErrorEvent(
        event_id="other", timestamp=NOW, service="shop-web", message=BUILTIN_MESSAGE, stacktrace=BUILTIN_TRACE
    )
    engine = GroupingEngine(lookup=KnownStates([older]))
    alone = GroupingEngine().assign(other).signature_id
    assigned = [a.signature_id for a in engine.assign_all([_bundle_event(CHROME_DEPLOY_1), other])]
    assert assigned == ["sig_older", alone]


def test_a_hash_filed_under_another_signature_stays_that_signatures() -> None:
    """First registration wins: the next deploy made its own signature before the upgrade's round found the
    earlier one; that signature keeps the hash (it is in the database, not yet loaded) and its events."""
    older = _earlier_signature("sig_older", 0, CHROME_DEPLOY_1)
    made = GroupingEngine()
    other = made.assign(_bundle_event(CHROME_DEPLOY_2)).signature_id
    theirs = made.state(other).model_copy(update={"seq": 1})
    states = _states_after([older, theirs], [[_bundle_event(CHROME_DEPLOY_1)]])
    assert not set(_state(states, "sig_older").hashes) & set(theirs.hashes)
    assert _state(states, other) == theirs
    assert GroupingEngine(lookup=KnownStates(states)).assign(_bundle_event(DEPLOY_3)).signature_id == other


def test_registration_is_idempotent_and_keeps_the_earlier_reading_named() -> None:
    older = _earlier_signature("sig_older", 0, CHROME_DEPLOY_1)
    once = _states_after([older], [[_bundle_event(CHROME_DEPLOY_1)]])
    found = GroupingEngine(lookup=KnownStates(once)).assign(_bundle_event(CHROME_DEPLOY_1))
    assert found.signature_id == "sig_older" and "an earlier version" in found.explanation.splitlines()[-1]
    registered = _state(once, "sig_older").hashes
    assert registered[: len(older.hashes)] == older.hashes and len(registered) > len(older.hashes)
    twice = _states_after(once, [[_bundle_event(CHROME_DEPLOY_1)]] * 2)
    assert twice == once
    deployed = GroupingEngine(lookup=KnownStates(twice)).assign(_bundle_event(DEPLOY_3))
    assert deployed.signature_id == "sig_older"
    assert "frames of the app's own code" in deployed.explanation.splitlines()[-1]


def _mixed_batch(rng: random.Random) -> tuple[list[SignatureState], list[ErrorEvent]]:
    """Every case's earlier signature, and a batch of their events in random order and number."""
    states, events = [], []
    for seq, name in enumerate(sorted(CASES)):
        case = CASES[name]
        made = GroupingEngine()
        source = case.event(0, case.made_from, NOW)
        state = made.state(made.assign(source).signature_id)
        states.append(case.earlier(state.model_copy(update={"seq": seq}), source))
        for text in (case.found_by, case.next_deploy):
            events += [case.event(len(events), text, NOW) for _ in range(rng.randint(1, 3))]
    rng.shuffle(events)
    return states, events


def _placed_as_a_round_places(engine: GroupingEngine, events: list[ErrorEvent]) -> list[str]:
    """`place_each`, each signature's first event assigned; the batch placed again while the engine says."""
    placing_again = True
    while placing_again:
        tallied: set[str] = set()
        placed = []
        for placement in engine.place_each(events, tallied):
            tallied.add(placement.signature_id)
            placed.append(placement.signature_id)
        placing_again = engine.place_again()
    return placed


def test_placing_repeats_by_their_hashes_registers_what_assign_all_does() -> None:
    """A round places an event of a signature it tallies by its lookup hashes alone (`place_each`): it notes
    the signatures found by an earlier reading as the full assignment does, so the states saved are the
    same, and so are the signatures the next batch finds."""
    rng = random.Random(26)
    for _ in range(8):
        states, events = _mixed_batch(rng)
        slow = GroupingEngine(lookup=KnownStates(states))
        assigned = [a.signature_id for a in slow.assign_all(events)]
        fast = GroupingEngine(lookup=KnownStates(states))
        placed = _placed_as_a_round_places(fast, events)
        assert placed == assigned
        assert [fast.state(s) for s in sorted(set(placed))] == [slow.state(s) for s in sorted(set(placed))]


@pytest.mark.parametrize("order", ["earlier reading first", "next deploy first"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_deploy_in_the_round_that_first_finds_the_earlier_signature_joins_it(
    name: str, order: str, clean_env, fresh_db: Store, tmp_path: Path
) -> None:
    """The first round after the upgrade reads the old deploy's events, which an earlier reading finds, and
    the next deploy's, which only this reading's hashes lead to the same signature: one signature, one
    issue, whichever came first in the batch."""
    case = CASES[name]
    batch = [case.found_by, case.next_deploy]
    (both,) = _upgraded_rounds(
        case, fresh_db, tmp_path, [batch if order.startswith("earlier") else batch[::-1]]
    )
    assert not both.new and [line.round_count for line in both.updated] == [2]
    assert len(list(tmp_path.glob("*.md"))) == 1


def _partition(assigned: list[str], events: list[ErrorEvent]) -> set[tuple[str, str]]:
    """Which signature each trace went to (the batch's events of one trace always go together)."""
    return {
        (event.stacktrace or "", signature_id) for event, signature_id in zip(events, assigned, strict=True)
    }


def test_a_batch_after_an_upgrade_is_partitioned_alike_in_any_order() -> None:
    """Every case's earlier signature, their events (found by the earlier reading, and the next deploy's) in
    random orders: the same partition each time, and no event starts a signature of its own."""
    rng = random.Random(27)
    for _ in range(6):
        states, events = _mixed_batch(rng)
        partitions = []
        for _ in range(4):
            rng.shuffle(events)
            engine = GroupingEngine(lookup=KnownStates(states))
            partitions.append(_partition([a.signature_id for a in engine.assign_all(events)], events))
        assert all(p == partitions[0] for p in partitions)
        assert {signature_id for _, signature_id in partitions[0]} <= {s.signature_id for s in states}


def test_a_batch_is_placed_once_unless_a_deploy_in_it_took_a_claimed_hash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Placing again is for the batch whose claim found its hash taken by a signature the batch started: a
    batch of the earlier reading's deploy alone, a first round, a batch of nothing earlier, are placed once
    (the engine is never started over)."""
    older = _earlier_signature("sig_older", 0, CHROME_DEPLOY_1)
    _, events = _mixed_batch(random.Random(29))
    starts: list[GroupingEngine] = []
    start = GroupingEngine._start

    def counted(self: GroupingEngine) -> None:
        starts.append(self)
        start(self)

    monkeypatch.setattr(GroupingEngine, "_start", counted)
    for engine, batch in [
        (GroupingEngine(lookup=KnownStates([older])), [_bundle_event(CHROME_DEPLOY_1)] * 2),
        (GroupingEngine(lookup=KnownStates([])), events),
        (GroupingEngine(), events),
    ]:
        engine.assign_all(batch)
        assert not engine.place_again()
    assert len(starts) == 3
    engine = GroupingEngine(lookup=KnownStates([older]))
    engine.assign_all([_bundle_event(CHROME_DEPLOY_2), _bundle_event(CHROME_DEPLOY_1)])
    assert len(starts) == 5 and not engine.place_again()


def _quoted_fp2(state: SignatureState, event: ErrorEvent) -> SignatureState:
    """The template `rounds-fp:2` mined of the line: a quoted string was text then, `'bob'` a word."""
    template = state.templates[0]
    shape = ShapeCache().lookup(event.message)[1]
    assert shape.previous is not None
    tokens = list(shape.previous)
    update = {
        "tokens": tokens,
        "first_tokens": tokens,
        "template_id": template_id_for(template.bucket, shape.previous),
    }
    return state.model_copy(
        update={"templates": [template.model_copy(update=update)], "fingerprint_version": "rounds-fp:2"}
    )


@pytest.mark.parametrize(
    "batches",
    [
        [["user 'bob' not found", "user 'alice' not found"]],
        [["user 'alice' not found", "user 'bob' not found"]],
        [["user 'alice' not found"], ["user 'bob' not found", "user 'carol' not found"]],
    ],
)
def test_a_log_line_an_earlier_versions_quoted_template_finds_keeps_its_statement_together(
    batches: list[list[str]], clean_env, fresh_db: Store, tmp_path: Path
) -> None:
    """`rounds-fp:2` mined `user 'bob' not found` as it read it, the quoted name a word. This reading takes a
    quoted string for a value: the line's skeleton (`user <*> not found`) widens that very template, its
    signature's, in place (the name was a value), so the statement's other lines join it, in any order and
    round, and no other signature's template is touched. No registration is needed (nor made: a template
    this reading mines is registered when it is created, first come wins)."""
    settings = load_settings()
    made = ErrorEvent(
        event_id="m0",
        timestamp=NOW - timedelta(minutes=10),
        service="api",
        error_type="LookupError",
        message="user 'bob' not found",
    )
    source = ListSource([made])
    first = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    stored = fresh_db.signature(first.new[0].signature_id)
    assert stored is not None and stored.grouping_state is not None
    with fresh_db.transaction():
        earlier = _quoted_fp2(stored.grouping_state, made)
        fresh_db.save(stored.model_copy(update={"grouping_state": earlier}))
    for number, lines in enumerate(batches, start=1):
        at = NOW + number * EVERY
        source.events += [
            made.model_copy(
                update={"event_id": f"m{number}{i}", "message": line, "timestamp": at - timedelta(minutes=10)}
            )
            for i, line in enumerate(lines)
        ]
        report = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=at)
        assert not report.new and [line.signature_id for line in report.updated] == [stored.id]
    assert len(list(tmp_path.glob("*.md"))) == 1
