"""How two records of a trace show one error, read from their texts: the rules of `round.propagated` that
compare a type, a message and a stack trace. SigNoz's queries read them so too, in SQL
(`sources/signoz/enclosed.py`, each rule naming its twin)."""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.dotnet import ERROR_CODE

#: the error code .NET prints between an exception's type and its message (`names_as_cause`)
_ERROR_CODE_AT_END = re.compile(ERROR_CODE + "$")


def logged_error(error_type: str, message: str) -> tuple[str, str]:
    """What a logged exception and a span's record of it share (`round.propagated`'s example): the type's
    last dotted name, the message out of one pair of quotes. SigNoz's query reads them so too
    (`sources/signoz/enclosed.py`, `logged_error_sql`)."""
    if len(message) >= 2 and message[0] in "'\"" and message[-1] == message[0]:
        message = message[1:-1]
    return error_type.rpartition(".")[2], message


def last_line_error(stacktrace: str) -> tuple[str, str]:
    """The type and message a Python traceback's last line prints (`QuotaExceeded: ('quota exceeded',
    't0')`, `StaleCart`), as `logged_error` reads them: what a span recorded as `str(exception)`, where a
    log handler wrote only the exception's first argument as its message (the SDK's `LoggingHandler`), or
    none."""
    last = stacktrace.rstrip().rpartition("\n")[2]
    error_type, _, message = last.partition(": ")
    if not error_type or " " in error_type:
        return "", ""
    return logged_error(error_type, message)


def names_as_cause(stacktrace: str, error_type: str, message: str) -> bool:
    """A line of `stacktrace` ends with `error_type: message` (the first line of a message), its type whole
    (after the line's start, a space, a dot or a tab: `psycopg.errors.UniqueViolation` names
    `UniqueViolation`), or with the error code .NET prints between them (`SqlException (0x80131904): ...`,
    `SocketException (111): ...`: `dotnet.ERROR_CODE`; the exception's own record names no code)."""
    ending = f": {message}"
    at = stacktrace.find(ending)
    while at >= 0:
        end = at + len(ending)
        if end == len(stacktrace) or stacktrace[end] in "\r\n":
            head = _ERROR_CODE_AT_END.sub("", stacktrace[stacktrace.rfind("\n", 0, at) + 1 : at], count=1)
            if head.endswith(error_type) and (
                len(head) == len(error_type) or head[-len(error_type) - 1] in " .\t"
            ):
                return True
        at = stacktrace.find(ending, at + 1)
    return False


def grows(longer: str, shorter: str) -> bool:
    """`longer` is `shorter` printed again after the exception went up the stack: after its first line (a
    Python traceback's header), `shorter` is how `longer` ends, and `longer` holds more (the frames it
    left). SigNoz's query reads it so too (`sources/signoz/enclosed.py`, `_regrown`)."""
    rest = shorter.partition("\n")[2]
    return bool(rest.strip()) and len(longer) > len(shorter) and longer.endswith(rest)
