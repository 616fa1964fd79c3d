""".NET exceptions that print an error code between their type and message (`ExternalException`'s
`HResult`: SqlClient's `SqlException (0x80131904)`, Npgsql's `PostgresException (0x80004005)`;
`Win32Exception`'s native error code: `SocketException (111)`, `Win32Exception (2)`): the header is read with
its type and message, as an inner exception after ` ---> ` with its own frames, and the outer exception keeps
the app's frames after `--- End of inner exception stack trace ---`. Two bugs under one library exception
stay two. A signature the previous release made from such a text, which it read with the header glued onto
the outer exception's message and the inner frames as the outer's, keeps receiving its events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates, engine_knowing

from rounds_bot.grouping.crash_site import site_of_text
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import ParsedException, ParsedTrace, as_read_before, parse_stacktrace
from rounds_bot.grouping.stacktrace.dotnet import UNHANDLED
from rounds_bot.grouping.stacktrace.model import NEWLY_READ
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)

SAVE_FAILED = "An error occurred while saving the entity changes. See the inner exception for details."
DUPLICATE = (
    "Cannot insert duplicate key row in object 'dbo.Orders' with unique index 'IX_Orders_Number'. "
    "The duplicate key value is (42)."
)
ORDERS = """   at Acme.Shop.Orders.OrderService.CreateAsync(OrderDto dto) in /src/Acme.Shop/Orders/OrderService.cs:line 77
   at Acme.Shop.Api.OrdersController.Create(OrderDto dto) in /src/Acme.Shop/Api/OrdersController.cs:line 31
"""  # noqa: E501
SIGNUP = """   at Acme.Shop.Customers.CustomerService.RegisterAsync(SignupDto dto) in /src/Acme.Shop/Customers/CustomerService.cs:line 40
   at Acme.Shop.Api.SignupController.Post(SignupDto dto) in /src/Acme.Shop/Api/SignupController.cs:line 22
