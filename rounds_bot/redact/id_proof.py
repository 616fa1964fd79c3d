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

A round's ids come a thousand at a time (`boundary.Boundary`), and even one call to Hyperscan an id is most of
what an id costs. `prove` scans many ids joined by newlines at once: a match in one id is a match in the
joined buffer (`scan_lines.joinable`, checked of the database once), so a joined scan that reports nothing
but the hex run's gate proves that no id of it reports anything else alone. Whether an id reports that gate
alone is read from the id itself: the gate is a character class repeated, which Python's engine matches
as Hyperscan does. So each id's report is known exactly and judged as `kept` judges it. A joined scan that
reports more names, most often, a rule reported at every match (a card number's digits in a few ids in a
thousand): each match is credited to the id it ends in, and only those ids are scanned alone, as `kept`
scans them; one that reports a keyword or another gate (reported once a scan, so for no id in particular)
is halved until each half reports nothing else, or an id is scanned alone. Nothing here proves more than
`kept` does: an id's answer is `kept`'s, found sooner.

With the scans joined, the Python a round spends on each id is what is left, so the ids of the joined scans
that reported nothing else are settled together, after the scans (`_settled`): which of them hold the gate,
and whether an id of 32 hex digits hides text in its bytes (`hex_ids_hiding`), are read for all of them at
once, and only the few a bulk reading cannot rule out are asked one at a time.
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
_BARE_CLASS = re.compile(r"\[[^\]\\]+\]\{(\d+)\}")
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
        # the hex run's gate: its number, read by Python, and the length of its matches
        self._hex_gate: tuple[int, re.Pattern[str], int] | None = None
        self._gate_in_spelled = False  # whether every id of 32 hex digits holds the gate (`_spelled`)
        self._every_match: frozenset[int] = frozenset()  # `Prefilter.every_match`, read once

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

    def answers(self) -> dict[str, bool]:
        """What `kept` says of the ids `prove` was last given (`proven`'s answers, to look up in line)."""
        return self._proven

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
            self._every_match = self._prefilter.every_match
            number = self._prefilter.gate_number(HEX_GATE)
            source = SCAN_GATES[HEX_GATE][0]
            bare = _BARE_CLASS.fullmatch(source)
            if number is not None and bare and not SCAN_GATES[HEX_GATE][1]:
                length, hex_run = int(bare.group(1)), re.compile(source)
                self._hex_gate = number, hex_run, length
                # its class holds every hex digit, and its run fits in 32 of them
                self._gate_in_spelled = length <= 32 and all(
                    hex_run.fullmatch(c * length) for c in _HEX_DIGITS
                )
        return self._prefilter

    def prove(self, values: Iterable[str]) -> None:
        """Find what `kept` says of each of `values` (ids of an id's characters alone) with few scans, and
        remember it until the next call: `kept` then answers for these at once."""
        self._proven = {}
        prefilter = self._prefilter if self._prepared else self._prepare()
        if prefilter is None or self._hex_gate is None:  # no engine, or one whose scans do not join
            return
        unique = dict.fromkeys(values)
        unique.pop("", None)
        ids = list(unique)
        alone: dict[str, bool] = {}  # the ids of joined scans that reported more, each scanned alone
        for start in range(0, len(ids), JOINED):
            self._prove_joined(prefilter, ids[start : start + JOINED], alone)
        self._proven = self._settled([value for value in ids if value not in alone] if alone else ids)
        self._proven.update(alone)

    def _prove_joined(self, prefilter: Prefilter, ids: list[str], alone: dict[str, bool]) -> None:
        """Scan `ids` joined: the ids of a joined scan that reports nothing but the hex run's gate report
        nothing else alone (`scans_joined`) and are left to `_settled`. When it reports more, and all of it
        is reported at every match (a card number's digits: `Prefilter.every_match`), only the ids credited
        with a match of it can report it alone (a match in an id alone is one in the buffer, where it ends in
        that id): those are scanned alone, as `kept` scans them, and their answers put in `alone`, the others
        left to `_settled`. Else (a keyword, another gate: reported once a scan, for one id) the ids are
        halved until each half reports nothing else, or one of two or fewer is scanned alone."""
        assert self._hex_gate is not None  # `prove` checked it
        number = self._hex_gate[0]
        parts = [ids]
        while parts:
            part = parts.pop()
            if len(part) <= 2:  # each scanned alone, as `kept` scans it
                for value in part:
                    alone[value] = self._answer(prefilter.reported(value.encode("ascii")), value)
                continue
            credited = prefilter.credited(part)
            more = {reported for _, reported, _ in credited}
            more.discard(number)
            if not more:
                continue
            if more <= self._every_match:
                for at in {at for at, reported, _ in credited if reported in more}:
                    value = part[at]
                    alone[value] = self._answer(prefilter.reported(value.encode("ascii")), value)
                continue
            half = len(part) // 2
            parts += [part[:half], part[half:]]

    def _settled(self, ids: list[str]) -> dict[str, bool]:
        """What `kept` says of `ids`, none of which reports more than the hex run's gate alone: whether one
        reports the gate, the id tells (`_BARE_CLASS`: Python's engine matches it as Hyperscan does; an id
        shorter than its run does not, and one of 32 hex digits does when the gate's class holds them), so
        its report, and the verdict on that report, are known without its scan. Read in bulk, not id by id:
        a round proves a few hundred thousand ids."""
        assert self._hex_gate is not None  # `prove` checked it
        number, hex_run, length = self._hex_gate
        spelled = _spelled(ids) if self._gate_in_spelled else []
        known = set(spelled)
        others = list(filter(hex_run.search, [v for v in ids if len(v) >= length and v not in known]))
        known.update(others)
        bare = [value for value in ids if value not in known] if known else ids
        settled: dict[str, bool] = {}
        for report, values in ((frozenset({number}), spelled + others), (frozenset[int](), bare)):
            if not values:
                continue
            verdict = self._verdicts.get(report)
            if verdict is None:
                verdict = self._judged(report, values[0])
            settled.update(dict.fromkeys(values, verdict != _NOT_KEPT))
            if verdict == _KEPT_IF_HEX_HIDES_NOTHING:
                hiding = hex_ids_hiding(spelled, others) if values[0] in known else hex_ids_hiding([], bare)
                settled.update(dict.fromkeys(hiding, False))
        return settled

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


