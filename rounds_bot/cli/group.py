"""`rounds group`: group JSON Lines error events with the engine a round uses.

Each input line is one event, an object with optional fields `message`, `error_type`,
`service`, `stacktrace`, `error_code` and `attributes` (an object). Each gets one output line,
in order: its signature and tier, or `{"line": N, "error": "..."}` when the line cannot be read
(or has nothing to group by but fields the format does not have: they are named, with the one meant).
Events are grouped as if they arrived in that order in one round, with the grouping settings a
round uses (`ROUNDS_MERGE_THRESHOLD` and the others of docs/settings.md: the environment, `--env-file`).

Built for streams of millions of lines: each line's fields are checked here (a wrong type is that
line's error) and the event is built without a second validation; the JSON text of an answer is
made once per answer the engine gives (the engine gives the same answer object for repeats), and
output is written in batches.
"""

from __future__ import annotations

import difflib
import gc
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import click
import orjson
from pydantic import ValidationError

from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.state import collector_paused
from rounds_bot.models import Assignment, AttributeValue, ErrorEvent

#: events carry no time of their own here; a fixed one keeps the output reproducible
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TEXT_FIELDS = ("message", "error_type", "service", "stacktrace", "error_code")
_FIELDS = (*_TEXT_FIELDS, "attributes")
#: a line with no other field than these (text or null) is a message alone
_PLAIN_FIELDS = frozenset(("message", "service", "error_type"))
#: input read (and its output written) this many bytes of lines at a time
_BATCH_BYTES = 1 << 16
#: batches between two runs of the cyclic garbage collector, which is otherwise paused: it would
#: walk the engine's memos again and again (a tenth of the time of a long stream), and grouping
#: makes no reference cycles for it to find; this run is a safeguard, every 64 MB of input
_COLLECT_EVERY = 1024
#: rendered answers kept (by answer identity); cleared when full
_RENDERED_LIMIT = 65_536


class LineError(ValueError):
    """One input line cannot be turned into an event; the message says why."""


@click.command("group")
@click.argument("source", type=click.File("rb"), default="-", metavar="[FILE|-]")
@click.option("--explain", is_flag=True, help="Add the fingerprint's explanation (why grouped).")
@env_file_option
@friendly_errors
def group_command(source: IO[bytes], explain: bool, env_file: Path | None = None) -> None:
    """Group JSON Lines error events read from FILE (or standard input).

    Prints one JSON object per input line, in order, with at least `signature` and `tier`
    (`error_code`, `fingerprint`, `similarity` or `new`); a line that cannot be read gives
    `{"line": N, "error": "..."}` and the run goes on.
    """
    engine = GroupingEngine(settings_from(env_file).grouping_config())
    out = sys.stdout  # JSON text is ASCII: written as it is, a batch of lines at a time
    renderer = _Renderer(explain=explain)
    number = 0
    with collector_paused():
        for count, batch in enumerate(_batches(source), 1):
            out.write(renderer.lines(number + 1, _answers(engine, number + 1, batch)))
            out.flush()
            number += len(batch)
            if count % _COLLECT_EVERY == 0:
                gc.collect()


def _batches(source: IO[bytes]) -> Iterator[list[bytes]]:
    """The input's lines, as many as fit in a batch at a time (the last may be short)."""
    while batch := source.readlines(_BATCH_BYTES):
        yield batch


def _answers(engine: GroupingEngine, first: int, batch: list[bytes]) -> list[Assignment | str]:
    """The engine's answers for a batch of lines numbered from `first`. The common line, a JSON
    object of text fields `message`, `service` and `error_type` alone, is grouped here from its
    fields; any other line goes the whole way (`_group`), which also says what is wrong with it."""
    assign_message, loads, plain = engine.assign_message, orjson.loads, _PLAIN_FIELDS
    answers: list[Assignment | str] = []
    for number, raw in enumerate(batch, first):
        try:
            data = loads(raw)
        except orjson.JSONDecodeError:
            answers.append(_group(engine, number, raw))  # read again, slowly, to say what is wrong
            continue
        if type(data) is dict and data.keys() <= plain:
            message, service, error_type = data.get("message"), data.get("service"), data.get("error_type")
            if (
                (message is None or type(message) is str)
                and (service is None or type(service) is str)
                and (error_type is None or type(error_type) is str)
            ):
                try:
                    answers.append(assign_message(message or "", service or "unknown", error_type or None))
                    continue
                except (ValidationError, ValueError, RecursionError):
                    pass  # the whole way says what is wrong
        answers.append(_group_parsed(engine, number, data))
    return answers


