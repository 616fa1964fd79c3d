"""An id redaction keeps as it is, proven by one scan with as little as may be around it.

    IdProof(ips).kept(value) -> bool    `text.unchanged_shaped(value)`, for a text of an id's characters

`unchanged_shaped` proves that redaction keeps a text of an id's characters (ASCII, nothing to sanitise, no
escape) as it is: the scan finds no rule that may match it, and no gate but the hex run's, whose runs then
decode to no text (`decode.hex_runs_hide_nothing`). Ids are a third of the texts a round redacts and nearly
each is new, so the Python around that one scan is much of what an id costs. Here the scan's report is taken
as the numbers it names alone (`Prefilter.reported`), and what the engine's verdict (`clears`) is for a
report is asked once, of the first id with that report, then remembered: `clears` judges nothing but the
report. A report that names a rule holds a match's end, which `clears` never clears (None, whatever the
text); one that names keywords and gates alone is read into the same `Scan` whatever the text. A few
reports recur (nothing; the hex run's gate alone), so the memory is small; it is bounded all the same.
"""

from __future__ import annotations

from rounds_bot.redact.decode import hex_runs_hide_nothing
from rounds_bot.redact.engine import ScanningRuleSet, rule_set
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.scan import Prefilter
from rounds_bot.redact.text import HEX_ONLY, _rules

#: reports remembered at most (each a few numbers); past it the memory starts afresh
REPORTS = 1_024
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

    def kept(self, value: str) -> bool:
        """True exactly when `unchanged_shaped(value, ips=self.ips)` is, for `value` of an id's characters
        alone (ASCII letters, digits and `-_.:/`)."""
        prefilter = self._prefilter if self._prepared else self._prepare()
        if prefilter is None:  # no scanning engine: `unchanged_shaped` proves nothing
            return False
        report = prefilter.reported(value.encode("ascii"))
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
        return self._prefilter

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
