"""Node's stack as `--abort-on-uncaught-exception` prints it (`FROM`, then frames without `at `, V8's
isolate.cc) and as `node --report` writes it (`javascriptStack`, doc/api/report.md): read as V8's stack, one
crash site is one signature, two behind one message are two, and a signature an earlier release made from the
message (it read no frame) keeps receiving them."""

from __future__ import annotations

import json

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import Frame, node_report, parse_stacktrace
from rounds_bot.models import ErrorEvent

MESSAGE = "Cannot read properties of undefined (reading 'id')"


def _aborted(site: str, line: int, depth: int = 1) -> str:
    frames = [f"{site} (/app/src/orders.js:{line}:17)"]
    frames += [f"step (/app/src/pipeline.js:{10 + i}:5)" for i in range(depth)]
    frames.append("Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)")
    return f"Uncaught TypeError: {MESSAGE}\n\nFROM\n" + "\n".join(frames) + "\n"


def _report(site: str, line: int, pid: int) -> str:
    stack = [f"at {site} (/app/src/orders.js:{line}:17)", "at handle (/app/src/server.js:12:3)"]
    report = {
        "header": {
            "reportVersion": 3,
            "event": "Exception",
            "processId": pid,
            "filename": f"report.{pid}.json",
        },
        "javascriptStack": {"message": f"TypeError: {MESSAGE}", "stack": stack, "errorProperties": {}},
        "nativeStack": [{"pc": f"0x{pid:016x}", "symbol": "node::TriggerNodeReport(...) [node]"}],
    }
    return json.dumps(report, indent=2)


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return crash_event(n, stacktrace, error_type="TypeError", message=MESSAGE)


@pytest.mark.parametrize("text", [_aborted("getId", 42), _report("getId", 42, 1234)])
def test_the_stack_is_read_as_v8s_with_the_errors_type_and_message(text: str) -> None:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "node"
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("TypeError", MESSAGE)
    assert error.frames[0] == Frame("getId", filename="/app/src/orders.js", lineno=42)


@pytest.mark.parametrize(
    "texts",
    [
        (_aborted("getId", 42), _aborted("getId", 42, depth=3), _aborted("getTotal", 80)),
        (_report("getId", 42, 1234), _report("getId", 42, 5678), _report("getTotal", 80, 1234)),
    ],
)
def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two(texts: tuple[str, ...]) -> None:
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]


def test_a_text_with_a_from_line_and_no_frames_after_it_is_not_read_so() -> None:
    assert node_report.as_v8_stack("x\nFROM\nnot a frame", ["x", "FROM", "not a frame"]) is None


@pytest.mark.parametrize("layout", ["aborted", "report"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No release before read these layouts: their events went to their message's template, and that
    signature keeps receiving them (it is not split into trace signatures, which would file duplicates)."""
    make = (lambda s, n, d: _aborted(s, n, d)) if layout == "aborted" else (lambda s, n, d: _report(s, n, d))
    # a release that read neither
    texts = [make("getId", 42, 1), make("getId", 42, 3), make("getTotal", 80, 1)]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, node_report, "as_v8_stack", lambda text, lines: None, texts, _event
    )
    for placed in found.values():
        assert set(placed) == {(made, "fingerprint")}


@pytest.mark.parametrize(
    "text",
    [
        '{"javascriptStack": ' + "[" * 50_000 + "]" * 50_000 + "}",
        '{"javascriptStack": {"stack": ["at f (/a.js:1:1)"]}, "x": ' + "[" * 50_000 + "]" * 50_000 + "}",
    ],
)
def test_a_report_nested_too_deep_to_decode_fails_no_batch(text: str) -> None:
    """A JSON text nested deeper than the decoder recurses is no report this reader reads; the batch it came
    in is still grouped."""
    assert node_report.as_v8_stack(text, text.splitlines()) is None
    placed = GroupingEngine().assign_all([_event(1, text), _event(2, _aborted("getId", 42))])
    assert [a.tier for a in placed] == ["new", "fingerprint"]  # the report by its message, the stack joins it


def test_a_report_longer_than_a_trace_is_read_is_not_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace is read up to `MAX_TRACE_CHARS`: a report past it is not decoded at all."""
    monkeypatch.setattr(node_report, "MAX_TRACE_CHARS", 1_000)
    text = _report("getId", 42, 1234)
    assert node_report.as_v8_stack(text, text.splitlines()) is not None
    padded = text[:-1] + ', "pad": "' + "x" * 1_000 + '"}'
    assert node_report.as_v8_stack(padded, padded.splitlines()) is None


def test_a_v8_stack_whose_message_ends_in_a_from_line_reads_as_before() -> None:
    """A V8 stack whose message's last line is `FROM` (an SQL error's) is no `--abort-on-uncaught-exception`
    output: its frames already say `at `, and it is read as releases before read it."""
    text = (
        'QueryFailedError: syntax error at or near "FROM"\nFROM\n'
        "    at PostgresQueryRunner.query"
        " (/app/node_modules/typeorm/driver/postgres/PostgresQueryRunner.js:299:19)\n"
        "    at async OrderService.load (/app/src/orders.service.js:42:5)\n"
    )
    assert node_report.as_v8_stack(text, text.splitlines()) is None
    trace = parse_stacktrace(text)
    assert trace is not None and node_report.NEWLY_READ not in trace.notes
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("QueryFailedError", 'syntax error at or near "FROM" FROM')
    assert error.frames[0].function == "PostgresQueryRunner.query"


def test_log_lines_before_the_uncaught_exception_are_not_its_type_or_message() -> None:
    text = "info: Server listening on 3000\nwarn: slow: 200ms\n" + _aborted("getId", 42)
    trace = parse_stacktrace(text)
    assert trace is not None
    assert (trace.exceptions[0].type, trace.exceptions[0].value) == ("TypeError", MESSAGE)
    ids = signatures_of([text, _aborted("getId", 42)], _event)
    assert ids[0] == ids[1]


def test_a_from_line_after_no_uncaught_exception_is_not_that_layout() -> None:
    """V8 prints `Uncaught ` before the message it aborts on (`MessageTemplate::kUncaughtException`)."""
    text = "report\n\nFROM\ngetId (/app/src/orders.js:42:17)\n"
    assert node_report.as_v8_stack(text, text.splitlines()) is None
