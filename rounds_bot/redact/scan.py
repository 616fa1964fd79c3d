"""Which rules a text may match, and where: one Hyperscan pass over the text for every rule.

    Prefilter.of(rules) -> Prefilter | None    None without Hyperscan (no wheel for the platform)
    prefilter.scan(data) -> Scan                the keywords a text holds; where each rule's matches may end

The translation of each rule is `translate.py`'s; this module builds the databases (compiled once per
machine: `scan_cache.py` keeps them between processes) and scans; `scan_windows.py` searches near the
reported ends.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

try:  # a wheel for every common platform; elsewhere the rules run as they did before (`rule.RuleSet`)
    import hyperscan
except ImportError:  # pragma: no cover - exercised by the fallback test, which hides the module
    hyperscan = None  # type: ignore[assignment]

from rounds_bot.redact.rule import Rule
from rounds_bot.redact.scan_chars import Untranslatable, scan_bytes
from rounds_bot.redact.scan_joined import JoinedScan, credited_hits
from rounds_bot.redact.scan_lines import LineScan, Patterns, gate_database, joinable, lines_of
from rounds_bot.redact.scan_windows import near_ends
from rounds_bot.redact.translate import Translated, translate, words_pattern

log = logging.getLogger(__name__)

#: sets of keywords and gates a prefilter remembers what a scan found for
_KNOWN_SETS = 4_096
#: an ASCII text of many lines this long or longer is scanned by lines (`scan_lines.py`): a stack trace
LINES_FROM = 400


@dataclass(frozen=True)
class Scan:
    """What one scan of a text found: the keywords it holds, and the ends each rule's translation reported."""

    keywords: frozenset[int] = frozenset()
    ends: dict[int, list[int]] = field(default_factory=dict)
    #: the gates (`Prefilter.of`) the text holds
    gates: frozenset[str] = frozenset()


#: what a scan that found nothing found (most texts): one object for all of them, never changed
NOTHING = Scan()


