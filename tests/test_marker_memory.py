"""What an issue's marker remembers of its fixes and its ignore: compact, within limits, readable by and from
other versions, and kept in step with the event log between rounds (`github/marker_sync.py`)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import START, error_event, round_against, tracker_for
from fix_watch_samples import ignore, merge, open_pull
from signature_samples import a_signature

from rounds_bot import controls
from rounds_bot.controls import Mute
from rounds_bot.events import Fact
from rounds_bot.github.marker_sync import sync_markers
from rounds_bot.lifecycle import FixRecord, IncidentRecord
from rounds_bot.marker import (
    MAX_MARKED_FIXES,
    MAX_MARKED_LINKS,
    MarkedCascade,
    MarkedFix,
    MarkedMute,
    MarkerMemory,
    MarkerState,
    read_marker,
    replace_marker,
    write_marker,
)
from rounds_bot.marker_memory import (
    NOTHING_REMEMBERED,
    MarkerMemories,
    _remembered,
    marked_fix,
    marker_memory,
)
from rounds_bot.store import Booking, CascadeLinks, Store

# What rounds wrote before markers remembered fixes (a v1 marker with diagnosis and spending, no more).
OLD_MARKER = (
    '<!-- rounds:marker v1 {"closed":false,"diagnosis":null,"environments":[],"error_type":"KeyError",'
    '"fingerprint_hash":"abc","fingerprint_version":"rounds-fp:2","first_seen":"2026-03-02T09:00:00+00:00",'
    '"first_tier":"new","grouping_state":{},"last_seen":"2026-03-02T09:05:00+00:00","normalized_message":"m",'
    '"related":[],"service":"checkout","services":["checkout"],"signature_id":"sig_a","spend":[],"title":"t",'
    '"total_count":4,"versions":["1.4.2"]} -->'
)


def test_a_marker_without_fixes_or_an_ignore_is_written_as_before():
    state = read_marker(OLD_MARKER)
    assert state is not None and (state.fixes, state.mute, state.failed_fixes) == ([], None, 0)
    assert write_marker(state) == OLD_MARKER


def test_a_marker_from_a_later_rounds_still_names_its_signature():
    later = OLD_MARKER.replace('"closed":false', '"closed":false,"something_new":{"x":1}')
    state = read_marker(later)
    assert state is not None and state.signature_id == "sig_a"


def test_fixes_and_an_ignore_are_written_compactly_and_read_back():
    fix = MarkedFix(
        pr=7,
        branch="rounds/fix-sig_a-20260302",
        status="merged",
        proposed_at="2026-03-02T10:00:00Z",
        merged_at="2026-03-02T11:00:00Z",
        versions_before=["1.4.2"],
        rate_before=2.0,
    )
    mute = MarkedMute(
        by="bob", since="2026-03-02T12:00:00+00:00", until_occurrences=5, count_at=4, key="ignore:1"
    )
    state = MarkerState(signature_id="sig_a", fixes=[fix], mute=mute, failed_fixes=1)
    marker = write_marker(state)
    payload = json.loads(marker.removeprefix("<!-- rounds:marker v1 ").removesuffix(" -->"))
    assert payload["fixes"] == [
        {
            "pr": 7,
            "branch": "rounds/fix-sig_a-20260302",
            "status": "merged",
            "proposed_at": "2026-03-02T10:00:00Z",
            "merged_at": "2026-03-02T11:00:00Z",
            "versions_before": ["1.4.2"],
            "rate_before": 2.0,
        }
    ]
    assert payload["mute"] == {
        "by": "bob",
        "since": "2026-03-02T12:00:00+00:00",
        "until_occurrences": 5,
        "count_at": 4,
        "key": "ignore:1",
    }
    assert (payload["failed_fixes"], "offered_fixes" in payload) == (1, False)
    assert read_marker(f"body\n\n{marker}") == state


def test_a_marker_keeps_the_newest_fixes_and_bounded_details():
    store = Store.memory()
    with store.transaction():
        for pr in range(1, 9):
            store.append_event(
                Fact.FIX_PROPOSED, f"p{pr}", signature_id="sig_a", run_id="r", at=START + timedelta(hours=pr),
                payload={"pr": pr, "files": [f"f{n}.py" for n in range(30)], "branch": "b"},
            )  # fmt: skip
    [memory] = marker_memory(store, ["sig_a"]).values()
    assert [fix.pr for fix in memory.fixes] == [4, 5, 6, 7, 8][-MAX_MARKED_FIXES:]
    assert {len(fix.files) for fix in memory.fixes} == {20}
    many = FixRecord(signature_id="s", pr_number=1, proposed_at="t", updated_at="t",
                     versions_before=[f"1.{n}.0" for n in range(40)], regression="x" * 1000)  # fmt: skip
    assert marked_fix(many).versions_before == ["1.39.0"]  # ordered versions: the newest says it all
    hashes = many.model_copy(update={"versions_before": [f"{n:07x}" for n in range(40)]})
    assert len(marked_fix(hashes).versions_before) == 30
    assert len(marked_fix(many).regression or "") == 300


def test_replacing_a_marker_leaves_the_rest_of_the_body_alone():
    body = f"Text with a look-alike <!-- rounds:marker v1 {{}} -->\n\n{OLD_MARKER}\n"
    state = read_marker(body)
    assert state is not None
    updated = replace_marker(body, state.remembering(MarkerMemory(failed_fixes=2)))
    assert updated is not None
    assert updated.startswith("Text with a look-alike <!-- rounds:marker v1 {} -->\n\n") and updated.endswith(
        "-->\n"
    )
    assert read_marker(updated) == state.model_copy(update={"failed_fixes": 2})
    assert replace_marker("no marker here", state) is None


# --- in step with the log, between rounds ----------------------------------------------------------------
@pytest.fixture
def fake() -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake()


def test_the_markers_follow_the_fix_and_the_ignore_and_cost_nothing_while_nothing_changes(tmp_path, fake):
    path = tmp_path / "rounds.db"
    round_against(fake, tmp_path, [error_event(i, serial=s) for i in range(2) for s in range(3)], minutes=5)
    store = Store.open(path)
    ids = {s.issue_ref: s.id for s in store.signatures()}
    store.close()
    api = tracker_for(fake).api
    pr = open_pull(fake, path, ids["#1"], 1, START + timedelta(minutes=30))
    ignore(path, ids["#2"], START + timedelta(minutes=40), occurrences=5)

    def synced() -> list[str]:
        store = Store.open(path)
        try:
            return sync_markers(store, api)
        finally:
            store.close()

    before = api.requests_made
    assert synced() == []
    assert api.requests_made - before == 4  # read and rewrite each of the two issues
    first, second = read_marker(fake.repo.issues[1].body), read_marker(fake.repo.issues[2].body)
    assert first is not None and [(f.pr, f.status, f.branch) for f in first.fixes] == [
        (pr, "proposed", f"rounds/fix-{ids['#1']}-20260302")
    ]
    assert second is not None and second.mute is not None
    assert (second.mute.by, second.mute.until_occurrences, second.mute.key) == ("bob", 5, "ignore:4242")

    before = api.requests_made
    assert synced() == []
    assert api.requests_made == before  # nothing changed: not one request

    merge(fake, pr, 1, START + timedelta(hours=2))  # the merge is observed by the fix job, not here
    store = Store.open(path)
    with store.transaction():
        controls.record(store, Fact.INCIDENT_UNSUPPRESSED, "unignore:1", at=START + timedelta(hours=3),
                        signature_id=ids["#2"], source="command", by="bob")  # fmt: skip
    store.close()
    before = api.requests_made
    assert synced() == []
    assert api.requests_made - before == 2  # only the issue whose ignore ended
    second = read_marker(fake.repo.issues[2].body)
    assert second is not None and second.mute is None
    assert "mute" not in fake.repo.issues[2].body


# --- cascade links ---------------------------------------------------------------------------------------
def test_a_marker_with_cascade_links_writes_them_compactly_and_reads_them_back():
    cascade = MarkedCascade(caused_by={"sig_cause": 3})
    state = MarkerState(signature_id="sig_a", cascade=cascade)
    marker = write_marker(state)
    payload = json.loads(marker.removeprefix("<!-- rounds:marker v1 ").removesuffix(" -->"))
    assert payload["cascade"] == {"caused_by": {"sig_cause": 3}}  # the empty side is left out
    read = read_marker(f"body\n\n{marker}")
    assert read == state and read.memory.cascade == cascade
    both = state.model_copy(update={"cascade": MarkedCascade(caused_by={"a": 1}, causes={"b": 2, "c": 1})})
    assert read_marker(write_marker(both)) == both


def test_a_marker_without_cascade_links_reads_as_none_and_writes_no_key():
    state = read_marker(OLD_MARKER)
    assert state is not None and state.cascade is None and state.memory.cascade is None
    empty = state.model_copy(update={"cascade": MarkedCascade()})
    assert write_marker(empty) == OLD_MARKER


def test_the_marker_carries_the_cascade_links_the_store_keeps_and_the_strongest_when_many():
    store = Store.memory()
    with store.transaction():
        store.save(a_signature("sig_a"))
        many = {f"sig_{n:02d}": n for n in range(1, 31)}
        store.set_cascade_links({"sig_a": CascadeLinks(caused_by={"sig_cause": 2}, causes=many)})
    [kept] = marker_memory(store, ["sig_a"]).values()
    assert kept.cascade is not None and kept.cascade.caused_by == {"sig_cause": 2}
    assert kept.cascade.causes == {f"sig_{n:02d}": n for n in range(11, 31)}  # the MAX_MARKED_LINKS strongest
    assert len(kept.cascade.causes) == MAX_MARKED_LINKS
    # the round's own links (as it will keep them) win over the store's, and none means none
    this_round = {"sig_a": CascadeLinks(causes={"sig_b": 1})}
    [now] = marker_memory(store, ["sig_a"], links=this_round).values()
    assert now.cascade == MarkedCascade(causes={"sig_b": 1})
    [gone] = marker_memory(store, ["sig_a"], links={}).values()
    assert gone.cascade is None


@pytest.mark.parametrize(
    "memory",
    [
        MarkerMemory(),
        MarkerMemory(failed_fixes=2, offered_fixes=1),
        MarkerMemory(fixes=[MarkedFix(pr=7, branch="rounds/fix-a", proposed_at="2026-01-01T00:00:00Z")]),
    ],
)
def test_a_marker_remembering_a_lifecycle_writes_it_whether_or_not_it_carried_it_already(memory):
    """Remembering the lifecycle a marker already carries gives that marker as it is: written byte for byte
    as remembering it into a marker that carried none."""
    bare = MarkerState(signature_id="sig_a", service="api", total_count=3)
    once = bare.remembering(memory)
    again = once.remembering(memory)
    assert again == once
    assert write_marker(again) == write_marker(once)
    assert read_marker(write_marker(again)) == once


def test_a_marker_remembering_nothing_is_the_memory_built_from_its_empty_rows():
    """A signature with no diagnosis, fix, attempt, ignore, spending or cascade link is given the one shared
    empty memory without building it; every mix of those rows, empty or not, is the memory built from them."""
    sid = "sig_a"
    fix = FixRecord(signature_id=sid, pr_number=3, proposed_at="t", updated_at="t")
    incidents = [
        None,
        *(IncidentRecord(signature_id=sid, failed_fixes=f, offered_fixes=o) for f, o in FIX_ATTEMPTS),
    ]
    mute = Mute(signature_id=sid, by="someone", since="2026-03-02T09:00:00+00:00")
    booking = Booking(run_id="r", signature_id=sid, at="2026-03-02T09:00:00+00:00", usd=0.25, model="m")
    links = [None, CascadeLinks(), CascadeLinks(caused_by={"sig_b": 2}), CascadeLinks(causes={"sig_c": 1})]
    for fixes, incident, muted, bookings, linked in itertools.product(
        [[], [fix]], incidents, [None, mute], [[], [booking]], links
    ):
        memories = MarkerMemories(
            [sid],
            {},
            {sid: linked} if linked is not None else {},
            {sid: muted} if muted is not None else {},
            {sid: fixes},
            {sid: incident} if incident is not None else {},
            {sid: bookings},
        )
        built = _remembered(None, fixes, incident, muted, linked, bookings)
        assert memories[sid] == built
        assert write_marker(a_signature(sid).to_marker(memories[sid])) == write_marker(
            a_signature(sid).to_marker(built)
        )
    assert MarkerMemories([sid], {}, {}, {}, {sid: []}, {}, {sid: []})[sid] is NOTHING_REMEMBERED
    assert MarkerMemory() == NOTHING_REMEMBERED


#: fix attempts an incident may record: none, failed ones, ones left to a person, both
FIX_ATTEMPTS = [(0, 0), (1, 0), (0, 2), (1, 1)]
