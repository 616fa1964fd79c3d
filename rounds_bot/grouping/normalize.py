"""Message normalisation, Drain3/Sentry style: values in a message replaced by placeholders.

The masking rules (`mask_rules.RULES`) are joined into one alternation, so at any position the
earliest rule in the list wins, and the leftmost match in the text wins over a later one. A match
is replaced by `<placeholder>` (but for a start the rule keeps, `MaskRule.kept`, or all but the part it
masks, `MaskRule.masked`); "keep" rules
(placeholder None) replace a match by itself, which shields it from the rules after it (`utf-8` is a
name, not `utf-<int>`).

No rule depends on digit values (see `mask_rules`), but for the digits `mask_numbers` keeps, which are
part of the shape. The engine's shape memo (`shapes.ShapeCache`) relies on that to reuse the masking of
one message for every message of the same shape (see `shape_of`). The input is cut to its first two
non-empty lines and MAX_MESSAGE_CHARS before any rule runs.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from rounds_bot.grouping.mask_code_names import CODE_NAME_RULES, CODE_NAME_WORDS
from rounds_bot.grouping.mask_names import NAME_RULES, SEVENTH_NAME_RULES
from rounds_bot.grouping.mask_numbers import KEPT_DIGITS, NUMBER_RULES, NUMBER_WORDS
from rounds_bot.grouping.mask_rules import CHARACTER_KINDS, RULES, MaskRule

#: characters of a message that are normalised at all; the rest never reaches the rules
MAX_MESSAGE_CHARS = 2048
#: Sentry cuts a message to its first two non-empty lines: what follows is usually a dump
MAX_MESSAGE_LINES = 2


#: per placeholder of a group, the start of its match that stays as it is (`MaskRule.kept`), or the part of
#: it that is masked (`MaskRule.masked`, its flag True), if any
Kept = dict[int, tuple[re.Pattern[str], bool]]
Combined = tuple[re.Pattern[str], list[str | None], Kept]


def _combined(rules: tuple[MaskRule, ...]) -> Combined:
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
                kept[len(placeholders) - 1] = (re.compile(rule.kept), False)
            if rule.masked is not None:
                kept[len(placeholders) - 1] = (re.compile(rule.masked), True)
        branches.append(f"(?=[{characters}])(?:{'|'.join(alternatives)})")
    return re.compile("(?<![A-Za-z0-9])(?:" + "|".join(branches) + ")"), placeholders, kept


def plain_alternation(rules: tuple[MaskRule, ...] = ()) -> re.Pattern[str]:
    """The rules as one ordered alternation: what `_COMBINED` must match exactly (for tests)."""
    return re.compile("|".join(f"(?P<{rule.name}>{rule.pattern})" for rule in rules or RULES))


_COMBINED, _GROUP_PLACEHOLDER, _KEPT = _COMBINED_ALL = _combined(RULES)
#: the rules added in `rounds-fp:8`: more names a runtime's message gives code (`mask_code_names`), and the
#: numbers it gives a failure (`mask_numbers`), kept
ADDED_IN_FP8 = frozenset(rule.name for rule in (*CODE_NAME_RULES, *NUMBER_RULES))
#: the rules `rounds-fp:7` masked with
SEVENTH_RULES = tuple(rule for rule in RULES if rule.name not in ADDED_IN_FP8)
#: the rules added in `rounds-fp:7`: the names a runtime's message gives code, kept (`mask_names`)
ADDED_IN_FP7 = frozenset(rule.name for rule in SEVENTH_NAME_RULES)
#: the rules `rounds-fp:6` masked with
SIXTH_RULES = tuple(rule for rule in SEVENTH_RULES if rule.name not in ADDED_IN_FP7)
#: the rules added in `rounds-fp:6`: literals a runtime prints (`mask_literals`)
ADDED_IN_FP6 = frozenset({"bytes_literal", "query_path", "ruby_object", "quoted_escaped"})
#: the rules `rounds-fp:5` masked with
FIFTH_RULES = tuple(rule for rule in SIXTH_RULES if rule.name not in ADDED_IN_FP6)
#: the rules added in `rounds-fp:5`: dates with a month's name, 12-hour times, PostgreSQL's row values
ADDED_IN_FP5 = frozenset({"date_month_name", "time_12h", "parenthesised_value", "failing_row"})
#: the rules `rounds-fp:3` and `rounds-fp:4` masked with
BEFORE_RULES = tuple(rule for rule in FIFTH_RULES if rule.name not in ADDED_IN_FP5)
#: the rules `rounds-fp:2` masked with: quoted strings and printed structures were text then
PREVIOUS_RULES = tuple(
    rule
    for rule in BEFORE_RULES
    if rule.name not in ("quoted_text", "structured_value", "keep_smtp_enhanced_status")
)

# An earlier version's rules are joined when a message is first read as that version read it, not on import:
# joining one takes 10-20 ms, and a round reads by few of them, if any (a first round by `PREVIOUS_RULES`
# alone, for the templates it looks up), where every `rounds` command that groups imports this module.


@cache
def _seventh() -> Combined:
    return _combined(SEVENTH_RULES)


@cache
def _sixth() -> Combined:
    return _combined(SIXTH_RULES)


@cache
def _fifth() -> Combined:
    return _combined(FIFTH_RULES)


@cache
def _before() -> Combined:
    return _combined(BEFORE_RULES)


@cache
def _previous() -> Combined:
    return _combined(PREVIOUS_RULES)


SHAPE_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_ZEROS = str.maketrans("123456789", "000000000")
_ADDED_WORDS = (*CODE_NAME_WORDS, *NUMBER_WORDS)

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
    return _spans_by(_COMBINED_ALL, text)


def _masked_part(kept: Kept, group: int, match: re.Match[str]) -> tuple[int, int] | None:
    """Where a match of `group` is masked: all of it, but for a start its rule keeps (a Ruby object's class)
    or only the part its rule masks (the address before a port); None when its rule masks none of it (a
    table's name with no qualifier)."""
    start, end = match.span()
    if group not in kept:
        return start, end
    pattern, masks_a_part = kept[group]
    if masks_a_part:
        part = pattern.search(match.string, start, end)
        return None if part is None else part.span()
    head = pattern.match(match.string, start)
    return (start if head is None else head.end()), end


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
    """`text` (UTF-8) with every ASCII digit replaced by 0, but those a rule may keep (`mask_numbers`: a
    status code, a remote port, found by `KEPT_DIGITS`, which reads digits as `\\d` alone): messages of one
    shape are masked the same way. Other digits stay as they are, which only makes shapes more distinct."""
    if not may_keep_digits(text) or KEPT_DIGITS.search(text) is None:
        return text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
    parts: list[str] = []
    position = 0
    for match in KEPT_DIGITS.finditer(text):
        start, end = match.span(match.lastindex or 0)
        parts += [text[position:start].translate(_ZEROS), text[start:end]]
        position = end
    parts.append(text[position:].translate(_ZEROS))
    return "".join(parts).encode("utf-8", "surrogatepass")


def may_keep_digits(text: str) -> bool:
    """Whether `text` holds a literal part of a wording whose digits a rule keeps (`mask_numbers`): if not,
    `KEPT_DIGITS` finds nothing in it, and need not be searched."""
    return any(word in text for word in NUMBER_WORDS)


def may_keep_pieces(text: str) -> bool:
    """Whether `text` holds a literal part of a wording whose name or number a rule `rounds-fp:8` added keeps
    (`mask_code_names`, `mask_numbers`): if not, `kept_pieces` finds none of theirs in it (the names
    `rounds-fp:7` keeps are `shapes`' to look for)."""
    return any(word in text for word in _ADDED_WORDS)


def normalize_previous(message: str) -> str:
    """The message as `rounds-fp:2` normalised it (`PREVIOUS_RULES`): to find the templates it
    mined, so a signature it created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, _spans_by_then(_previous(), text))


def normalize_before(message: str) -> str:
    """The message as `rounds-fp:3` and `rounds-fp:4` normalised it (`BEFORE_RULES`): to find the
    templates they mined, so a signature they created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, mask_spans_before(text))


def mask_spans_before(text: str) -> tuple[Span, ...]:
    """`mask_spans` as `rounds-fp:3` and `rounds-fp:4` found them (`BEFORE_RULES`)."""
    return _spans_by_then(_before(), text)


class Piece(NamedTuple):
    """A part of a message a rule keeps as a name of code (`mask_names`) or a number (`mask_numbers`)."""

    start: int
    end: int
    #: its digits are read as written (a number's), not as zero (a name's: `shapes`)
    digits: bool
    #: its rule is one `rounds-fp:8` added
    since_fp8: bool


#: per group of `_COMBINED` and `_seventh()` (in the order `_combined` makes them), the rule it matches
_GROUP_RULES, _SEVENTH_GROUP_RULES = (
    [None, *(rule for kind in CHARACTER_KINDS for rule in rules if kind in rule.starts)]
    for rules in (RULES, SEVENTH_RULES)
)
_NAMES = frozenset(rule.name for rule in NAME_RULES)
_NUMBERS = frozenset(rule.name for rule in NUMBER_RULES)


def kept_pieces(text: str, *, seventh: bool = False) -> tuple[Piece, ...]:
    """Where the rules (`seventh`: those of `rounds-fp:7`) keep a name of code or a number, left to right; a
    rule that masks a part of its match (`MaskRule.masked`) keeps what is before and after that part."""
    rules, group_rules = (_seventh(), _SEVENTH_GROUP_RULES) if seventh else (_COMBINED_ALL, _GROUP_RULES)
    pieces: list[Piece] = []
    for match in rules[0].finditer(text):
        rule = group_rules[match.lastindex or 0]
        if rule is None or (rule.name not in _NAMES and rule.name not in _NUMBERS):
            continue
        start, end = match.span()
        part = _masked_part(rules[2], match.lastindex or 0, match) if rule.masked else None
        digits, added = rule.name in _NUMBERS, rule.name in ADDED_IN_FP8
        for begin, finish in ((start, end),) if part is None else ((start, part[0]), (part[1], end)):
            if begin < finish:
                pieces.append(Piece(begin, finish, digits, added))
    return tuple(pieces)


def mask_spans_seventh(text: str) -> tuple[Span, ...]:
    """`mask_spans` as `rounds-fp:7` found them (`SEVENTH_RULES`)."""
    return _spans_by(_seventh(), text)


def normalize_seventh(message: str) -> str:
    """The message as `rounds-fp:7` normalised it (`SEVENTH_RULES`: the names `mask_code_names` keeps and the
    numbers `mask_numbers` keeps masked as values): to find the templates it mined, so a signature it created
    keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, mask_spans_seventh(text))


def mask_spans_sixth(text: str) -> tuple[Span, ...]:
    """`mask_spans` as `rounds-fp:6` found them (`SIXTH_RULES`)."""
    return _spans_by_then(_sixth(), text)


def normalize_sixth(message: str) -> str:
    """The message as `rounds-fp:6` normalised it (`SIXTH_RULES`, a code's name masked as a quoted value):
    to find the templates it mined, so a signature it created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, mask_spans_sixth(text))


def mask_spans_fifth(text: str) -> tuple[Span, ...]:
    """`mask_spans` as `rounds-fp:5` found them (`FIFTH_RULES`)."""
    return _spans_by_then(_fifth(), text)


def normalize_fifth(message: str) -> str:
    """The message as `rounds-fp:5` normalised it (`FIFTH_RULES`): to find the templates it mined, so a
    signature it created keeps receiving its messages."""
    text = truncate(message)
    return apply_spans(text, mask_spans_fifth(text))


def _spans_by(rules: Combined, text: str, kept: Kept | None = None) -> tuple[Span, ...]:
    """The spans the rules (as `_combined` joins them) find, each rule's kept or masked part read by `kept`
    (`rounds-fp:6` and the versions before read none: `_spans_by_then`)."""
    pattern, placeholders, own = rules
    kept = own if kept is None else kept
    spans = []
    for match in pattern.finditer(text):
        group = match.lastindex or 0
        placeholder = placeholders[group]
        if placeholder is not None and (part := _masked_part(kept, group, match)) is not None:
            spans.append((*part, placeholder))
    return tuple(spans)


def _spans_by_then(rules: Combined, text: str) -> tuple[Span, ...]:
    """The spans an earlier version's rules find, as it found them: none of them kept a start then."""
    return _spans_by(rules, text, {})