class Prefilter:
    """Hyperscan databases for a tuple of rules, every rule's translation and every keyword in one: one for
    ASCII text (built at once) and one for any text (built when the engine finds it worth building, or
    loaded from the cache of compiled databases when an earlier round built it)."""

    def __init__(
        self,
        rules: tuple[Rule, ...],
        translated: dict[int, Translated],
        keyword_ids: dict[str, int],
        gates: dict[str, tuple[str, int]] | None = None,
        joined_gates: dict[str, str] | None = None,
    ) -> None:
        self.rules = rules
        self.translated = translated
        self._keyword_ids = keyword_ids
        self._gates = gates or {}
        first_gate = len(rules) + len(keyword_ids)
        self._gate_ids = {first_gate + number: name for number, name in enumerate(self._gates)}
        self._databases: dict[bool, Any] = {}
        self._looked_up: set[bool] = set()  # the databases looked for in the cache (`ready`)
        #: what a scan that reported keywords and gates alone found, by their numbers (a few sets recur)
        self._without_ends: dict[frozenset[int], Scan] = {}
        self._lines: LineScan | None = None  # built at the first long text of many lines
        self._gate_lines: dict[frozenset[str], Any] = {}  # by the gates' names (`lines_with`)
        self._joinable: bool | None = None  # `scans_joined`, read once
        self._joined: JoinedScan | None = None  # `joined`, built at its first call
        self._joined_gates = joined_gates or {}  # a gate's form for joined texts, by name (`of`)
        # rules scanned for by the same translation (the two pair rules, from the name on) share one pattern
        first: dict[tuple[str, str, bool], int] = {}
        self._alike: dict[int, list[int]] = {}
        for index in sorted(translated):
            how = translated[index]
            seen = first.setdefault((how.source, how.ascii_source, how.widest is None), index)
            if seen != index:
                self._alike.setdefault(seen, []).append(index)
        copies = {index for alike in self._alike.values() for index in alike}
        self._scanned = {index: how for index, how in translated.items() if index not in copies}

    @classmethod
    def of(
        cls,
        rules: tuple[Rule, ...],
        gates: dict[str, tuple[str, int]] | None = None,
        joined_gates: dict[str, str] | None = None,
    ) -> Prefilter | None:
        """The prefilter of `rules`; None without Hyperscan. `gates`: Hyperscan patterns (by name, with the
        least length a match must have) the same scan says a text holds or not, for what runs after the rules
        (`decode.SCAN_GATES`, `phrases.SCAN_GATES`); `joined_gates`: for a gate whose matches in a long run
        are many, a form that matches the texts it matches once a run (`decode.JOINED_GATES`), which the
        scan of many texts at once reads (`joined`)."""
        if hyperscan is None:
            return None
        translated: dict[int, Translated] = {}
        for index, one in enumerate(rules):
            if not _worth_scanning(one):
                continue
            try:
                translated[index] = translate(one)
            except Untranslatable as error:
                log.debug("redaction rule %d (%s) is not scanned: %s", index, one.category, error)
        made = cls(rules, translated, _keyword_ids(rules, translated), gates, joined_gates)
        try:
            made._database(ascii_only=True)
        except hyperscan.error:  # a translation Hyperscan refuses: those rules run on their keywords alone
            for index in list(translated):
                try:
                    for ascii_only in (True, False):
                        _compile({index: translated[index]}, {}, {}, ascii_only)
                except hyperscan.error as error:
                    log.debug("redaction rule %d is not scanned: %s", index, error)
                    del translated[index]
            made = cls(rules, translated, _keyword_ids(rules, translated), gates, joined_gates)
            try:
                made._database(ascii_only=True)
            except hyperscan.error as error:  # e.g. a processor Hyperscan does not run on
                log.debug("redaction without Hyperscan (%s): each rule checks its keywords", error)
                return None
        log.debug("redaction scans with Hyperscan: %d of %d rules translated", len(translated), len(rules))
        return made

    def ready(self, ascii_only: bool) -> bool:
        """Whether the database for ASCII text (or for any text) is built, or loads from the cache of
        compiled databases (`scan_cache.py`: an earlier round built it), which is looked in once."""
        if ascii_only not in self._databases and ascii_only not in self._looked_up:
            self._looked_up.add(ascii_only)
            cached = _compile(
                self._scanned, self._keyword_ids, self._gate_ids_by_name(), ascii_only, cached=True
            )
            if cached is not None:
                self._databases[ascii_only] = cached
        return ascii_only in self._databases

    def keyword_id(self, keyword: str) -> int:
        """The id the scan reports a keyword of a rule not scanned for by."""
        return self._keyword_ids[keyword]

    def _database(self, ascii_only: bool) -> Any:
        database = self._databases.get(ascii_only)
        if database is None:
            database = self._databases[ascii_only] = _compile(
                self._scanned, self._keyword_ids, self._gate_ids_by_name(), ascii_only
            )
        return database

    def _gate_ids_by_name(self) -> dict[int, tuple[str, int]]:
        return {number: self._gates[name] for number, name in self._gate_ids.items()}

    def scan(self, text: str) -> Scan:
        """The keywords `text` holds, where each rule's matches may end, and the gates it holds."""
        plain = text.isascii()
        database = self._databases.get(plain) or self._database(plain)
        by_lines = None
        if (
            plain and len(text) >= LINES_FROM and "\n" in text
        ):  # a trace: its frames seen before are not scanned
            by_lines = self._by_lines(database).hits(text)
        hits: list[tuple[int, int]] = [] if by_lines is None else by_lines
        if by_lines is None:
            database.scan(
                text.encode("ascii") if plain else scan_bytes(text),
                match_event_handler=_collect,
                context=hits,
            )
        return self._read(hits)

    def scan_many(self, texts: list[str]) -> list[Scan] | None:
        """`scan` of each of many ASCII texts, or more (an end or a keyword more only makes a rule search
        and find nothing), found with a few scans for them all (`joined`); None when the texts cannot be
        scanned joined."""
        joined, read = self.joined(), self._read
        # most texts: nothing found, the one verdict shared
        return None if joined is None else [read(hits) if hits else NOTHING for hits in joined.hits(texts)]

    def _read(self, hits: list[tuple[int, int]]) -> Scan:
        """What a scan that reported `hits` found."""
        if not hits:  # most texts: nothing to sort out
            return NOTHING
        base = len(self.rules)
        if min(hits)[0] >= base:  # keywords and gates alone (an id, a hash): a set seen before
            numbers = frozenset(rule_id for rule_id, _ in hits)
            found = self._without_ends.get(numbers)
            if found is None:
                found = self._found(hits)
                if len(self._without_ends) < _KNOWN_SETS:
                    self._without_ends[numbers] = found
            return found
        return self._found(hits)

    def lines_with(self, text: str, names: frozenset[str]) -> list[tuple[int, int]] | None:
        """The spans of the lines of a long `text` of many lines in which one of the gates `names` matches, in
        order (a run those gates stand for lies in one line: outside these spans there is none); None for a
        short text or one line (the whole text is the span), or when a gate's match can cross a line."""
        if len(text) < LINES_FROM or "\n" not in text:
            return None
        if names not in self._gate_lines:
            sources = [self._gates[name] for name in sorted(names) if name in self._gates]
            self._gate_lines[names] = gate_database(sources) if len(sources) == len(names) else None
        database = self._gate_lines[names]
        return None if database is None else lines_of(text, database)

    def forget_lines(self) -> None:
        """Empty the memory of the frames of long texts (`LineScan.forget`): results stay the same."""
        if self._lines is not None:
            self._lines.forget()

    def _by_lines(self, database: Any) -> LineScan:
        if self._lines is None:
            patterns = _patterns(self._scanned, self._keyword_ids, self._gate_ids_by_name(), ascii_only=True)
            self._lines = LineScan.of(patterns, database)
        return self._lines

    def _found(self, hits: list[tuple[int, int]]) -> Scan:
        ends: dict[int, list[int]] = {}
        keywords: set[int] = set()
        base = len(self.rules)
        for rule_id, end in hits:
            if rule_id >= base:
                keywords.add(rule_id)
            else:
                ends.setdefault(rule_id, []).append(end)
        for scanned, alike in self._alike.items():
            if scanned in ends:
                for index in alike:
                    ends[index] = ends[scanned]
        gate_ids = self._gate_ids
        gates = frozenset(gate_ids[n] for n in keywords if n in gate_ids) if gate_ids else frozenset()
        return Scan(frozenset(keywords), ends, gates)

    def reported(self, data: bytes) -> frozenset[int]:
        """The numbers (rules, keywords, gates) a scan of an ASCII text, given as its bytes, reports, without
        where: `scan`'s one call to Hyperscan and nothing around it, for the many short texts (ids) whose
        verdict a caller remembers by what the scan reported."""
        hits: list[tuple[int, int]] = []
        database = self._databases.get(True) or self._database(True)
        database.scan(data, match_event_handler=_collect, context=hits)
        return frozenset(number for number, _ in hits) if hits else frozenset()

    def credited(self, texts: list[str]) -> list[tuple[int, int, int]]:
        """What one scan of the ASCII `texts` joined by newlines reports, as `reported` would of each: (text,
        number, end in the text), a match credited to the text its last character stands in. A number of
        `every_match` is reported at each of its matches, so a text given with others reports it alone only
        when it is credited with one (`scans_joined`); any other number, once a scan, for one text."""
        return credited_hits(texts, self._databases.get(True) or self._database(True))

    @property
    def every_match(self) -> frozenset[int]:
        """The numbers a scan reports at every match (rules searched near their ends, `_patterns`)."""
        return frozenset(index for index, how in self._scanned.items() if near_ends(how))

    def scans_joined(self) -> bool:
        """Whether ASCII texts joined by newlines, given to `reported` as one, report every number each of
        them reports alone (`scan_lines.joinable`: the same for every text, so read once)."""
        if self._joinable is None:
            self._joinable = joinable(
                _patterns(self._scanned, self._keyword_ids, self._gate_ids_by_name(), ascii_only=True)
            )
        return self._joinable

    def joined(self) -> JoinedScan | None:
        """The scan of many ASCII texts at once (`scan_joined.py`), built at the first call; None when texts
        joined by newlines do not report what each reports alone (`scans_joined`)."""
        if self._joined is None and self.scans_joined():
            database = self._databases.get(True) or self._database(True)
            patterns = _patterns(self._scanned, self._keyword_ids, self._gate_ids_by_name(), ascii_only=True)
            forms = {
                number: self._joined_gates[name].encode("ascii")
                for number, name in self._gate_ids.items()
                if name in self._joined_gates
            }
            kinds = (frozenset(self._keyword_ids.values()), frozenset(self._gate_ids))
            lines = self._by_lines(database)
            self._joined = JoinedScan.of(patterns, database, lines, LINES_FROM, forms, kinds)
        return self._joined

    def gate_number(self, name: str) -> int | None:
        """The number the scan reports the gate `name` by (None: no such gate)."""
        return next((number for number, gate in self._gate_ids.items() if gate == name), None)


