"""Many texts scanned at once: what the scan of each alone (`Prefilter.scan`) reports, or more, in few calls.

    JoinedScan.of(patterns, database, lines) -> JoinedScan    over the prefilter's database of ASCII text
    joined.hits(texts) -> [[(id, end)]]                      each text's, as `Prefilter.scan` reads them

Messages differ in every record (ids, amounts) and nine in ten hold nothing the rules look for; one call to
Hyperscan a text is then much of what redacting it costs. Here the texts of a batch are joined by newlines
and scanned in one call, and each match is credited to the text its last character stands in, at its place
in that text: a match in a text alone is a match in the joined buffer (`scan_lines.joinable`, which the
caller checks of the database) at the same place, so each text is credited with every end its own scan
reports. A match across the newline between two texts is credited to one of them more: an end reported where
the text's own scan reports none only makes a rule search and find nothing (as `scan_lines.py` argues).

The database reports the rules searched near their ends at every match, but keywords, gates and the rules
searched whole once a scan (`HS_FLAG_SINGLEMATCH`: once found in one text, they would not be found in the
next): those patterns are scanned over the same buffer in a small database of their own that reports every
match (`singles`) when the big one reports one of them (reported once a scan, a pattern is reported when it
matches anywhere). A gate that matches at every character of a long run is read there in a form that
matches the same texts once a run (`decode.JOINED_GATES`).

A stack trace is read as `Prefilter.scan` reads it (`scan_lines.LineScan.hits`): its first and last lines in
the joined buffer, its frames by what the memory of frames holds for them, and the few patterns that cross
lines over the whole trace, joined with the batch's other traces in a database of theirs that reports every
match. A trace whose frames are not remembered yet is scanned whole in the joined buffer.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Any

from rounds_bot.redact.scan_lines import LineScan, Patterns, crosses_lines

Hits = list[tuple[int, int]]


class JoinedScan:
    """The scan of many ASCII texts in a few calls, over the prefilter's database for ASCII text."""

    def __init__(
        self,
        database: Any,
        singles: list[tuple[Any, frozenset[int]]],
        across: Any | None,
        lines: LineScan,
        lines_from: int,
    ) -> None:
        self._database = database
        # every match of the patterns `database` reports once a scan, a database for each kind, with their ids
        self._singles = singles
        self._across = across  # every match of the patterns that cross lines (None: there are none)
        self._lines = lines
        self._lines_from = lines_from  # a text this long or longer, of many lines, is read by its lines

    @classmethod
    def of(
        cls,
        patterns: Patterns,
        database: Any,
        lines: LineScan,
        lines_from: int,
        forms: dict[int, bytes] | None = None,
        kinds: tuple[frozenset[int], ...] = (),
    ) -> JoinedScan:
        """The joined scan over `database` (compiled from `patterns`), reading as `lines` does the texts of
        many lines of `lines_from` characters or more. `forms`: by id, a pattern `database` reports once a
        scan in a form that matches the same texts with fewer matches, for `singles`; `kinds`: sets of ids
        (keywords, gates) whose patterns reported once a scan get a database of their own in `singles`
        (scanned only when one of them is reported), the others one for all of them."""
        from hyperscan import HS_FLAG_SINGLEMATCH  # here: it needs Hyperscan, which the caller has

        once = [n for n, flags in enumerate(patterns.flags) if flags & HS_FLAG_SINGLEMATCH]
        crossing = [
            n for n, source in enumerate(patterns.expressions) if crosses_lines(source.decode("latin-1"))
        ]
        rest = frozenset(patterns.ids[n] for n in once).difference(*kinds)
        singles: list[tuple[Any, frozenset[int]]] = []
        for kind in (*kinds, rest):
            chosen = [n for n in once if patterns.ids[n] in kind]
            made = _every_match(patterns, chosen, forms or {})
            if made is not None:
                singles.append((made, frozenset(patterns.ids[n] for n in chosen)))
        return cls(
            database,
            singles,
            _every_match(patterns, crossing),
            lines,
            lines_from,
        )

    def hits(self, texts: list[str]) -> list[Hits]:
        """For each ASCII text, the ids and ends (in the text) its own scan reports, or more (one list for
        every text of which nothing is reported: do not change it)."""
        nothing: Hits = []
        found: list[Hits] = [nothing] * len(texts)
        parts: list[str] = []  # what the joined scan reads: a text, or a trace's first and last lines
        numbers: list[int] = []  # for each part, its text's number
        # for a part that is a trace's first and last lines (by the part's number): where its first line
        # ends in it and how far its last line moves from the part into the trace (most parts are whole
        # texts, which need nothing more)
        moves: dict[int, tuple[int, int]] = {}
        traces: list[str] = []  # the traces read by their lines, for the patterns that cross lines
        traced: list[int] = []
        lines, lines_from = self._lines, self._lines_from
        for number, text in enumerate(texts):
            if len(text) >= lines_from and "\n" in text:
                first, last = text.find("\n"), text.rfind("\n")
                block = None if first == last else lines.block(text[first + 1 : last])
                if block is not None:  # frames remembered: the first and last lines, as `LineScan.hits`
                    if block:
                        found[number] = [(rule_id, end + first) for rule_id, end in block]
                    moves[len(parts)] = (first, last - first)
                    parts.append(text[: first + 1] + text[last + 1 :])
                    numbers.append(number)
                    traces.append(text)
                    traced.append(number)
                    continue
            parts.append(text)
            numbers.append(number)
        by_line = lines.by_line
        for part, rule_id, end in credited_hits(parts, self._database, self._singles):
            moved = moves.get(part)
            if moved is not None:  # a trace's first and last lines: the patterns of a line, in the trace
                if rule_id not in by_line:
                    continue
                first, move = moved
                end = end if end <= first else end + move
            _add(found, numbers[part], nothing, rule_id, end)
        for part, rule_id, end in credited_hits(traces, self._across):
            _add(found, traced[part], nothing, rule_id, end)
        return found


