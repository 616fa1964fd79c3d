"""Python exception groups (PEP 654), read by the errors inside them.

CPython (`traceback.TracebackException.format`, 3.11 and later; the `exceptiongroup` backport prints the same)
prints a group behind a margin, two spaces deeper per level of nesting, and each of its errors after a rule:

      + Exception Group Traceback (most recent call last):      the group, at depth 1 (`  | `)
      |   File "/app/shop/orders.py", line 39, in checkout
      | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)
      +-+---------------- 1 ----------------                    its first error, at depth 2 (`    | `)
        | Traceback (most recent call last):
        | ValueError: card declined for order 1
        +---------------- 2 ----------------
        | KeyError: 'sku-2'
        +------------------------------------                   (after the last one printed)

An error is a chain of its own (`raise ... from`, notes after its message); a nested group prints its errors
one level deeper. Past `max_group_width` (15) errors Python prints `+---- ... ----` and `and N more
exceptions`, past `max_group_depth` (10) levels `... (max_group_depth is 10)`: neither is an error read.

Only a group's print is read so: a node is a group when it opened its chain or followed a chain marker,
every line of it was printed behind the margin its rules are drawn at, and its value ends as
`BaseExceptionGroup.__str__` ends it (`(2 sub-exceptions)`). A plain exception's message is printed bare, so
rules it holds make no group and the trace reads as `python.parse` reads it. A member is read only when
printed to its end (the next member's rule or a closing line follows it): a text cut short by a length
limit ends inside a member, whose exception line is then missing or a fragment (`Fi` of `File "`).

Grouping follows Sentry's rule for exception groups (its RFC 0079, "Sentry Issue Grouping", as Sentry's
`filter_exceptions_for_exception_groups` applies it): a group's *top-level* errors are its members that are
not groups, a member group's own top-level errors in its place; each counts with the chain it prints (a
Python chain is one path: Sentry's "first path"). Two that a hash cannot tell apart (the same types and
frames, line numbers aside) are one. One distinct error stands in the group's place, as if raised alone;
several follow the group, each once, in a fixed order (by type, then frames; Sentry sorts by type) rather
than as printed: tasks fail in any order. A group whose one error carries no frame (built, never raised)
stays before it, so the trace still says where it failed. A group in a chain (`raise ... from group`) is read
there by the same rule; its own cause follows what stands in its place.

Releases before read a group block by block, in print order (`python.parse`): the trace's notes keep that
reading (`READ_BEFORE`), and `as_read_before` gives it, so the signatures they made keep receiving it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

from rounds_bot.grouping.stacktrace import python
from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace, Relation

#: a group's member begins: `+-+---- 1 ----` at the group's depth for the first, `  +---- 2 ----` (two spaces
#: in place of `+-`) for the others, `+---- ... ----` past the fifteenth; the member is printed a level deeper
_RULE = re.compile(r"^(?P<indent>(?:  ){1,64})(?P<first>\+-)?\+-{16} (?P<title>\d{1,9}|\.\.\.) -{16}$")
#: the last member printed ends, at its own depth (a nested last member's line closes its parent's too)
_CLOSE = re.compile(r"^(?P<indent>(?:  ){1,64})\+-{36}$")
#: a line behind a group's margin: `|`, or `+` on a top-level group's first line
_MARGIN = re.compile(r"^(?P<indent>(?:  ){1,64})[|+](?: (?P<rest>.*))?$")
_DEPTH_CUT = re.compile(r"^\.\.\. \(max_group_depth is \d{1,9}\)$")
#: how a group's value ends: CPython's `BaseExceptionGroup.__str__` (Objects/exceptions.c,
#: `BaseExceptionGroup_str`: `"%S (%zd sub-exception%s)"`) and the backport's print the count of its errors
_COUNT = re.compile(r"\(\d{1,9} sub-exceptions?\)$")
#: an exception line as `python.exception_of` reads one: its type, then its value after `: `, if any
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]{0,255}(?::.*)?$")

#: the note of a trace whose group releases before read otherwise: that reading, as `_encoded` writes it
READ_BEFORE = "python exception group read before: "
#: the note of a trace whose raised exception was a group: the exception a title names, and how many
#: distinct errors the group held (`title_parts`)
NAMED = "python exception group names: "


def holds_a_group(lines: list[str]) -> bool:
    """Whether a traceback prints an exception group (every group prints a rule before its first error)."""
    return any("-" * 16 in line and _RULE.match(line) for line in lines)


def parse(lines: list[str]) -> ParsedTrace | None:
    """A Python traceback: by the errors inside a group it prints, else as `python.parse` reads it."""
    before = python.parse(lines)
    if before is None or not holds_a_group(lines):
        return before
    chain = _chain(_read_tree(lines))
    if not any(node.members is not None for _, node in chain):
        return before  # rules a message holds: the text is a plain traceback's
    exceptions = tuple(_read_chain(chain, "raised"))
    notes: list[str] = []
    raised = chain[0][1]
    if raised.members is not None and raised.distinct:
        # the first error read inside the group: in its place, or after it
        notes.append(f"{NAMED}{int(raised.kept)} {raised.distinct}")
    if _hashed(before.exceptions) != _hashed(exceptions):
        notes.append(READ_BEFORE + _encoded(before.exceptions, exceptions))
    return ParsedTrace("python", exceptions, notes=tuple(notes))


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """The trace as releases before read its text, when they read it otherwise (`READ_BEFORE`), else None."""
    for note in trace.notes:
        if note.startswith(READ_BEFORE):
            return ParsedTrace("python", _decoded(note[len(READ_BEFORE) :], trace.exceptions))
    return None


def title_parts(
    trace: ParsedTrace, error_type: str | None, message: str, values: list[str]
) -> tuple[str | None, str]:
    """The type and message an issue's title names (`fingerprint.title_for`): for a group raised, the first
    error read inside it, with how many more it held, as its values (`values`, normalised) print them;
    otherwise the event's own."""
    named = next((note[len(NAMED) :] for note in trace.notes if note.startswith(NAMED)), None)
    if named is None:
        return error_type, message
    index, count = (int(part) for part in named.split(" "))
    exception = trace.exceptions[index]
    value = values[index] if index < len(values) else exception.value
    if count > 1:
        more = "error" if count == 2 else "errors"
        group = trace.exceptions[0].type.rsplit(".", 1)[-1]
        value = f"{value} (and {count - 1} more {more} in its {group})"
    return exception.type, value


