"""Lua's errors with their traceback, as `lua` (lua.c's `msghandler`), `debug.traceback` and LuaJIT print them
(lauxlib.c's `luaL_traceback`, Lua 5.1 to 5.4), and as OpenResty logs a request's aborted thread:

    lua: /app/cart.lua:12: attempt to index a nil value (field 'user')
    stack traceback:
            [C]: in function 'error'
            /app/cart.lua:12: in function 'total'
            (...tail calls...)
            /app/main.lua:10: in local 'run'
            /app/main.lua:50: in main chunk
            [C]: in ?

Each traceback line, after a tab, is a running function: where it runs (`source:line`, `[C]` for a C function,
`[string "..."]:line` for a chunk loaded from a string) and what it is (`function 'name'`, `local 'f'`,
`method 'm'`, `field 'f'`, `upvalue 'u'`, 5.4's `metamethod 'index'`, `function <file:line>` for one with no
name, `main chunk`, `?`). A function with no name is named by its line: an anonymous one by the line it is
defined at (`function <line 10>`), a main chunk by the line it runs (`main chunk <line 3>`). `(...tail
calls...)` marks frames Lua no longer has. The message is the error value, `error` prefixing it with its
position (`source:line: `). OpenResty writes `lua entry thread aborted: runtime error: <message>`
(ngx_http_lua_util.c), `coroutine N:` above each coroutine's frames, and nginx's `, client: ..., server: ...,
request: ...` after the last line: the request's, never a frame's. A C function is a library's (it names no
file); the modules installed by the system, LuaRocks and OpenResty too (`library_paths`).

No release before this one read these texts: their events went to their message's template, and the
signature made so keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace, site_name

#: the type of every Lua error: `error` throws any value, and the text names no class
ERROR = "error"
HEADER = "stack traceback:"
#: a running function; its line left out when Lua has none (`luaL_traceback`: `currentline <= 0`, a chunk
#: loaded without debug information)
_FRAME = re.compile(
    r"^\s{1,16}(?:(?P<c>\[C\])|(?P<file>\S.{0,2047}?)(?::(?P<line>\d{1,9}))?): in (?P<what>.{1,2048}?)"
    r"(?:, client: .*)?$"
)
#: traceback lines that are no frame Lua can name, and end nothing: Lua 5.1's `(tail call): ?` and a C
#: function's `[C]: ?` (ldblib.c, `db_errorfile`), LuaJIT's `[C]: at 0x55e48a50f450` (lj_debug.c), the
#: levels left out (5.1's `...`, 5.2 and later's `...\t(skipping 12 levels)`), 5.2 and later's
#: `(...tail calls...)`, OpenResty's `coroutine 0:`
_UNNAMED = re.compile(
    r"^\s{1,16}(?:\(tail call\): \?|\[C\]: (?:\?|at 0x[0-9a-fA-F]{1,16})"
    r"|\.\.\.(?:\s{1,8}\(skipping \d{1,9} levels\))?|\(\.\.\.tail calls\.\.\.\))$"
    r"|^\s{0,16}coroutine \d{1,9}:$"
)
#: what a frame is: a named function (`function 'f'`, `local 'f'`, `method 'm'` ...), or one with no name
_NAMED = re.compile(
    r"^(?:function|local|global|method|field|upvalue|metamethod|for iterator|constant) "
    r"'(?P<name>[^']{1,512})'$"
)
#: a function with no name, by where it is defined (ldblib.c/lauxlib.c's `function <%s:%d>`)
_DEFINED = re.compile(r"^function <\S.{0,2047}?:(?P<line>\d{1,9})>$")
MAIN_CHUNK = "main chunk"
#: nginx's, OpenResty's and the error's position prefixes before the message
_ABORTED = re.compile(r"^.{0,512}?lua entry thread aborted: (?:runtime error: )?")
#: the stand-alone interpreters' names before a message (lua.c's `progname`, LuaJIT's, OpenResty's `resty`)
_INTERPRETERS = ("lua: ", "luajit: ", "resty: ")
_POSITION = re.compile(r"^\S.{0,2047}?:\d{1,9}: ")


def looks_like_lua_line(line: str) -> bool:
    """A line only Lua prints: a traceback's frame (one without a line only when it names what runs, so a
    log's `status: in queue` is none)."""
    found = _FRAME.match(line) if ": in " in line else None
    if found is None:
        return False
    return (
        bool(found["line"] or found["c"])
        or found["what"] == MAIN_CHUNK
        or _NAMED.match(found["what"]) is not None
    )


def is_frame_line(line: str) -> bool:
    """Whether the line is one of a traceback's: a frame, or a level Lua cannot name."""
    return looks_like_lua_line(line) or _UNNAMED.match(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    """The error above the first `stack traceback:` with the frames under it; None when there is none."""
    start = next((i for i, line in enumerate(lines) if line.strip() == HEADER), None)
    if start is None:
        return None
    frames: list[Frame] = []
    for line in lines[start + 1 :]:
        if (found := _FRAME.match(line)) is not None:
            if (frame := _frame(found)) is not None:
                frames.append(frame)
        elif _UNNAMED.match(line) is None:
            break
    if not frames:
        return None
    value = _message([line.strip() for line in lines[:start] if line.strip()])
    return ParsedTrace("lua", (ParsedException(ERROR, value, tuple(frames)),), (NEWLY_READ,))


def _frame(found: re.Match[str]) -> Frame | None:
    """A frame; None for a C function Lua names not (`[C]: in ?`), which says nothing of the crash."""
    named = _NAMED.match(found["what"])
    function = named["name"] if named is not None else None
    if found["c"]:
        return Frame(function) if function else None
    line = int(found["line"]) if found["line"] else None
    return Frame(function or _unnamed(found["what"], line), filename=found["file"], lineno=line)


def _unnamed(what: str, line: int | None) -> str | None:
    """A function Lua names not, by where it is: an anonymous one by the line it is defined at (Lua's own
    name for it, `function <file:line>`, without the file, the frame's own), a main chunk by the line it
    runs (`model.site_name`); None when Lua gives no line."""
    defined = _DEFINED.match(what)
    if defined is not None:
        return f"function <line {defined['line']}>"
    return site_name(line, what) if what == MAIN_CHUNK and line is not None else None


def _message(text: list[str]) -> str:
    """The error's value, without nginx's line, the interpreter's name or the position `error` added."""
    message = " ".join(text)
    aborted = _ABORTED.match(message)
    if aborted is not None:
        message = message[aborted.end() :]
    elif message.startswith(_INTERPRETERS):
        message = message.split(": ", 1)[1]  # lua.c's `l_message` prefixes its program's name
    return _POSITION.sub("", message, count=1)
