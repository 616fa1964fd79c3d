"""How a rule's regex becomes a pattern Hyperscan compiles, matching a superset of it.

    translate(rule) -> Translated            Untranslatable when no superset can be written
    scan_chars.scan_bytes(text) -> bytes     the text as the scan reads it (`scan_chars.py`: the alphabet)

Each rule's pattern is translated, from the standard library's own reading of it, into a pattern Hyperscan
compiles whose language holds every string the rule's consuming part can match (a superset): lookarounds,
anchors and back-references are dropped or widened, possessive and atomic parts read as greedy ones, long
bounded repeats (past twelve) as unbounded ones. A short lookahead that ends a pattern is read as part of
the match, so an end the scan reports may lie up to its width past the match's (`Translated.read_ahead`,
allowed for in `widest`). A look-behind at a pattern's start (`(?<![\\w.-])`, or the look-behind
after a literal that `_starting` writes) becomes the character before the match (`(?:^|[^\\w.-])`), which
keeps the same ends. So a text the translation reports nothing for holds no match of the rule, and every
match of the rule ends where the translation reported an end (or at most `read_ahead` before one).

The text is scanned as bytes with one byte a character: ASCII as itself, every other character as 0xFF,
which the translation admits wherever a non-ASCII character could match. Offsets in the scan are offsets in
the text.

A rule whose `accept` promises that the name it reads (`key`) holds one of some words (`Rule.key_words`)
is translated with that name narrowed to names that do: a text with many `name: value` pairs and no secret's
name among them is then not searched for pairs at all (`windows` starts each search where no match can
straddle, so the pairs it skips, all refused, change nothing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rounds_bot.redact.rule import Rule
from rounds_bot.redact.scan_chars import OTHER, Chars, Untranslatable, chars_of

_parser = re._parser  # type: ignore[attr-defined]  # the standard library's own reading of a pattern
_MAXREPEAT: int = _parser.MAXREPEAT
#: repeats longer than this are scanned as unbounded (a superset): Hyperscan's bounded repeats grow with them,
#: and a card number's twelve to nineteen digits cost the scan more than the ends they save
_REPEAT_CAP = 12
_SINGLE = frozenset({"LITERAL", "NOT_LITERAL", "IN", "ANY"})
_LINE_ENDS = frozenset({"AT_END", "AT_END_LINE", "AT_END_STRING"})


@dataclass
class _Translation:
    """The state of one pattern's translation."""

    key_words: frozenset[str]
    key_group: int | None
    #: endings a name the rule takes never has (`Rule.key_refused_endings`)
    key_refused_endings: frozenset[str] = frozenset()
    groups: dict[int, tuple[list[Any], bool, bool]] = field(default_factory=dict)
    alphabet: Chars = field(default_factory=lambda: Chars(frozenset(), False))
    #: the name starts what is scanned for: its characters before the word are left out
    word_first: bool = False
    #: for a scan of ASCII text alone
    ascii_only: bool = False
    #: what the characters of the narrowed name can be
    alphabet_of_key: Chars = field(default_factory=lambda: Chars(frozenset(), False))


def words_pattern(words: frozenset[str], ascii_only: bool = False) -> str:
    """Any of `words`, each character in either case or as any non-ASCII character (a word that holds
    another is left out: the other is found in it)."""
    alternatives = []
    for word in sorted(w for w in words if not any(other != w and other in w for other in words)):
        alternatives.append(
            "".join(
                Chars(frozenset({ord(ch.lower()), ord(ch.upper())}), True).source(ascii_only)
                if ch.isascii()
                else f"\\x{OTHER:02x}"
                for ch in word
            )
        )
    return "(?:" + "|".join(alternatives) + ")"