def _add(found: list[Hits], number: int, nothing: Hits, rule_id: int, end: int) -> None:
    hits = found[number]
    if hits is nothing:
        hits = found[number] = []
    hits.append((rule_id, end))


def credited_hits(
    parts: list[str], database: Any | None, again: list[tuple[Any, frozenset[int]]] | None = None
) -> list[tuple[int, int, int]]:
    """What `database` reports in `parts` joined by newlines: (part, id, end in the part), each match
    credited to the part its last character stands in (an end on the newline after a part, at its end).
    `again`: databases of every match of the patterns `database` reports once a scan, with their ids, each
    scanned too when `database` reports one of its ids (reported once a scan, a pattern is reported when it
    matches anywhere: when none is, none matches)."""
    if not parts or database is None:
        return []
    buffer = "\n".join(parts).encode("ascii")
    hits: Hits = []
    database.scan(buffer, match_event_handler=_collect, context=hits)
    reported = {rule_id for rule_id, _ in hits}
    for every, ids in again or ():
        if not reported.isdisjoint(ids):
            every.scan(buffer, match_event_handler=_collect, context=hits)
    if not hits:
        return []
    starts = list(accumulate([len(part) + 1 for part in parts], initial=0))
    credited: list[tuple[int, int, int]] = []
    for rule_id, end in hits:
        part = bisect_right(starts, end - 1) - 1  # a match holds a character: its last is at end - 1
        credited.append((part, rule_id, min(end - starts[part], len(parts[part]))))
    return credited


def _every_match(patterns: Patterns, chosen: list[int], forms: dict[int, bytes] | None = None) -> Any | None:
    """A database of the chosen patterns that reports every match (None when none is chosen), each in its
    form in `forms` when it has one there (by id)."""
    if not chosen:
        return None
    from hyperscan import HS_FLAG_SINGLEMATCH

    from rounds_bot.redact import scan_cache  # here: it needs Hyperscan, which the caller has

    forms = forms or {}
    return scan_cache.database(
        [forms.get(patterns.ids[n], patterns.expressions[n]) for n in chosen],
        [patterns.ids[n] for n in chosen],
        [patterns.flags[n] & ~HS_FLAG_SINGLEMATCH for n in chosen],
        [patterns.lengths[n] for n in chosen],
    )


def _collect(rule_id: int, _start: int, end: int, _flags: int, hits: Hits) -> None:
    hits.append((rule_id, end))
