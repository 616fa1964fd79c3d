"""Elixir (and Erlang) stack traces, as `Exception.format/3` prints them and OpenTelemetry's Erlang/Elixir SDK
records them:

    ** (ArithmeticError) bad argument in arithmetic expression
        (shop 0.1.0) lib/shop/orders.ex:42: Shop.Orders.total/2
        (shop 0.1.0) lib/shop/orders.ex:17: anonymous fn/1 in Shop.Orders.place/1
        (elixir 1.16.0) lib/enum.ex:1700: Enum."-map/2-lists^map/1-1-"/2
        (stdlib 5.2) gen_server.erl:1131: :gen_server.try_handle_call/4

A frame names its OTP application and version, its file and line, and `Module.function/arity`; the arity is
part of a function's name (two arities are two functions). An anonymous function belongs to the function it is
written in (`anonymous fn/1 in Shop.Orders.place/1`, or Erlang's `-place/1-fun-0-`).

A text with no such frame may print Erlang's own forms (a `{Reason, Stacktrace}` term, `erl_error`'s
`in function  m:f/1 (x.erl:12)`): `erlang` reads them.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace import erlang
from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace

# Elixir's and Erlang/OTP's own applications, and the libraries most services run on (Hex packages)
# fmt: off
_LIBRARY_APPS = frozenset((
    "elixir", "stdlib", "kernel", "erts", "logger", "mix", "ex_unit", "iex", "eex", "crypto", "ssl",
    "public_key", "inets", "compiler", "runtime_tools", "sasl", "phoenix", "phoenix_live_view", "plug",
    "plug_cowboy", "cowboy", "cowlib", "ranch", "bandit", "thousand_island", "ecto", "ecto_sql", "postgrex",
    "myxql", "db_connection", "jason", "tesla", "finch", "mint", "hackney", "oban", "absinthe", "broadway",
    "gen_stage", "telemetry", "opentelemetry", "opentelemetry_api", "opentelemetry_exporter", "grpcbox",
))
# fmt: on
_HEADER = re.compile(r"^\*\* \((?P<type>[^)\s]{1,256})\) ?(?P<value>.*)$")
_FRAME = re.compile(
    r"^\s+(?:\((?P<app>[a-z][\w]{0,127})(?: [\w.+-]{1,64})?\) )?"
    r"(?P<file>[^\s:][^:]{0,2047}\.(?:ex|exs|erl|hrl)):(?P<line>\d{1,9}): (?P<mfa>\S.{0,1023})$"
)
_ANONYMOUS = re.compile(r"^anonymous fn/\d+ in (?P<mfa>\S+)$")
_ERLANG_FUN = re.compile(r"""^(?P<module>.+?)\.["']?-(?P<fn>[^/]+/\d+)-fun-\d+-["']?/\d+$""")
_MFA = re.compile(r"""^(?P<module>[^"]+)\.(?P<fn>[^."]+/\d+)$""")
#: a function whose name needs quotes: `Enum."-map/2-lists^map/1-1-"/2`
_QUOTED_MFA = re.compile(r'^(?P<module>[^"]+)\."(?P<name>[^"]+)"/(?P<arity>\d+)$')
_GENERATED = re.compile(r"^-(?P<fn>[^/]+/\d+)-")


def looks_like_elixir_frame(line: str) -> bool:
    """A frame as Elixir prints it, or as Erlang does (`erlang`)."""
    return _FRAME.match(line) is not None or erlang.looks_like_frame(line)


def is_frame_line(line: str) -> bool:
    return _FRAME.match(line) is not None or erlang.is_frame_line(line)


def parse(lines: list[str]) -> ParsedTrace | None:
    type_, value = "error", ""
    frames: list[Frame] = []
    for line in lines:
        header = _HEADER.match(line.strip())
        if header and not frames:
            type_, value = header["type"], header["value"].strip()
            continue
        frame = _FRAME.match(line)
        if frame:
            frames.append(_frame(frame))
    if not frames:
        return erlang.parse(lines)  # Erlang's own forms
    return ParsedTrace("elixir", (ParsedException(type_, value, tuple(frames), "raised"),))


def split_mfa(mfa: str) -> tuple[str | None, str]:
    """`Shop.Orders.total/2` -> (`Shop.Orders`, `total/2`); an anonymous function -> its enclosing one."""
    anonymous = _ANONYMOUS.match(mfa)
    if anonymous:
        module, function = split_mfa(anonymous["mfa"])
        return module, f"{function} (fn)"
    erlang_fun = _ERLANG_FUN.match(mfa)
    if erlang_fun:
        return erlang_fun["module"], f"{erlang_fun['fn']} (fn)"
    plain = _MFA.match(mfa)
    quoted = _QUOTED_MFA.match(mfa) if plain is None else None
    if quoted:
        # a function the compiler made inside another (`-map/2-lists^map/1-1-`) belongs to that one
        generated = _GENERATED.match(quoted["name"])
        name = f"{generated['fn']} (fn)" if generated else f"{quoted['name']}/{quoted['arity']}"
        return quoted["module"], name
    return (plain["module"], plain["fn"]) if plain else (None, mfa)


def _frame(match: re.Match[str]) -> Frame:
    module, function = split_mfa(match["mfa"].strip())
    # The trace names the OTP application that owns each frame: Elixir's, OTP's and the common libraries' are
    # marked as not the app's here; any other application is left to the in-app rules.
    library = match["app"] in _LIBRARY_APPS or (module or "").startswith(":")
    return Frame(
        function=function,
        module=module,
        filename=match["file"],
        lineno=int(match["line"]),
        in_app=False if library else None,
    )