#: the digits of hex, both cases (an id of 32 of them alone spells 16 bytes: a trace id, an event id)
_HEX_DIGITS = "0123456789abcdefABCDEF"
_HEX_16_BYTES = re.compile(r"[0-9A-Fa-f]{32}")
#: DEL, and the bytes UTF-8 never holds
_NEVER_PRINTS = frozenset({0x7F, 0xC0, 0xC1, *range(0xF5, 0x100)})
#: each byte no text `decode._printable` accepts of 16 bytes can hold, as 0; every other byte as 1
_MAY_PRINT = bytes(
    0 if byte in _NEVER_PRINTS or (byte < 0x20 and byte not in b"\t\n\r") else 1 for byte in range(256)
)
#: 16 bytes of which each may print: what a run of 16 bytes must be to decode to text
_SIXTEEN = b"\x01" * 16


def _spelled(values: list[str]) -> list[str]:
    """The values of 32 hex digits alone (`_HEX_16_BYTES`), in order: told at once when all those of that
    length are."""
    of_length = [value for value in values if len(value) == 32]
    joined = "".join(of_length)
    if joined.isascii() and not joined.encode("ascii").translate(None, _HEX_DIGITS.encode("ascii")):
        return of_length
    return list(filter(_HEX_16_BYTES.fullmatch, of_length))


def hex_ids_hiding(spelled: list[str], others: list[str]) -> list[str]:
    """The texts of `spelled` (of 32 hex digits alone, `_spelled`) and `others` whose hex runs hide
    something (not `decode.hex_runs_hide_nothing`), read in bulk for those spelled: their one run is the
    whole id, and its 16 bytes decode to text only when every character they decode to prints
    (`decode._printable` wants 95% of them, so all of fewer than 20). An ASCII control byte decodes to
    itself, which does not print, and a byte UTF-8 never holds (0xC0, 0xC1, 0xF5 to 0xFF) to a lone
    surrogate, which does not either: an id whose bytes hold one hides nothing. The ids' bytes are read in
    one buffer, a 0 byte between two ids, so 16 bytes in a row that may print are one id's; most random
    ids hold such a byte, and the few that do not are asked of `hex_runs_hide_nothing`, as `others` are."""
    hiding = [value for value in others if not hex_runs_hide_nothing(value)]
    may_print = bytes.fromhex("00".join(spelled)).translate(_MAY_PRINT)
    at = may_print.find(_SIXTEEN)
    while at >= 0:
        value = spelled[at // 17]
        if not hex_runs_hide_nothing(value):
            hiding.append(value)
        at = may_print.find(_SIXTEEN, at + 17)
    return hiding
