"""The grouping state an issue's hidden marker carries: compact, and read back from old markers too."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from rounds_bot.github.rebuild import signature_from_issue
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.marker import MarkerState, read_marker, write_marker
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
TRACE = (Path(__file__).parent / "golden" / "grouping" / "traces" / "java_caused_by.txt").read_text()


def trace_event(event_id: str = "e") -> ErrorEvent:
    return ErrorEvent(event_id=event_id, timestamp=EPOCH, service="shop", stacktrace=TRACE)


def marker_body(grouping_state: dict[str, object], signature_id: str) -> str:
    state = MarkerState(signature_id=signature_id, service="shop", grouping_state=grouping_state)
    return "issue text\n\n" + write_marker(state)


def test_the_marker_carries_the_vector_packed() -> None:
    engine = GroupingEngine()
    first = engine.assign(trace_event())
    state = engine.state(first.signature_id)
    carried = read_marker(marker_body(state.model_dump(mode="json"), first.signature_id))
    assert carried is not None
    similarity = carried.grouping_state["similarity"]
    assert set(similarity) == {"packed", "with_frames"}
    vector = state.similarity
    assert vector is not None
    as_lists = len(json.dumps({"features": vector.features, "weights": vector.weights}))
    assert len(json.dumps(similarity)) * 2 < as_lists


def test_a_marker_written_before_the_packed_form_still_rebuilds_its_signature() -> None:
    engine = GroupingEngine()
    first = engine.assign(trace_event())
    state = engine.state(first.signature_id).model_dump(mode="json")
    vector = engine.state(first.signature_id).similarity
    assert vector is not None
    # what earlier versions wrote: the vector as two lists, no crash site
    state["similarity"] = {"features": vector.features, "weights": vector.weights, "with_frames": True}
    del state["crash_site"]
    marker = read_marker(marker_body(state, first.signature_id))
    assert marker is not None
    issue = {"number": 7, "body": "", "title": "t", "updated_at": "2024-01-02T00:00:00+00:00"}
    rebuilt = signature_from_issue(issue, marker).grouping_state
    assert rebuilt is not None and rebuilt.similarity == vector
    again = GroupingEngine(known=[rebuilt]).assign(trace_event("f"))
    assert (again.tier, again.signature_id) == ("fingerprint", first.signature_id)
