"""Node.js's fatal errors (V8 aborting: the heap out of memory, a failed check), as printed to stderr: read
to their kind and the runtime's native frames, none of them the app's. Every heap-out-of-memory crash of a
service is one problem whichever allocation failed, another kind of fatal error another; and a signature an
earlier release made from such a text's message (it could not read it) keeps receiving its events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.logged_traces import LOG_BODY, TRACE_FROM, LoggedException, logged_exception
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace, runtime_of_line
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
OOM_KIND = "Reached heap limit Allocation failed - JavaScript heap out of memory"
NODE = "/usr/local/bin/node"


def _oom(pid: int, allocation: str, base: int = 0xB8D11B, kind: str = OOM_KIND) -> str:
    """Node 20's report of a heap out of memory; `allocation`: the V8 function whose allocation failed."""
    return f"""<--- Last few GCs --->

[{pid}:0x150030000]    51034 ms: Mark-Compact 3960.4 (3994.1) -> 3960.4 (3994.1) MB, pooled: 14 MB

<--- JS stacktrace --->

FATAL ERROR: {kind}
----- Native stack trace -----

 1: 0x{base:x} node::OOMErrorHandler(char const*, v8::OOMDetails const&) [{NODE}]
 2: 0x{base + 0x374A55:x} v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, ...) [{NODE}]
 3: 0x{base + 0x374D3C:x} v8::internal::V8::FatalProcessOutOfMemory(v8::internal::Isolate*, ...) [{NODE}]
 4: 0x{base + 0x58698A:x}  [{NODE}]
 5: 0x{base + 0x59E80D:x} v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, ...) [{NODE}]
 6: 0x{base + 0x574926:x} {allocation} [{NODE}]
 7: 0x{base + 0x9AEF6B:x}  [{NODE}]
 8: 0x7f2a5b6c8b1d  [/lib/x86_64-linux-gnu/libc.so.6]"""


#: the frames every heap-out-of-memory report of that build is read to: the fatal-error handling, its caller
OOM_FRAMES = (
    Frame("node::OOMErrorHandler", in_app=False),
    Frame("v8::Utils::ReportOOMFailure", in_app=False),
    Frame("v8::internal::V8::FatalProcessOutOfMemory", in_app=False),
    Frame(None, in_app=False),
)

INEFFECTIVE = "Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory"
WINDOWS = f"""FATAL ERROR: {INEFFECTIVE}
 1: 00007FF61B9B79CF v8::internal::CodeObjectRegistry::~CodeObjectRegistry+114207
 2: 00007FF61B946096 DSA_meth_get_flags+65542
 3: 00007FF61B946F4D node::OnFatalError+301
 4: 00007FF61C27B1EE v8::Isolate::ReportExternalAllocationLimitReached+94
 5: 00007FF61C2657CD v8::SharedArrayBuffer::Externalize+781
 6: 00007FF5F696D8D0"""

#: Node 12 prints the JavaScript stack above the native one: where the heap happened to fill up
NODE_12 = """<--- JS stacktrace --->

==== JS stack trace =========================================

    0: ExitFrame [pc: 0x13cf099]
Security context: 0x1d4b1fc408a1 <JSObject>
    1: toString [0x2b1c0b1c1011] [buffer.js:~639] [pc=0x2b1c0b1c2222](this=0x1d4b1fc40001,0x1d4b1fc40002)
    2: /* anonymous */ [0x2b1c0b1c3333] [/app/src/report.js:~10] [pc=0x2b1c0b1c4444](this=0x1d4b1fc40003)

FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory
 1: 0xa09830 node::Abort() [node]
 2: 0xa09c55 node::OnFatalError(char const*, char const*) [node]
 3: 0xb7d71e v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, bool) [node]
 4: 0xb7da99 v8::internal::V8::FatalProcessOutOfMemory(v8::internal::Isolate*, char const*, bool) [node]
 5: 0xd2a1f5  [node]"""

