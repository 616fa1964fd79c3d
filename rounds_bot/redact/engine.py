"""How the rules are applied to a text: one scan for all of them, then only the rules that may match.

    apply(rules, text, counts) -> text     every rule applied in order, as `rule.RuleSet` applies them

With Hyperscan (`scan.py`) a text is scanned once for every rule's keywords and every rule's translated
pattern; a rule runs when its keywords occur in the text as it came in (as ever) and the scan reported its
pattern, and then only near the reported ends (`scan.windows`) when that finds the same matches. A rule that
changes the text has the text scanned again for the rules after it: a replacement can make a match that was
not there. Without Hyperscan (no wheel for the platform) the rules run as `rule.RuleSet` applies them; both
give the same text and the same counts (`tests/test_redact_engine.py`).
"""

from __future__ import annotations

import logging
from collections import Counter

from rounds_bot.redact.rule import Rule, RuleSet, _apply_rule
from rounds_bot.redact.rule import rule_set as keyword_rule_set
from rounds_bot.redact.scan import Prefilter, windows

log = logging.getLogger(__name__)


class ScanningRuleSet:
    """Rules applied after one Hyperscan scan of the text (`scan.Prefilter`)."""

    def __init__(self, rules: tuple[Rule, ...], prefilter: Prefilter) -> None:
        self.rules = rules
        self.prefilter = prefilter
        self._keyword_ids = tuple(
            frozenset(prefilter.keyword_id(keyword) for keyword in one.keywords) for one in rules
        )
        unscanned = set(range(len(rules))) - set(prefilter.translated)
        # rules the scan has no translation for run wherever their keywords occur (without keywords: always)
        self._always = frozenset(index for index in unscanned if not rules[index].keywords)
        by_keyword: dict[int, set[int]] = {}
        for index in unscanned:
            for number in self._keyword_ids[index]:
                by_keyword.setdefault(number, set()).add(index)
        self._by_keyword = {number: frozenset(indexes) for number, indexes in by_keyword.items()}

    def apply(self, text: str, counts: Counter[str]) -> str:
        prefilter = self.prefilter
        found = prefilter.scan(text)
        keywords = found.keywords
        lowered = None if text.isascii() else text.lower()  # the scan only narrows the keywords then
        ends = found.ends
        unscanned = set(self._always)
        for number in keywords:
            unscanned.update(self._by_keyword.get(number, ()))
        pending = sorted(unscanned.union(ends))
        position = 0
        while position < len(pending):
            index = pending[position]
            position += 1
            one = self.rules[index]
            if one.keywords and not self._wanted(index, one, keywords, lowered):
                continue
            how = prefilter.translated.get(index)
            matches = None
            if how is not None:
                reported = ends.get(index)
                if reported is None:
                    continue
                matches = windows(one, how, text, reported)
            changed = _apply_rule(one, text, counts, matches)
            if changed is not text:  # a replacement can make a match that was not there: scan again
                text = changed
                ends = prefilter.scan(text).ends
                pending = sorted(i for i in unscanned.union(ends) if i > index)
                position = 0
        return text

    def _wanted(self, index: int, one: Rule, keywords: set[int], lowered: str | None) -> bool:
        """Whether a keyword of the rule occurs in the text as it came in (lowercased, as `Rule.wanted`)."""
        if keywords.isdisjoint(self._keyword_ids[index]):
            return False
        return lowered is None or one.wanted(lowered)


_SETS: dict[int, tuple[tuple[Rule, ...], ScanningRuleSet | RuleSet]] = {}


def rule_set(rules: tuple[Rule, ...]) -> ScanningRuleSet | RuleSet:
    """The engine for a tuple of rules, built once per tuple: scanning when Hyperscan is there."""
    known = _SETS.get(id(rules))
    if known is None or known[0] is not rules:
        prefilter = Prefilter.of(rules)
        engine: ScanningRuleSet | RuleSet
        if prefilter is None:
            log.debug("redaction without Hyperscan (not installed): each rule checks its keywords")
            engine = keyword_rule_set(rules)
        else:
            engine = ScanningRuleSet(rules, prefilter)
        known = _SETS[id(rules)] = (rules, engine)
    return known[1]


def apply(rules: tuple[Rule, ...], text: str, counts: Counter[str]) -> str:
    """`text` with every rule applied in order (each only when its keywords occur in `text`)."""
    return rule_set(rules).apply(text, counts)
