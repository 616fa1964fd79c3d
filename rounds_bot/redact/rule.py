"""A redaction rule, and how every rule is applied: what it finds, what it keeps, how it is counted.

A rule runs only when one of its keywords occurs in the text (lowercase literals, checked with `in`, the way
gitleaks pre-filters its rules), so most of the rule set costs nothing on most texts. Every pattern is
bounded: no quantifier without an upper limit where a match can fail late, so a rule's time grows with the
text's length, never with its square.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

REDACTED = "[REDACTED:{category}]"
#: After a token match, the replacement also covers the token characters that follow it: a token longer
#: than its pattern's limit must not leave a tail behind.
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-+/=~]*")

Accept = Callable[[re.Match[str]], bool]


@dataclass(frozen=True)
class Rule:
    """One redaction rule: the pattern, the group that holds the secret, and when the rule runs."""

    category: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...] = ()
    group: int = 0
    accept: Accept | None = None
    grow: bool = False

    def wanted(self, lowered: str) -> bool:
        return not self.keywords or any(keyword in lowered for keyword in self.keywords)


def rule(
    category: str,
    pattern: str,
    *keywords: str,
    group: int = 0,
    accept: Accept | None = None,
    grow: bool = False,
    flags: int = 0,
) -> Rule:
    return Rule(category, re.compile(pattern, flags), tuple(k.lower() for k in keywords), group, accept, grow)


def token(category: str, pattern: str, *keywords: str, flags: int = 0) -> Rule:
    """A vendor token with a recognisable prefix; the replacement grows over the token's tail."""
    return rule(category, pattern, *keywords, grow=True, flags=flags)


def is_redacted(value: str) -> bool:
    return "[REDACTED:" in value


def apply(rules: tuple[Rule, ...], text: str, counts: Counter[str]) -> str:
    lowered = text.lower()
    for one in rules:
        if one.wanted(lowered):
            text = _apply_rule(one, text, counts)
    return text


def _apply_rule(one: Rule, text: str, counts: Counter[str]) -> str:
    replacement = REDACTED.format(category=one.category)
    pieces: list[str] = []
    cursor = 0
    for match in one.pattern.finditer(text):
        start, end = match.span(one.group)
        if start < 0 or start < cursor or is_redacted(match.group(one.group)):
            continue
        if one.accept is not None and not one.accept(match):
            continue
        value = match.group(one.group)
        kept = replacement
        if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
            kept = value[0] + replacement + value[0]  # keep the quotes: JSON stays JSON
        if one.grow:
            tail = _TOKEN_TAIL.match(text, end)
            end = tail.end() if tail else end
        pieces += [text[cursor:start], kept]
        counts[one.category] += 1
        cursor = end
    if not pieces:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)
