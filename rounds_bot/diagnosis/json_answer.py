"""A JSON object from a model's answer text, whichever way the model wrapped it, read within bounds.

Both back-ends read the answer this way when it did not arrive as structured output: the whole
text, else a fenced ```json block, else the text between the outermost braces.

A model's answer is untrusted input: it is read only when it is at most MAX_ANSWER_CHARS long and
nested at most MAX_ANSWER_DEPTH deep (a diagnosis is three levels deep: the answer, its evidence list,
one item). The standard library's parser recurses once per level and raises RecursionError near a
thousand, so depth is measured first, in one linear pass, and nothing deeper is ever parsed. Every
step is linear in the answer's length, so reading is bounded in time too. `answer_problem` says what
was wrong, for the diagnosis's status and the round report.

An answer that says two things is read as neither: an object that repeats a key (the standard library
keeps the last value, other parsers the first; RFC 8259 section 4 leaves it to the parser, I-JSON, RFC 7493
section 2.3, forbids it), or an answer split across fenced blocks holding different objects (which of them
rounds took, a reader of the raw answer may not have); so is one of several objects printed one after
another. One object repeated whole is one answer. What an answer's JSON says is the model's text: a reason
that quotes it (a repeated key) quotes it redacted and cut, as any excerpt of the answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rounds_bot.redact import redact

#: the longest answer read; a diagnosis is a few thousand characters
MAX_ANSWER_CHARS = 40_000
#: the deepest nesting read in an answer (a diagnosis is 3 deep, a CLI event about 8 without its answer)
MAX_ANSWER_DEPTH = 32
#: fenced blocks looked at in an answer's text, at most
MAX_FENCED_BLOCKS = 8
#: objects printed one after another looked at in an answer's text, at most
MAX_OBJECTS_IN_A_ROW = 8
#: how much of a repeated key a reason quotes, and of the JSON parser's complaint
QUOTED_CHARS = 60
COMPLAINT_CHARS = 120

_TOKENS = re.compile(r'[\\"\[\]{}]')
_FENCE = "```"


def nesting_depth(text: str, stop_above: int = MAX_ANSWER_DEPTH) -> int:
    """How deep JSON text nests (strings skipped); counting stops once it passes `stop_above`.
    One pass over the characters that matter (quotes, backslashes, brackets), never backtracking."""
    depth = deepest = 0
    in_string = False
    escaped_at = -1
    for match in _TOKENS.finditer(text):
        token, at = match.group(), match.start()
        if in_string:
            if at == escaped_at:
                continue
            if token == "\\":
                escaped_at = at + 1
            elif token == '"':
                in_string = False
            continue
        if token == '"':
            in_string = True
        elif token in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_above:
                    return deepest
        elif token in "]}":
            depth = max(depth - 1, 0)
    return deepest


def answer_problem(text: str) -> str | None:
    """Why an answer's text is not read (too long, too deep, saying two things), or None when it is
    within bounds: an answer without any JSON object in it has no problem here, only no answer."""
    return read_answer(text)[1]


def _bounds_problem(text: str) -> str | None:
    if len(text) > MAX_ANSWER_CHARS:
        return f"the answer is {len(text):,} characters; at most {MAX_ANSWER_CHARS:,} are read"
    depth = nesting_depth(text)
    if depth > MAX_ANSWER_DEPTH:
        return f"the answer nests more than {MAX_ANSWER_DEPTH} levels deep; a diagnosis needs 3"
    return None


def value_problem(value: Any) -> str | None:
    """`answer_problem` for an answer that arrived already parsed (the CLI's structured output)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return f"the answer nests more than {MAX_ANSWER_DEPTH} levels deep; a diagnosis needs 3"
    return _bounds_problem(text)


def parse_json_answer(text: str) -> dict[str, Any] | None:
    """A JSON object from model text: the whole text, a fenced block, or the outermost braces. None when
    there is none, or the text is out of bounds or says two things (`answer_problem` says which)."""
    return read_answer(text)[0]


def read_answer(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The answer's object, or why it is not read: the whole text when it is one object; else every
    fenced block's, which must agree; else the text between the outermost braces, which must be one
    object (or the same object repeated)."""
    text = text.strip()
    problem = _bounds_problem(text)
    if problem is not None:
        return None, problem
    try:
        whole = _load(text)
        if whole is not None:
            return whole, None
        found = _one_answer([_load(block) for block in _fenced_blocks(text)])
        if found:
            return _only(found)
        if "{" in text and "}" in text:
            return _between_braces(text[text.index("{") : text.rindex("}") + 1])
    except DuplicateKey as error:
        return None, repeated_key_problem(error.key)
    return None, None


def repeated_key_problem(key: str) -> str:
    """The reason for an answer that names `key` twice: the key is the model's text, so it is shown on one
    line, cut and redacted (a key can be a token the model read)."""
    shown = " ".join(key.split())
    shown = shown if len(shown) <= QUOTED_CHARS else shown[: QUOTED_CHARS - 1] + "…"
    return f"the answer repeats the key {redact(shown)!r}"


def _one_answer(parsed: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The distinct objects of `parsed`, without those that stand inside another (an evidence item the
    prose quotes again is no second answer)."""
    found: list[dict[str, Any]] = []
    for value in parsed:
        if value is not None and value not in found:
            found.append(value)
    return [part for part in found if not any(_holds(other, part) for other in found)]


def _only(found: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str | None]:
    if len(found) > 1:
        return None, f"the answer holds {len(found)} different JSON objects; a diagnosis is one"
    return found[0], None


def _between_braces(candidate: str) -> tuple[dict[str, Any] | None, str | None]:
    """The text from the first `{` to the last `}`: one object, else the objects printed in it one after
    another (the text between them skipped), else why its JSON does not parse, in the parser's words."""
    whole = _load(candidate)
    if whole is not None:
        return whole, None
    objects, complete = _objects_in_a_row(candidate)
    found = _one_answer(objects)
    if len(found) > 1 or (found and complete):
        return _only(found)  # several different answers; or one, repeated
    return None, _parse_problem(candidate)


def _objects_in_a_row(candidate: str) -> tuple[list[dict[str, Any] | None], bool]:
    """The JSON values `candidate` holds one after another (None for one that is no object), up to the
    first that does not parse, and whether they are all of it (the text between them aside)."""
    decoder = json.JSONDecoder(object_pairs_hook=_unique_keys)
    objects: list[dict[str, Any] | None] = []
    at = 0
    while at >= 0 and len(objects) < MAX_OBJECTS_IN_A_ROW:
        try:
            value, end = decoder.raw_decode(candidate, at)
        except DuplicateKey:
            raise
        except (ValueError, RecursionError):
            return objects, False
        objects.append(value if isinstance(value, dict) else None)
        at = candidate.find("{", end)
    return objects, at < 0


def _parse_problem(candidate: str) -> str | None:
    """What the JSON parser says is wrong with `candidate`, cut to a phrase; None when nothing is."""
    try:
        json.loads(candidate, object_pairs_hook=_unique_keys)
    except DuplicateKey:
        raise
    except (ValueError, RecursionError) as error:
        complaint = " ".join(str(error).split())
        complaint = complaint if len(complaint) <= COMPLAINT_CHARS else complaint[: COMPLAINT_CHARS - 1] + "…"
        return f"the answer's JSON does not parse: {complaint}"
    return None


def _holds(whole: object, part: dict[str, Any]) -> bool:
    """`part` stands somewhere inside `whole` (a value of its objects or an item of its lists), not as
    `whole` itself."""
    values = whole.values() if isinstance(whole, dict) else whole if isinstance(whole, list) else ()
    return any(value == part or _holds(value, part) for value in values)


def _fenced_blocks(text: str) -> list[str]:
    """The bodies of the first MAX_FENCED_BLOCKS ``` blocks, without their info string (one pass)."""
    parts = text.split(_FENCE)
    blocks = []
    for inside in parts[1:-1:2][:MAX_FENCED_BLOCKS]:
        first, _, rest = inside.partition("\n")
        body = rest if first.strip().lower() in ("", "json") else inside
        blocks.append(body.strip())
    return blocks


class DuplicateKey(ValueError):
    """A JSON object that names one key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise DuplicateKey(key)
        value[key] = item
    return value


def _load(text: str, max_depth: int = MAX_ANSWER_DEPTH) -> dict[str, Any] | None:
    """`json_object`, but a repeated key raises DuplicateKey instead of reading as None."""
    if not text.startswith("{") or nesting_depth(text, max_depth) > max_depth:
        return None
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except DuplicateKey:
        raise
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def repeated_key(text: str, *, max_depth: int = MAX_ANSWER_DEPTH) -> str | None:
    """The key an object of `text` names twice (the first found), when `text` is JSON that does."""
    try:
        _load(text, max_depth)
    except DuplicateKey as error:
        return error.key
    return None


def json_object(text: str, *, max_depth: int = MAX_ANSWER_DEPTH) -> dict[str, Any] | None:
    """`text` parsed as JSON when it is one object nested at most `max_depth` deep, naming no key twice,
    else None."""
    try:
        return _load(text, max_depth)
    except DuplicateKey:
        return None