def not_ending_with(letters: Chars, endings: frozenset[str], ascii_only: bool = False) -> str:
    """Any string of `letters` (the empty one too) that does not end with one of `endings` (ASCII).

    Read from its end, such a string spells the endings' tails backwards (`ing`, `ding`, ... of `ending`)
    without completing one, and then either stops or reads a character that continues no tail, after which
    anything of `letters` may come before: `(?:<spelt>|<letters>*<escape>)`, both written forwards, one
    branch a tail."""
    if not endings:
        return f"{letters.source(ascii_only)}*"
    tails = {ending[-length:] for ending in endings for length in range(1, len(ending) + 1)}
    # each tail's continuations, gathered in one pass: asked of every tail, a search of all the tails
    # each time cost a tenth of a second of every process's first redaction
    continuations: dict[str, set[str]] = {}
    for longer in tails:
        continuations.setdefault(longer[1:], set()).add(longer[0])

    def onward(tail: str) -> list[str]:  # the characters that continue `tail` backwards, not into an ending
        return sorted(continuations.get(tail, ()))

    def spelt(tail: str) -> str:  # what comes before `tail` in a string that spells tails alone
        inner = [spelt(ch + tail) + _literal(ch) for ch in onward(tail) if ch + tail not in endings]
        return "(?:|" + "|".join(inner) + ")" if inner else ""

    def escape(tail: str) -> str | None:  # what comes before `tail` from a character that continues no tail
        continuing = {ord(ch) for ch in onward(tail)}
        others = Chars(letters.ascii - continuing, letters.other)
        inner = [others.source(ascii_only)] if others.ascii or (others.other and not ascii_only) else []
        for ch in onward(tail):
            deeper = None if ch + tail in endings else escape(ch + tail)
            if deeper is not None:
                inner.append(deeper + _literal(ch))
        return "(?:" + "|".join(inner) + ")" if inner else None

    escaping = escape("")
    after = "" if escaping is None else f"|{letters.source(ascii_only)}*{escaping}"
    return f"(?:{spelt('')}{after})"


def _literal(ch: str) -> str:
    return f"\\x{ord(ch):02x}"


def _sequence(items: list[Any], state: _Translation, ignorecase: bool, dotall: bool, at_start: bool) -> str:
    out: list[str] = []
    consumed: list[Any] = []  # the elements read so far, when this sequence starts the match
    for op, value in items:
        name = str(op)
        if at_start and name in ("ASSERT", "ASSERT_NOT") and value[0] < 0:
            before = _character_before(name, value[1], consumed, state, ignorecase, dotall)
            if before is not None:
                out.insert(0, before)
                at_start = False  # one character before the match: a second look-behind is dropped
            continue
        if at_start and not consumed and name == "BRANCH":
            before = _branch_before(value[1], state, ignorecase, dotall)
            if before is not None:
                out.insert(0, before)
                at_start = False
                continue
        if at_start and not consumed and name in ("SUBPATTERN", "BRANCH"):
            # a group or a choice that starts the match: its own look-behinds are at the start too
            out.append(_element(name, value, state, ignorecase, dotall, at_start=True))
            at_start = False
            continue
        out.append(_element(name, value, state, ignorecase, dotall))
        if name not in ("ASSERT", "ASSERT_NOT", "AT"):
            consumed.append((op, value))
    return "".join(out)


def _character_before(
    name: str, inner: Any, consumed: list[Any], state: _Translation, ignorecase: bool, dotall: bool
) -> str | None:
    """A look-behind at the match's start as the character before it; None when it is not of that shape."""
    content = list(inner)
    if name == "ASSERT" and not consumed:
        return "(?:" + _sequence(content, state, ignorecase, dotall, at_start=False) + ")"
    if name == "ASSERT_NOT" and content and content[1:] == consumed and str(content[0][0]) in _SINGLE:
        refused = chars_of(str(content[0][0]), content[0][1], ignorecase, dotall)
        allowed = Chars(frozenset(range(128)) - refused.ascii, True)
        return "(?:^|" + allowed.source(state.ascii_only) + ")"
    return None


def _branch_before(
    alternatives: list[Any], state: _Translation, ignorecase: bool, dotall: bool
) -> str | None:
    """`(?:(?<![\\w.-])|(?<=%3F)|\\A)` at a match's start: each alternative as what comes before."""
    sources = []
    for alternative in alternatives:
        items = list(alternative)
        if len(items) != 1:
            return None
        op, value = items[0]
        name = str(op)
        if name == "AT" and str(value) in ("AT_BEGINNING_STRING", "AT_BEGINNING"):
            sources.append("^" if str(value) == "AT_BEGINNING_STRING" else "(?:^|\\n)")
            continue
        if name not in ("ASSERT", "ASSERT_NOT") or value[0] >= 0:
            return None
        before = _character_before(name, value[1], [], state, ignorecase, dotall)
        if before is None:
            return None
        sources.append(before)
    return "(?:" + "|".join(sources) + ")"


