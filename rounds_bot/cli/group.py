"""`rounds group`: group JSON Lines error events with the engine a round uses.

Each input line is one event, an object with optional fields `message`, `error_type`,
`service`, `stacktrace`, `error_code` and `attributes` (an object). Each gets one output line,
in order: its signature and tier, or `{"line": N, "error": "..."}` when the line cannot be read.
Events are grouped as if they arrived in that order in one round, with the default
configuration.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any

import click
from pydantic import ValidationError

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import Assignment, AttributeValue, ErrorEvent

#: events carry no time of their own here; a fixed one keeps the output reproducible
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TEXT_FIELDS = ("message", "error_type", "service", "stacktrace", "error_code")


class LineError(ValueError):
    """One input line cannot be turned into an event; the message says why."""


@click.command("group")
@click.argument("source", type=click.File("rb"), default="-", metavar="[FILE|-]")
@click.option("--explain", is_flag=True, help="Add the fingerprint's explanation (why grouped).")
def group_command(source: IO[bytes], explain: bool) -> None:
    """Group JSON Lines error events read from FILE (or standard input).

    Prints one JSON object per input line, in order, with at least `signature` and `tier`
    (`error_code`, `fingerprint`, `similarity` or `new`); a line that cannot be read gives
    `{"line": N, "error": "..."}` and the run goes on.
    """
    engine = GroupingEngine()
    for number, raw in _lines(source):
        click.echo(json.dumps(group_line(engine, number, raw, explain=explain)))


def _lines(source: IO[bytes]) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(source, start=1):
        # Bytes that are not UTF-8 are replaced, not fatal: the line is still read.
        yield number, raw.decode("utf-8", errors="replace").rstrip("\r\n")


def group_line(engine: GroupingEngine, number: int, raw: str, *, explain: bool) -> dict[str, Any]:
    """The output object for one input line."""
    try:
        event = event_from_line(number, raw)
        assignment = engine.assign(event)
    except LineError as exc:
        return {"line": number, "error": str(exc)}
    except (ValidationError, ValueError, RecursionError) as exc:
        return {"line": number, "error": f"event could not be grouped: {type(exc).__name__}: {exc}"}
    return _output(number, assignment, explain=explain)


def event_from_line(number: int, raw: str) -> ErrorEvent:
    if not raw.strip():
        raise LineError("empty line: expected a JSON object")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LineError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise LineError("invalid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise LineError(f"expected a JSON object, got {_json_type(data)}")
    fields = {name: _text(data, name) for name in _TEXT_FIELDS}
    return ErrorEvent(
        event_id=f"line-{number}",
        timestamp=_EPOCH,
        service=fields["service"] or "unknown",
        kind="exception" if fields["stacktrace"] or fields["error_type"] else "log",
        error_type=fields["error_type"] or None,
        message=fields["message"] or "",
        stacktrace=fields["stacktrace"] or None,
        error_code=fields["error_code"] or None,
        attributes=_attributes(data.get("attributes")),
    )


def _text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    raise LineError(f"field {name!r} must be a string, got {_json_type(value)}")


def _attributes(value: Any) -> dict[str, AttributeValue]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise LineError(f"field 'attributes' must be an object, got {_json_type(value)}")
    out: dict[str, AttributeValue] = {}
    for key, item in value.items():
        if item is None:
            continue
        # Nested values are kept as their JSON text: attributes are flat, like OpenTelemetry's.
        out[str(key)] = item if isinstance(item, str | int | float | bool) else json.dumps(item)
    return out


def _output(number: int, assignment: Assignment, *, explain: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "line": number,
        "signature": assignment.signature_id,
        "tier": assignment.tier,
        "fingerprint": assignment.fingerprint_hash,
        "fingerprint_version": assignment.fingerprint_version,
        "title": assignment.title,
        "normalized_message": assignment.normalized_message,
        "related": assignment.related,
    }
    if assignment.similarity is not None:
        out["similarity"] = assignment.similarity
    if explain:
        out["explanation"] = assignment.explanation
    return out


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