def _group(engine: GroupingEngine, number: int, raw: bytes) -> Assignment | str:
    """The engine's answer for a line orjson refused, or why it has none: bytes that are not UTF-8, lone
    surrogates, numbers beyond 64 bits, a bad line. The standard library reads it again, replacing bytes
    that are not UTF-8, and says what is wrong."""
    try:
        data = _object_slowly(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    except LineError as exc:
        return str(exc)
    return _group_parsed(engine, number, data)


def _group_parsed(engine: GroupingEngine, number: int, data: Any) -> Assignment | str:
    """The engine's answer for one line's JSON value, or why it has none (the whole way: any fields)."""
    try:
        if not isinstance(data, dict):
            raise LineError(f"expected a JSON object, got {_json_type(data)}")
        _known_fields_only(data)
        return engine.assign(_event(number, data, {name: _text(data, name) for name in _TEXT_FIELDS}))
    except LineError as exc:
        return str(exc)
    except (ValidationError, ValueError, RecursionError) as exc:
        return f"event could not be grouped: {type(exc).__name__}: {exc}"


class _Renderer:
    """Output lines: `{"line": N, ...}`, the rest of the object rendered once per answer."""

    def __init__(self, *, explain: bool) -> None:
        self._explain = explain
        self._rendered: dict[int, tuple[Assignment, str]] = {}

    def lines(self, first: int, answers: list[Assignment | str]) -> str:
        """The output lines of answers to lines numbered from `first`, as one text."""
        pieces: list[str] = []
        extend, memo = pieces.extend, self._rendered
        for number, answer in enumerate(answers, first):
            known = memo.get(id(answer))
            if known is None or known[0] is not answer:
                if isinstance(answer, str):
                    pieces.append(json.dumps({"line": number, "error": answer}) + "\n")
                    continue
                known = self._remember(answer)
            extend(('{"line": ', str(number), ", ", known[1]))
        return "".join(pieces)

    def _remember(self, answer: Assignment) -> tuple[Assignment, str]:
        # the object without its first "{" and with its line end: `"signature": ..., ...}\n`
        rest = json.dumps(_output(answer, explain=self._explain))[1:] + "\n"
        if len(self._rendered) >= _RENDERED_LIMIT:
            self._rendered.clear()
        known = self._rendered[id(answer)] = (answer, rest)
        return known


def _known_fields_only(data: dict[str, Any]) -> None:
    """A line with nothing to group by (no message, trace, type or code) but fields the format does not
    have is that line's error, naming them (`msg` for `message`): grouped, it would be an event without a
    message. A line with something to group by keeps its other fields unread, as a log line's `host`."""
    if any(data.get(name) for name in _TEXT_FIELDS if name != "service"):
        return
    unknown = sorted(str(key) for key in data if key not in _FIELDS)
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], _FIELDS, n=1, cutoff=0.6)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    shown = ", ".join(repr(name) for name in unknown[:3]) + (", ..." if len(unknown) > 3 else "")
    raise LineError(
        f"nothing to group: no message, stacktrace, error_type or error_code, and unknown field "
        f"{shown}{guess}; the fields are {', '.join(_FIELDS)}"
    )


def _object_slowly(text: str) -> dict[str, Any]:
    if not text.strip():
        raise LineError("empty line: expected a JSON object")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise LineError("invalid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise LineError(f"expected a JSON object, got {_json_type(data)}")
    return data


def _event(number: int, data: dict[str, Any], fields: dict[str, str | None]) -> ErrorEvent:
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


def _output(assignment: Assignment, *, explain: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
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
