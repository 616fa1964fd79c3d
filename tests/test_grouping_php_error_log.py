"""PHP's own error log writes an uncaught exception behind the time it was logged
(`[01-Mar-2026 12:00:01 UTC] PHP Fatal error:  Uncaught ...`): the exception is read after it, with its
frames, so errors thrown in different controllers are different problems (the message's template, which
masked the file, made them one); a signature an earlier release made from such a body as a message keeps
receiving it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.logged_traces import LOG_BODY, TRACE_FROM, logged_exception
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.stacktrace.model import NEWLY_READ
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _uncaught(controller: str, line: int, logged_at: str = "01-Mar-2026 12:00:01 UTC") -> str:
    """An uncaught Error as the error log writes it: the time, `PHP Fatal error:  ` and `(string) $e`."""
    where = f"/var/www/html/src/Controller/{controller}.php"
    return (
        f"[{logged_at}] PHP Fatal error:  Uncaught Error: Call to a member function getId() on null in"
        f" {where}:{line}\nStack trace:\n"
        "#0 /var/www/html/vendor/symfony/http-kernel/HttpKernel.php(181):"
        f" App\\Controller\\{controller}->show(Object(Symfony\\Component\\HttpFoundation\\Request))\n"
        "#1 /var/www/html/public/index.php(25):"
        " Symfony\\Component\\HttpKernel\\HttpKernel->handle("
        "Object(Symfony\\Component\\HttpFoundation\\Request))\n"
        f"#2 {{main}}\n  thrown in {where} on line {line}"
    )


@pytest.mark.parametrize("logged_at", ["01-Mar-2026 12:00:01 UTC", "28-Nov-2026 09:15:42 Europe/Berlin"])
def test_the_exception_behind_the_error_logs_time_is_read_as_without_it(logged_at: str) -> None:
    logged = _uncaught("CartController", 55, logged_at)
    trace, bare = parse_stacktrace(logged), parse_stacktrace(logged.split("] ", 1)[1])
    assert trace is not None and bare is not None
    assert trace.exceptions == bare.exceptions
    assert [(e.type, e.value) for e in trace.exceptions] == [
        ("Error", "Call to a member function getId() on null")
    ]
    assert trace.exceptions[0].frames[0].function == "show"
    assert NEWLY_READ in trace.notes and NEWLY_READ not in bare.notes  # no earlier release read it


def test_a_bracketed_line_that_is_not_the_error_logs_time_is_read_as_before() -> None:
    text = _uncaught("CartController", 55).replace("[01-Mar-2026 12:00:01 UTC]", "[worker 3]")
    assert parse_stacktrace(text) is None


def _read(n: int, body: str) -> ErrorEvent:
    logged = logged_exception(body, {})
    assert logged is not None and logged.source == LOG_BODY
    return ErrorEvent(
        event_id=f"r{n}",
        timestamp=T0,
        service="shop",
        kind="log",
        severity="ERROR",
        error_type=logged.error_type,
        message=logged.message,
        stacktrace=logged.stacktrace,
        attributes={TRACE_FROM: LOG_BODY},
    )


def test_errors_of_different_controllers_are_different_problems() -> None:
    bodies = [
        _uncaught("CartController", 55),
        _uncaught("CartController", 55, "02-Mar-2026 08:30:00 UTC"),
        _uncaught("OrderController", 12),
        _uncaught("InvoiceController", 98),
    ]
    found = GroupingEngine().assign_all([_read(n, body) for n, body in enumerate(bodies)])
    assert found[0].signature_id == found[1].signature_id
    assert len({a.signature_id for a in found}) == 3


def test_a_signature_an_earlier_release_made_from_such_a_body_keeps_receiving_it() -> None:
    """An earlier release read no exception behind the time: the body was the log record's message."""
    bodies = [_uncaught("CartController", 55), _uncaught("CartController", 55, "02-Mar-2026 08:30:00 UTC")]
    unread = ErrorEvent(
        event_id="m", timestamp=T0, service="shop", kind="log", message=bodies[0], severity="ERROR"
    )
    before = GroupingEngine()
    made = before.assign(unread)
    found = GroupingEngine(known=[before.state(made.signature_id)]).assign_all(
        [_read(n, body) for n, body in enumerate(bodies)]
    )
    assert {a.signature_id for a in found} == {made.signature_id}
