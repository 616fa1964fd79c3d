"""PowerShell's errors as the host prints an error record (NormalView's `At FILE:N char:M` and its fields,
PowerShell 7's ConciseView `Line |`) and as `$_.ScriptStackTrace` prints its callers: one crash site is one
signature, two behind one message are two, installed modules are a library's, and a signature an earlier
release made from the message (it read no frame) keeps receiving them."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping import stacktrace
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

MESSAGE = "You cannot call a method on a null-valued expression."


def _record(script: str, line: int, column: int, variable: str, stack: bool = True) -> str:
    """The record as the host prints it, followed by its `ScriptStackTrace` as a handler logs both."""
    return (
        f"{MESSAGE}\nAt C:\\scripts\\{script}.ps1:{line} char:{column}\n+     ${variable}.Trim()\n"
        "+     ~~~~~~~~~~~~~~\n    + CategoryInfo          : InvalidOperation: (:) [], RuntimeException\n"
        "    + FullyQualifiedErrorId : InvokeMethodOnNull\n"
    ) + (_stack(script, line) if stack else "")


def _concise(script: str, line: int, stack: bool = True) -> str:
    return (
        f"InvalidOperation: C:\\scripts\\{script}.ps1:{line}\nLine |\n  {line} |      $name.Trim()\n"
        f"     |      ~~~~~~~~~~~~\n     | {MESSAGE}\n"
    ) + (_stack(script, line) if stack else "")


def _stack(script: str, line: int, depth: int = 1) -> str:
    lines = [f"at Get-Order, C:\\scripts\\{script}.ps1: line {line}"]
    lines += [f"at Invoke-Step, C:\\scripts\\pipeline.ps1: line {20 + i}" for i in range(depth)]
    lines.append("at <ScriptBlock>, <No file>: line 1")
    return "\n".join(lines) + "\n"


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return crash_event(n, stacktrace, error_type="RuntimeException", message=MESSAGE, service="ops")


def test_a_record_is_read_with_its_error_id_and_its_location() -> None:
    trace = parse_stacktrace(_record("deploy", 12, 5, "name"))
    assert trace is not None and trace.runtime == "powershell"
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("InvokeMethodOnNull", MESSAGE)
    assert error.frames[0] == Frame("Get-Order", filename="C:\\scripts\\deploy.ps1", lineno=12)


def test_a_concise_view_is_read_with_its_category_and_wrapped_message() -> None:
    trace = parse_stacktrace(_concise("deploy", 12))
    assert trace is not None and trace.runtime == "powershell"
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("InvalidOperation", MESSAGE)
    assert (error.frames[0].filename, error.frames[0].lineno) == ("C:\\scripts\\deploy.ps1", 12)


@pytest.mark.parametrize(
    "text",
    [
        _record("deploy", 12, 5, "name", stack=False),
        _concise("deploy", 12, stack=False),
        "Write-Error: C:\\scripts\\deploy.ps1:12\nLine |\n  12 |  Write-Error 'no order'\n     | no order\n",
    ],
)
def test_a_record_without_its_script_stack_is_left_to_its_message(text: str) -> None:
    """Its `At` line names a file and no function: read as a frame, every error of one script would be
    one problem; left to its message, two messages stay two."""
    assert parse_stacktrace(text) is None


def test_throws_error_id_that_is_its_message_is_not_its_type() -> None:
    """`throw "text"` makes the text its FullyQualifiedErrorId: the exception's type names the error."""
    text = (
        'Order 123 not found\nAt C:\\app\\deploy.ps1:12 char:5\n+     throw "Order $id not found"\n'
        "+     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n    + CategoryInfo          : OperationStopped: "
        "(Order 123 not found:String) [], RuntimeException\n"
        "    + FullyQualifiedErrorId : Order 123 not found\n" + _stack("deploy", 12)
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].type == "RuntimeException"


