"""The straightforward redaction engine, kept as the reference the package's engine is proven equal to.

Each rule in order checks its own keywords (`in`, on the text as it came in, lowercased) and, when one
occurs or it has none, runs over the text the rules before it left: the way redaction was first written.
The package applies the same rules with one pass to find what a text wants (`rounds_bot.redact.rule`);
`tests/test_redact_engine.py` checks both give the same text and the same counts.
"""

from __future__ import annotations

import re
from collections import Counter

from rounds_bot.redact.decode import rejudge
from rounds_bot.redact.phrases import seed_phrases
from rounds_bot.redact.rule import REDACTED, Rule, is_redacted
from rounds_bot.redact.text import Redaction, sanitize

_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-+/=~]*")


def reference_apply(rules: tuple[Rule, ...], text: str, counts: Counter[str]) -> str:
    lowered = text.lower()
    for one in rules:
        if not one.keywords or any(keyword in lowered for keyword in one.keywords):
            text = _reference_rule(one, text, counts)
    return text


def reference_redact(rules: tuple[Rule, ...], text: str) -> Redaction:
    """`redact_text`'s steps (the rules, seed phrases, then what an encoding hid, judged decoded) with the
    rules applied by the reference engine: only the engine differs."""
    counts: Counter[str] = Counter()
    done = seed_phrases(reference_apply(rules, sanitize(text), counts), counts)

    def judge(view: str) -> tuple[str, list[str]]:
        found: Counter[str] = Counter()
        return seed_phrases(reference_apply(rules, view, found), found), list(found.elements())

    done, decoded = rejudge(done, judge)
    counts.update(decoded)
    return Redaction(done, counts)


def _reference_rule(one: Rule, text: str, counts: Counter[str]) -> str:
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
            kept = value[0] + replacement + value[0]
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
