"""Redacting one text: cut to its cap, sanitised, then every rule family in order.

    cut(text, limit)       at most `limit` characters, cut at a space, the cut stated at the end
    sanitize(text)         without control, bidirectional, zero-width and other invisible characters
    redact_text(text)      secrets and personal data replaced by `[REDACTED:<category>]`, with counts

Then the seed phrases (`phrases.py`), and what an encoding hid, judged in its decoded form (`decode.py`).
The order matters: private-key blocks and vendor tokens first (`tokens.py`, `vendors.py`), password hashes
(`hashes.py`), then what a name or a header marks as secret (a value wrapped onto the next line first,
`wrapped.py`; a call's literal argument, `calls.py`, and PHP's `var_dump`, `layouts.DUMPS`, before a pair
reads the call's name or the dump's `string` as a value; a runtime's wrapper's literal,
`printed.WRAPPED_VALUES`, before a pair reads the wrapper's name; then `pairs.py`, what programs print
of their objects and configurations that no pair reads (`printed.py`), the layouts of credential files,
`layouts.py`, in other languages `foreign.py`), a vendor's token after the vendor's name (`nearby.py`), then
personal data (`personal.py`), so a token inside `password=...` is counted as the token it is.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from rounds_bot.redact import decode, phrases
from rounds_bot.redact.arguments import ARGUMENTS
from rounds_bot.redact.argv import ARGUMENT_LISTS
from rounds_bot.redact.calls import CALLS
from rounds_bot.redact.decode import Where, hex_runs_hide_nothing, rejudge
from rounds_bot.redact.described import DESCRIBED
from rounds_bot.redact.engine import ScanningRuleSet, apply, rule_set
from rounds_bot.redact.foreign import FOREIGN
from rounds_bot.redact.hashes import PASSWORD_HASHES
from rounds_bot.redact.layouts import DUMPS, LAYOUTS
from rounds_bot.redact.literals import LITERALS
from rounds_bot.redact.nearby import NEARBY
from rounds_bot.redact.pairs import PAIRS
from rounds_bot.redact.personal import PERSONAL, IpPolicy, ip_rules
from rounds_bot.redact.phrases import seed_phrases
from rounds_bot.redact.printed import PRINTED, WRAPPED_VALUES
from rounds_bot.redact.printed_terms import PRINTED_TERMS
from rounds_bot.redact.queries import QUERIES
from rounds_bot.redact.rule import Rule
from rounds_bot.redact.scan import Scan
from rounds_bot.redact.tokens import TOKENS
from rounds_bot.redact.vendors import VENDORS
from rounds_bot.redact.wrapped import WRAPPED

#: How far back from a cap a cut looks for a space, so it does not split a word (or a token) in two.
_CUT_REACH = 256
# Control (Cc), format (Cf: bidi controls, zero-width characters, tags), surrogate (Cs) and private-use (Co)
# characters as Unicode 15 assigns them (a test checks the list against `unicodedata`), and the fillers and
# selectors that render as nothing. Newline and tab stay.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164"
    "\ud800-\udfff\ue000-\uf8ff\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef\U000f0000-\U000ffffd\U00100000-\U0010fffd]"
)


PHRASE_GATES = frozenset(phrases.SCAN_GATES)
RUN_GATES = frozenset(decode.SCAN_GATES)
HEX_ONLY = frozenset({decode.HEX_GATE})
#: the ASCII characters `_HIDDEN` removes, for `bytes.translate` (an ASCII text is sanitised at memory speed)
_HIDDEN_ASCII = bytes(code for code in range(128) if _HIDDEN.match(chr(code)))


@dataclass(frozen=True)
class Redaction:
    """Redacted text and how many replacements of each category were made."""

    text: str
    counts: Counter[str]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters (plus the note that says how much was cut)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = max(head.rfind(" ", limit - _CUT_REACH), head.rfind("\n", limit - _CUT_REACH))
    head = head[:space] if space > 0 else head[: max(limit - _CUT_REACH, 0)]
    return f"{head} [… {len(text) - len(head):,} more characters cut by rounds]"


def sanitize(text: str) -> str:
    """`text` without what a reader cannot see: control, format (bidi, zero-width, tag), private-use and
    unpaired surrogate characters. Newlines and tabs stay."""
    if text.isascii():
        raw = text.encode("ascii")
        kept = raw.translate(None, _HIDDEN_ASCII)
        return text if len(kept) == len(raw) else kept.decode("ascii")
    return _HIDDEN.sub("", text)


@cache
def _rules(ips: IpPolicy) -> tuple[Rule, ...]:
    return (
        TOKENS
        + VENDORS
        + QUERIES
        + PASSWORD_HASHES
        + WRAPPED
        + CALLS
        + DUMPS
        + LITERALS
        + DESCRIBED
        + WRAPPED_VALUES
        + PAIRS
        + PRINTED
        + LAYOUTS
        + PRINTED_TERMS
        + ARGUMENTS
        + ARGUMENT_LISTS
        + FOREIGN
        + NEARBY
        + PERSONAL
        + ip_rules(ips)
    )


def unchanged(text: str, *, ips: IpPolicy = "all") -> bool:
    """True when `redact_text(text)` is `text` itself with nothing counted, as its first steps prove it for
    most ids and hashes: an ASCII text with nothing to sanitise and no escape, in which the scan finds no rule
    that may match and nothing a later step looks for but hex runs that decode to no text. False when those
    steps do not prove it (not that redaction changes it: then `redact_text` tells)."""
    if not text.isascii() or "\\" in text or "%" in text or sanitize(text) is not text:
        return False
    return unchanged_shaped(text, ips=ips)


def unchanged_shaped(text: str, *, ips: IpPolicy = "all") -> bool:
    """`unchanged` of a text known to be ASCII with nothing to sanitise and no escape (an id's characters
    alone): the scan's part of the proof."""
    engine = rule_set(_rules(ips))
    if not isinstance(engine, ScanningRuleSet):
        return False
    gates = engine.clears(text)
    if gates is None:
        return False
    return not gates or (gates == HEX_ONLY and hex_runs_hide_nothing(text))