V8_CHECK = """#
# Fatal error in , line 0
# Check failed: result.second.
#
#
#
#FailureMessage Object: 0x7ffd0c7f0a40
----- Native stack trace -----

 1: 0x55d5b5a3f0d1  [node]
 2: 0x55d5b6a9a1e1 V8_Fatal(char const*, ...) [node]
 3: 0x55d5b6087c4a v8::internal::GlobalBackingStoreRegistry::Register(std::shared_ptr<BackingStore>) [node]
 4: 0x55d5b5d8ba2f v8::ArrayBuffer::GetBackingStore() [node]"""

ASSERTION = """node[3434]: ../src/node_file.cc:1612:void node::fs::Open(const FunctionCallbackInfo<Value>&): \
Assertion `(argc) >= (3)' failed.
 1: 0x8fa090 node::Abort() [node]
 2: 0x8fa165 node::Assert(node::AssertionInfo const&) [node]
 3: 0x9ad5b1 node::fs::Open(v8::FunctionCallbackInfo<v8::Value> const&) [node]
 4: 0xb6a2c9  [node]"""


def test_a_heap_out_of_memory_is_read_to_its_kind_and_the_runtimes_fatal_error_handling() -> None:
    trace = parse_stacktrace(_oom(2289, "v8::internal::Factory::NewFillerObject(int)"))
    assert trace is not None and trace.runtime == "node"
    (exception,) = trace.exceptions
    assert (exception.type, exception.value) == (OOM_KIND, OOM_KIND)
    assert exception.frames == OOM_FRAMES  # the frames below say which allocation happened to fail


@pytest.mark.parametrize(
    ("text", "kind", "frames"),
    [
        (
            WINDOWS,
            INEFFECTIVE,
            [
                "v8::internal::CodeObjectRegistry::~CodeObjectRegistry",
                "DSA_meth_get_flags",
                "node::OnFatalError",
                "v8::Isolate::ReportExternalAllocationLimitReached",
            ],
        ),
        (
            NODE_12,
            INEFFECTIVE,
            [
                "node::Abort",
                "node::OnFatalError",
                "v8::Utils::ReportOOMFailure",
                "v8::internal::V8::FatalProcessOutOfMemory",
                None,
            ],
        ),
        (
            V8_CHECK,
            "Check failed: result second",  # read whole: not `second`
            [None, "V8_Fatal", "v8::internal::GlobalBackingStoreRegistry::Register"],
        ),
        (
            ASSERTION,
            "Assertion `(argc) >= (<num>)' failed",
            ["node::Abort", "node::Assert", "node::fs::Open"],
        ),
    ],
    ids=["windows", "node-12-js-stack", "v8-check", "node-assertion"],
)
def test_every_layout_of_a_fatal_error_names_its_kind_and_the_frames_that_report_it(
    text: str, kind: str, frames: list[str | None]
) -> None:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "node"
    (exception,) = trace.exceptions
    assert exception.type == kind
    assert [frame.function for frame in exception.frames] == frames


def test_a_kinds_numbers_are_masked_and_its_full_stop_left_out() -> None:
    kind = "Failed to reserve 268435456 bytes. Allocation failed - process out of memory"
    trace = parse_stacktrace(_oom(7, "f", kind=kind))
    assert trace is not None
    assert (
        trace.exceptions[0].type == "Failed to reserve <num> bytes Allocation failed - process out of memory"
    )


def test_no_frame_of_a_fatal_error_is_the_apps() -> None:
    trace = parse_stacktrace(_oom(2289, "v8::internal::Factory::NewFillerObject(int)"))
    assert trace is not None
    roles = InAppRules().roles(trace)
    assert {(role.role, role.reason) for role in roles.frames[0]} == {("library", "marked by the runtime")}


