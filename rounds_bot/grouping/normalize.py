"""Message normalisation, Drain3/Sentry style: values in a message replaced by placeholders.

The masking rules (`mask_rules.RULES`) are joined into one alternation, so at any position the
earliest rule in the list wins, and the leftmost match in the text wins over a later one. A match
is replaced by `<placeholder>` (but for a start the rule keeps, `MaskRule.kept`); "keep" rules
(placeholder None) replace a match by itself, which shields it from the rules after it (`utf-8` is a
name, not `utf-<int>`).

No rule depends on digit values (see `mask_rules`). The engine's shape memo (`shapes.ShapeCache`)
relies on that to reuse the masking of one message for every message of the same shape (see
`shape_of`). The input is cut to its first two non-empty lines and MAX_MESSAGE_CHARS before any
rule runs.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.mask_names import NAME_RULES
from rounds_bot.grouping.mask_rules import CHARACTER_KINDS, RULES, MaskRule

#: characters of a message that are normalised at all; the rest never reaches the rules
MAX_MESSAGE_CHARS = 2048
#: Sentry cuts a message to its first two non-empty lines: what follows is usually a dump
MAX_MESSAGE_LINES = 2


#: per placeholder of a group, the start of its match that stays as it is (`MaskRule.kept`), if any
Kept = dict[int, re.Pattern[str]]


def _combined(rules: tuple[MaskRule, ...]) -> tuple[re.Pattern[str], list[str | None], Kept]:
    """One regular expression for all rules, and the placeholder of each of its groups.

    No rule can start right after a letter or digit (each begins at a boundary: `\\b`, a
    lookbehind, or `=`), so a lookbehind in front skips positions inside words. Then the kind of
    the first character picks the branch holding only the rules that can start with it, in list
    order: the result is the one of the plain ordered alternation, at a fraction of the cost.
    A rule with a kept start (`MaskRule.kept`) also gives, under its group, the pattern of that start.
    """
    branches: list[str] = []
    placeholders: list[str | None] = [None]  # group 0 is the whole match
    kept: Kept = {}
    for kind, characters in CHARACTER_KINDS.items():
        members = [rule for rule in rules if kind in rule.starts]
        if not members:
            continue
        alternatives = []
        for rule in members:
            alternatives.append(f"({rule.pattern})")
            placeholders.append(f"<{rule.placeholder}>" if rule.placeholder else None)
            if rule.kept is not None:
                kept[len(placeholders) - 1] = re.compile(rule.kept)
        branches.append(f"(?=[{characters}])(?:{'|'.join(alternatives)})")
    return re.compile("(?<![A-Za-z0-9])(?:" + "|".join(branches) + ")"), placeholders, kept


def plain_alternation(rules: tuple[MaskRule, ...] = ()) -> re.Pattern[str]:
    """The rules as one ordered alternation: what `_COMBINED` must match exactly (for tests)."""
    return re.compile("|".join(f"(?P<{rule.name}>{rule.pattern})" for rule in rules or RULES))


_COMBINED, _GROUP_PLACEHOLDER, _KEPT = _combined(RULES)
#: the rules added in `rounds-fp:7`: the names a runtime's message gives code, kept (`mask_names`)
ADDED_IN_FP7 = frozenset(rule.name for rule in NAME_RULES)
#: the groups of `_COMBINED` that are those rules' (in the order `_combined` makes them)
_NAME_GROUPS = frozenset(
    index
    for index, rule in enumerate(
        (rule for kind in CHARACTER_KINDS for rule in RULES if kind in rule.starts), start=1
    )
    if rule.name in ADDED_IN_FP7
)
#: the rules `rounds-fp:6` masked with
SIXTH_RULES = tuple(rule for rule in RULES if rule.name not in ADDED_IN_FP7)
_SIXTH = _combined(SIXTH_RULES)
#: the rules added in `rounds-fp:6`: literals a runtime prints (`mask_literals`)
ADDED_IN_FP6 = frozenset({"bytes_literal", "query_path", "ruby_object", "quoted_escaped"})
#: the rules `rounds-fp:5` masked with
FIFTH_RULES = tuple(rule for rule in SIXTH_RULES if rule.name not in ADDED_IN_FP6)
_FIFTH = _combined(FIFTH_RULES)
#: the rules added in `rounds-fp:5`: dates with a month's name, 12-hour times, PostgreSQL's row values
ADDED_IN_FP5 = frozenset({"date_month_name", "time_12h", "parenthesised_value", "failing_row"})
#: the rules `rounds-fp:3` and `rounds-fp:4` masked with
BEFORE_RULES = tuple(rule for rule in FIFTH_RULES if rule.name not in ADDED_IN_FP5)
_BEFORE = _combined(BEFORE_RULES)
#: the rules `rounds-fp:2` masked with: quoted strings and printed structures were text then
PREVIOUS_RULES = tuple(
    rule
    for rule in BEFORE_RULES
    if rule.name not in ("quoted_text", "structured_value", "keep_smtp_enhanced_status")
)
_PREVIOUS = _combined(PREVIOUS_RULES)
SHAPE_DIGITS = bytes.maketrans(b"123456789", b"000000000")

Span = tuple[int, int, str]  # start, end, placeholder text


def truncate(message: str) -> str:
    """The part of a message that is normalised: its first non-empty lines, cut to a bound."""
    if len(message) <= MAX_MESSAGE_CHARS and "\n" not in message:
        return message.strip()
    head = message[: MAX_MESSAGE_CHARS * 2]
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    text = " ".join(lines[:MAX_MESSAGE_LINES])
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    # Cut at a space, so the last word is never half a value (`blk_-` instead of `blk_-123`).
    cut = text[: MAX_MESSAGE_CHARS + 1]
    space = cut.rfind(" ")
    return cut[:space] if space > 0 else cut[:MAX_MESSAGE_CHARS]


def mask_spans(text: str) -> tuple[Span, ...]:
    """Where the rules replace something in `text`, left to right."""
    spans: list[Span] = []
    for match in _COMBINED.finditer(text):
        group = match.lastindex or 0
        placeholder = _GROUP_PLACEHOLDER[group]
        if placeholder is not None:
            start = match.start()
            head = _KEPT[group].match(text, start) if group in _KEPT else None  # (a Ruby object's class)
            if head is not None:
                start = head.end()
            spans.append((start, match.end(), placeholder))
    return tuple(spans)


def apply_spans(text: str, spans: tuple[Span, ...]) -> str:
    if not spans:
        return text
    parts: list[str] = []
    position = 0
    for start, end, placeholder in spans:
        parts.append(text[position:start])
        parts.append(placeholder)
        position = end
    parts.append(text[position:])
    return "".join(parts)


def normalize_uncached(message: str) -> str:
    """The normalised form of a message, computed from scratch (`ShapeCache` has the fast path)."""
    text = truncate(message)
    return apply_spans(text, mask_spans(text))


def shape_of(text: str) -> bytes:
    """`text` (UTF-8) with every ASCII digit replaced by 0: messages of one shape are masked the
    same way. Other digits stay as they are, which only makes shapes more distinct."""
    return text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)


def normalize_previous(message: str) -> str:
    """The message as `rounds-fp:2` normalised it (`PREVIOUS_RULES`): to find the templates it
    mined, so a signature it created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, _spans_by(_PREVIOUS, text))