def redact_text(text: str, *, ips: IpPolicy = "all") -> Redaction:
    """`text`, sanitised, with secrets and personal data replaced. Cap it (`cut`) before: every rule is
    linear in the text's length, but a 10 MB text is still 10 MB."""
    counts: Counter[str] = Counter()
    return Redaction(redact_into(text, counts, ips=ips), counts)


def redact_into(
    text: str, counts: Counter[str], *, ips: IpPolicy = "all", scanned: Scan | None = None
) -> str:
    """`redact_text`'s text, its counts added to `counts` (an empty counter: the redaction's counts; one
    counter for many texts costs none made and dropped a text). `scanned`: what the scan of an ASCII `text`
    found, or more (`Prefilter.scan_many`), used when sanitising leaves the text as it is."""
    rules = _rules(ips)
    engine = rule_set(rules)
    # the scan that picks the rules also says whether a seed phrase or an encoded run may be there
    where: Where = None
    if isinstance(engine, ScanningRuleSet):
        clean = sanitize(text)
        ruled, gates = engine.apply_gated(clean, counts, scanned if clean is text else None)
        if gates and RUN_GATES & gates:  # the lines of a long text its runs are in (`decode.Where`)
            where = engine.prefilter.lines_with(ruled, RUN_GATES)
    else:
        ruled, gates = engine.apply(sanitize(text), counts), None
    if gates is not None and "\\" not in ruled and "%" not in ruled:
        if not gates:
            return ruled  # it holds nothing a later step looks for (the gates are the ruled text's)
        if gates == HEX_ONLY and hex_runs_hide_nothing(ruled, where):
            # an id, a hash: with no base64 run worth decoding (the scan's promise), a hex run that does not
            # decode to text is all the decoding step would look at, and it would leave the text as it is
            return ruled
    done = ruled
    if gates is None or PHRASE_GATES & gates:
        done = seed_phrases(ruled, counts)
    runs = gates is None or done is not ruled or bool(RUN_GATES & gates)
    where = where if done is ruled else None  # a phrase replaced: the spans no longer stand

    def judge(view: str) -> tuple[str, list[str]]:
        found: Counter[str] = Counter()
        return seed_phrases(apply(rules, view, found), found), list(found.elements())

    # what an encoding hid, judged decoded (`decode.py`)
    done, decoded = rejudge(done, judge, runs=runs, where=where)
    counts.update(decoded)
    return done
