"""How the rules are applied to a text: one scan for all of them, then only the rules that may match.

    apply(rules, text, counts) -> text     every rule applied in order, as `rule.RuleSet` applies them

With Hyperscan (`scan.py`) a text is scanned once for every rule's keywords and every rule's translated
pattern; a rule runs when its keywords occur in the text as it came in (as ever) and the scan reported its
pattern, and then only near the reported ends (`scan_windows.windows`) when that finds the same matches. A
rule that changes the text has the text scanned again for the rules after it: a replacement can make a match
that was not there. Without Hyperscan (no wheel for the platform) the rules run as `rule.RuleSet` applies
them; both give the same text and the same counts (`tests/test_redact_engine.py`).
"""

from __future__ import annotations

import logging
from collections import Counter

from rounds_bot.redact import decode, phrases
from rounds_bot.redact.rule import Rule, RuleSet, _apply_rule
from rounds_bot.redact.rule import rule_set as keyword_rule_set
from rounds_bot.redact.scan import Prefilter, Scan
from rounds_bot.redact.scan_windows import windows

log = logging.getLogger(__name__)


#: Characters of text outside ASCII the keyword engine (`rule.RuleSet`) redacts before the scan's database
#: for such text is built (unless an earlier round built it: then it is loaded from the cache at once):
#: building it costs about what the keyword engine takes for this much text, and many rounds see less (a
#: non-ASCII character here and there, or a decoded run)
OTHER_TEXT_WITH_KEYWORDS = 2_000_000


class ScanningRuleSet:
    """Rules applied after one Hyperscan scan of the text (`scan.Prefilter`)."""

    def __init__(self, rules: tuple[Rule, ...], prefilter: Prefilter) -> None:
        self.rules = rules
        self.prefilter = prefilter
        unscanned = set(range(len(rules))) - set(prefilter.translated)
        # rules the scan has no translation for run wherever their keywords occur (without keywords: always)
        self._always = frozenset(index for index in unscanned if not rules[index].keywords)
        by_keyword: dict[int, set[int]] = {}
        for index in unscanned:
            for keyword in rules[index].keywords:
                by_keyword.setdefault(prefilter.keyword_id(keyword), set()).add(index)
        self._by_keyword = {number: frozenset(indexes) for number, indexes in by_keyword.items()}
        self._other_chars = 0  # of text outside ASCII redacted with keywords so far

    def clears(self, text: str) -> frozenset[str] | None:
        """The gates the scan finds in an ASCII `text` when it finds that no rule may match it (`apply_gated`
        then gives the text back as it is, with these gates); None when some rule may."""
        found = self.prefilter.scan(text)
        return found.gates if self.clear(found) else None

    def clear(self, found: Scan) -> bool:
        """No rule to run on a text the scan found `found` in: none reported, none always run, no keyword
        of a rule (gates alone, or none); `apply_gated` then gives the text back with `found.gates`."""
        if found.ends or self._always:
            return False
        by_keyword = self._by_keyword
        return not found.keywords or not any(number in by_keyword for number in found.keywords)

    def apply(self, text: str, counts: Counter[str]) -> str:
        return self.apply_gated(text, counts)[0]

    def apply_gated(
        self, text: str, counts: Counter[str], scanned: Scan | None = None
    ) -> tuple[str, frozenset[str] | None]:
        """`apply`, and the gates the scan found in the text it gives back (None when the keywords picked
        the rules). A rule that changes the text has it scanned again, so the last scan always describes the
        text given back: its gates are the gates of that text. `scanned`: what a scan of the ASCII `text`
        found, or more (`Prefilter.scan_many`), in place of its first scan."""
        prefilter = self.prefilter
        if scanned is None and not text.isascii() and not prefilter.ready(ascii_only=False):
            self._other_chars += len(text)
            if self._other_chars <= OTHER_TEXT_WITH_KEYWORDS:  # the keyword engine: the same result
                return keyword_rule_set(self.rules).apply(text, counts), None
        found = prefilter.scan(text) if scanned is None else scanned
        if self.clear(found):  # most texts: no rule may match
            return text, found.gates
        original = text
        plain = text.isascii()  # then a keyword the scan found is one `Rule.wanted` finds
        lowered: str | None = None
        ends = found.ends
        unscanned = set(self._always)
        for number in found.keywords:
            unscanned.update(self._by_keyword.get(number, ()))
        pending = sorted(unscanned.union(ends))
        position = 0
        while position < len(pending):
            index = pending[position]
            position += 1
            one = self.rules[index]
            how = prefilter.translated.get(index)
            if how is not None and index not in ends:
                continue
            if one.keywords and (how is not None or not plain):
                # the keywords of the text as it came in, lowercased, as `Rule.wanted` reads them
                lowered = original.lower() if lowered is None else lowered
                if not one.wanted(lowered):
                    continue
            matches = None
            if how is not None:
                matches = windows(one, how, text, ends[index])
            changed = _apply_rule(one, text, counts, matches)
            if changed is not text:  # a replacement can make a match that was not there: scan again
                text = changed
                found = prefilter.scan(text)
                ends = found.ends
                pending = sorted(i for i in unscanned.union(ends) if i > index)
                position = 0
        return text, found.gates


_SETS: dict[int, tuple[tuple[Rule, ...], ScanningRuleSet | RuleSet]] = {}


def rule_set(rules: tuple[Rule, ...]) -> ScanningRuleSet | RuleSet:
    """The engine for a tuple of rules, built once per tuple: scanning when Hyperscan is there."""
    known = _SETS.get(id(rules))
    if known is None or known[0] is not rules:
        prefilter = Prefilter.of(rules, {**decode.SCAN_GATES, **phrases.SCAN_GATES}, decode.JOINED_GATES)
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


def forget_remembered_lines() -> None:
    """Empty every engine's memory of the frames of long texts (`Prefilter.forget_lines`): a round's
    redaction is done once its events are, and the memory would otherwise last as long as the process."""
    for _, engine in _SETS.values():
        if isinstance(engine, ScanningRuleSet):
            engine.prefilter.forget_lines()