def _element(
    name: str, value: Any, state: _Translation, ignorecase: bool, dotall: bool, at_start: bool = False
) -> str:
    if name in _SINGLE:
        chars = chars_of(name, value, ignorecase, dotall)
        state.alphabet = state.alphabet | chars
        return chars.source(state.ascii_only)
    if name == "AT" and str(value) in _LINE_ENDS:
        # `$` and `\\Z` where a match ends: the end of a line (or of the text), which each implies
        return "(?m:$)"
    if name in ("ASSERT", "ASSERT_NOT", "AT"):
        return ""  # what a match needs around it: dropped, so the translation matches more
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, inner = value
        body = _sequence(list(inner), state, ignorecase, dotall, at_start=False)
        if not body:
            return ""
        if high >= _MAXREPEAT or high > _REPEAT_CAP:
            return f"(?:{body}){{{min(low, _REPEAT_CAP)},}}"
        return f"(?:{body}){{{low},{high}}}"
    if name == "SUBPATTERN":
        group, added, removed, inner = value
        scoped_case = (ignorecase or bool(added & re.IGNORECASE)) and not removed & re.IGNORECASE
        scoped_dot = (dotall or bool(added & re.DOTALL)) and not removed & re.DOTALL
        if group is not None:
            state.groups[group] = (list(inner), scoped_case, scoped_dot)
        body = _sequence(list(inner), state, scoped_case, scoped_dot, at_start)
        if group is not None and group == state.key_group:
            # the name holds one of the words: any of its characters, a word, any of its characters
            before = state.alphabet
            state.alphabet = Chars(frozenset(), False)
            _sequence(list(inner), state, scoped_case, scoped_dot, at_start=False)
            state.alphabet_of_key = state.alphabet
            letters = state.alphabet.source(state.ascii_only)
            state.alphabet = before | state.alphabet
            before_word = "" if state.word_first else f"{letters}*"
            # the name goes on after its word, and does not end as a name the rule refuses ends
            after_word = not_ending_with(state.alphabet_of_key, state.key_refused_endings, state.ascii_only)
            return f"(?:{before_word}{words_pattern(state.key_words, state.ascii_only)}{after_word})"
        return f"(?:{body})"
    if name == "BRANCH":
        branches = (_sequence(list(b), state, ignorecase, dotall, at_start) for b in value[1])
        return "(?:" + "|".join(branches) + ")"
    if name == "ATOMIC_GROUP":
        return "(?:" + _sequence(list(value), state, ignorecase, dotall, at_start=False) + ")"
    if name == "GROUPREF":
        inner, group_case, group_dot = state.groups[value]
        return "(?:" + _sequence(inner, state, ignorecase or group_case, group_dot, at_start=False) + ")"
    if name == "GROUPREF_EXISTS":
        _, yes, no = value
        first = _sequence(list(yes), state, ignorecase, dotall, at_start=False)
        second = "" if no is None else _sequence(list(no), state, ignorecase, dotall, at_start=False)
        return f"(?:{first}|{second})"
    raise Untranslatable(name)


@dataclass(frozen=True)
class Translated:
    """A rule's pattern for the scan, and what a search near one of its ends needs."""

    source: str
    #: the same for a scan of ASCII text alone
    ascii_source: str
    #: the most characters a match consumes (None: no bound, the rule runs over the whole text)
    widest: int | None
    narrowest: int
    #: how far past a match's start the regex engine may look (lookaheads included)
    reach: int
    #: whether a newline can be part of a match (no: a search may start at any line's start)
    newline: bool
    #: whether the rule's matches were narrowed to those its `accept` can take (`Rule.key_words`)
    narrowed: bool
    #: the last ASCII character no match can hold, up to where a match is searched from (`_in_windows`)
    last_outside: re.Pattern[str] | None = None
    #: whether the rule's own pattern starts with a literal character, which the regex engine finds at
    #: memory speed: a search of the whole text then costs less than searches near each end
    literal_start: bool = False
    #: how far past a match's end the scan may report it (a short lookahead at its end read as part of it)
    read_ahead: int = 0


def translate(one: Rule) -> Translated:
    """The rule's pattern for the scan (`Untranslatable` when it cannot be translated)."""
    parsed = _parser.parse(one.pattern.pattern, one.pattern.flags)
    narrowest, widest = parsed.getwidth()
    key_group = parsed.state.groupdict.get("key") if one.key_words else None
    whole = _Translation(
        one.key_words, key_group, one.key_refused_endings if key_group is not None else frozenset()
    )
    flags = parsed.state.flags
    case, dot = bool(flags & re.IGNORECASE), bool(flags & re.DOTALL)
    if narrowest == 0 or not _sequence(list(parsed), whole, case, dot, True):
        raise Untranslatable("a pattern that can match nothing")
    around = _lookaround_width(list(parsed))
    bounded = widest < _MAXREPEAT and around is not None
    items, read_ahead = _lookahead_read(list(parsed))
    return Translated(
        source=_tail_source(items, whole, case, dot, ascii_only=False),
        ascii_source=_tail_source(items, whole, case, dot, ascii_only=True),
        # an end the scan reports may lie past the match by what its last lookahead read
        widest=widest + read_ahead if bounded else None,
        narrowest=narrowest,
        reach=widest + (around or 0) + 2 if bounded else 0,
        newline=ord("\n") in whole.alphabet.ascii,
        narrowed=key_group is not None,
        last_outside=_last_outside(whole.alphabet),
        literal_start=not case and _starts_with_literal(str(parsed[0][0]), parsed[0][1]),
        read_ahead=read_ahead,
    )