def _collect(rule_id: int, _start: int, end: int, _flags: int, hits: list[tuple[int, int]]) -> None:
    """The scan's match handler: one function for every scan, the hits in the scan's context."""
    hits.append((rule_id, end))


def _keyword_ids(rules: tuple[Rule, ...], translated: dict[int, Translated]) -> dict[str, int]:
    """The keywords of the rules not scanned for, numbered after the rules: the scan says which of those
    rules a text wants (the keywords of the others are checked when the scan reports them: seldom)."""
    unscanned = [one for index, one in enumerate(rules) if index not in translated]
    keywords = sorted({keyword for one in unscanned for keyword in one.keywords})
    return {keyword: len(rules) + number for number, keyword in enumerate(keywords)}


def _patterns(
    translated: dict[int, Translated],
    keyword_ids: dict[str, int],
    gates: dict[int, tuple[str, int]],
    ascii_only: bool,
) -> Patterns:
    """What the database of the translations, keywords and gates is compiled from. Every pattern reads `^`
    at every line's start (`HS_FLAG_MULTILINE`): a translation's `^` stands for the character before a
    match, and a line's start is one more place to report, never one less (what `scan_lines.py` needs)."""
    ids = sorted(translated)
    expressions = [
        (translated[i].ascii_source if ascii_only else translated[i].source).encode("latin-1") for i in ids
    ]
    # a rule searched near its ends needs every end; one searched whole only the first
    flags = [0 if near_ends(translated[i]) else hyperscan.HS_FLAG_SINGLEMATCH for i in ids]
    lengths = [0] * len(ids)
    for keyword, number in keyword_ids.items():
        expressions.append(words_pattern(frozenset({keyword}), ascii_only).encode("latin-1"))
        ids.append(number)
        flags.append(hyperscan.HS_FLAG_SINGLEMATCH)
        lengths.append(0)
    for number, (source, least) in gates.items():  # ASCII patterns: the same for either scan
        expressions.append(source.encode("ascii"))
        ids.append(number)
        flags.append(hyperscan.HS_FLAG_SINGLEMATCH)
        lengths.append(least)
    flags = [each | hyperscan.HS_FLAG_MULTILINE for each in flags]
    return Patterns(expressions, ids, flags, lengths)


