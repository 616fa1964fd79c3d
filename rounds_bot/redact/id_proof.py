"""An id redaction keeps as it is, proven by one scan with as little as may be around it.

    IdProof(ips).kept(value) -> bool    `text.unchanged_shaped(value)`, for a text of an id's characters
    proof.prove(values)                 what `kept` says of each of many ids, found with a scan for many

`unchanged_shaped` proves that redaction keeps a text of an id's characters (ASCII, nothing to sanitise, no
escape) as it is: the scan finds no rule that may match it, and no gate but the hex run's, whose runs then
decode to no text (`decode.hex_runs_hide_nothing`). Ids are a third of the texts a round redacts and nearly
each is new, so the Python around that one scan is much of what an id costs. Here the scan's report is taken
as the numbers it names alone (`Prefilter.reported`), and what the engine's verdict (`clears`) is for a
report is asked once, of the first id with that report, then remembered: `clears` judges nothing but the
report. A report that names a rule holds a match's end, which `clears` never clears (None, whatever the
text); one that names keywords and gates alone is read into the same `Scan` whatever the text. A few
reports recur (nothing; the hex run's gate alone), so the memory is small; it is bounded all the same.

A round's ids come a thousand at a time (`event.Boundary`), and even one call to Hyperscan an id is most of
what an id costs. `prove` scans many ids joined by newlines at once: a match in one id is a match in the
joined buffer (`scan_lines.joinable`, checked of the database once), so a joined scan that reports nothing
but the hex run's gate proves that no id of it reports anything else alone. Whether an id reports that gate
alone is read from the id itself: the gate is a character class repeated, which Python's engine matches
as Hyperscan does. So each id's report is known exactly and judged as `kept` judges it; ids of a joined
scan that reports more are halved until each half reports nothing else, or an id is scanned alone, as
`kept` scans it. Nothing here proves more than `kept` does: an id's answer is `kept`'s, found sooner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rounds_bot.redact.decode import HEX_GATE, SCAN_GATES, hex_runs_hide_nothing
from rounds_bot.redact.engine import ScanningRuleSet, rule_set
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.scan import Prefilter
from rounds_bot.redact.text import HEX_ONLY, _rules

#: reports remembered at most (each a few numbers); past it the memory starts afresh
REPORTS = 1_024
#: ids scanned joined at most: a joined scan that reports something is halved, and scanning fewer ids
#: at once halves fewer (a few ids in a thousand report a keyword or a card number's digits)
JOINED = 32
#: a gate the Python engine reads as Hyperscan does: one character class (no escape in it) repeated
_BARE_CLASS = re.compile(r"\[[^\]\\]+\]\{\d+\}")
#: the verdicts, by what they leave to the id itself
_NOT_KEPT, _KEPT, _KEPT_IF_HEX_HIDES_NOTHING = 0, 1, 2


class IdProof:
    """`unchanged_shaped` for one redaction policy, remembering the engine's verdict on each report."""

    def __init__(self, ips: IpPolicy = "all") -> None:
        self.ips: IpPolicy = ips
        self._engine: ScanningRuleSet | None = None
        self._prefilter: Prefilter | None = None
        self._prepared = False
        self._verdicts: dict[frozenset[int], int] = {}
        self._proven: dict[str, bool] = {}  # what `kept` says of the ids `prove` was last given
        self._hex_gate: tuple[int, re.Pattern[str]] | None = None  # its number, and read by Python

    def kept(self, value: str) -> bool:
        """True exactly when `unchanged_shaped(value, ips=self.ips)` is, for `value` of an id's characters
        alone (ASCII letters, digits and `-_.:/`)."""
        proven = self._proven.get(value)
        if proven is not None:
            return proven
        prefilter = self._prefilter if self._prepared else self._prepare()
        if prefilter is None:  # no scanning engine: `unchanged_shaped` proves nothing
            return False
        return self._answer(prefilter.reported(value.encode("ascii")), value)

    def proven(self, value: str) -> bool:
        """True when `prove` was last given `value` and found it kept (False: not given, or not kept)."""
        return self._proven.get(value, False)

    def _answer(self, report: frozenset[int], value: str) -> bool:
        """`kept`'s answer for `value`, whose scan reports `report`."""
        verdict = self._verdicts.get(report)
        if verdict is None:
            verdict = self._judged(report, value)
        return verdict == _KEPT or (verdict == _KEPT_IF_HEX_HIDES_NOTHING and hex_runs_hide_nothing(value))

    def _prepare(self) -> Prefilter | None:
        """The engine of the policy's rules, built (or found) once: the same `unchanged_shaped` asks."""
        engine = rule_set(_rules(self.ips))
        if isinstance(engine, ScanningRuleSet):
            self._engine, self._prefilter = engine, engine.prefilter
        self._prepared = True
        if self._prefilter is not None and self._prefilter.scans_joined():
            number = self._prefilter.gate_number(HEX_GATE)
            source = SCAN_GATES[HEX_GATE][0]
            if number is not None and _BARE_CLASS.fullmatch(source) and not SCAN_GATES[HEX_GATE][1]:
                self._hex_gate = number, re.compile(source)
        return self._prefilter

    def prove(self, values: Iterable[str]) -> None:
        """Find what `kept` says of each of `values` (ids of an id's characters alone) with few scans, and
        remember it until the next call: `kept` then answers for these at once."""
        self._proven = {}
        prefilter = self._prefilter if self._prepared else self._prepare()
        if prefilter is None or self._hex_gate is None:  # no engine, or one whose scans do not join
            return
        ids = list(dict.fromkeys(value for value in values if value))
        for start in range(0, len(ids), JOINED):
            self._prove_joined(prefilter, ids[start : start + JOINED])

    def _prove_joined(self, prefilter: Prefilter, ids: list[str]) -> None:
        assert self._hex_gate is not None  # `prove` checked it
        number, hex_run = self._hex_gate
        hexed, bare = frozenset({number}), frozenset[int]()
        parts = [ids]
        while parts:
            part = parts.pop()
            if len(part) <= 2:  # each scanned alone, as `kept` scans it
                for value in part:
                    self._proven[value] = self._answer(prefilter.reported(value.encode("ascii")), value)
                continue
            report = prefilter.reported("\n".join(part).encode("ascii"))
            if report and report != {number}:  # some id reports more than the gate: halve
                half = len(part) // 2
                parts += [part[:half], part[half:]]
                continue
            # no id reports more than the gate; which report it, each id tells (`_BARE_CLASS`): `_answer`,
            # in line (a round proves a few hundred thousand ids)
            proven, verdicts = self._proven, self._verdicts
            for value in part:
                report = hexed if hex_run.search(value) else bare
                verdict = verdicts.get(report)
                if verdict is None:
                    verdict = self._judged(report, value)
                proven[value] = verdict == _KEPT or (
                    verdict == _KEPT_IF_HEX_HIDES_NOTHING and hex_runs_hide_nothing(value)
                )

    def _judged(self, report: frozenset[int], value: str) -> int:
        """What the engine says of the report `value`'s scan gave, as `unchanged_shaped` reads it."""
        assert self._engine is not None  # `kept` prepared it
        gates = self._engine.clears(value)
        if gates is None:
            verdict = _NOT_KEPT
        elif not gates:
            verdict = _KEPT
        else:
            verdict = _KEPT_IF_HEX_HIDES_NOTHING if gates == HEX_ONLY else _NOT_KEPT
        if len(self._verdicts) >= REPORTS:
            self._verdicts.clear()
        self._verdicts[report] = verdict
        return verdict
