"""Whole numbers written with a fraction (`7.0`) read as the integers JSON Schema counts them.

JSON Schema's `integer` is a number with a zero fractional part (2020-12, Validation §6.1.1: "1.0" is an
integer), so a model that writes `"line": 7.0` gave a valid answer; pydantic's strict `int` refuses a float.
The answer's fields stay strict (the schema the Claude Code CLI is given says `integer` and must not change:
the CLI checks it strictly), and the answer is read before validation: where the schema says `integer`, a
float with no fraction becomes that integer. Anything else (7.5, `true`, `"7"`) is left for validation to
refuse, as before.
"""

from __future__ import annotations

from typing import Any


def integers_where_declared(value: Any, schema: dict[str, Any]) -> Any:
    """`value` with each float that `schema` declares an integer, and that has no fraction, as an int."""
    if isinstance(value, float) and _allows_integer(schema) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        properties = _merged(schema, "properties")
        return {
            key: integers_where_declared(item, properties[key]) if key in properties else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        items = _merged(schema, "items")
        return [integers_where_declared(item, items) for item in value] if items else value
    return value


def _allows_integer(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    if declared == "integer" or (isinstance(declared, list) and "integer" in declared):
        return True
    return any(_allows_integer(branch) for branch in _branches(schema))


def _merged(schema: dict[str, Any], keyword: str) -> dict[str, Any]:
    """What `keyword` (`properties` or `items`) says in the schema and its `anyOf`/`oneOf`/`allOf` branches
    (an optional object is `anyOf: [{object}, {null}]`)."""
    found: dict[str, Any] = {}
    for part in (schema, *_branches(schema)):
        given = part.get(keyword)
        if isinstance(given, dict):
            found.update(given)
    return found


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        branch
        for keyword in ("anyOf", "oneOf", "allOf")
        for branch in schema.get(keyword, ())
        if isinstance(branch, dict)
    ]