def _compile(
    translated: dict[int, Translated],
    keyword_ids: dict[str, int],
    gates: dict[int, tuple[str, int]],
    ascii_only: bool,
    cached: bool = False,
) -> Any:
    """The database of the translations, keywords and gates: compiled, or loaded when an earlier process
    compiled it; with `cached`, only loaded (None when it is not in the cache)."""
    made = _patterns(translated, keyword_ids, gates, ascii_only)
    from rounds_bot.redact import scan_cache  # here: it needs Hyperscan, which `of` checked is there

    if cached:
        return scan_cache.cached(made.expressions, made.ids, made.flags, made.lengths)
    return scan_cache.database(made.expressions, made.ids, made.flags, made.lengths)


#: keywords in many texts: a rule with one of these (or one of one or two characters, or none) is scanned
#: for, not just for its keywords
_COMMON = frozenset(
    {"token", "pass", "key", "secret", "set", "value", "auth", "basic", "bearer", "password", "pat", "://"}
)


def _worth_scanning(one: Rule) -> bool:
    """A rule that would run on many texts; one with a rare keyword (a vendor's prefix) already runs on few,
    and each translation costs compile and scan time."""
    return not one.keywords or any(len(keyword) <= 2 or keyword in _COMMON for keyword in one.keywords)