@dataclass
class _Node:
    """One exception as printed: the chain marker before it, its frames (oldest first) and the lines after
    them; a group's members, each a chain as printed (None: not a group)."""

    marker: Relation
    frames: list[Frame] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    members: list[_ChainReader] | None = None
    #: whether it opened its chain or followed a chain marker, and every line of it was read behind the
    #: margin its members' rules would be drawn at: a plain exception's message is printed bare, and may
    #: hold anything (`may_be_group`)
    marginal: bool = True
    #: once a group is read: how many distinct errors it held, and whether it stayed in the reading
    distinct: int = 0
    kept: bool = True

    def exception(self, relation: Relation) -> ParsedException:
        return python.exception_of(relation, self.frames, self.tail)

    def may_be_group(self) -> bool:
        """Whether rules that follow it are its members': printed as a group is, its value a group's."""
        return self.marginal and any(_COUNT.search(line) for line in self.tail)

    def printed_its_exception(self) -> bool:
        """Whether its exception line was read (else `python.exception_of` would name it `Exception`)."""
        return any(
            _EXCEPTION_LINE.match(line) and not line.startswith(("File ", "Traceback")) for line in self.tail
        )


class _ChainReader:
    """The exceptions of one chain as printed, oldest first: the trace's own, or one member's of a group.
    As `python._BlockReader` reads a chain, but an exception printed without a traceback (an error that was
    never raised) is one too."""

    def __init__(self, ignored: bool = False) -> None:
        self.nodes: list[_Node] = []
        #: a member past the fifteenth: Python prints how many there are, not them
        self.ignored = ignored
        #: a member printed to its end: the next member's rule or a group's closing line followed it (a
        #: text cut short, as an attribute's length limit cuts it, ends inside the member it stops in)
        self.whole = False
        #: whether the next exception opens the chain or follows a chain marker, as Python prints each
        self._chained = True
        #: the group whose members are being read, once its first member's rule is
        self.group: _Node | None = None
        self._marker: Relation = "raised"
        self._open: _Node | None = None
        self._pending: python.PendingFrame | None = None

    def read(self, line: str, behind_margin: bool = True) -> None:
        """One line of the chain, `behind_margin` when it was read behind the margin of the group depth it
        belongs to (a member's always; the trace's own chain's only when it is a top-level group's)."""
        if self.ignored:
            return
        self.group = None  # a line of this chain's own: the group before it has been printed whole
        stripped = line.strip()
        if stripped.endswith(python.HEADER):
            self.close()
            self._open = self._opened(behind_margin)
            return
        if stripped in (python.CAUSE, python.CONTEXT):
            self.close()
            self._marker = "cause" if stripped == python.CAUSE else "context"
            self._chained = True
            return
        if self._open is not None and not behind_margin:
            self._open.marginal = False
        frame = python.FRAME.match(line)
        if frame is not None:
            if self._open is not None and not self._open.tail:  # (a frame line is read inside a traceback)
                self._keep_pending()
                self._pending = python.PendingFrame(
                    frame["file"], int(frame["line"]), (frame["fn"] or "").strip() or None
                )
            return
        if not stripped or python.CARETS.match(line) or stripped.startswith("[Previous line repeated"):
            return
        pending = self._pending
        if pending is not None and line.startswith("    "):
            # the frame's source line; a statement of several lines prints the others under it (3.13)
            pending.context = pending.context or stripped
            return
        if _DEPTH_CUT.match(stripped):
            return  # a group nested too deep to print: none of its errors is there to read
        self._keep_pending()
        if self._open is None:
            self._open = self._opened(behind_margin)  # an exception printed without a traceback
        self._open.tail.append(stripped)

    def _opened(self, behind_margin: bool) -> _Node:
        node = _Node(self._marker, marginal=behind_margin and self._chained)
        self._chained = False
        return node

    def take_group(self) -> _Node | None:
        """The exception just printed, whose members' rules follow: the group they belong to, if it is one."""
        if self.group is None:
            opened = self._open
            if opened is None or not opened.may_be_group():
                return None  # a rule a message holds (`_Node.marginal`): none of a group's
            self.close()
            opened.members = []
            self.group = opened
        return self.group

    def close(self) -> None:
        """The exception being read is printed whole."""
        self._keep_pending()
        if self._open is not None:
            self.nodes.append(self._open)
            self._open = None

    def _keep_pending(self) -> None:
        if self._pending is not None and self._open is not None:
            self._open.frames.append(self._pending.frame())
        self._pending = None