def normalize_before(message: str) -> str:
    """The message as `rounds-fp:3` and `rounds-fp:4` normalised it (`BEFORE_RULES`): to find the
    templates they mined, so a signature they created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, mask_spans_before(text))


def mask_spans_before(text: str) -> tuple[Span, ...]:
    """`mask_spans` as `rounds-fp:3` and `rounds-fp:4` found them (`BEFORE_RULES`)."""
    return _spans_by(_BEFORE, text)


def name_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Where the rules keep a name a runtime's message gives code (`mask_names`), left to right."""
    return tuple(match.span() for match in _COMBINED.finditer(text) if match.lastindex in _NAME_GROUPS)


def mask_spans_sixth(text: str) -> tuple[Span, ...]:
    """`mask_spans` as `rounds-fp:6` found them (`SIXTH_RULES`)."""
    return _spans_by(_SIXTH, text)


def normalize_sixth(message: str) -> str:
    """The message as `rounds-fp:6` normalised it (`SIXTH_RULES`, a code's name masked as a quoted value):
    to find the templates it mined, so a signature it created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, mask_spans_sixth(text))


def mask_spans_fifth(text: str) -> tuple[Span, ...]:
    """`mask_spans` as `rounds-fp:5` found them (`FIFTH_RULES`)."""
    return _spans_by(_FIFTH, text)


def normalize_fifth(message: str) -> str:
    """The message as `rounds-fp:5` normalised it (`FIFTH_RULES`): to find the templates it mined, so a
    signature it created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, mask_spans_fifth(text))


def _spans_by(rules: tuple[re.Pattern[str], list[str | None], Kept], text: str) -> tuple[Span, ...]:
    """The spans an earlier version's rules (as `_combined` joins them) find: none of them keeps a start."""
    pattern, placeholders, _ = rules
    spans = []
    for match in pattern.finditer(text):
        placeholder = placeholders[match.lastindex or 0]
        if placeholder is not None:
            spans.append((match.start(), match.end(), placeholder))
    return tuple(spans)
