"""Android's logcat: a crash report as `adb logcat` prints it, each line behind a prefix of its own.

    E/AndroidRuntime( 1234): FATAL EXCEPTION: main                           (`-v brief`)
    E/AndroidRuntime( 1234): java.lang.IllegalStateException: cart 17 is empty
    E/AndroidRuntime( 1234):        at com.shop.cart.Carts.load(Carts.java:41)

    11-28 08:00:00.123  1234  1234 E flutter : [ERROR:flutter/runtime/dart_vm_initializer.cc(41)] Unhandled
        Exception: Bad state: cart 17 is empty                              (`-v threadtime`, the default)
    11-28 08:00:00.123  1234  1234 E flutter : #0      Carts.load (package:shop/carts.dart:41:7)

A log drain that ships such lines as one record gives rounds a body no parser reads (the frames are behind
the prefixes), and a message whose template differs with the process id's width (`( 1234)` and `(20931)`
are one token or two): one bug, an issue for each width. `unprefixed` gives the lines without their prefixes
when every line that is not blank carries one of a single format, so the runtime's own parser reads them;
`message_of` gives a log body's text so (a record of one line too, when its prefix names the process), for
the message a log's template is made of.

The formats are logcat's (AOSP `liblog/logprint.cpp`): `brief` (`%c/%-8s(%5d): `), `time` (the same after
the time), `tag` (`%c/%-8s: `), `thread` (`%c(%5d:%5d) `) and `threadtime` (`%s %5d %5d %c %-8s: `), the time
`MM-DD hh:mm:ss.mmm` with the `year`, `usec` and `zone` modifiers' forms, and `uid`'s column. `process` and
`long`, which put the tag after the message or the prefix on a line of its own, are not read.
"""

from __future__ import annotations

import re

_TIME = r"(?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d\.\d{3,6}(?: [+-]\d{4})?"
_LEVEL = r"[VDIWEFAS]"
#: the characters a prefix can start with: a level's letter, or the time's first digit
_FIRST = frozenset("VDIWEFAS0123456789")
#: a prefix of each format, up to the message (logcat writes one space after the prefix's colon); those that
#: print the process id first (a line of text seldom starts so; `tag`'s `E/x: ` can: `I/O error: ...`)
_FORMATS = (
    re.compile(rf"^(?:{_TIME} +)?{_LEVEL}/[^(:\n]{{1,64}}?\( *\d{{1,7}}\): ?"),  # brief, time
    re.compile(rf"^{_TIME} +(?:\S{{1,32}} +)?\d{{1,7}} +\d{{1,7}} {_LEVEL} [^\n]{{0,64}}?: ?"),  # threadtime
    re.compile(rf"^{_LEVEL}\( *\d{{1,7}}: *\d{{1,7}}\) ?"),  # thread
    re.compile(rf"^{_LEVEL}/[^:(\n]{{1,64}}?: ?"),  # tag
)
_WITH_PROCESS = _FORMATS[:3]


def message_of(text: str) -> str | None:
    """A log body's text without its logcat prefixes, when it is a whole logcat report (`unprefixed`) or one
    line with a prefix that names the process (a record of one line, `E/Cart    ( 1234): failed`); else
    None."""
    start = text[:1]
    if start not in _FIRST and not start.isspace():  # (before splitting a body that cannot be one)
        return None
    lines = text.splitlines()
    if len(lines) == 1:
        line = lines[0]
        if line[:1] not in _FIRST:
            return None
        found = next(filter(None, (each.match(line) for each in _WITH_PROCESS)), None)
        return None if found is None else line[found.end() :]
    bare = unprefixed(lines)
    return None if bare is None else "\n".join(bare)


def prefixed(line: str) -> bool:
    """Whether a line starts with a logcat prefix of any format."""
    return line[:1] in _FIRST and any(each.match(line) for each in _FORMATS)


def unprefixed(lines: list[str]) -> list[str] | None:
    """The lines without their logcat prefixes, when each line that is not blank has one of the same format
    (the first line's) and there are two or more; else None."""
    first = next((line for line in lines if line.strip()), None)
    if first is None or first[:1] not in _FIRST:  # (a cheap test: most traces start otherwise)
        return None
    prefix = next((each for each in _FORMATS if each.match(first)), None)
    if prefix is None:
        return None
    stripped: list[str] = []
    for line in lines:
        if not line.strip():
            stripped.append(line)
            continue
        match = prefix.match(line)
        if match is None:
            return None
        stripped.append(line[match.end() :])
    return stripped if sum(1 for line in lines if line.strip()) > 1 else None
