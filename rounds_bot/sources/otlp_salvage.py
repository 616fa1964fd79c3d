"""A line whose models refused it, read again without the records that cannot be read.

An export request carries many records, from many scopes and resources; one of them written wrongly (an id
that is not hex, a time that is not a number: an SDK's bug) should cost that record, not the line's others.
When the line is a JSON object whose fault lies in its resources, scopes or records, each of those is checked
on its own, from the outside in, and the ones that fail are left out and named by their place in the line
(`resourceLogs.0.scopeLogs.1.logRecords.7.timeUnixNano: ...`); the rest is the line read with the models. A
fault elsewhere (the line is not JSON, not an object, or not a request) is the line's, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from rounds_bot.sources.otlp_json import (
    ExportLine,
    InstrumentationScope,
    LogRecord,
    Resource,
    Span,
    describe,
)

#: Each signal's three levels, as (lowerCamelCase, original) field names, and its record's model.
_SIGNALS: tuple[tuple[tuple[str, str], tuple[str, str], tuple[str, str], type[BaseModel]], ...] = (
    (("resourceSpans", "resource_spans"), ("scopeSpans", "scope_spans"), ("spans", "spans"), Span),
    (
        ("resourceLogs", "resource_logs"),
        ("scopeLogs", "scope_logs"),
        ("logRecords", "log_records"),
        LogRecord,
    ),
)


def salvaged(raw: bytes) -> tuple[ExportLine, list[str]] | None:
    """The line without the parts that cannot be read, and what was wrong with each (at least one); None
    when the fault is not in a part, or nothing was left out."""
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    problems: list[str] = []
    kept = dict(document)
    for levels in _SIGNALS:
        for key in levels[0]:
            if isinstance(kept.get(key), list):
                kept[key] = _resources(key, kept[key], levels, problems.append)
    if not problems:
        return None
    try:
        return ExportLine.model_validate(kept), problems
    except ValidationError:
        return None


def _resources(
    at: str, resources: list[Any], levels: tuple[Any, ...], problem: Callable[[str], None]
) -> list[Any]:
    _, scopes_keys, records_keys, model = levels
    kept = []
    for index, resource in enumerate(resources):
        here = f"{at}.{index}"
        scopes_key = _key(resource, scopes_keys)
        fault = _fault(resource, here, "resource", Resource)
        if fault is not None:
            problem(_lost(fault, _count(resource, scopes_key, records_keys)))
            continue
        if scopes_key is not None and isinstance(resource[scopes_key], list):
            scopes = _scopes(f"{here}.{scopes_key}", resource[scopes_key], records_keys, model, problem)
            resource = {**resource, scopes_key: scopes}
        kept.append(resource)
    return kept


def _scopes(
    at: str,
    scopes: list[Any],
    records_keys: tuple[str, str],
    model: type[BaseModel],
    problem: Callable[[str], None],
) -> list[Any]:
    kept = []
    for index, scope in enumerate(scopes):
        here = f"{at}.{index}"
        records_key = _key(scope, records_keys)
        fault = _fault(scope, here, "scope", InstrumentationScope)
        if fault is not None:
            problem(_lost(fault, len(_records(scope, records_key))))
            continue
        if records_key is not None and isinstance(scope[records_key], list):
            records = []
            for number, record in enumerate(scope[records_key]):
                try:
                    model.model_validate(record)
                except ValidationError as error:
                    problem(describe(error, f"{here}.{records_key}.{number}"))
                    continue
                records.append(record)
            scope = {**scope, records_key: records}
        kept.append(scope)
    return kept


def _fault(container: Any, at: str, field: str, model: type[BaseModel]) -> str | None:
    """What is wrong with a resource or a scope itself (not its records), or None."""
    if not isinstance(container, dict):
        return f"{at}: not an object"
    value = container.get(field)
    if value is None:
        return None
    try:
        model.model_validate(value)
    except ValidationError as error:
        return describe(error, f"{at}.{field}")
    return None


def _key(container: Any, names: tuple[str, str]) -> str | None:
    if not isinstance(container, dict):
        return None
    return next((name for name in names if name in container), None)


def _records(scope: Any, records_key: str | None) -> list[Any]:
    value = scope.get(records_key) if isinstance(scope, dict) and records_key is not None else None
    return value if isinstance(value, list) else []


def _count(resource: Any, scopes_key: str | None, records_keys: tuple[str, str]) -> int:
    scopes = resource.get(scopes_key) if isinstance(resource, dict) and scopes_key is not None else None
    if not isinstance(scopes, list):
        return 0
    return sum(len(_records(scope, _key(scope, records_keys))) for scope in scopes)


def _lost(fault: str, records: int) -> str:
    return f"{fault} (its {records} record{'' if records == 1 else 's'} not read)"
