"""A signature the release before this reading made of a Go panic keeps receiving it: that release named a
frame with its call's lone argument (`main.mustLoad(0x2a)`) and made one signature of every panic of a site,
whatever its kind (`go.as_read_before` reads the trace so to find it). On a fresh database kinds are apart,
and an event's key does not depend on the events read before it."""

from __future__ import annotations

import pytest
from go_panic_texts import (
    FIXTURE,
    FLOAT_TO_INT,
    INDEX,
    KINDS,
    LOADER_MESSAGE,
    MY_ERR,
    NIL_MAP,
    ORDER,
    SLICE_ORDER,
    assigned,
    checkout,
    event,
    ids,
    known,
    loader,
    served,
)
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.trace_memo import TraceMemo, grouped_trace

# --- signatures made before ------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_made_with_the_argument_in_the_name_keeps_receiving_its_panics(how: str) -> None:
    engine = known("loader", how=how)
    made = FIXTURE["loader"]["signature_id"]
    found = engine.assign(event(1, LOADER_MESSAGE, loader("0x2a")))
    assert (found.signature_id, found.tier) == (made, "fingerprint")
    # and an occurrence with another argument finds it by this version's hashes
    later = engine.assign(event(2, LOADER_MESSAGE, loader("0x7")))
    assert (later.signature_id, later.tier) == (made, "fingerprint")


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_that_merged_every_panic_of_its_function_keeps_receiving_every_kind(how: str) -> None:
    """The release before made one signature of every panic of `Checkout` (`FIXTURE`, from an index out of
    range): no kind, nor the program's own value, starts a duplicate of it."""
    made = FIXTURE["checkout"]["signature_id"]
    found = assigned(*KINDS, engine=known("checkout", how=how))
    assert [(a.signature_id, a.tier) for a in found] == [(made, "fingerprint")] * len(KINDS)
    one_by_one = known("checkout", how=how)
    for message in reversed(KINDS):
        assert assigned(message, engine=one_by_one)[0].signature_id == made


def test_a_kind_found_by_the_signature_made_before_is_then_found_by_its_own_hashes() -> None:
    engine = known("checkout")
    made = FIXTURE["checkout"]["signature_id"]
    assert assigned(NIL_MAP, engine=engine)[0].signature_id == made
    assert not set(FIXTURE["checkout"]["hashes"]) & {assigned(NIL_MAP)[0].fingerprint_hash}
    assert assigned(NIL_MAP, engine=engine)[0].signature_id == made
    assert assigned(NIL_MAP)[0].fingerprint_hash in engine.state(made).hashes


def test_a_signature_made_before_of_a_panic_net_http_logged_keeps_receiving_it() -> None:
    made = FIXTURE["served"]["signature_id"]
    texts = [served(NIL_MAP, "10.0.0.9:1000"), served(INDEX), served(ORDER)]
    found = known("served").assign_all([event(n, "", text) for n, text in enumerate(texts)])
    assert ids(found) == [made] * 3


def test_a_signature_of_a_programs_own_panic_made_before_keeps_receiving_it() -> None:
    engine = engine_knowing(
        "sig_before",
        service="shop",
        title="panic: order <int> not found",
        hashes=FIXTURE["checkout"]["hashes"],
        how="given",
    )
    found = engine.assign(event(1, ORDER, checkout(ORDER)))
    assert (found.signature_id, found.tier) == ("sig_before", "fingerprint")


# --- one reading whatever came before --------------------------------------------------------------------


def _every_text() -> list[tuple[str, str]]:
    texts = [(m, checkout(m)) for m in (*KINDS, SLICE_ORDER, FLOAT_TO_INT, MY_ERR)]
    texts += [
        (INDEX, checkout(INDEX, " [recovered]")),
        (INDEX, checkout(INDEX, " [recovered, repanicked]")),
    ]
    texts += [(LOADER_MESSAGE, loader(argument)) for argument in ("0x2a", "...", "0xc000012000")]
    return texts + [(m, served(m)) for m in (INDEX, ORDER)] + [("", served(NIL_MAP))]


@pytest.mark.parametrize("reverse", [False, True])
def test_an_event_gets_the_same_key_whatever_events_came_before(reverse: bool) -> None:
    texts = _every_text()[:: -1 if reverse else 1]
    alone = [GroupingEngine().assign(event(1, m, text)).fingerprint_hash for m, text in texts]
    shared = [
        a.fingerprint_hash
        for a in GroupingEngine().assign_all(event(n, m, t) for n, (m, t) in enumerate(texts))
    ]
    assert shared == alone
    repeated = GroupingEngine()
    for n, (message, text) in enumerate(texts):  # and each read again after every other
        repeated.assign(event(n, message, text))
    again = [repeated.assign(event(99, m, text)).fingerprint_hash for m, text in texts]
    assert again == alone


def test_a_trace_read_with_its_message_cut_out_reads_as_the_whole_text() -> None:
    """Each event's message is its panic line's value, so a dump is read with the message cut out and put
    back (`trace_cut`): whatever message came first, a kind is read as in the whole text. A message that ends
    as a recovered panic's line does is read whole (the line's pattern leaves the ending out of the value)."""
    endings = (" [recovered]", " [recovered, repanicked]")
    recovered = [(f"boom{end}", checkout("boom", end)) for end in endings]
    memo = TraceMemo()
    for message, text in [*_every_text(), *recovered, *_every_text()[::-1]]:
        whole = grouped_trace(text)
        found = memo.parsed(text, message)
        assert found is not None and whole is not None and found.trace == whole
        assert found.values == [normalize_uncached(e.value) for e in whole.exceptions]
    assert memo.from_cuts > 0  # the program's own values were read from the cut text


def test_a_runtime_errors_kind_is_read_when_the_message_is_cut_out_of_its_dump() -> None:
    for first in (ORDER, INDEX):
        messages = [
            first,
            NIL_MAP,
            INDEX,
            "runtime error: index out of range [9] with length 1",
            "order 7 not found",
        ]
        found = GroupingEngine().assign_all([event(n, m, checkout(m)) for n, m in enumerate(messages)])
        by_message = {m: a.signature_id for m, a in zip(messages, found, strict=True)}
        assert by_message[INDEX] == by_message["runtime error: index out of range [9] with length 1"]
        assert by_message["order 7 not found"] == by_message.get(ORDER, by_message["order 7 not found"])
        assert len({by_message[INDEX], by_message[NIL_MAP], by_message["order 7 not found"]}) == 3
