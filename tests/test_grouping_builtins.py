"""A frame with neither file nor module (a runtime builtin such as Node's `at Array.map (<anonymous>)`)
is the runtime's, for grouping as for the issue's "where it happened": one rule for whose code a frame is.
Signatures made while grouping still took a builtin for the app's keep receiving their events."""

from __future__ import annotations

from datetime import UTC, datetime

from rounds_bot.grouping.crash_site import site_of, site_of_text
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.fingerprint import EventView, trace_fingerprint
from rounds_bot.grouping.inapp import EVERY_ADDED_RULE, InAppRules
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2024, 1, 1, tzinfo=UTC)
MESSAGE = "Unexpected token < in JSON at position 0"
TRACE = f"""SyntaxError: {MESSAGE}
    at JSON.parse (<anonymous>)
    at parseBody (/app/src/api/body.js:12:17)
    at Array.map (<anonymous>)
    at handler (/app/src/api/routes.js:40:5)
    at processTicksAndRejections (node:internal/process/task_queues:95:5)"""
#: the same app frames reached through other library frames
OTHER_LIBRARY = TRACE.replace(
    "processTicksAndRejections (node:internal/process/task_queues:95:5)",
    "Layer.handle (/app/node_modules/express/lib/router/layer.js:95:5)",
)
#: the same crash site reached from another caller
OTHER_CALLER = f"""SyntaxError: {MESSAGE}
    at JSON.parse (<anonymous>)
    at parseBody (/app/src/api/body.js:12:17)
    at upload (/app/src/api/upload.js:7:3)
    at processTicksAndRejections (node:internal/process/task_queues:95:5)"""
#: one bug's traces: through other library frames, and from another caller
VARIANTS = (TRACE, OTHER_LIBRARY, OTHER_CALLER)


def event(
    stacktrace: str, *, service: str = "api", error_type: str = "SyntaxError", message: str = MESSAGE
) -> ErrorEvent:
    return ErrorEvent(
        event_id="e",
        timestamp=T0,
        service=service,
        error_type=error_type,
        message=message,
        stacktrace=stacktrace,
    )


def test_a_frame_with_neither_file_nor_module_is_the_runtimes_builtin() -> None:
    trace = parse_stacktrace(TRACE)
    assert trace is not None
    roles = InAppRules().roles(trace)
    whose = {
        frame.function: role for frame, role in zip(trace.exceptions[0].frames, roles.frames[0], strict=True)
    }
    assert whose["JSON.parse"].role == whose["Array.map"].role == "library"
    assert "builtin" in whose["JSON.parse"].reason
    assert whose["parseBody"].in_app and whose["handler"].in_app


def test_the_crash_site_is_the_apps_frame_the_builtin_was_called_from() -> None:
    site = site_of_text(TRACE)
    assert site is not None and site.crash_site is not None
    assert site.crash_site.endswith(":parseBody")


def test_why_grouped_says_a_builtin_does_not_contribute() -> None:
    assignment = GroupingEngine().assign(event(TRACE))
    line = next(line for line in assignment.explanation.splitlines() if "JSON.parse" in line)
    assert "builtin" in line


def _earlier_state() -> SignatureState:
    """The state of a signature made from TRACE while builtins were taken for the app's code: the
    hashes it was registered under, worked out with that reading."""
    trace = parse_stacktrace(TRACE)
    assert trace is not None
    roles = InAppRules().roles(trace, without_rules=EVERY_ADDED_RULE)
    site = site_of(trace, roles)
    assert site.crash_site is not None and site.crash_site.endswith(":JSON.parse")
    view = EventView("api", "SyntaxError", MESSAGE)
    fingerprint = trace_fingerprint(view, trace, roles, [MESSAGE], site, with_previous_hashes=False)
    assert fingerprint is not None
    return SignatureState(
        signature_id="sig_earlier",
        service="api",
        seq=0,
        hashes=[fingerprint.hash, *fingerprint.other_hashes],
        crash_site=site.key,
    )


def assert_found_by_an_earlier_version(earlier: SignatureState, events: list[ErrorEvent]) -> None:
    """Each event joins `sig_earlier`, a signature an earlier version made, and the explanation says so."""
    engine = GroupingEngine(known=[earlier])
    for each in events:
        assignment = engine.assign(each)
        assert (assignment.signature_id, assignment.tier) == ("sig_earlier", "fingerprint")
        assert "an earlier version" in assignment.explanation.splitlines()[-1]


def assert_one_new_signature(events: list[ErrorEvent]) -> None:
    """Without a signature of an earlier version, the events are one new signature."""
    engine = GroupingEngine()
    ids = {engine.assign(each).signature_id for each in events}
    assert len(ids) == 1 and "sig_earlier" not in ids


def test_a_signature_made_when_builtins_were_the_apps_keeps_receiving_its_events() -> None:
    assert_found_by_an_earlier_version(_earlier_state(), [event(text) for text in VARIANTS])


def test_without_an_earlier_signature_the_variants_are_one_new_signature() -> None:
    assert_one_new_signature([event(text) for text in VARIANTS])
