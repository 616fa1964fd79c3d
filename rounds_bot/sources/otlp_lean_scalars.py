"""The scalars of OTLP/JSON as the lean reading (`otlp_lean_check.py`) checks and reads them: integers,
booleans, doubles, trace and span ids and status codes, each as the pydantic models (`otlp_json.py`) would
read it without coercion, or `NotLean` (the line is left to the models, which accept or refuse it and say
why).
"""

from __future__ import annotations

from collections.abc import Callable

from rounds_bot.sources.otlp_json import _STATUS_CODE_NAMES, SEVERITY_NUMBER_NAMES, _double, _id, _integer


class NotLean(Exception):
    """The line holds something the models would coerce or refuse: read it with them."""


def lean_int(value: object) -> int:
    if type(value) is int:
        return value
    if type(value) is str and value.isascii() and value.isdigit():
        return int(value)  # the usual spelling of a time: what `_integer` makes of it, without its regex
    try:
        return _integer(value)
    except ValueError:
        raise NotLean from None


def lean_bool(value: object) -> None:
    """A boolean as the models take one: a JSON `true` or `false`, nothing they would coerce."""
    if not isinstance(value, bool):
        raise NotLean


def lean_double(value: object) -> None:
    """A double as the models read one (`_double`: a number, or the JSON spellings of infinities and NaN)."""
    try:
        _double(value)
    except ValueError:
        raise NotLean from None


def lean_trace_id(value: object) -> str:
    try:
        return _id(value, 16)
    except ValueError:
        raise NotLean from None


def lean_span_id(value: object) -> str:
    try:
        return _id(value, 8)
    except ValueError:
        raise NotLean from None


def read_id(value: object, hex_length: int, slow: Callable[[object], str]) -> str:
    """A record's trace or span id (absent: ""), checked and read as `lean_trace_id` and `lean_span_id` read
    it. The usual spelling, hex of the id's length, without the models' regex: `fromhex` refuses any other
    character but whitespace between two digits, and whitespace leaves fewer digits than it was given;
    `hex()` spells the bytes in lowercase, as the models write an id."""
    if type(value) is str and len(value) == hex_length:
        try:
            text = bytes.fromhex(value).hex()
        except ValueError:
            return slow(value)
        if len(text) == hex_length:
            return text if text.strip("0") else ""  # all zeros: no id
    elif value == "":
        return ""  # no id, as the models read an empty one
    return slow(value)


def lean_severity_number(value: object) -> int:
    if isinstance(value, str) and value in SEVERITY_NUMBER_NAMES:
        return SEVERITY_NUMBER_NAMES[value]
    return lean_int(value)


def lean_status_code(value: object) -> int:
    if isinstance(value, str) and value in _STATUS_CODE_NAMES:
        return _STATUS_CODE_NAMES[value]
    return lean_int(value)
