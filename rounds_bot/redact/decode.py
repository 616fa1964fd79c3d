"""Redaction that decodes before it judges: a secret in an encoded form is judged in its decoded form.

    rejudge(text, judge)   `text` (already redacted once) with what its decoded views show redacted too

Four encodings carry a secret past rules written for plain text: JSON string escapes (`{\\"password\\":
\\"...\\"}`, a JSON document inside a JSON string; `\\u0022`; a value before `\\n`), percent-encoding
(RFC 3986, once or twice: `password%3D...`, `%7B%22client_secret%22...`), base64 (RFC 4648, standard and
URL-safe) and hex. Each is gated by a check that costs next to nothing on text that holds none of it (a
backslash before a quote, a `%XX`, a run of 20 base64 or 32 hex characters), so ordinary text pays one scan.

A whole-text view (escapes, percent-encoding) replaces the text only when judging it finds something the
plain text did not show; the decoded, redacted text is then what the issue shows (it reads better than the
encoded one). A base64 or hex run is decoded only when it decodes to printable text (or holds a private key);
when the judge finds a secret in it, the run is replaced whole.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Sequence
from urllib.parse import unquote

from rounds_bot.redact.rule import REDACTED

#: judge(view) -> (the view redacted, the categories it found)
Judge = Callable[[str], tuple[str, list[str]]]
#: spans (start, end) of a text, in order, outside which it holds no run `_runs` decodes or that turns its hex
#: pass on (the lines a scan found one of `SCAN_GATES` in: no run holds a newline); None: anywhere
Where = Sequence[tuple[int, int]] | None

#: `\uXXXX`, an escaped quote, backslash or slash, and the escapes of a line break and a tab (`\n`, `\r`,
#: `\t`: a value before one is judged as the value before a line break is; gitleaks' rules end a value at
#: `\\[nr]` for the same reason)
_ESCAPE = re.compile(r"""\\(?:u([0-9A-Fa-f]{4})|(["\\/'])|([nrt]))""")
#: what an escaped letter (`_ESCAPE`'s third group) stands for
_ESCAPED_LETTERS = {"n": "\n", "r": "\r", "t": "\t"}
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
#: a run starts after any character outside the alphabet, `=` too: a run is a value after its name
#: (`payload=eyJ...`, `?state=...`) as often as after a space (its own padding, `={0,2}`, only ends one)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,16000}={0,2}(?![A-Za-z0-9+/=_-])")
#: a run of 20 base64 characters, found before any run is looked at (one scan, most texts have none)
_ANY_RUN = re.compile(r"[A-Za-z0-9+/_-]{20}")
_HEXISH = re.compile(r"[0-9A-Fa-f]+")
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}){16,8000}(?![0-9A-Za-z])")
#: the least and most characters of a run `_HEX` finds (twice its bounds on pairs)
_HEX_RUN_CHARS = (32, 16_000)
#: how many layers of one encoding are taken off (a value percent-encoded twice is common in redirects)
_LAYERS = 3
#: how deep an encoded run is looked into (base64 inside base64 ...)
_DEPTH = 2
_ARMOUR = ("PRIVATE KEY", "PuTTY-User-Key")
#: what `surrogateescape` decodes a byte that is not UTF-8 to
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


#: a base64 run's character, a character outside the run, a run's character that is no capital
_RUN, _OUTSIDE, _NO_CAPITAL = "[A-Za-z0-9+/_-]", "[^A-Za-z0-9+/_-]", "[a-z0-9+/_-]"


def _capital_within_19() -> str:
    """A run's first capital within its first 19 characters, and the run going on to 20 characters."""
    return "|".join(
        (f"{_NO_CAPITAL}{{{before}}}" if before else "") + f"[A-Z]{_RUN}{{{19 - before}}}"
        for before in range(19)
    )


