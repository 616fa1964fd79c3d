"""Erlang stack traces, in the two forms Erlang writes them (read as the `elixir` runtime: one VM, one kind of
frame, `module:function/arity`).

As a term, `{Reason, Stacktrace}` printed with `~p` (a `gen_server`'s "Reason for termination", a crash
report's `exit` reason, OpenTelemetry's Erlang SDK before OTP 24; its older releases printed the stack alone):

    {badarith,[{shop_cart,total,1,[{file,"src/shop_cart.erl"},{line,12}]},
               {shop_checkout,run,2,[{file,"src/shop_checkout.erl"},{line,20}]}]}

Each frame is `{Module, Function, Arity | Args, Location}` (the Erlang reference manual, "Errors and Error
Handling", The call-stack back trace); `~p` may break a frame over lines, so the frames are read from the
whole text. As `erl_error:format_exception/3` prints it (the shell, `proc_lib`'s crash reports,
OpenTelemetry's Erlang SDK on OTP 24 and later):

    exception error: an error occurred when evaluating an arithmetic expression
      in function  shop_cart:total/1 (src/shop_cart.erl:12)
      in call from shop_checkout:run/2 (src/shop_checkout.erl:20)

(OTP before 24 wrote the location `(src/shop_cart.erl, line 12)`.) A frame is named as Elixir's trace names
it (`elixir.split_mfa`): the arity is part of the function's name, a fun belongs to the function it is written
in (`'-run/2-fun-0-'` is `run/2 (fn)`), an Elixir module loses its `Elixir.` prefix. Line numbers are read,
never hashed. Erlang/OTP's own modules, and Elixir's, are marked not the app's: the term names no application.
Releases before read neither form (their events went to the message's template: `NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

_ATOM = r"(?:'(?:[^'\\]|\\.){1,255}'|[a-z][\w@]{0,254})"
#: one frame of the term form: module, function, arity or arguments (the first frame of a `function_clause` or
#: `undef` prints the call's arguments), location
_TERM_FRAME = re.compile(
    rf"\{{\s*(?P<module>{_ATOM}),\s*(?P<function>{_ATOM}),\s*(?P<arity>\d{{1,3}}|\[[^\[\]{{}}]{{0,512}}\]),"
    r"\s*\[(?P<location>(?:\s*\{\s*\w{1,32},\s*(?:\"[^\"]{0,2048}\"|[^{}\[\]]{0,64})\}\s*,?){0,4})\]\s*\}"
)
_FILE = re.compile(r"\{\s*file,\s*\"(?P<file>[^\"]{1,2048})\"\s*\}")
_LINE = re.compile(r"\{\s*line,\s*(?P<line>\d{1,9})\s*\}")
#: the reason before the frames: `{badarith,[`, `{{badmatch,{error,enoent}},[`, `error:badarith [`
_REASON = re.compile(rf"^[\s{{]*(?:(?:error|exit|throw):)?(?P<type>{_ATOM})(?P<rest>.*)$", re.DOTALL)
#: a frame as `erl_error` prints it
_PRINTED_FRAME = re.compile(
    rf"^\s*in (?:function |call from|operator ) (?:(?P<module>{_ATOM}):)?(?P<function>{_ATOM})"
    r"/(?P<arity>\d{1,3})"
    r"(?: \((?P<file>[^()]{1,2048}?)(?::|, line )(?P<line>\d{1,9})\))?$"
)
_PRINTED_HEADER = re.compile(r"^\s*exception (?P<type>error|exit|throw): ?(?P<value>.*)$")

# Erlang/OTP's applications' modules most stacks pass through (stdlib, kernel, erts); an Elixir module of
# Elixir's own standard library (`'Elixir.Enum'`)
# fmt: off
_OTP_MODULES = frozenset((
    "erlang", "erl_eval", "shell", "proc_lib", "gen", "gen_server", "gen_statem", "gen_event", "supervisor",
    "application_master", "application", "lists", "maps", "dict", "orddict", "sets", "gb_trees", "gb_sets",
    "proplists", "string", "binary", "unicode", "io", "io_lib", "io_lib_format", "timer", "ets", "dets",
    "file", "filename", "code", "code_server", "rpc", "erpc", "global", "net_kernel", "inet", "gen_tcp",
    "gen_udp", "ssl", "crypto", "calendar", "queue", "array", "erl_scan", "erl_parse", "init", "logger",
    "error_logger", "sys", "re", "lists_sort", "math", "rand", "persistent_term", "counters", "atomics",
))
_ELIXIR_MODULES = frozenset((
    "Enum", "Stream", "Kernel", "Map", "List", "Keyword", "String", "Integer", "Float", "Access", "Task",
    "Task.Supervised", "GenServer", "Agent", "Supervisor", "Registry", "Process", "Code", "Module", "IO",
    "File", "Path", "System", "Application", "Logger", "Exception", "Range", "MapSet", "Tuple", "Function",
))
# fmt: on


def looks_like_frame(line: str) -> bool:
    """A line that prints (the start of) a frame of either form."""
    return bool(_PRINTED_FRAME.match(line)) or ("{" in line and bool(_TERM_FRAME.search(line)))


def is_frame_line(line: str) -> bool:
    """A frame line, or a line of a frame `~p` broke over lines (its location's `{file,...}`, `{line,N}`)."""
    return looks_like_frame(line) or "{line," in line or '{file,"' in line


def parse(lines: list[str]) -> ParsedTrace | None:
    """The trace of either form, or None when the lines print no Erlang frame."""
    printed = _parse_printed(lines)
    if printed is not None:
        return printed
    text = "\n".join(lines)
    first = _TERM_FRAME.search(text)
    if first is None:
        return None
    frames = tuple(_term_frame(match) for match in _TERM_FRAME.finditer(text, first.start()))
    type_, value = _reason(text[: first.start()])
    exception = ParsedException(type_, value, frames, "raised")
    return ParsedTrace("elixir", (exception,), notes=(NEWLY_READ,))


def _parse_printed(lines: list[str]) -> ParsedTrace | None:
    type_, value = "error", ""
    frames: list[Frame] = []
    for line in lines:
        header = _PRINTED_HEADER.match(line) if not frames else None
        if header is not None:
            type_, value = header["type"], header["value"].strip()
            continue
        frame = _PRINTED_FRAME.match(line)
        if frame is not None:
            module = frame["module"] or "erlang"  # a BIF's or an operator's, printed without it
            location = (frame["file"], int(frame["line"]) if frame["line"] else None)
            frames.append(_frame(module, frame["function"], frame["arity"], *location))
    if not frames:
        return None
    return ParsedTrace(
        "elixir", (ParsedException(type_, value, tuple(frames), "raised"),), notes=(NEWLY_READ,)
    )


def _reason(head: str) -> tuple[str, str]:
    """The reason's first atom as the type (`badarith`, `badmatch` of `{badmatch,V}`), the rest its value."""
    # the line the frames start on (a `gen_server` report prints `** ` before the reason)
    head = head.rpartition("\n")[2].strip().removeprefix("** ").removesuffix("[").strip().removesuffix(",")
    reason = _REASON.match(head)
    if reason is None:
        return "error", ""  # (the stack printed alone)
    rest = reason["rest"].strip().removeprefix(",").strip()
    return _unquoted(reason["type"]), rest.removesuffix("}").strip()  # (the `}` of `{badmatch,V}`)


def _term_frame(match: re.Match[str]) -> Frame:
    location = match["location"]
    file = _FILE.search(location)
    line = _LINE.search(location)
    arity = match["arity"]
    if arity.startswith("["):  # the call's arguments, in place of its arity
        arguments = arity[1:-1].strip()
        arity = str(arguments.count(",") + 1 if arguments else 0)
    return _frame(
        match["module"],
        match["function"],
        arity,
        file["file"] if file else None,
        int(line["line"]) if line else None,
    )


def _frame(module_atom: str, function_atom: str, arity: str, file: str | None, line: int | None) -> Frame:
    module = _unquoted(module_atom)
    elixir_module = module.startswith("Elixir.")
    if elixir_module:
        module = module.removeprefix("Elixir.")
    function = _unquoted(function_atom)
    # a fun's generated name belongs to the function it is written in (`-run/2-fun-0-`), as in Elixir's traces
    fun = re.match(r"^-(?P<fn>[^/]{1,255}/\d{1,3})-(?:fun|inlined|lc\$\^|lbc\$\^)", function)
    name = f"{fun['fn']} (fn)" if fun else f"{function}/{arity}"
    library = module in _ELIXIR_MODULES if elixir_module else module in _OTP_MODULES
    return Frame(function=name, module=module, filename=file, lineno=line, in_app=False if library else None)


def _unquoted(atom: str) -> str:
    return atom[1:-1].replace("\\'", "'") if atom.startswith("'") else atom