def test_a_generated_scripts_guid_is_no_part_of_its_frame() -> None:
    """GitHub Actions runs a step's script as `D:\\a\\_temp\\<guid>.ps1`, another GUID each run."""
    texts = [
        f"at <ScriptBlock>, D:\\a\\_temp\\{guid}.ps1: line 3\n"
        for guid in ("0f3c2b9e-1d2a-4b6c-9e8f-123456789abc", "11111111-2222-4b6c-9e8f-123456789abc")
    ]
    files = {trace.exceptions[0].frames[0].filename for trace in map(parse_stacktrace, texts) if trace}
    assert files == {"D:\\a\\_temp\\<guid>.ps1"}


@pytest.mark.parametrize(
    "path",
    [
        "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\Modules\\PSDesiredStateConfiguration\\P.psm1",
        "/opt/microsoft/powershell/7/Modules/PSReadLine/PSReadLine.psm1",
        "/home/u/.local/share/powershell/Modules/Az.Accounts/2.1.0/Az.Accounts.psm1",
        "/usr/local/share/powershell/Modules/Pester/5.5.0/Pester.psm1",
        "C:\\program files\\powershell\\Modules\\Pester\\Pester.psm1",
    ],
)
def test_a_runtimes_or_installed_modules_frame_is_a_librarys(path: str) -> None:
    assert InAppRules().decide(Frame("f", filename=path, lineno=1), "powershell")[0] is False


def test_a_script_stack_is_read_innermost_first() -> None:
    trace = parse_stacktrace(_stack("deploy", 12))
    assert trace is not None and trace.runtime == "powershell"
    assert trace.exceptions[0].frames == (
        Frame("Get-Order", filename="C:\\scripts\\deploy.ps1", lineno=12),
        Frame("Invoke-Step", filename="C:\\scripts\\pipeline.ps1", lineno=20),
        Frame("<ScriptBlock>", filename=None, lineno=1),
    )


def test_an_installed_modules_frame_is_a_librarys() -> None:
    module = "C:\\Program Files\\WindowsPowerShell\\Modules\\Az.Accounts\\2.1.0\\Az.Accounts.psm1"
    assert (
        InAppRules().decide(Frame("Connect-AzAccount", filename=module, lineno=9), "powershell")[0] is False
    )
    assert InAppRules().decide(Frame("Get-Order", filename="C:\\scripts\\x.ps1", lineno=9), "powershell")[0]


@pytest.mark.parametrize(
    "texts",
    [
        (
            _record("deploy", 12, 5, "name"),
            _record("deploy", 12, 9, "user"),
            _record("backup", 30, 9, "path"),
        ),
        (_concise("deploy", 12), _concise("deploy", 12), _concise("backup", 30)),
        (_stack("deploy", 12), _stack("deploy", 12, depth=3), _stack("backup", 30)),
    ],
)
def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two(texts: tuple[str, ...]) -> None:
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]


def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No release before read PowerShell's errors (none recognised their lines): their events went to their
    message's template, and that signature keeps receiving them."""
    texts = [_record("deploy", 12, 5, "a"), _record("deploy", 12, 5, "b"), _record("backup", 30, 9, "c")]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, stacktrace, "_script_runtime", lambda lines: None, texts, _event
    )
    for placed in found.values():
        assert placed == [(made, "fingerprint")] * 2


def test_a_script_stack_printed_by_format_list_keeps_its_innermost_frame() -> None:
    # `$error[0] | Format-List * -Force` and `Get-Error` print the first line behind the property's name
    def text(function: str, message: str) -> str:
        return (
            f"Exception             : System.Management.Automation.RuntimeException: {message}\n"
            f"ScriptStackTrace      : at {function}, C:\\app\\deploy.ps1: line 12\n"
            "                        at <ScriptBlock>, C:\\app\\deploy.ps1: line 30\n"
        )

    trace = parse_stacktrace(text("Get-Order", "Order not found"))
    assert trace is not None
    assert [(f.function, f.lineno) for f in trace.exceptions[0].frames] == [
        ("Get-Order", 12),
        ("<ScriptBlock>", 30),
    ]
    ids = signatures_of([text("Get-Order", "Order not found"), text("Get-Invoice", "Invoice locked")], _event)
    assert ids[0] != ids[1]