def _run_with_a_capital() -> str:
    """A run of 20 base64 characters or more that holds a capital letter, in a form Hyperscan scans at
    memory speed: the run's start (the text's, or a character outside the alphabet), its first capital
    within 19 characters and the run going on to 20; or 19 characters and a capital. (The same language
    with a least length of 20, `[B]*[A-Z][B]*`, costs the scan more than all the rules; this form costs
    the database half a second more to build than that one, once a round, and the scan little.)"""
    return f"(?:^|{_OUTSIDE})(?:{_capital_within_19()})|{_RUN}{{19}}[A-Z]"


#: What a scan of the text looks for before `_runs` is worth a look (Hyperscan patterns and the least length
#: of a match, `scan.Prefilter`): every run `_from_base64` does not refuse unread is 20 characters or more
#: and holds a capital (the first: a run in capitals alone is refused, but costs nothing to look at) or no
#: letter (the second), and every run that turns on the hex pass is 32 hex characters (the third). A text
#: with none of them holds no run `_runs` could decode.
SCAN_GATES = {
    "base64 run with a capital": (_run_with_a_capital(), 0),
    "base64 run without letters": ("[0-9+/_-]{20}", 0),
    "hex run": ("[0-9A-Fa-f]{32}", 0),
}
#: the gate of the hex pass alone (an id, a hash)
HEX_GATE = "hex run"


def _once_a_run() -> str:
    """`_run_with_a_capital` matched once a run: from the run's start, its first capital within 19
    characters and the run going on to 20, or its first capital after 19 or more (the same texts match)."""
    return f"(?:^|{_OUTSIDE})(?:{_capital_within_19()})|(?:^|{_OUTSIDE}){_NO_CAPITAL}{{19,}}[A-Z]"


#: The run gates as the scan of many texts at once reads them (`scan_joined.py`: every match reported, each
#: credited to its text): the same texts match, each run once from its start (a character outside the run,
#: or a line's start, before it), where the forms above match at every character of a long run. A run is
#: whole in its text (texts are joined by newlines, outside every run), so its text is credited with it.
JOINED_GATES = {
    "base64 run with a capital": _once_a_run(),
    "base64 run without letters": "(?:^|[^0-9+/_-])[0-9+/_-]{20}",
    "hex run": "(?:^|[^0-9A-Fa-f])[0-9A-Fa-f]{32}",
}


def hex_runs_hide_nothing(text: str, where: Where = None) -> bool:
    """True when no hex run of `text` decodes to text (`_from_hex`): the hex pass of `_runs` then finds
    nothing to judge. `where`: the spans the runs are in (`Where`)."""
    if _HEXISH.fullmatch(text):
        # hex alone (an id, a hash): a run `_HEX` finds starts where no letter or digit comes before and ends
        # where none follows, so its one run is the whole text, when its length is even and in bounds
        return not (_HEX_RUN_CHARS[0] <= len(text) <= _HEX_RUN_CHARS[1] and len(text) % 2 == 0) or (
            _from_hex(text) is None
        )
    return all(_from_hex(match.group(0)) is None for match in _matches(_HEX, text, where))