#: the widest lookahead at a pattern's end the scan reads as part of the match
_SHORT_LOOKAHEAD = 2


def _lookahead_read(items: list[Any]) -> tuple[list[Any], int]:
    """The pattern with a lookahead that ends it read as part of the match, and the most it reads: a text
    the lookahead refuses needs no search (`,x(?=,|$)` is rarer than `,x`). The scan then reports ends up
    to that width past the match's, which `Translated.widest` allows for. Only a short lookahead: a long
    one (a value read ahead) costs the scan more than it saves."""
    last = items[-1] if items else None
    if last is not None and str(last[0]) == "ASSERT" and last[1][0] > 0:
        width: int = last[1][1].getwidth()[1]
        if width <= _SHORT_LOOKAHEAD:
            return items[:-1] + list(last[1][1]), width
    return items, 0


def _last_outside(alphabet: Chars) -> re.Pattern[str] | None:
    """A pattern whose match ends just after the last character no match can consume (the ASCII ones
    outside the alphabet of every element the pattern consumes with)."""
    outside = sorted(set(range(128)) - alphabet.ascii)
    if not outside:
        return None
    return re.compile("(?s:.*)[" + "".join(f"\\x{code:02x}" for code in outside) + "]")


def _tail_source(items: list[Any], whole: _Translation, case: bool, dot: bool, ascii_only: bool) -> str:
    """What the scan looks for: every match ends with a match of it, and it starts with a literal (or a
    word of a narrowed name) where the pattern has one, which a scan finds far faster than what may stand
    before it."""
    key_group = whole.key_group
    state = _Translation(
        whole.key_words,
        key_group,
        whole.key_refused_endings,
        groups=dict(whole.groups),
        ascii_only=ascii_only,
    )
    if key_group is not None:  # from the name on, the name from its word on
        at = next((n for n, (op, v) in enumerate(items) if str(op) == "SUBPATTERN" and v[0] == key_group), 0)
        state.word_first = at > 0
        return _sequence(items[at:], state, case, dot, at == 0)
    tail = _literal_tail(items)
    return _sequence(items[tail:], state, case, dot, tail == 0)


def _literal_tail(items: list[Any]) -> int:
    """The index of the first element after the first that starts with a literal character (0: none, or
    the pattern itself starts with one: a literal late in it, such as a newline, is often far commoner)."""
    if items and _starts_with_literal(str(items[0][0]), items[0][1]):
        return 0
    for index, (op, value) in enumerate(items):
        if index and _starts_with_literal(str(op), value):
            return index
    return 0


def _starts_with_literal(name: str, value: Any) -> bool:
    if name == "LITERAL":
        return True
    if name == "SUBPATTERN":
        return _first_is_literal(list(value[3]))
    if name == "BRANCH":
        return all(_first_is_literal(list(branch)) for branch in value[1])
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return value[0] >= 1 and _first_is_literal(list(value[2]))
    return False


def _first_is_literal(items: list[Any]) -> bool:
    return bool(items) and _starts_with_literal(str(items[0][0]), items[0][1])


def _lookaround_width(items: list[Any]) -> int | None:
    """The widest lookarounds of a pattern could read, summed (None: unbounded)."""
    total = 0
    for op, value in items:
        name = str(op)
        inner: list[list[Any]] = []
        if name in ("ASSERT", "ASSERT_NOT"):
            width = value[1].getwidth()[1]
            if width >= _MAXREPEAT:
                return None
            total += width
            inner = [list(value[1])]
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            inner = [list(value[2])]
        elif name == "SUBPATTERN":
            inner = [list(value[3])]
        elif name == "BRANCH":
            inner = [list(branch) for branch in value[1]]
        elif name == "ATOMIC_GROUP":
            inner = [list(value)]
        elif name == "GROUPREF_EXISTS":
            inner = [list(value[1])] + ([] if value[2] is None else [list(value[2])])
        for part in inner:
            width = _lookaround_width(part)
            if width is None:
                return None
            total += width
    return total
