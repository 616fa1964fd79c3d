"""A trace with its event's own message cut out: the part of the text every occurrence of a problem shares.

Runtimes print the exception's message inside the trace (Python's last line, the JVM's and V8's first,
Go's `panic:` line), and messages change from one occurrence to the next in words as well as digits. So
the text of a trace is new every time while its frames are not. When the message sits in the trace as the
rest of a header line (`ValueError: <message>`, `panic: <message>`), the trace is read once with a
placeholder in its place (`Cut.text`), and an occurrence's reading is that one with its message put back
into the value that holds the placeholder (`Cut.reading`).

Why that is exactly what reading the text itself gives: the parsers read a trace line by line, and only
the message's line differs between the two texts. Every test the parsers make of a line is anchored at its
start and reads the line's prefix first (`Type: `, the same in both texts), and a header's value is the
pattern's `.*` after `: `, which takes any single line. `usable` refuses every message that could make a
line test answer otherwise: one that is not a single line, is not stripped, appears twice, would be cut
to bounds, or ends the way a line test looks for at the end of a line (`:`, `{`: Go's goroutine and
signal lines, V8's ` {`); `Cut.agrees` refuses one ending in ` [recovered]` or ` [recovered, repanicked]`
under Go (its panic line's pattern leaves that out of the value: the only test of the checked runtimes'
parsers that looks for `]` at a line's end outside a frame line, which the frame test below answers for, or
a line that starts with `[`, which a header line never does), and one that prints a Go runtime error under
Go (the one value a parser reads more of than as a value: its kind is the panic's type, `go_panics`), and
asks every line test that can look at a whole line (the runtime's frame line, the runtime votes) the same
question of both lines. The reading with the placeholder is used only when the placeholder ends up where a
message belongs and nowhere else: once, at the start of the value of the exception whose type the prefix
names (a Go panic's by the word its line starts with, `panic`, `go_panics.type_before`: the placeholder is
no runtime error, so its panic is typed as a program's value, as the message's is when `agrees`), under one
of the runtimes whose line tests this reasoning was checked against (Python, JVM, V8, Go). Any other trace
is read whole. Tests compare the two readings over the labelled corpora, the tests' traces and messages
built to trip each line test.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rounds_bot.grouping.stacktrace import Frame, LineVotes, ParsedTrace, Runtime, line_votes, logcat
from rounds_bot.grouping.stacktrace.go_key import DumpKey, dump_key
from rounds_bot.grouping.stacktrace.go_panics import runtime_error_kind, type_before
from rounds_bot.grouping.stacktrace.model import MAX_LINE_CHARS, MAX_TRACE_CHARS

#: what stands in for the message: a private-use character, which no parser looks for
PLACEHOLDER = "\ue000"
#: the runtimes whose line tests the module docstring's reasoning was checked against
CHECKED_RUNTIMES: frozenset[Runtime] = frozenset({"python", "java", "node", "go"})
#: a message ending so may complete a line test that looks at the end of a line
_RISKY_ENDINGS = (":", "{")
#: per runtime, a message ending so may complete a line test of its parser that looks at the end of a line
#: (Go's panic line, `panic: <value> [recovered]`, `[recovered, repanicked]` since Go 1.25): refused under
#: that runtime alone (`Cut.agrees`)
_RISKY_ENDINGS_OF: dict[Runtime, tuple[str, ...]] = {"go": (" [recovered]", " [recovered, repanicked]")}


@dataclass(slots=True)
class Cut:
    """A trace text with its message replaced by `PLACEHOLDER`, and the message's line both ways.

    The text with the placeholder (`text`) is put together only when it is read: a repeat of a problem is
    placed by the digest of that text, which `cut_digests` works out from the pieces of `source` around the
    message without copying it. (Never changed once made but for those two kept answers; not a frozen
    dataclass, whose fields cost several times as much to set, as one is made per occurrence of a trace.)"""

    #: the trace text as printed, and where its message starts in it
    source: str
    start: int
    prefix: str
    message: str
    #: `text` and `dump` once worked out
    _text: str | None = field(default=None, init=False, repr=False, compare=False)
    _dump: DumpKey | None = field(default=None, init=False, repr=False, compare=False)
    _dump_read: bool = field(default=False, init=False, repr=False, compare=False)

    @property
    def end(self) -> int:
        """Where the message ends in `source`."""
        return self.start + len(self.message)

    @property
    def text(self) -> str:
        """`source` with the message replaced by `PLACEHOLDER`."""
        if self._text is None:
            self._text = self.source[: self.start] + PLACEHOLDER + self.source[self.end :]
        return self._text

    @property
    def dump(self) -> DumpKey | None:
        """The cut text's dump key (`go_key`), worked out once for every memo that asks. A source that
        prints no `goroutine ` has none, and the cut text is not put together for it: the cut text's
        characters are the source's but for the placeholder, and the phrase can neither hold the
        placeholder nor run across the message's edges (before the message comes `: `, after it a line
        break or the end, and the phrase holds neither)."""
        if not self._dump_read:
            self._dump = dump_key(self.text) if "goroutine " in self.source else None
            self._dump_read = True
        return self._dump

    def votes(self, runtime: Runtime) -> LineVotes | None:
        """What every line test that can look at a whole line answers for the placeholder's line
        (a function of `text` alone); None for a runtime this reasoning was not checked against."""
        if runtime not in CHECKED_RUNTIMES:
            return None
        return line_votes(self.prefix + PLACEHOLDER, runtime)

    def agrees(self, runtime: Runtime, votes: LineVotes) -> bool:
        """Whether the message may stand in the placeholder's place in a trace read as `runtime`: it does not
        end as a line test of that runtime's parser looks for (`_RISKY_ENDINGS_OF`), under Go it prints no
        runtime error (`go_panics`), and those line tests answer for the message's line as `votes` (the
        placeholder's)."""
        risky = _RISKY_ENDINGS_OF.get(runtime)
        if risky is not None and self.message.endswith(risky):
            return False
        if runtime == "go" and runtime_error_kind(self.message) is not None:
            return False  # its kind types the panic, which the placeholder's reading cannot know
        return line_votes(self.prefix + self.message, runtime) == votes

    def holder(self, trace: ParsedTrace) -> int | None:
        """The exception whose value the placeholder starts, when that is the only place it is in
        (see the module docstring), else None."""
        found = None
        for index, exception in enumerate(trace.exceptions):
            if PLACEHOLDER in exception.type or any(_in_frame(frame) for frame in exception.frames):
                return None
            if PLACEHOLDER in exception.value:
                if found is not None or exception.value.count(PLACEHOLDER) != 1:
                    return None
                if not exception.value.startswith(PLACEHOLDER):
                    return None
                if not self.prefix.endswith(_printed(trace.runtime, exception.type) + ": "):
                    return None
                found = index
        if any(PLACEHOLDER in note for note in trace.notes):
            return None
        return found

    def reading(self, trace: ParsedTrace, holder: int) -> ParsedTrace:
        """The placeholder's reading with the message put back."""
        exceptions = list(trace.exceptions)
        exception = exceptions[holder]
        exceptions[holder] = replace(exception, value=exception.value.replace(PLACEHOLDER, self.message))
        return replace(trace, exceptions=tuple(exceptions))