def _matches(pattern: re.Pattern[str], text: str, where: Where) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`, or its matches in the spans `where`: what `finditer` finds there, for a
    pattern whose matches hold no newline and whose lookarounds read one character, which at a span's
    edge (a newline, or the text's own edge) they read as they do in the whole text."""
    if where is None:
        yield from pattern.finditer(text)
        return
    for start, end in where:
        yield from pattern.finditer(text, start, end)


def rejudge(
    text: str, judge: Judge, depth: int = 0, runs: bool = True, where: Where = None
) -> tuple[str, list[str]]:
    """`text` with the secrets its decoded views hold redacted, and the categories found. `runs=False`: a
    scan of `text` found none of `SCAN_GATES`, so its base64 and hex runs need no look; `where`: the spans
    of `text` its runs are in (`Where`)."""
    found: list[str] = []
    original = text
    if "\\" in text and _ESCAPE.search(text):
        text = _view(text, _unescape, judge, found)
    if "%" in text and _PERCENT.search(text):
        text = _view(text, unquote, judge, found)
    if (runs or text is not original) and depth < _DEPTH and len(text) >= 20 and _ANY_RUN.search(text):
        text = _runs(text, judge, depth, found, where if text is original else None)
    return text, found


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else m[2] or _ESCAPED_LETTERS[m[3]], text)


def _view(text: str, decode: Callable[[str], str], judge: Judge, found: list[str]) -> str:
    """The decoded text, redacted, when it shows a secret the text did not; else the text unchanged."""
    view = text
    for _ in range(_LAYERS):
        decoded = decode(view)
        if decoded == view:
            break
        view = decoded
    if view == text:
        return text
    redacted, categories = judge(view)
    if not categories:
        return text
    found += categories
    return redacted


def runs_to_judge(text: str, where: Where = None) -> list[int]:
    """Where the base64 runs of `text` start that `_runs` would do more with than refuse: one that decodes
    to text (`_from_base64`: it is judged), or one of 32 hex characters or more (it turns the hex pass on).
    None of them: `_runs` gives `text` back as it is, judging nothing. A run holds no newline and its
    look-arounds read one as they read a text's edge, so texts joined by newlines are read here as each
    alone (`where`: the spans the runs are in, `Where`)."""
    starts: list[int] = []
    for match in _matches(_BASE64, text, where):
        run = match.group(0)
        if (len(run) >= 32 and _HEXISH.fullmatch(run) is not None) or _from_base64(run) is not None:
            starts.append(match.start())
    return starts


def _runs(text: str, judge: Judge, depth: int, found: list[str], where: Where = None) -> str:
    pieces: list[str] = []
    cursor = 0
    hex_seen = False
    for pattern, decode in ((_BASE64, _from_base64), (_HEX, _from_hex)):
        if pattern is _HEX and not hex_seen:
            break
        for match in _matches(pattern, text, where):
            hex_seen = hex_seen or (
                len(match.group(0)) >= 32 and _HEXISH.fullmatch(match.group(0)) is not None
            )
            if match.start() < cursor:
                continue
            decoded = decode(match.group(0))
            if decoded is None:
                continue
            category = _secret_in(decoded, judge, depth)
            if category is None:
                continue
            found.append(category)
            pieces += [text[cursor : match.start()], REDACTED.format(category=category)]
            cursor = match.end()
        if pieces:  # one encoding per text: the runs of the other overlap these
            break
    if not pieces:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)


def _secret_in(decoded: str, judge: Judge, depth: int) -> str | None:
    if any(armour in decoded for armour in _ARMOUR):
        return "private_key"
    _, categories = judge(decoded)
    if not categories:
        _, categories = rejudge(decoded, judge, depth + 1)
    return categories[0] if categories else None


def _printable(raw: bytes) -> str | None:
    """`raw` as text when it is text (UTF-8, nearly all printable), else None: ids and hashes decode to
    bytes that are not."""
    if len(raw) < 12:
        return None
    # bytes that are not UTF-8 decode with lone surrogates for them, which UTF-8 never decodes to: told
    # without raising an error (most ids and hashes are not UTF-8, and an error costs more than decoding)
    text = raw.decode("utf-8", "surrogateescape")
    if not raw.isascii() and _ESCAPED_BYTE.search(text):
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in text)
    return text if printable >= 0.95 * len(text) else None


def _from_base64(run: str) -> str | None:
    if run.islower() or run.isupper() or run.isdigit():
        return None  # text encoded in base64 has both cases; ids, hashes and numbers in one case are skipped
    alphabet = "-_" if ("-" in run or "_" in run) else "+/"
    if alphabet == "-_" and ("+" in run or "/" in run):
        return None
    padded = run.rstrip("=")
    padded += "=" * (-len(padded) % 4)
    try:
        raw = base64.b64decode(
            padded, altchars=alphabet.encode() if alphabet == "-_" else None, validate=True
        )
    except (binascii.Error, ValueError):
        return None
    return _printable(raw)


def _from_hex(run: str) -> str | None:
    try:
        return _printable(bytes.fromhex(run))
    except ValueError:
        return None
