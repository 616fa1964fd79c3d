"""A round's texts redacted a batch at a time: one scan for many of them, and most kept as they are at once.

    TextProof(ips).prove(texts)                scan many texts at once; find those redaction keeps as they are
    proof.redact_into(text, counts) -> str     `text.redact_into`, with the scan `prove` made of `text`

Every message of a round differs (ids, amounts) and most hold nothing to redact; a trace differs from the
others of its bug in the line of its message. One call to Hyperscan a text is then much of what redacting
it costs, so `prove` scans the texts of a batch joined (`Prefilter.scan_many`: what each one's own scan
reports, or more) and `redact_into` starts from that scan instead of its own. A text redaction gives back as
it is, counting nothing, is told at once: an ASCII text with nothing to sanitise (what `sanitize` removes is
looked for in the whole batch at once) and no escape (`\\`, `%`), in which the scan finds no rule that may
match and no gate (`ScanningRuleSet.apply_gated` then gives it back as it is with no gate, and nothing after
the rules looks at it); or one in which it finds gates of encoded runs alone, none of which decodes to
text (`_runs_decode_nothing`, read for the batch's such texts at once). A text not given to `prove` is
redacted as ever.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from itertools import accumulate

from rounds_bot.redact.decode import runs_to_judge
from rounds_bot.redact.engine import ScanningRuleSet, rule_set
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.scan import NOTHING, Prefilter, Scan
from rounds_bot.redact.text import _HIDDEN_ASCII, RUN_GATES, _rules, redact_into, sanitize

#: texts scanned in one call at most (a batch's joined buffer stays within a few hundred kilobytes)
JOINED = 256
#: a longer text is scanned alone, as ever: crediting each match of a joined scan to its text costs Python
#: more a match than a scan alone does, which a long text dense with matches (a dump of numbers) would pay
#: thousands of times, and a long text is few calls among many characters, where joining saves nothing
JOINED_CHARS = 8_192


class TextProof:
    """What the last `prove` found of the texts it was given, for one policy: those kept as they are, and
    the scan of each other."""

    def __init__(self, ips: IpPolicy = "all") -> None:
        self.ips: IpPolicy = ips
        # the texts the last `prove` found kept: one set, emptied and refilled by each `prove`, so a caller
        # may hold it (`proven`) and look texts up in line
        self._kept: set[str] = set()
        self._scans: dict[str, Scan] = {}

    @property
    def proven(self) -> set[str]:
        """The texts the last `prove` found redaction keeps as they are (`kept`'s answers), the same set
        after every `prove`: a text is in it exactly when `kept` says True. Not to be changed."""
        return self._kept

    def prove(self, texts: Iterable[str]) -> None:
        """Scan `texts` a few hundred at a time, and remember until the next call (or each one's
        `redact_into`) which of them `redact_into` gives back as they are, with nothing counted, and what the
        scan found in the others."""
        self._kept.clear()
        self._scans = {}
        engine = rule_set(_rules(self.ips))
        if not isinstance(engine, ScanningRuleSet):
            return
        clean = _clean(
            [text for text in dict.fromkeys(texts) if text and len(text) <= JOINED_CHARS and text.isascii()]
        )
        kept, scans = self._kept, self._scans
        # what the scan finds in most texts, nothing, clears them or not whatever the text: told once
        nothing_clear = engine.clear(NOTHING)
        for start in range(0, len(clean), JOINED):
            part = clean[start : start + JOINED]
            found = engine.prefilter.scan_many(part)
            if found is None:  # a database whose texts do not join: each is scanned alone
                return
            runs: list[str] = []  # texts of no rule, with run gates alone: kept unless a run decodes
            for text, scan in zip(part, found, strict=True):
                if "\\" in text or "%" in text:
                    scans[text] = scan
                elif nothing_clear if scan is NOTHING else not scan.gates and engine.clear(scan):
                    kept.add(text)
                else:
                    scans[text] = scan
                    if scan.gates <= RUN_GATES and engine.clear(scan):
                        runs.append(text)
            if runs:
                for text in _runs_decode_nothing(runs, engine.prefilter):
                    kept.add(text)
                    del scans[text]

    def kept(self, text: str) -> bool:
        """True when the last `prove` found that redaction keeps `text` as it is (False: not given, or not
        kept)."""
        return text in self._kept

    def redact_into(self, text: str, counts: Counter[str]) -> str:
        """`text.redact_into(text, counts)` with the proof's policy: `text` itself when `prove` found it
        kept, from the scan `prove` made of it when it made one. The scan of a text not kept is forgotten
        then (a raw text waiting to be redacted is not held longer than its batch's proof); a text kept is its
        own redaction, which the event holds anyway, and stays proven until the next `prove`: the same text
        is redacted at another cap too (an error code is an event's name and one of its attributes), and
        would otherwise be redacted the long way the second time, to the same text."""
        if text in self._kept:
            return text
        return redact_into(text, counts, ips=self.ips, scanned=self._scans.pop(text, None))


def _runs_decode_nothing(texts: list[str], prefilter: Prefilter) -> list[str]:
    """Of ASCII `texts` with nothing to sanitise and no escape, in which the scan finds no rule that may
    match and gates of encoded runs alone, those `redact_into` gives back as they are, counting nothing:
    none of their runs decodes to text or turns the hex pass on (`decode.runs_to_judge`), so the decoding
    step, all that looks at them past the rules (no phrase gate), finds nothing. A Java trace's first line
    holds such a run in most rounds (`IllegalArgumentException`: 24 letters, capitals among them). Read
    joined by newlines, in one pass for all of them, in the lines the run gates match in (`lines_with`:
    a run each text's own redaction would read is in one of them, as it is in the text's own lines)."""
    joined = "\n".join(texts)
    judged = runs_to_judge(joined, prefilter.lines_with(joined, RUN_GATES))
    if not judged:
        return texts
    starts = list(accumulate([len(text) + 1 for text in texts], initial=0))
    hiding = {bisect_right(starts, start) - 1 for start in judged}
    return [text for number, text in enumerate(texts) if number not in hiding]


def _clean(texts: list[str]) -> list[str]:
    """The ASCII `texts` with nothing to sanitise (what `sanitize` removes, looked for in all of them at
    once: most batches hold none)."""
    joined = "".join(texts).encode("ascii")
    if len(joined.translate(None, _HIDDEN_ASCII)) == len(joined):
        return texts
    return [text for text in texts if sanitize(text) is text]
