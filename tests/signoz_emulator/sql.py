"""A small SQL engine for the emulator: the part of ClickHouse's dialect rounds' queries use.

It parses `SELECT … FROM table [WHERE] [GROUP BY] [ORDER BY] [LIMIT n BY …] [LIMIT] [OFFSET]`
and evaluates it over the emulator's tables, so a query the client sends is really executed
(wrong column names, missing aliases and bad syntax fail as they would in ClickHouse) rather than
matched against a template. The same expression parser reads SigNoz's v5 filter expressions.

Supported functions: count, min, max, sum, any, argMax, argMin (aggregates); toInt64,
fromUnixTimestamp64Nano, toUnixTimestamp64Nano, replaceRegexpAll, replaceRegexpOne, upper, lower,
length, concat, if, endsWith, startsWith, JSONExtractString, arrayExists (scalars).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


class SqlError(ValueError):
    """The query cannot be parsed or run; the text mimics ClickHouse's own messages."""


class Instant(int):
    """A DateTime64(9) value: nanoseconds that serialise as an RFC 3339 string."""


_TOKEN = re.compile(
    r"""\s+|--[^\n]*
    |(?P<string>'(?:[^'\\]|\\.)*')
    |(?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    |(?P<ident>[A-Za-z_$][A-Za-z0-9_$.]*|`[^`]+`)
    |(?P<op>->|>=|<=|!=|<>|==|[=<>+\-*/(),\[\]])""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}
KEYWORDS = {
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "AS",
    "AND",
    "OR",
    "NOT",
    "IN",
    "ASC",
    "DESC",
    "LIKE",
    "ILIKE",
    "BETWEEN",
    "EXISTS",
    "TRUE",
    "FALSE",
    "NULL",
    "CONTAINS",
    "REGEXP",
    "HAVING",
    "WITH",
}
AGGREGATES = {"count", "min", "max", "sum", "any", "argMax", "argMin"}


@dataclass(frozen=True)
class Token:
    kind: str  # string, number, ident, keyword, op, end
    value: Any
    position: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise SqlError(f"Syntax error: failed at position {position + 1} ('{text[position]}')")
        position = match.end()
        kind = match.lastgroup
        if kind is None:
            continue
        raw = match.group(kind)
        if kind == "string":
            tokens.append(Token("string", _unescape(raw[1:-1]), match.start()))
        elif kind == "number":
            value = float(raw) if any(c in raw for c in ".eE") else int(raw)
            tokens.append(Token("number", value, match.start()))
        elif kind == "ident" and raw.upper() in KEYWORDS and not raw.startswith("`"):
            tokens.append(Token("keyword", raw.upper(), match.start()))
        elif kind == "ident":
            tokens.append(Token("ident", raw.strip("`"), match.start()))
        else:
            tokens.append(Token("op", raw, match.start()))
    tokens.append(Token("end", None, len(text)))
    return tokens


def _unescape(body: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            nxt = body[index + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


# -- expression tree ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Lambda:
    parameter: str
    body: Any


@dataclass(frozen=True)
class Binary:
    op: str
    left: Any
    right: Any


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Any


@dataclass(frozen=True)
class InList:
    operand: Any
    items: tuple[Any, ...]
    negated: bool


@dataclass(frozen=True)
class Subscript:
    target: Any
    key: Any


@dataclass(frozen=True)
class SelectItem:
    expression: Any
    alias: str


@dataclass(frozen=True)
class OrderItem:
    expression: Any
    descending: bool


@dataclass
class Select:
    items: list[SelectItem]
    table: str
    where: Any = None
    group_by: list[Any] = field(default_factory=list)
    order_by: list[OrderItem] = field(default_factory=list)
    limit_by: tuple[int, list[Any]] | None = None
    limit: int | None = None
    offset: int = 0


class Parser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.index = 0

    # token helpers
    def peek(self, offset: int = 0) -> Token:
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def next(self) -> Token:
        token = self.peek()
        self.index += 1
        return token

    def at(self, kind: str, value: Any = None) -> bool:
        token = self.peek()
        return token.kind == kind and (value is None or token.value == value)

    def accept(self, kind: str, value: Any = None) -> bool:
        if self.at(kind, value):
            self.index += 1
            return True
        return False

    def expect(self, kind: str, value: Any = None) -> Token:
        if not self.at(kind, value):
            token = self.peek()
            wanted = value if value is not None else kind
            shown = "end of query" if token.kind == "end" else repr(token.value)
            raise SqlError(
                f"Syntax error: failed at position {token.position + 1} ({shown}): expected {wanted}"
            )
        return self.next()

    # statements
    def select(self) -> Select:
        self.expect("keyword", "SELECT")
        items = [self._select_item()]
        while self.accept("op", ","):
            items.append(self._select_item())
        self.expect("keyword", "FROM")
        statement = Select(items=items, table=self.expect("ident").value)
        if self.accept("keyword", "WHERE"):
            statement.where = self.expression()
        if self.accept("keyword", "GROUP"):
            self.expect("keyword", "BY")
            statement.group_by = self._expression_list()
        if self.accept("keyword", "ORDER"):
            self.expect("keyword", "BY")
            statement.order_by = [self._order_item()]
            while self.accept("op", ","):
                statement.order_by.append(self._order_item())
        while self.accept("keyword", "LIMIT"):
            count = self._integer()
            if self.accept("keyword", "BY"):
                statement.limit_by = (count, self._expression_list())
            else:
                statement.limit = count
                if self.accept("keyword", "OFFSET"):
                    statement.offset = self._integer()
        if self.accept("keyword", "OFFSET"):
            statement.offset = self._integer()
        self.expect("end")
        return statement

    def _integer(self) -> int:
        token = self.expect("number")
        if not isinstance(token.value, int):
            raise SqlError(f"Syntax error: LIMIT and OFFSET take integers, got {token.value}")
        return token.value

    def _select_item(self) -> SelectItem:
        expression = self.expression()
        if self.accept("keyword", "AS"):
            return SelectItem(expression, self.expect("ident").value)
        if isinstance(expression, Name):
            return SelectItem(expression, expression.name)
        return SelectItem(expression, _render(expression))

    def _order_item(self) -> OrderItem:
        expression = self.expression()
        descending = False
        if self.accept("keyword", "DESC"):
            descending = True
        else:
            self.accept("keyword", "ASC")
        return OrderItem(expression, descending)

    def _expression_list(self) -> list[Any]:
        items = [self.expression()]
        while self.accept("op", ","):
            items.append(self.expression())
        return items

    # expressions, lowest precedence first
    def expression(self) -> Any:
        if self.at("ident") and self.peek(1).kind == "op" and self.peek(1).value == "->":
            parameter = self.next().value
            self.next()
            return Lambda(parameter, self.expression())
        return self._or()

    def _or(self) -> Any:
        left = self._and()
        while self.accept("keyword", "OR"):
            left = Binary("OR", left, self._and())
        return left

    def _and(self) -> Any:
        left = self._not()
        while True:
            if self.accept("keyword", "AND"):
                left = Binary("AND", left, self._not())
            else:
                return left

    def _not(self) -> Any:
        if self.accept("keyword", "NOT"):
            return Unary("NOT", self._not())
        return self._comparison()

    def _comparison(self) -> Any:
        left = self._additive()
        negated = False
        if self.at("keyword", "NOT") and self.peek(1).kind == "keyword":
            self.next()
            negated = True
        token = self.peek()
        if token.kind == "keyword" and token.value == "IN":
            self.next()
            closing = "]" if self.accept("op", "[") else ")"
            if closing == ")":
                self.expect("op", "(")
            items = [self._additive()]
            while self.accept("op", ","):
                items.append(self._additive())
            self.expect("op", closing)
            return InList(left, tuple(items), negated)
        if token.kind == "keyword" and token.value in ("LIKE", "ILIKE", "CONTAINS", "REGEXP"):
            self.next()
            node = Binary(token.value, left, self._additive())
            return Unary("NOT", node) if negated else node
        if token.kind == "keyword" and token.value == "EXISTS":
            self.next()
            node = Call("__exists", (left,))
            return Unary("NOT", node) if negated else node
        if token.kind == "op" and token.value in ("=", "==", "!=", "<>", "<", "<=", ">", ">="):
            self.next()
            op = {"==": "=", "<>": "!="}.get(token.value, token.value)
            return Binary(op, left, self._additive())
        return left

    def _additive(self) -> Any:
        left = self._primary()
        while self.at("op", "+") or self.at("op", "-") or self.at("op", "*") or self.at("op", "/"):
            op = self.next().value
            left = Binary(op, left, self._primary())
        return left

    def _primary(self) -> Any:
        token = self.next()
        if token.kind == "number" or token.kind == "string":
            node: Any = Literal(token.value)
        elif token.kind == "keyword" and token.value in ("TRUE", "FALSE"):
            node = Literal(token.value == "TRUE")
        elif token.kind == "keyword" and token.value == "NULL":
            node = Literal(None)
        elif token.kind == "op" and token.value == "(":
            node = self.expression()
            self.expect("op", ")")
        elif token.kind == "op" and token.value == "-":
            node = Binary("-", Literal(0), self._primary())
        elif token.kind == "ident":
            if self.accept("op", "("):
                args: list[Any] = []
                if not self.at("op", ")"):
                    args = self._expression_list()
                self.expect("op", ")")
                node = Call(token.value, tuple(args))
            else:
                node = Name(token.value)
        else:
            shown = "end of query" if token.kind == "end" else repr(token.value)
            raise SqlError(f"Syntax error: failed at position {token.position + 1} ({shown})")
        while self.accept("op", "["):
            key = self.expression()
            self.expect("op", "]")
            node = Subscript(node, key)
        return node


def parse_select(text: str) -> Select:
    return Parser(text).select()


def parse_expression(text: str) -> Any:
    parser = Parser(text)
    expression = parser.expression()
    parser.expect("end")
    return expression


def _render(node: Any) -> str:
    if isinstance(node, Call):
        return f"{node.function}({', '.join(_render(arg) for arg in node.args)})"
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Literal):
        return repr(node.value)
    return type(node).__name__


# -- evaluation ---------------------------------------------------------------------------------

Row = dict[str, Any]
Resolver = Callable[[str], Any]


def _like(value: str, pattern: str, insensitive: bool) -> bool:
    regex = "".join(".*" if char == "%" else "." if char == "_" else re.escape(char) for char in pattern)
    return re.fullmatch(regex, value, re.DOTALL | (re.IGNORECASE if insensitive else 0)) is not None


def _compare(op: str, left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        left, right = bool(left), bool(right)
    elif isinstance(left, str) != isinstance(right, str):
        raise SqlError(
            f"Illegal types of arguments for comparison {op}: {type(left).__name__} and "
            f"{type(right).__name__}"
        )
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    return left >= right


def _arith(op: str, left: Any, right: Any) -> Any:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    return left / right


def _json_string(document: Any, key: Any) -> str:
    try:
        value = json.loads(document).get(key, "")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


SCALARS: dict[str, Callable[..., Any]] = {
    "toInt64": lambda value: int(value),
    "toDateTime": lambda value: Instant(int(value) * 1_000_000_000),
    "fromUnixTimestamp64Nano": lambda value: Instant(int(value)),
    "toUnixTimestamp64Nano": lambda value: int(value),
    "replaceRegexpAll": lambda value, pattern, repl: re.sub(pattern, _repl(repl), value),
    "replaceRegexpOne": lambda value, pattern, repl: re.sub(pattern, _repl(repl), value, count=1),
    "upper": lambda value: str(value).upper(),
    "lower": lambda value: str(value).lower(),
    "length": lambda value: len(value),
    "concat": lambda *values: "".join(str(value) for value in values),
    "endsWith": lambda value, suffix: str(value).endswith(suffix),
    "startsWith": lambda value, prefix: str(value).startswith(prefix),
    "JSONExtractString": _json_string,
}


def _repl(replacement: str) -> str:
    # ClickHouse writes group references as \1; Python's re.sub reads the same, but a lone
    # backslash must stay literal.
    return re.sub(r"\\(?![0-9])", r"\\\\", replacement)


class Scope(Protocol):
    def lookup(self, name: str) -> Any: ...


@dataclass
class RowScope:
    row: Row
    aliases: dict[str, Any] = field(default_factory=dict)
    missing: Callable[[str], Any] | None = None

    def lookup(self, name: str) -> Any:
        if name in self.row:
            return self.row[name]
        if name in self.aliases:
            return self.aliases[name]
        if self.missing is not None:
            return self.missing(name)
        raise SqlError(f"Code: 47. DB::Exception: Missing columns: '{name}'")


@dataclass
class Evaluator:
    """Evaluates a tree against one row, or an aggregate against a group of rows."""

    group: list[Row] | None = None
    alias_expressions: dict[str, Any] = field(default_factory=dict)

    def value(self, node: Any, scope: Scope) -> Any:
        if isinstance(node, Literal):
            return node.value
        if isinstance(node, Name):
            try:
                return scope.lookup(node.name)
            except SqlError:
                aliased = self.alias_expressions.get(node.name)
                if aliased is not None and aliased != node:
                    return self.value(aliased, scope)
                raise
        if isinstance(node, Subscript):
            target = self.value(node.target, scope)
            if not isinstance(target, dict):
                raise SqlError("Code: 43. DB::Exception: Illegal type for subscript")
            return target.get(self.value(node.key, scope), "")
        if isinstance(node, Unary):
            return not _truth(self.value(node.operand, scope))
        if isinstance(node, InList):
            value = self.value(node.operand, scope)
            found = any(value == self.value(item, scope) for item in node.items)
            return found != node.negated
        if isinstance(node, Binary):
            return self._binary(node, scope)
        if isinstance(node, Call):
            return self._call(node, scope)
        raise SqlError(f"Code: 48. DB::Exception: cannot evaluate {type(node).__name__}")

    def _binary(self, node: Binary, scope: Scope) -> Any:
        if node.op == "AND":
            return _truth(self.value(node.left, scope)) and _truth(self.value(node.right, scope))
        if node.op == "OR":
            return _truth(self.value(node.left, scope)) or _truth(self.value(node.right, scope))
        left, right = self.value(node.left, scope), self.value(node.right, scope)
        if node.op in ("LIKE", "ILIKE"):
            return _like(str(left), str(right), node.op == "ILIKE")
        if node.op == "CONTAINS":
            return str(right).lower() in str(left).lower()
        if node.op == "REGEXP":
            return re.search(str(right), str(left)) is not None
        if node.op in ("+", "-", "*", "/"):
            return _arith(node.op, left, right)
        return _compare(node.op, left, right)

    def _call(self, node: Call, scope: Scope) -> Any:
        if node.function in AGGREGATES:
            return self._aggregate(node)
        if node.function == "if":
            condition, then, otherwise = node.args
            chosen = then if _truth(self.value(condition, scope)) else otherwise
            return self.value(chosen, scope)
        if node.function == "arrayExists":
            function, array_node = node.args
            if not isinstance(function, Lambda):
                raise SqlError("Code: 43. DB::Exception: arrayExists needs a lambda")
            items = self.value(array_node, scope)
            return any(
                _truth(self.value(function.body, _BoundScope(function.parameter, item, scope)))
                for item in items or []
            )
        if node.function == "__exists":
            try:
                value = self.value(node.args[0], scope)
            except SqlError:
                return False
            return value not in ("", None)
        function = SCALARS.get(node.function)
        if function is None:
            raise SqlError(f"Code: 46. DB::Exception: Unknown function {node.function}")
        return function(*(self.value(arg, scope) for arg in node.args))

    def _aggregate(self, node: Call) -> Any:
        if self.group is None:
            raise SqlError(
                f"Code: 184. DB::Exception: Aggregate function {node.function}() is found in "
                "WHERE or a row context"
            )
        rows = self.group
        row_eval = Evaluator(alias_expressions=self.alias_expressions)
        if node.function == "count":
            return len(rows)
        values = [tuple(row_eval.value(arg, RowScope(row)) for arg in node.args) for row in rows]
        if node.function in ("argMax", "argMin"):
            pick = max if node.function == "argMax" else min
            return pick(values, key=lambda pair: pair[1])[0]
        column = [value[0] for value in values]
        if node.function == "min":
            return min(column)
        if node.function == "max":
            return max(column)
        if node.function == "sum":
            return sum(column)
        return column[0]  # any


@dataclass
class _BoundScope:
    parameter: str
    value: Any
    outer: Scope

    def lookup(self, name: str) -> Any:
        if name == self.parameter:
            return self.value
        return self.outer.lookup(name)


def _truth(value: Any) -> bool:
    return bool(value)


def contains_aggregate(node: Any) -> bool:
    if isinstance(node, Call):
        return node.function in AGGREGATES or any(contains_aggregate(a) for a in node.args)
    if isinstance(node, Binary):
        return contains_aggregate(node.left) or contains_aggregate(node.right)
    if isinstance(node, Unary):
        return contains_aggregate(node.operand)
    if isinstance(node, Subscript):
        return contains_aggregate(node.target)
    return False


# -- tables and execution -------------------------------------------------------------------


class Table(Protocol):
    def rows(self, where: Any) -> Iterable[Row]:
        """Every row that may match `where` (a superset is fine: WHERE runs again)."""

    def partitions_newest_first(self, where: Any, column: str) -> Iterable[Iterator[Row]] | None:
        """Rows partitioned by `column`, each newest first, or None if not supported."""


@dataclass
class Result:
    columns: list[str]
    rows: list[Row]
    rows_scanned: int


def execute(text: str, tables: dict[str, Table]) -> Result:
    statement = parse_select(text)
    table = tables.get(statement.table)
    if table is None:
        raise SqlError(f"Code: 60. DB::Exception: Table {statement.table} does not exist")
    aliases = {item.alias: item.expression for item in statement.items}
    scanner = _Scanner(statement, table, aliases)
    if statement.group_by or any(contains_aggregate(i.expression) for i in statement.items):
        pairs = scanner.grouped()
    else:
        pairs = scanner.plain()
    pairs = _order(statement, pairs, aliases)
    pairs = _limit_by(statement, pairs, aliases)
    end = None if statement.limit is None else statement.offset + statement.limit
    pairs = pairs[statement.offset : end]
    return Result([item.alias for item in statement.items], [out for _, out in pairs], scanner.scanned)


Pair = tuple[list[Row], Row]


@dataclass
class _Scanner:
    statement: Select
    table: Table
    aliases: dict[str, Any]
    scanned: int = 0

    def _evaluator(self, group: list[Row] | None = None) -> Evaluator:
        return Evaluator(group=group, alias_expressions=self.aliases)

    def _passes(self, row: Row) -> bool:
        self.scanned += 1
        if self.statement.where is None:
            return True
        return _truth(self._evaluator().value(self.statement.where, RowScope(row)))

    def _project(self, row: Row) -> Row:
        evaluator = self._evaluator([row])
        return {item.alias: evaluator.value(item.expression, RowScope(row)) for item in self.statement.items}

    def plain(self) -> list[Pair]:
        fast = self._newest_per_partition()
        rows = (
            fast
            if fast is not None
            else (r for r in self.table.rows(self.statement.where) if self._passes(r))
        )
        return [([row], self._project(row)) for row in rows]

    def _newest_per_partition(self) -> list[Row] | None:
        """LIMIT n BY <partition column> after ORDER BY timestamp DESC: read n per partition."""
        statement = self.statement
        if statement.limit_by is None or not statement.order_by:
            return None
        first = statement.order_by[0]
        by = statement.limit_by[1]
        if not (
            first.descending
            and isinstance(first.expression, Name)
            and first.expression.name == "timestamp"
            and len(by) == 1
        ):
            return None
        column = _column_of(by[0], self.aliases)
        partitions = self.table.partitions_newest_first(statement.where, column) if column else None
        if partitions is None:
            return None
        kept: list[Row] = []
        for partition in partitions:
            taken = 0
            for row in partition:
                if self._passes(row):
                    kept.append(row)
                    taken += 1
                    if taken == statement.limit_by[0]:
                        break
        return kept

    def grouped(self) -> list[Pair]:
        groups: dict[tuple[Any, ...], list[Row]] = {}
        evaluator = self._evaluator()
        for row in self.table.rows(self.statement.where):
            if not self._passes(row):
                continue
            scope = RowScope(row)
            key = tuple(_hashable(evaluator.value(expr, scope)) for expr in self.statement.group_by)
            groups.setdefault(key, []).append(row)
        pairs: list[Pair] = []
        for rows in groups.values():
            group_eval = self._evaluator(rows)
            scope = RowScope(rows[0])
            out = {item.alias: group_eval.value(item.expression, scope) for item in self.statement.items}
            pairs.append((rows, out))
        return pairs


def _column_of(node: Any, aliases: dict[str, Any]) -> str | None:
    if isinstance(node, Name):
        target = aliases.get(node.name, node)
        if isinstance(target, Name):
            return target.name
    return None


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    if isinstance(value, list):
        return tuple(value)
    return value


def _sort_key(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    return value


def _order(statement: Select, pairs: list[Pair], aliases: dict[str, Any]) -> list[Pair]:
    for item in reversed(statement.order_by):

        def key(pair: Pair, item: OrderItem = item) -> Any:
            rows, out = pair
            evaluator = Evaluator(group=rows, alias_expressions=aliases)
            return _sort_key(
                evaluator.value(
                    item.expression, RowScope(out, missing=lambda n, row=rows[0]: RowScope(row).lookup(n))
                )
            )

        pairs = sorted(pairs, key=key, reverse=item.descending)
    return pairs


def _limit_by(statement: Select, pairs: list[Pair], aliases: dict[str, Any]) -> list[Pair]:
    if statement.limit_by is None:
        return pairs
    count, expressions = statement.limit_by
    seen: dict[tuple[Any, ...], int] = {}
    kept: list[Pair] = []
    for rows, out in pairs:
        evaluator = Evaluator(group=rows, alias_expressions=aliases)
        scope = RowScope(out, missing=lambda n, row=rows[0]: RowScope(row).lookup(n))
        key = tuple(_hashable(evaluator.value(expr, scope)) for expr in expressions)
        if seen.get(key, 0) < count:
            seen[key] = seen.get(key, 0) + 1
            kept.append((rows, out))
    return kept


def constant_bounds(where: Any, column: str) -> tuple[int | None, int | None]:
    """Lower and upper bounds on `column` from top-level `AND` conjuncts with constant sides."""
    low: int | None = None
    high: int | None = None
    for conjunct in _conjuncts(where):
        if not (
            isinstance(conjunct, Binary) and isinstance(conjunct.left, Name) and conjunct.left.name == column
        ):
            continue
        try:
            bound = Evaluator().value(conjunct.right, RowScope({}))
        except SqlError:
            continue
        if not isinstance(bound, int):
            continue
        if conjunct.op in (">", ">="):
            low = bound if low is None else max(low, bound)
        elif conjunct.op in ("<", "<="):
            high = bound if high is None else min(high, bound)
    return low, high


def constant_in_list(where: Any, column: str) -> set[Any] | None:
    """The values of a top-level `column IN (...)` conjunct, if there is one."""
    for conjunct in _conjuncts(where):
        if (
            isinstance(conjunct, InList)
            and not conjunct.negated
            and isinstance(conjunct.operand, Name)
            and conjunct.operand.name == column
        ):
            return {Evaluator().value(item, RowScope({})) for item in conjunct.items}
    return None


def _conjuncts(where: Any) -> Iterator[Any]:
    if isinstance(where, Binary) and where.op == "AND":
        yield from _conjuncts(where.left)
        yield from _conjuncts(where.right)
    elif where is not None:
        yield where