def _read_tree(lines: list[str]) -> _ChainReader:
    """The trace's own chain, each group in it with its members' chains. A member is read by its depth: the
    margin's indent, two spaces a level; a line that only looks like a margin (a source line beginning with
    `|`) at a depth no member is open at is read as the chain's own."""
    root = _ChainReader()
    open_at: dict[int, _ChainReader] = {}  # member chains being printed, by depth (2 and deeper)
    for raw in lines:
        rule = _RULE.match(raw) if "-" * 16 in raw else None
        if rule is not None:
            depth = len(rule["indent"]) // 2 - (0 if rule["first"] else 1)  # the group's
            owner = root if depth == 1 else open_at.get(depth)
            group = owner.take_group() if owner is not None else None
            if group is not None:
                if depth + 1 in open_at:
                    open_at[depth + 1].whole = True  # the member before this one is printed to its end
                _close_from(open_at, depth + 1)
                member = open_at[depth + 1] = _ChainReader(ignored=rule["title"] == "...")
                group.members = [*(group.members or []), member]
                continue
        close = _CLOSE.match(raw) if raw.endswith("-" * 36) else None
        if close is not None and open_at:
            # printed after the last member of the innermost group open: every member open is printed whole
            for member in open_at.values():
                member.whole = True
            _close_from(open_at, len(close["indent"]) // 2)
            continue
        margin = _MARGIN.match(raw) if "|" in raw[:130] or "+" in raw[:130] else None
        depth = len(margin["indent"]) // 2 if margin is not None else 0
        if depth >= 2 and depth in open_at and margin is not None:
            _close_from(open_at, depth + 1)
            open_at[depth].read(margin["rest"] or "")
        elif depth == 1 and margin is not None:
            _close_from(open_at, 2)
            root.read(margin["rest"] or "")
        else:
            _close_from(open_at, 2)
            root.read(raw, behind_margin=False)
    _close_from(open_at, 2)
    root.close()
    return root


def _close_from(open_at: dict[int, _ChainReader], depth: int) -> None:
    """Members printed at `depth` or deeper are over (printed to their end only if `_ChainReader.whole`)."""
    for level in [level for level in open_at if level >= depth]:
        open_at.pop(level).close()


def _chain(reader: _ChainReader) -> list[tuple[Relation, _Node]]:
    """A chain raised first, each exception with how it relates to the one printed after it (the marker
    between them), as `python.parse` links them."""
    nodes = reader.nodes
    if not nodes:
        return []  # (a member past the fifteenth, or one nested too deep to print)
    links: list[Relation] = [node.marker for node in nodes[1:]] + ["raised"]
    return list(zip(reversed(links), reversed(nodes), strict=True))


def _read_chain(chain: list[tuple[Relation, _Node]], head: Relation) -> list[ParsedException]:
    """A chain's exceptions, raised first, the first related as `head`; each group read by its errors."""
    read: list[ParsedException] = []
    for index, (relation, node) in enumerate(chain):
        read.extend(_read_node(node, head if index == 0 else relation))
    return read


def _read_node(node: _Node, relation: Relation) -> list[ParsedException]:
    """One exception; a group by its distinct top-level errors (the module docstring)."""
    exception = node.exception(relation)
    if node.members is None:
        return [exception]
    distinct: dict[tuple[object, ...], list[ParsedException]] = {}
    for member in _top_level(node):
        reading = _read_chain(member, "inner")
        distinct.setdefault(_identity(reading), reading)
    readings = [distinct[key] for key in sorted(distinct, key=_order)]
    node.distinct = len(readings)
    if len(readings) == 1 and (any(e.frames for e in readings[0]) or not exception.frames):
        node.kept = False
        first, *rest = readings[0]
        return [replace(first, relation=relation), *rest]
    return [exception, *(e for reading in readings for e in reading)]


def _top_level(group: _Node) -> list[list[tuple[Relation, _Node]]]:
    """A group's members that are no group, raised first, a member group's own in its place (its chain
    left out, as Sentry's first path through it)."""
    found: list[list[tuple[Relation, _Node]]] = []
    for member in group.members or []:
        chain = _chain(member)
        if not chain:
            continue
        raised = chain[0][1]
        if raised.members is not None:
            found.extend(_top_level(raised))  # its own members say which of them were printed whole
        elif member.whole and raised.printed_its_exception():
            # (a member cut short is none: its exception line is missing, or a fragment such as `Fi`)
            found.append(chain)
    return found


def _identity(reading: list[ParsedException]) -> tuple[object, ...]:
    """What a hash reads of an error's chain: types and frames, line numbers aside (never hashed)."""
    return tuple((e.type, tuple(replace(f, lineno=None) for f in e.frames)) for e in reading)


def _order(identity: tuple[object, ...]) -> str:
    """A fixed order of distinct errors, whatever order they were printed in."""
    return repr(identity)


def _hashed(exceptions: tuple[ParsedException, ...]) -> list[tuple[str, Relation, tuple[Frame, ...]]]:
    """What the hashes of a reading read: each exception's type, relation (`site_hash`) and frames."""
    return [(e.type, e.relation, e.frames) for e in exceptions]


def _encoded(before: tuple[ParsedException, ...], now: tuple[ParsedException, ...]) -> str:
    """The reading before as JSON: each exception that this reading holds as it is, by its index and
    relation; any other (the group, a nested group, a repeated error) whole."""
    entries: list[object] = []
    # each type and frames of this reading, at its first index: one look-up per exception before
    first: dict[tuple[str, tuple[Frame, ...]], int] = {}
    for index, exception in enumerate(now):
        first.setdefault((exception.type, exception.frames), index)
    for exception in before:
        same = first.get((exception.type, exception.frames))
        if same is not None:
            entries.append([same, exception.relation])
        else:
            frames = [[f.filename, f.lineno, f.function, f.context_line] for f in exception.frames]
            entries.append([exception.type, exception.relation, exception.value, frames])
    return json.dumps(entries, separators=(",", ":"))


def _decoded(text: str, now: tuple[ParsedException, ...]) -> tuple[ParsedException, ...]:
    exceptions: list[ParsedException] = []
    for entry in json.loads(text):
        if isinstance(entry[0], int):
            exceptions.append(replace(now[entry[0]], relation=entry[1]))
            continue
        type_, relation, value, frames = entry
        read = tuple(
            python.frame_of(path, lineno, function, context) for path, lineno, function, context in frames
        )
        exceptions.append(ParsedException(type_, value, read, relation))
    return tuple(exceptions)
