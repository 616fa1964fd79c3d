"""A redaction rule, and how every rule is applied: what it finds, what it keeps, how it is counted.

A rule runs only when one of its keywords occurs in the text (lowercase literals, the way gitleaks
pre-filters its rules), so most of the rule set costs nothing on most texts. Which rules a text wants is
found in one pass for all of them (`RuleSet`): an Aho-Corasick automaton of every keyword (pyahocorasick)
scans the lowercased text once, and the one-character keywords are looked up directly. A rule without
keywords always runs. The rules then run in their order, each on the text the ones before it left, exactly
as if each had checked its own keywords on the text as it came in. Every pattern is bounded: no quantifier
without an upper limit where a match can fail late, so a rule's time grows with the text's length, never
with its square.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import ahocorasick

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


class RuleSet:
    """Rules made ready to be applied in one pass: which of them a text wants is one scan of the text."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self._always = frozenset(index for index, one in enumerate(rules) if not one.keywords)
        by_keyword: dict[str, set[int]] = {}
        for index, one in enumerate(rules):
            for keyword in one.keywords:
                by_keyword.setdefault(keyword, set()).add(index)
        # one-character keywords (`=`, `:`, `@`) occur in most texts: `in` finds them without a match each
        self._single = tuple((k, frozenset(v)) for k, v in by_keyword.items() if len(k) == 1)
        self._automaton: ahocorasick.Automaton | None = None
        longer = {k: frozenset(v) for k, v in by_keyword.items() if len(k) > 1}
        if longer:
            self._automaton = ahocorasick.Automaton()
            for keyword, indexes in longer.items():
                self._automaton.add_word(keyword, indexes)
            self._automaton.make_automaton()

    def wanted(self, lowered: str) -> list[int]:
        """The indexes of the rules whose keywords occur in `lowered` (or that have none), in order."""
        found = set(self._always)
        for keyword, indexes in self._single:
            if keyword in lowered:
                found.update(indexes)
        if self._automaton is not None:
            for _, indexes in self._automaton.iter(lowered):
                found.update(indexes)
        return sorted(found)

    def apply(self, text: str, counts: Counter[str]) -> str:
        rules = self.rules
        for index in self.wanted(text.lower()):
            text = _apply_rule(rules[index], text, counts)
        return text


_RULE_SETS: dict[int, tuple[tuple[Rule, ...], RuleSet]] = {}


def rule_set(rules: tuple[Rule, ...]) -> RuleSet:
    """The RuleSet of a tuple of rules, built once per tuple."""
    known = _RULE_SETS.get(id(rules))
    if known is None or known[0] is not rules:
        known = _RULE_SETS[id(rules)] = (rules, RuleSet(rules))
    return known[1]


def apply(rules: tuple[Rule, ...], text: str, counts: Counter[str]) -> str:
    """`text` with every rule applied in order (each only when its keywords occur in `text`)."""
    return rule_set(rules).apply(text, counts)


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