"""  # noqa: E501


def _saving(app_frames: str, code: str = " (0x80131904)") -> str:
    """EF Core's `DbUpdateException` over SqlClient's `SqlException`, as `Exception.ToString()` prints them
    (dotnet/efcore#33296): the inner exception's frames, its `ClientConnectionId` and error number lines, then
    the outer's frames, the app's among them."""
    return f"""Microsoft.EntityFrameworkCore.DbUpdateException: {SAVE_FAILED}
 ---> Microsoft.Data.SqlClient.SqlException{code}: {DUPLICATE}
   at Microsoft.Data.SqlClient.SqlConnection.OnError(SqlException exception, Boolean breakConnection, Action`1 wrapCloseInAction)
   at Microsoft.Data.SqlClient.SqlCommand.<>c.<ExecuteDbDataReaderAsync>b__211_0(Task`1 result)
--- End of stack trace from previous location ---
   at Microsoft.EntityFrameworkCore.Storage.RelationalCommand.ExecuteReaderAsync(RelationalCommandParameterObject parameterObject, CancellationToken cancellationToken)
ClientConnectionId:3a9c1f7e-0042-4b7a-9a3e-1c2d3e4f5a6b
Error Number:2601,State:1,Class:14
   --- End of inner exception stack trace ---
   at Microsoft.EntityFrameworkCore.Update.ReaderModificationCommandBatch.ExecuteAsync(IRelationalConnection connection, CancellationToken cancellationToken)
   at Microsoft.EntityFrameworkCore.DbContext.SaveChangesAsync(Boolean acceptAllChangesOnSuccess, CancellationToken cancellationToken)
{app_frames}   at Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor.TaskOfIActionResultExecutor.Execute(ActionContext actionContext, IActionResultTypeMapper mapper, ObjectMethodExecutor executor, Object controller, Object[] arguments)"""  # noqa: E501


SAVING = _saving(ORDERS)
REFUSED = """System.Net.Http.HttpRequestException: Connection refused (inventory:8080)
 ---> System.Net.Sockets.SocketException (111): Connection refused
   at System.Net.Sockets.Socket.AwaitableSocketAsyncEventArgs.ThrowException(SocketError error, CancellationToken cancellationToken)
   at System.Net.Http.HttpConnectionPool.ConnectToTcpHostAsync(String host, Int32 port, HttpRequestMessage initialRequest, Boolean async, CancellationToken cancellationToken)
   --- End of inner exception stack trace ---
   at System.Net.Http.HttpConnectionPool.ConnectToTcpHostAsync(String host, Int32 port, HttpRequestMessage initialRequest, Boolean async, CancellationToken cancellationToken)
   at Acme.Shop.Stock.StockClient.ReserveAsync(Int32 sku) in /src/Acme.Shop/Stock/StockClient.cs:line 21"""  # noqa: E501
#: the code first: nothing before it read as an exception
PROCESS = """System.ComponentModel.Win32Exception (2): An error occurred trying to start process 'convert' with working directory '/app'. No such file or directory
   at System.Diagnostics.Process.ForkAndExecProcess(ProcessStartInfo startInfo, String resolvedFilename, String[] argv, String[] envp, String cwd, Boolean setCredentials, UInt32 userId, UInt32 groupId, UInt32[] groups, Int32& childPid, Int32& stdinFd, Int32& stdoutFd, Int32& stderrFd, Boolean usesTerminal, Boolean throwOnNoExec)
   at System.Diagnostics.Process.StartCore(ProcessStartInfo startInfo)
   at Acme.Shop.Images.Thumbnailer.Convert(String path) in /src/Acme.Shop/Images/Thumbnailer.cs:line 18"""  # noqa: E501

#: the hashes the previous release stored for a signature it made from each text (its `GroupingEngine`
#: assigned an event of service `shop` with that stack trace, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = {
    SAVING: ("bba90236d717a8b60dc364093316ebb7b62cd9c9c58d5f70ff32e62a5cec2e7d",),
    PROCESS: (
        "692f43ecc492ca1166bb451984b52879dc5f09e39c3d1a3278f925a677fa997c",
        "5b9a5c74c8fde3514d026a108c7465becf9da3de5eba20853979976fa2e4fb7f",
        "a7c1a1e019ef2806fc0f1265ec2c2eca4c22233eaebeaa7c4f517d554871ce7b",
    ),
}


def _read(trace: ParsedTrace | None) -> list[tuple[str, str, str, list[str | None]]]:
    assert trace is not None
    return [(e.type, e.value, e.relation, [f.function for f in e.frames]) for e in trace.exceptions]


def test_an_inner_exception_with_its_hresult_is_read_as_inner_and_the_apps_frames_stay_the_outers() -> None:
    assert _read(parse_stacktrace(SAVING)) == [
        (
            "Microsoft.EntityFrameworkCore.DbUpdateException",
            SAVE_FAILED,
            "raised",
            ["ExecuteAsync", "SaveChangesAsync", "CreateAsync", "Create", "Execute"],
        ),
        (
            "Microsoft.Data.SqlClient.SqlException",
            DUPLICATE,
            "inner",
            ["OnError", "<ExecuteDbDataReaderAsync>b", "ExecuteReaderAsync"],
        ),
    ]
    assert site_of_text(SAVING).crash_site == "Acme.Shop.Orders.OrderService:CreateAsync"


def test_the_same_trace_without_the_code_reads_the_same() -> None:
    with_code, without = parse_stacktrace(SAVING), parse_stacktrace(_saving(ORDERS, code=""))
    assert with_code is not None and without is not None
    assert with_code.exceptions == without.exceptions


@pytest.mark.parametrize(
    ("header", "read"),
    [
        (  # Npgsql's, whose message starts with the SQLSTATE
            'Npgsql.PostgresException (0x80004005): 23505: duplicate key value violates unique constraint "pk"',  # noqa: E501
            ("Npgsql.PostgresException", '23505: duplicate key value violates unique constraint "pk"'),
        ),
        (  # a native error code with an HResult of its own
            "System.Net.Sockets.SocketException (00000005, 0xFFFDFFFF): Name or service not known",
            ("System.Net.Sockets.SocketException", "Name or service not known"),
        ),
        (  # .NET Framework's, an `ExternalException`'s HResult
            "System.ComponentModel.Win32Exception (0x80004005): Access is denied",
            ("System.ComponentModel.Win32Exception", "Access is denied"),
        ),
        (
            "System.Runtime.InteropServices.COMException (0x800706BA)",
            ("System.Runtime.InteropServices.COMException", ""),
        ),
    ],
)
def test_each_form_of_error_code_is_read_after_the_inner_arrow(header: str, read: tuple[str, str]) -> None:
    text = REFUSED.replace("System.Net.Sockets.SocketException (111): Connection refused", header)
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [(e.type, e.value) for e in trace.exceptions] == [
        ("System.Net.Http.HttpRequestException", "Connection refused (inventory:8080)"),
        read,
    ]
    assert [f.function for f in trace.exceptions[0].frames][-1] == "ReserveAsync"


def test_a_native_error_code_is_read_on_the_outermost_exception_too() -> None:
    assert _read(parse_stacktrace(PROCESS)) == [
        (
            "System.ComponentModel.Win32Exception",
            "An error occurred trying to start process 'convert' with working directory '/app'. "
            "No such file or directory",
            "raised",
            ["ForkAndExecProcess", "StartCore", "Convert"],
        )
    ]


def test_a_message_line_that_looks_like_a_code_stays_the_messages() -> None:
    """Only where an exception begins (the first header, after ` ---> `): elsewhere the line is read as
    before, a line of the message."""
    text = "System.InvalidOperationException: import failed\nStep (3): bad row\n   at Acme.Shop.Import.Run()"
    assert _read(parse_stacktrace(text)) == [
        ("System.InvalidOperationException", "import failed Step (3): bad row", "raised", ["Run"])
    ]


def _event(n: int, stacktrace: str, message: str = SAVE_FAILED) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="Microsoft.EntityFrameworkCore.DbUpdateException",
        message=message,
        stacktrace=stacktrace,
    )


def test_two_bugs_under_one_library_exception_stay_two_signatures_and_one_bug_is_one() -> None:
    """The same duplicate key inserted by two services of the app: before, both read as the library's frames
    alone, one signature."""
    found = GroupingEngine().assign_all(
        [_event(1, SAVING), _event(2, _saving(ORDERS).replace("(42)", "(917)")), _event(3, _saving(SIGNUP))]
    )
    assert found[0].signature_id == found[1].signature_id != found[2].signature_id


def test_the_previous_reading_glues_the_coded_header_onto_the_outer_message_and_moves_the_frames_up() -> None:
    trace, process = parse_stacktrace(SAVING), parse_stacktrace(PROCESS)
    assert trace is not None and process is not None
    outer, inner = trace.exceptions
    assert as_read_before(trace) == ParsedTrace(
        "dotnet",
        (
            ParsedException(
                outer.type,
                f"{SAVE_FAILED} Microsoft.Data.SqlClient.SqlException (0x80131904): {DUPLICATE}",
                inner.frames,
            ),
        ),
    )
    assert as_read_before(process) == ParsedTrace(
        "dotnet", (ParsedException("System.Exception", "", process.exceptions[0].frames),)
    )
    plain = parse_stacktrace(_saving(ORDERS, code=""))
    assert plain is not None and as_read_before(plain) is None and not plain.notes


@pytest.mark.parametrize("text", [SAVING, PROCESS])
def test_the_pinned_hashes_are_those_the_previous_reading_gives(text: str) -> None:
    """What this version gives the previous reading is what that release stored: the pinned hashes stand for
    its signature."""
    before = as_read_before(parse_stacktrace(text) or ParsedTrace("dotnet", ()))
    assert before is not None
    engine = GroupingEngine()
    made = engine.assign(_event(0, _as_text(before)))
    assert tuple(engine.state(made.signature_id).hashes) == PREVIOUS_RELEASE_HASHES[text]


def _as_text(trace: ParsedTrace) -> str:
    """A text this version reads as `trace` (one exception, frames without files), or fails."""
    (exception,) = trace.exceptions
    assert all(frame.filename is None or frame.lineno is not None for frame in exception.frames)
    lines = [f"{exception.type}: {exception.value}" if exception.value else exception.type]
    for frame in exception.frames:
        where = f" in {frame.filename}:line {frame.lineno}" if frame.filename else ""
        lines.append(f"   at {frame.module}.{frame.function}(){where}")
    text = "\n".join(lines)
    read = parse_stacktrace(text)
    assert read is not None
    assert [(f.module, f.function, f.filename) for f in read.exceptions[0].frames] == [
        (f.module, f.function, f.filename) for f in exception.frames
    ]
    return text


@pytest.mark.parametrize("how", ["given", "looked up"])
@pytest.mark.parametrize("text", [SAVING, PROCESS])
def test_a_signature_the_previous_release_made_keeps_receiving_the_trace(text: str, how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="DbUpdateException", hashes=PREVIOUS_RELEASE_HASHES[text], how=how
    )
    found = engine.assign_all([_event(1, text), _event(2, text)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)
    registered = engine.state("sig_before").hashes
    assert set(PREVIOUS_RELEASE_HASHES[text]) < set(registered)
    assert found[0].fingerprint_hash in registered


def test_without_a_signature_before_the_trace_starts_one_of_its_own() -> None:
    found = GroupingEngine().assign_all([_event(1, SAVING), _event(2, SAVING)])
    assert found[0].signature_id == found[1].signature_id and found[0].tier == "new"
    assert found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES[SAVING]


#: a frameless inner exception with a code: the previous release read the outer one alone, with the inner's
#: (empty) frames, so no frame at all
FRAMELESS = """System.InvalidOperationException: could not save order 17
 ---> Npgsql.PostgresException (0x80004005): 23505: duplicate key value violates unique constraint "pk"
   --- End of inner exception stack trace ---
   at Acme.Shop.Orders.OrderService.Save(Order order) in /src/Acme.Shop/Orders/OrderService.cs:line 12"""


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_trace_whose_frames_the_previous_release_did_not_read_keeps_going_to_its_message_signature(
    how: str,
) -> None:
    message = "could not save order 17"
    trace = parse_stacktrace(FRAMELESS)
    assert trace is not None and NEWLY_READ in trace.notes
    assert [len(e.frames) for e in trace.exceptions] == [1, 0]
    before = GroupingEngine()
    made = before.assign(_event(0, "", message))  # (what a trace with no frame read gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all([_event(1, FRAMELESS, message), _event(2, FRAMELESS, message)])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}


def test_after_the_unhandled_prefix_the_previous_reading_is_the_last_releases_which_asks_those_before() -> (
    None
):
    """The previous release read the exception after the prefix (`UNHANDLED`), and glued the coded inner one
    onto it: that reading, itself noted, so the releases before the prefix was read are asked too."""
    text = (
        "Unhandled exception. System.AggregateException: One or more errors occurred. (boom)\n"
        " ---> System.Net.Sockets.SocketException (00000005, 0xFFFDFFFF): Name or service not known\n"
        "   at Acme.Shop.Dns.Resolve() in /src/Acme.Shop/Dns.cs:line 4\n"
        "   --- End of inner exception stack trace ---\n"
        "   at Acme.Shop.Program.Main(String[] args) in /src/Acme.Shop/Program.cs:line 9"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and UNHANDLED in trace.notes
    assert [(e.type, [f.function for f in e.frames]) for e in trace.exceptions] == [
        ("System.AggregateException", ["Main"]),
        ("System.Net.Sockets.SocketException", ["Resolve"]),
    ]
    before = as_read_before(trace)
    assert before is not None and before.notes == (UNHANDLED,)
    assert _read(before) == [
        (
            "System.AggregateException",
            "One or more errors occurred. (boom) System.Net.Sockets.SocketException (00000005, 0xFFFDFFFF): "
            "Name or service not known",
            "raised",
            ["Resolve"],
        )
    ]
    assert _read(as_read_before(before)) == [("System.Exception", "", "raised", ["Resolve"])]
