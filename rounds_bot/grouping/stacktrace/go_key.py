"""One key for the Go dumps that read alike: the text without the values a dump prints per occurrence.

Every occurrence of one Go crash prints the same frames, but a dump also prints values that change each
time: goroutine ids and waits (`goroutine 7 [chan receive, 5 minutes]:`), call arguments (pointers:
`main.(*Cart).Add(0xc000123456, {0x0, 0x0})`) and the creator's goroutine (`created by main.serve in
goroutine 31`). The parser keeps none of them, so two dumps that differ only there read the same, yet
every occurrence's text is new. `dump_key` is the text with those values taken out: texts with one key
parse to the same trace, when that trace is read as Go (the memo in `trace_memo` keeps Go readings only).

Why. `dump_key` takes a value out only from a line of one of three forms, matched whole and kept short, and
keeps the rest of the line as printed:

- a goroutine header, `goroutine N [wait]:` (wait without `]`, `"` or `:`): taken out whole;
- a call, `symbol(args)`: the arguments, when they are Go's (hex, `{}`, `,`, `.`, `?`, spaces) and
  the parser does not take them for part of the symbol: after a receiver (`pkg.(*T).m(...)`), or
  when they hold a space, are longer than a receiver may be, or are empty (`pkg.f(0x1)` is read as a
  function named `f`, but with a note of the name releases before read, `f(0x1)`, `go.RENAMED`: such a
  line is kept whole);
- a creator line, `created by symbol in goroutine N`: the goroutine id.

A symbol here starts with a word character, holds neither space, quote, colon nor parenthesis but
around one receiver, and is no longer than the parser's pattern reads. On a line of these forms:

- recognising the runtime (`stacktrace.detect_runtime`) answers the same whatever the values: a
  header is a Go line, a call or creator line no runtime's (its first space comes after `(` or in
  `created by `, so no `at `/`goroutine `/`Raised at`-like start; it has no `:` nor `"`, which every
  other frame test and Python's header need);
- the Go parser reads the same: a header opens a goroutine; a call or creator line matches neither
  the panic, goroutine, signal nor file pattern, and its function pattern reads the symbol kept (the
  receiver's parentheses hold no space, so the argument list can never be read as a receiver);
- the line is never cut to `MAX_LINE_CHARS`, and the text must be read whole (up to
  `MAX_TRACE_CHARS`) and break lines only at `\\n`, so the parser's lines are the key's lines.

Any other line is part of the key as printed. Tests compare the readings of texts with one key over
the golden and synthetic dumps and texts built to trip each of these steps.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import MAX_TRACE_CHARS

#: a dump's key: the text around the values taken out, and what each line taken apart keeps
DumpKey = tuple[str | None, ...]

#: characters a symbol may hold: no space, quote, colon or parenthesis
_SYMBOL = r"[\w./%*@~+!\[\]-]"
#: characters Go prints in a call's arguments
_ARGUMENTS = r"[0-9a-fx{}., ?]"
#: a symbol, with its receiver (`(*Cart)`) when it has one; the parser reads up to 1024, 64 and 512
#: characters of these parts: less here, so a line of these forms stays under `MAX_LINE_CHARS`
_RECEIVER = rf"\({_SYMBOL}{{1,64}}+\)"
_NAME, _AFTER_RECEIVER = rf"\w{_SYMBOL}{{0,767}}+", rf"{_SYMBOL}{{0,255}}+"
_END = r"(?=\n|\Z)"
_VALUES = re.compile(
    # each line is matched with the line break before it (the text is read with one put in front)
    r"\n(?:"
    r'goroutine [0-9]{1,20} \[[^\]":\n]{0,128}\]:'
    rf"|(?P<call>{_NAME}(?:(?P<receiver>{_RECEIVER}){_AFTER_RECEIVER})?)\((?={_ARGUMENTS}{{0,900}}\){_END})"
    # after a receiver any arguments; else arguments that cannot be read as one
    rf"(?(receiver){_ARGUMENTS}*|(?:{_ARGUMENTS}* {_ARGUMENTS}*|{_ARGUMENTS}{{65,}}|))\)"
    rf"|(?P<creator>created by {_NAME}(?:{_RECEIVER}{_AFTER_RECEIVER})?) in goroutine [0-9]{{1,20}}"
    rf"){_END}"
)
#: line breaks other than `\n` (`str.splitlines` breaks at them too): each is looked for by a plain search,
#: several times quicker over a trace than a regular expression's character class
_OTHER_BREAKS = ("\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def dump_key(text: str) -> DumpKey | None:
    """The key of a text that may be a Go dump (see the module docstring), or None for a text that
    prints no goroutine, is longer than a trace is read, or breaks lines at other characters."""
    if "goroutine " not in text or len(text) > MAX_TRACE_CHARS or any(brk in text for brk in _OTHER_BREAKS):
        return None
    return tuple(_VALUES.split("\n" + text))