def cut(text: str, message: str) -> Cut | None:
    """The text with its message cut out, when the message is the rest of one header line of it and
    cannot change how any line is read (see the module docstring); else None."""
    if not usable(message) or len(text) > MAX_TRACE_CHARS or PLACEHOLDER in text:
        return None  # (a placeholder already in the text could be taken for the message's)
    start = text.find(message)
    if start < 0 or text.find(message, start + 1) >= 0:
        return None
    end = start + len(message)
    if end != len(text) and text[end] != "\n":
        return None
    line_start = text.rfind("\n", 0, start) + 1
    prefix = text[line_start:start]
    if (
        not prefix.endswith(": ")
        or prefix[0].isspace()
        or "|" in prefix
        or prefix.splitlines() != [prefix]
        or len(prefix) + len(message) > MAX_LINE_CHARS
        or (prefix.startswith("Exception in thread") and '"' in message)
        or logcat.prefixed(prefix)  # (read without its prefixes: the reasoning above is of the lines as read)
    ):
        return None
    return Cut(text, start, prefix, message)


def usable(message: str) -> bool:
    """Whether a message can stand in a header line without changing how any line is read."""
    return (
        bool(message)
        and message == message.strip()
        and message.splitlines() == [message]
        and PLACEHOLDER not in message
        and "|" not in message
        and not message.endswith(_RISKY_ENDINGS)
        and "Traceback (most recent call last):" not in message
    )


def _printed(runtime: Runtime, exception_type: str) -> str:
    """The type a header line prints before the message: a Go panic's line prints `panic` whatever its type
    (`go_panics`)."""
    return type_before(exception_type) if runtime == "go" else exception_type


def _in_frame(frame: Frame) -> bool:
    return any(
        value is not None and PLACEHOLDER in value
        for value in (frame.function, frame.module, frame.filename, frame.context_line)
    )
