"""A redaction rule, and how every rule is applied: what it finds, what it keeps, how it is counted.

`RuleSet` below is the keyword engine: the package applies rules with the scanning engine (`engine.py`,
`scan.py`) and falls back to this one where Hyperscan has no wheel; both give the same results.

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

import dis
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import ahocorasick

_parser = re._parser  # type: ignore[attr-defined]  # the standard library's own reading of a pattern

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
    #: a promise of `accept`: it refuses a match whose `key` group holds none of these words (in any case),
    #: so a scan may look only where such a name stands (`scan.py`); empty: no promise
    key_words: frozenset[str] = frozenset()
    #: a second promise of `accept`: it refuses a match whose `key` group ends with one of these (as written),
    #: so a scan may pass over such names (`token.js:12`, `KeyError:`); empty: no promise
    key_refused_endings: frozenset[str] = frozenset()

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
    """Rules made ready to be applied in one pass: which of them a text wants is one scan of the text, and
    a line seen before costs a look-up.

    Most of a stack trace recurs line for line across occurrences (only the message and a few ids differ).
    A rule that is line-local (`line_local`: its matches never cross a line, its lookarounds cannot see past
    one, its `accept` reads only the match's groups) gives on a whole text exactly what it gives on each
    line, so the wanted rules up to the first one that is not line-local are applied line by line, each
    distinct line once (per set of wanted rules); the rest run over the whole text, as ever.
    """

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
        self._local = tuple(line_local(one) for one in rules)
        # each distinct line once per run of rules, in two generations (`_by_line`)
        self._runs: dict[tuple[int, ...], int] = {}
        self._young: dict[tuple[int, str], tuple[str, tuple[int, ...]]] = {}
        self._old: dict[tuple[int, str], tuple[str, tuple[int, ...]]] = {}
        self._remembered = 0

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
        wanted = self.wanted(text.lower())
        if "\n" not in text:
            for index in wanted:
                text = _apply_rule(rules[index], text, counts)
            return text
        run: list[int] = []  # line-local rules in a row, applied line by line together
        for index in wanted:
            if self._local[index]:
                run.append(index)
                continue
            if run:
                text, run = self._by_line(tuple(run), text, counts), []
            text = _apply_rule(rules[index], text, counts)
        return self._by_line(tuple(run), text, counts) if run else text

    def _by_line(self, wanted: tuple[int, ...], text: str, counts: Counter[str]) -> str:
        run = self._runs.setdefault(wanted, len(self._runs))
        young, old = self._young, self._old
        fired: Counter[int] = Counter()
        lines = text.split("\n")
        for number, line in enumerate(lines):
            key = (run, line)
            done = young.get(key)
            if done is None:
                done = old.get(key) or self._line(wanted, line)
                young[key] = done
                self._remembered += len(line) + 64
            lines[number] = done[0]
            if done[1]:
                fired.update(done[1])
        if self._remembered > LINE_MEMO_CHARS:
            # two generations: the lines used since the last turn stay, the others go
            self._old, self._young, self._remembered = young, {}, 0
        for index in sorted(fired):  # counted in the rules' order, as rule after rule counts them
            counts[self.rules[index].category] += fired[index]
        return "\n".join(lines)

    def _line(self, wanted: tuple[int, ...], line: str) -> tuple[str, tuple[int, ...]]:
        hits: list[int] = []
        found: Counter[str] = Counter()
        for index in wanted:
            one = self.rules[index]
            line = _apply_rule(one, line, found)
            if found:
                hits += [index] * found.pop(one.category)
        return line, tuple(hits)


#: Characters of distinct lines a RuleSet remembers in one generation; past it, a new one starts.
LINE_MEMO_CHARS = 8_000_000


def line_local(one: Rule) -> bool:
    """True when the rule, applied to each line of a text, gives what it gives applied to the whole text:
    no part of its pattern (lookarounds included) can match a newline, it has no anchor but word boundaries,
    and its `accept` reads nothing of the match but its groups (not the text around it)."""
    if one.accept is not None and not _reads_groups_only(one.accept):
        return False
    try:
        parsed = _parser.parse(one.pattern.pattern, one.pattern.flags)
    except re.error:
        return False
    return not _may_match_newline(list(parsed), bool(one.pattern.flags & re.DOTALL))


_BOUNDARIES = frozenset({"AT_BOUNDARY", "AT_NON_BOUNDARY"})
_NEWLINE_CATEGORIES = frozenset(
    {"CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD", "CATEGORY_LINEBREAK"}
)
_NEWLINE = ord("\n")


def _may_match_newline(items: list[tuple[Any, Any]], dotall: bool) -> bool:
    """Whether any element of a parsed pattern can match a newline, or is an anchor other than a word
    boundary; an element this does not know counts as one that can."""
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            found = value == _NEWLINE
        elif name == "NOT_LITERAL":
            found = value != _NEWLINE
        elif name == "ANY":
            found = dotall
        elif name == "IN":
            found = class_holds_newline(value)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            found = _may_match_newline(list(value[2]), dotall)
        elif name == "SUBPATTERN":
            _, added, removed, inner = value
            scoped = (dotall or bool(added & re.DOTALL)) and not removed & re.DOTALL
            found = _may_match_newline(list(inner), scoped)
        elif name == "BRANCH":
            found = any(_may_match_newline(list(branch), dotall) for branch in value[1])
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _may_match_newline(list(value[1]), dotall)
        elif name == "ATOMIC_GROUP":
            found = _may_match_newline(list(value), dotall)
        elif name == "GROUPREF_EXISTS":
            _, yes, no = value
            found = _may_match_newline(list(yes), dotall) or (
                no is not None and _may_match_newline(list(no), dotall)
            )
        elif name == "GROUPREF":
            found = False  # the group it repeats is checked where it stands
        elif name == "AT":
            found = str(value) not in _BOUNDARIES
        else:
            found = True
        if found:
            return True
    return False


def class_holds_newline(items: list[tuple[Any, Any]]) -> bool:
    """Whether a parsed character class (`re._parser`'s `IN` items) can match a newline; an item this
    does not know: it can."""
    has = False
    negated = False
    for op, value in items:
        name = str(op)
        if name == "NEGATE":
            negated = True
        elif name == "LITERAL":
            has = has or value == _NEWLINE
        elif name == "RANGE":
            low, high = value
            has = has or low <= _NEWLINE <= high
        elif name == "CATEGORY":
            has = has or str(value) in _NEWLINE_CATEGORIES
        else:
            return True
    return has != negated


_GROUP_READERS = frozenset({"group", "groups", "groupdict"})


def _reads_groups_only(accept: Accept) -> bool:
    """Whether `accept` uses its match only as `match.group(...)`, `match[...]`, `match.groups()` or
    `match.groupdict()`: never the text around the match, never handed on whole."""
    code = getattr(accept, "__code__", None)
    if code is None or code.co_argcount != 1 or code.co_varnames[0] in code.co_cellvars:
        return False
    match = code.co_varnames[0]
    instructions = list(dis.get_instructions(code))
    for number, instruction in enumerate(instructions):
        argument = instruction.argval
        uses = argument == match or (isinstance(argument, tuple) and match in argument)
        if not uses:
            continue
        if instruction.opname != "LOAD_FAST" or number + 2 >= len(instructions):
            return False
        following, after = instructions[number + 1], instructions[number + 2]
        if following.opname in ("LOAD_ATTR", "LOAD_METHOD") and following.argval in _GROUP_READERS:
            continue
        if following.opname == "LOAD_CONST" and after.opname == "BINARY_SUBSCR":
            continue
        return False
    return True


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


_REPLACEMENTS: dict[str, str] = {}


def _apply_rule(
    one: Rule, text: str, counts: Counter[str], matches: Iterator[re.Match[str]] | None = None
) -> str:
    """`text` with the rule's accepted matches replaced; `matches` (by default every match of its pattern,
    `finditer`) must be exactly what `finditer` gives."""
    replacement = _REPLACEMENTS.get(one.category) or _REPLACEMENTS.setdefault(
        one.category, REDACTED.format(category=one.category)
    )
    pieces: list[str] = []
    cursor = 0
    for match in one.pattern.finditer(text) if matches is None else matches:
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