@pytest.mark.parametrize(
    "text",
    [
        " 1: 0x8fa090 node::Abort() [node]\n 2: 0x8fa165 node::Assert() [node]",  # no header: no fatal error
        "Steps:\n1: open the cart [web]\n2: pay",
        "FATAL ERROR: out of memory",  # a header and no frame
    ],
)
def test_numbered_lines_without_a_fatal_errors_header_and_frames_are_not_read(text: str) -> None:
    assert parse_stacktrace(text) is None


@pytest.mark.parametrize(
    "line",
    [
        "   1:     0x55d4c1a2b3c4 - std::backtrace_rs::backtrace::trace",  # Rust's full backtrace
        "  12: 0x55f0a1 - app::main::h1c2d",
        "    0: ExitFrame [pc: 0x13cf099]",  # Node 12's JavaScript stack
        "1: open the cart",
    ],
)
def test_a_line_of_another_layout_is_not_read_as_a_fatal_errors_frame(line: str) -> None:
    assert runtime_of_line(line) is None


def test_a_javascript_error_is_read_as_before() -> None:
    trace = parse_stacktrace("TypeError: x is undefined\n    at handler (/app/src/orders.js:10:15)")
    assert trace is not None and trace.notes == ()
    assert trace.exceptions[0].frames == (Frame("handler", filename="/app/src/orders.js", lineno=10),)


def _event(n: int, stacktrace: str | None, service: str = "shop") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service=service,
        error_type=None,
        message=f"FATAL ERROR: {OOM_KIND}",
        stacktrace=stacktrace,
    )


def test_every_heap_out_of_memory_of_a_service_is_one_problem_and_another_fatal_error_another() -> None:
    placed = GroupingEngine().assign_all(
        [
            _event(1, _oom(2289, "v8::internal::Factory::NewFillerObject(int)")),
            _event(2, _oom(7, "v8::internal::JsonParser<unsigned short>::ParseJsonValue()", base=0xC12F00)),
            _event(3, V8_CHECK),
            _event(4, _oom(8, "v8::internal::Factory::NewFillerObject(int)"), service="billing"),
        ]
    )
    assert placed[0].signature_id == placed[1].signature_id
    assert len({placed[0].signature_id, placed[2].signature_id, placed[3].signature_id}) == 3


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_fatal_errors(how: str) -> None:
    """No release before read these texts: their events went to their message's template, and that signature
    keeps receiving them (it is not split into trace signatures, which would file duplicates)."""
    before = GroupingEngine()
    made = before.assign(_event(0, None))  # (what an unread fatal error gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all(
        [
            _event(1, _oom(2289, "v8::internal::Factory::NewFillerObject(int)")),
            _event(2, _oom(7, "v8::internal::Factory::NewFillerObject(int)", base=0xC12F00)),
        ]
    )
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)


def test_a_fatal_error_printed_to_stderr_and_shipped_as_a_log_body_is_read_as_that_error() -> None:
    body = _oom(2289, "v8::internal::Factory::NewFillerObject(int)")
    assert logged_exception(body, {}) == LoggedException(OOM_KIND, OOM_KIND, body, LOG_BODY)


def test_a_signature_an_earlier_release_made_from_such_a_log_body_keeps_receiving_it() -> None:
    """An earlier release read neither the body's trace nor this layout: the body was the event's message."""
    bodies = [_oom(2289, "v8::internal::Factory::NewFillerObject(int)"), _oom(7, "f()", base=0xC12F00)]
    before = GroupingEngine()
    made = before.assign(
        ErrorEvent(
            event_id="m", timestamp=T0, service="shop", kind="log", message=bodies[0], severity="ERROR"
        )
    )
    engine = GroupingEngine(known=[before.state(made.signature_id)])
    found = engine.assign_all(
        [
            ErrorEvent(
                event_id=f"r{n}",
                timestamp=T0,
                service="shop",
                kind="log",
                error_type=OOM_KIND,
                message=OOM_KIND,
                stacktrace=body,
                severity="ERROR",
                attributes={TRACE_FROM: LOG_BODY},
            )
            for n, body in enumerate(bodies)
        ]
    )
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
