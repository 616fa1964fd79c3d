"""SigNoz's v5 filter expressions (`has_error = true`, `service.name = 'x' AND ...`) as ClickHouse WHERE
clauses, the way SigNoz's query builder writes them, so the engine evaluates them.

Grammar (the part of SigNoz's FilterQuery grammar rounds and its tests use): comparisons
`key (= | != | <> | < | <= | > | >=) value`, `key [NOT] IN (v, ...)`, `key [NOT] EXISTS`,
`key [NOT] LIKE|ILIKE|CONTAINS value`, joined by AND / OR / NOT and parentheses.

Keys resolve as SigNoz's field mappers do: intrinsic columns by name; resource fields to
`multiIf(resource.`k` IS NOT NULL, resource.`k`::String, mapContains(resources_string, 'k'),
resources_string['k'], NULL)` on traces and `resources_string['k']` on logs; other keys to the typed
attribute maps. A key that no row of the table knows is `KeyNotFound`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .engine import sql_literal

_TOKEN = re.compile(
    r"""\s+|(?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    |(?P<number>-?\d+(?:\.\d+)?)
    |(?P<op><>|!=|>=|<=|=|<|>|\(|\)|,)
    |(?P<word>[A-Za-z_][A-Za-z0-9_.$:\-]*)""",
    re.VERBOSE,
)
COMPARISONS = {"=": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
CONTEXTS = ("resource", "attribute", "span", "log", "body", "scope")


class FilterError(ValueError):
    """The expression cannot be read; the message says where."""


class KeyNotFound(FilterError):
    """A key no row of the signal knows."""

    def __init__(self, key: str):
        super().__init__(f"key `{key}` not found")
        self.key = key


@dataclass(frozen=True)
class FieldMapper:
    """How one signal's keys become column expressions."""

    signal: str
    intrinsic: frozenset[str]
    key_exists: Callable[[str], bool]
    #: how the version reads a quoted value (`unquoted`)
    unescapes_quoted: bool = True

    def column(self, name: str) -> str:
        bare = name.split(":", 1)[0]
        context, _, key = bare.partition(".") if bare.split(".", 1)[0] in CONTEXTS else ("", "", bare)
        if context in ("", "span", "log") and key in self.intrinsic:
            return key
        if context in ("", "resource") and (context == "resource" or self.key_exists(key)):
            return self.resource(key)
        if not self.key_exists(key):
            raise KeyNotFound(bare)
        return f"attributes_string[{sql_literal(key)}]"

    def resource(self, key: str) -> str:
        quoted = sql_literal(key)
        if self.signal == "logs":
            return f"resources_string[{quoted}]"
        return (
            f"multiIf(resource.`{key}` IS NOT NULL, resource.`{key}`::String, "
            f"mapContains(resources_string, {quoted}), resources_string[{quoted}], NULL)"
        )


class _Reader:
    def __init__(self, text: str, mapper: FieldMapper):
        self.tokens = self._tokens(text)
        self.position = 0
        self.mapper = mapper

    @staticmethod
    def _tokens(text: str) -> list[tuple[str, str]]:
        tokens: list[tuple[str, str]] = []
        position = 0
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None:
                raise FilterError(f"unexpected character at position {position}: {text[position:][:20]!r}")
            position = match.end()
            if match.lastgroup:
                tokens.append((match.lastgroup, match.group()))
        return tokens

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.position] if self.position < len(self.tokens) else ("end", "")

    def keyword(self, *words: str) -> bool:
        kind, text = self.peek()
        if kind == "word" and text.upper() in words:
            self.position += 1
            return True
        return False

    def take(self, text: str) -> None:
        if self.peek()[1] != text:
            raise FilterError(f"expected {text!r}, found {self.peek()[1] or 'the end'!r}")
        self.position += 1

    def expression(self) -> str:
        parts = [self.conjunction()]
        while self.keyword("OR"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def conjunction(self) -> str:
        parts = [self.unary()]
        while self.keyword("AND") or self._implicit_and():
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def _implicit_and(self) -> bool:
        kind, text = self.peek()
        return (kind == "word" and text.upper() not in ("OR", "AND")) or text == "("

    def unary(self) -> str:
        if self.keyword("NOT"):
            return f"NOT ({self.unary()})"
        if self.peek()[1] == "(":
            self.take("(")
            inner = self.expression()
            self.take(")")
            return f"({inner})"
        return self.comparison()

    def value(self) -> str:
        kind, text = self.peek()
        self.position += 1
        if kind == "string":
            return sql_literal(unquoted(text, unescapes=self.mapper.unescapes_quoted))
        if kind == "number":
            return text
        if kind == "word" and text.lower() in ("true", "false"):
            return text.lower()
        raise FilterError(f"expected a value, found {text or 'the end'!r}")

    def comparison(self) -> str:
        kind, key = self.peek()
        if kind != "word":
            raise FilterError(f"expected a key, found {key or 'the end'!r}")
        self.position += 1
        column = self.mapper.column(key)
        negated = self.keyword("NOT")
        if self.keyword("EXISTS"):
            return f"{column} IS {'' if negated else 'NOT '}NULL AND {column} != ''"
        if self.keyword("IN"):
            self.take("(")
            values = [self.value()]
            while self.peek()[1] == ",":
                self.take(",")
                values.append(self.value())
            self.take(")")
            return f"{column} {'NOT IN' if negated else 'IN'} ({', '.join(values)})"
        for word, template in (("LIKE", "{c} LIKE {v}"), ("ILIKE", "{c} ILIKE {v}"),
                               ("CONTAINS", "positionCaseInsensitive({c}, {v}) > 0")):  # fmt: skip
            if self.keyword(word):
                condition = template.format(c=column, v=self.value())
                return f"NOT ({condition})" if negated else condition
        operator = COMPARISONS.get(self.peek()[1])
        if operator is None or negated:
            raise FilterError(f"expected an operator after {key}, found {self.peek()[1] or 'the end'!r}")
        self.position += 1
        return f"{column} {operator} {self.value()}"


def unquoted(text: str, *, unescapes: bool = True) -> str:
    """A quoted value as SigNoz reads it (pkg/querybuilder/where_clause_visitor.go trimQuotes, which then
    binds the value as a query argument): the quotes dropped, and from v0.91.0 (`unescapes`) `\\\\` and `\\'`
    unescaped in that order, every other backslash kept. v0.87.0-v0.90.1 only drop the quotes."""
    inner = text[1:-1]
    return inner.replace("\\\\", "\\").replace("\\'", "'") if unescapes else inner


def where_clause(expression: str, mapper: FieldMapper) -> str:
    """The WHERE condition for a filter expression; FilterError (or KeyNotFound) when it cannot be."""
    reader = _Reader(expression, mapper)
    condition = reader.expression()
    if reader.peek()[0] != "end":
        raise FilterError(f"unexpected {reader.peek()[1]!r} after the expression")
    return condition
