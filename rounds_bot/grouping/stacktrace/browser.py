"""The stack frames of browsers' JavaScript engines other than V8: SpiderMonkey (Firefox) and
JavaScriptCore (Safari). They are the same language as Node's (the `node` runtime reads both).

An `Error.prototype.stack` of these engines prints one frame a line, `function@location`, and no
header line (MDN "Error.prototype.stack"; the shapes `error-stack-parser` and Sentry's browser
stack parsers read):

    handle@https://app.example.com/assets/index-DiwrgTda.js:1:2345
    @https://app.example.com/assets/index-DiwrgTda.js:1:99          (an anonymous function)
    async*handle@https://app.example.com/assets/index.js:1:2345     (Firefox: `<async cause>*`)
    init/<@https://app.example.com/app.js:10:5                      (Firefox: a function inside `init`)
    forEach@[native code]                                           (Safari: a builtin)
    global code@https://app.example.com/app.js:3:1                  (Safari: a script's top level)
    fn@https://app.example.com/app.js line 2 > eval:1:5             (Firefox: code run by `eval`)

A line is a frame only when its location is one an engine prints: a URL (any scheme, `blob:` and
`webpack-internal:///` included) or an absolute path ending in `:line:column`, or
`[native code]`. So an e-mail address or a `user@host:port` in a message is never read as one
(the function part may not hold white space but in Firefox's async cause, which ends in `*`; the
location must end in two numbers).

Next.js's dev server bundles each module into a layer (its `WEBPACK_LAYERS_NAMES`: `rsc`, `ssr`,
`app-pages-browser`, `middleware`, `instrument`, `action-browser` ...) and names it in a frame
`webpack-internal:///(<layer>)/./<path>` (React's replayed server frames put `rsc://React/<environment>/`
before it: `Server`, `Prerender`, `Cache`): the path is read without that prefix (`without_bundler_layer`,
as Next.js's own `formatFrameSourceFile` reads it), so one module is one whichever layer ran it. Releases
before read the prefix in such a frame's file (the trace's notes keep it: `node.as_read_before`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedTrace

#: what JavaScriptCore names code outside any function (a script's, a module's, `eval`'s top level)
_TOP_LEVEL = ("global code", "module code", "eval code")
_FRAME = re.compile(
    r"^\s*(?P<fn>(?:[^\s@*][^@*]{0,255}\*)?[^\s@]{0,1024}|global code|module code|eval code)"
    r"@(?P<loc>\[native code\]|(?:[a-z][\w+.-]{0,64}:|/)\S.{0,2047}?:\d{1,9}:\d{1,9})$",
    re.IGNORECASE,
)
# Firefox's location of code run by `eval` or `new Function`: the calling script and its line, then
# one ` > eval` per nesting (`app.js line 2 > eval line 1 > eval:1:5`).
_EVAL_LOCATION = re.compile(r"^(?P<file>\S{1,2048}) line (?P<line>\d{1,9}) > (?:eval|Function)\b")
_LOCATION = re.compile(r"^(?P<file>.{1,2048}?):(?P<line>\d{1,9}):\d{1,9}$")
_QUERY = re.compile(r"[?#].*$")
#: Next.js's prefix of a module in a layer (module docstring; its `webpack-module-path.ts` strips any React
#: environment's `rsc://React/<env>/`, then `webpack-internal:///(layer)/` and `webpack:///(layer)/`,
#: `webpack://_N_E/(layer)/`)
_BUNDLER_LAYER = re.compile(
    r"^(?:rsc://React/[^/]{1,64}/)?(?:webpack-internal:///|webpack:///|webpack://(?:_N_E/)?)\([\w-]{1,64}\)/(?:\./)?"
)
#: the note of a trace of Firefox's or Safari's frames alone (no V8 `at` frame): they print no
#: `Type: message` line, so its type is the event's (`exception.type`), not the `Error` read
HEADERLESS = "the stack names no exception type"


def without_bundler_layer(path: str) -> str:
    """A module's path without Next.js's layer prefix (`webpack-internal:///(rsc)/./src/x.ts` -> `src/x.ts`);
    any other path as it is."""
    if ")/" not in path:
        return path  # (the cheap test: a layer's name closes its parenthesis before the path)
    return _BUNDLER_LAYER.sub("", path, count=1)


def looks_like_frame(line: str) -> bool:
    """Whether a line prints a SpiderMonkey or JavaScriptCore frame (callers test for `@` first)."""
    return _FRAME.match(line) is not None


def frame(line: str, *, as_read_before: bool = False) -> Frame | None:
    """The frame a line prints, or None when it prints none; `as_read_before`: its file as releases before
    read it (with Next.js's layer prefix, see the module docstring)."""
    match = _FRAME.match(line)
    if match is None:
        return None
    filename, lineno = _location(match["loc"])
    if filename is not None and not as_read_before:
        filename = without_bundler_layer(filename)
    return Frame(function=_function(match["fn"]), filename=filename, lineno=lineno)


def _function(name: str) -> str | None:
    # Firefox prefixes an async frame with the cause that resumed it (`async*`, `setTimeout handler*`,
    # `promise callback*`): an identifier never holds `*`, so all up to the last one is the cause.
    name = name.rsplit("*", 1)[-1]
    if not name or name in _TOP_LEVEL:
        return None  # V8 prints no function for an anonymous function or a script's top level either
    return name


def _location(location: str) -> tuple[str | None, int | None]:
    if location == "[native code]":
        return None, None  # a builtin: like V8's `native`, no file anyone's checkout holds
    evaluated = _EVAL_LOCATION.match(location)
    if evaluated is not None:
        return _QUERY.sub("", evaluated["file"]), int(evaluated["line"])
    match = _LOCATION.match(location)
    if match is None:
        return location, None
    return _QUERY.sub("", match["file"]), int(match["line"])


def typed_by_event(trace: ParsedTrace, error_type: str | None) -> ParsedTrace:
    """A browser's stack names no exception type (`HEADERLESS`): its first exception is the
    event's type, as Chrome's `TypeError: ...` line names it, so the browsers' traces agree."""
    if not error_type or HEADERLESS not in trace.notes:
        return trace
    first, *rest = trace.exceptions
    return replace(trace, exceptions=(replace(first, type=error_type), *rest))


def read_by_message_before(trace: ParsedTrace) -> bool:
    """Whether the trace is Firefox's or Safari's frames alone (`HEADERLESS`), or another layout no earlier
    release read (`NEWLY_READ`: native backtraces, a .NET crash's frames after the unhandled-exception
    prefix): no version read those frames before, so its event went to its message's template."""
    return HEADERLESS in trace.notes or NEWLY_READ in trace.notes
