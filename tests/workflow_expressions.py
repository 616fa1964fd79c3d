"""GitHub Actions' expression syntax, for the local workflow runner.

    evaluate("github.event_name == 'push' && 'yes' || 'no'", contexts)
    interpolate("rounds-${{ inputs.name }}", contexts)
    evaluate_condition("steps.restore.outcome == 'success'", contexts, job_status)

Literals, property access (`a.b`, `a['b']`, also after a function call), `!`, `==`, `!=`, `<`, `<=`, `>`,
`>=`, `&&`, `||` with their value semantics (an operand, not a boolean, is the result), loose comparison
(strings without case, other types as numbers), and the functions `contains`, `startsWith`, `endsWith`,
`format`, `toJSON`, `fromJSON` and the status functions (`success()`, `failure()`, `always()`, `cancelled()`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_STATUS_FUNCTIONS = ("success()", "failure()", "always()", "cancelled()")

_TOKEN = re.compile(
    r"\s*(?:(?P<number>-?\d+(?:\.\d+)?)|(?P<string>'(?:[^']|'')*')|(?P<op>==|!=|<=|>=|&&|\|\||[!<>().,\[\]*])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def evaluate_condition(condition: Any, contexts: dict[str, Any], job_status: str) -> Any:
    text = str(condition).strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2].strip()
    if not any(function in text.replace(" ", "") for function in _STATUS_FUNCTIONS):
        text = f"success() && ({text})"
    return evaluate(text, {**contexts, "_status": job_status})


def interpolate(value: Any, contexts: dict[str, Any]) -> str:
    text = str(value) if not isinstance(value, bool) else str(value).lower()

    def replace(match: re.Match[str]) -> str:
        return to_string(evaluate(match[1], contexts))

    return re.sub(r"\$\{\{(.*?)\}\}", replace, text)


def to_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and not (isinstance(value, float) and value != value)


def expressions(value: Any) -> list[str]:
    """The `${{ }}` expressions in a string (their text, without the braces)."""
    return [match.strip() for match in re.findall(r"\$\{\{(.*?)\}\}", str(value), re.DOTALL)]


def properties_read(expression: str, context: str) -> list[str]:
    """The properties an expression reads from a context: `inputs.a`, `inputs['b']` -> ["a", "b"].

    A name after a `.` (`github.event.inputs.a`) is not the context; string literals are not read.
    """
    tokens = _tokens(expression)
    found = []
    for index, (kind, text) in enumerate(tokens):
        if kind != "name" or text.lower() != context or (index and tokens[index - 1][1] == "."):
            continue
        after = tokens[index + 1 : index + 4]
        if len(after) >= 2 and after[0][1] == "." and after[1][0] == "name":
            found.append(after[1][1])
        elif len(after) == 3 and after[0][1] == "[" and after[1][0] == "string" and after[2][1] == "]":
            found.append(after[1][1][1:-1].replace("''", "'"))
    return found


def evaluate(text: str, contexts: dict[str, Any]) -> Any:
    tokens = _tokens(text)
    parser = _Parser(tokens, contexts)
    value = parser.expression()
    if parser.position != len(tokens):
        raise ValueError(f"unexpected {tokens[parser.position]} in {text!r}")
    return value


def _tokens(text: str) -> list[tuple[str, str]]:
    found, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot read {text[position:]!r}")
        kind = match.lastgroup or ""
        found.append((kind, match[kind]))
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return found


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], contexts: dict[str, Any]) -> None:
        self.tokens = tokens
        self.position = 0
        self.contexts = contexts

    def peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.position]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected}, found {token[1]}")
        self.position += 1
        return token

    def expression(self) -> Any:
        value = self.conjunction()
        while self.peek() == "||":
            self.take()
            right = self.conjunction()
            value = value if truthy(value) else right
        return value

    def conjunction(self) -> Any:
        value = self.comparison()
        while self.peek() == "&&":
            self.take()
            right = self.comparison()
            value = right if truthy(value) else value
        return value

    def comparison(self) -> Any:
        left = self.unary()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            right = self.unary()
            left = _compare(op, left, right)
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.expression()
            self.take(")")
            return value
        if kind == "number":
            return float(text) if "." in text else int(text)
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind != "name":
            raise ValueError(f"unexpected {text}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        value = self.call(text) if self.peek() == "(" else self.contexts.get(text)
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = to_string(self.expression())
                self.take("]")
            value = value.get(key) if isinstance(value, dict) else None
        return value

    def call(self, name: str) -> Any:
        self.take("(")
        arguments = []
        while self.peek() != ")":
            arguments.append(self.expression())
            if self.peek() == ",":
                self.take()
        self.take(")")
        status = self.contexts.get("_status", "success")
        functions: dict[str, Callable[..., Any]] = {
            "success": lambda: status == "success",
            "failure": lambda: status == "failure",
            "always": lambda: True,
            "cancelled": lambda: False,
            "contains": _contains,
            "startswith": lambda a, b: to_string(a).lower().startswith(to_string(b).lower()),
            "endswith": lambda a, b: to_string(a).lower().endswith(to_string(b).lower()),
            "format": lambda f, *a: re.sub(r"\{(\d+)\}", lambda m: to_string(a[int(m[1])]), f),
            "tojson": lambda v: json.dumps(v, indent=2),
            "fromjson": lambda v: json.loads(v),
        }
        return functions[name.lower()](*arguments)


def _contains(search: Any, item: Any) -> bool:
    if isinstance(search, list):
        return any(_compare("==", element, item) for element in search)
    return to_string(item).lower() in to_string(search).lower()


def _compare(op: str, left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        left, right = left.lower(), right.lower()
    elif type(left) is not type(right):
        left, right = _number(left), _number(right)
    if op == "==":
        return left == right
    if op == "!=":
        return left != right
    try:
        return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    except TypeError:
        return False


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value) if str(value).strip() else 0.0
    except ValueError:
        return float("nan")
