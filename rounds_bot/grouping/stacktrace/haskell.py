"""Haskell's uncaught exceptions as a GHC-compiled program prints them (GHC 9.x):

    shop: user 42 not found
    CallStack (from HasCallStack):
      error, called at src/Lib.hs:12:5 in main:Lib
      lookupUser, called at src/App.hs:30:9 in main:App

The first line is the program's name and the exception's `displayException` (GHC's top-level handler,
`GHC.TopHandler`; GHCi's `*** Exception: ...`); GHC 9.10 and later print `Uncaught exception
PACKAGE:MODULE.Type:` first, the message after a blank line, and the stack under `HasCallStack backtrace:`
(GHC.Exception's `displayExceptionWithInfo`). Each stack line is GHC.Stack's `prettyCallStack`: a function,
then where it was called, `FILE:LINE:COL in PACKAGE:MODULE`. The site of line k is inside the function line
k+1 names (the call stack holds only functions asking for `HasCallStack`: the outermost site's function is not
known, and it is named by its line, `<line 12>`). The column says where on the line, never part of a frame; a
package's version and build hash (`shop-0.1.0.0-inplace`, `text-2.0.2-3fa1`) change with each build and are
left out. `base`'s and `ghc-internal`'s frames are a library's (`library_paths`), and so are those of any
other versioned unit than the app's (`vector-0.13.1.0-9f1c2a`, `containers-0.6.7`): the app's are `main`,
Cabal's `-inplace` units, the outermost call's unit and a unit Stack built
(`shop-0.1.0.0-KXq3bn7gy2F5hJsWdHuLxx`) of a package no known library's (`LIBRARY_MODULES`), so the site of a
library's check (`Data.Vector.!`, `Data.Map.!`) is the app's call of it. GHCi's module (`interactive:Ghci3`)
is named without its evaluation's number.

No release before this one read these texts: their events went to their message's template, and the
signature made so keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace, site_name

#: the type of an exception whose text names none (`error`'s, most of those with a call stack)
EXCEPTION = "exception"
_CALLED = re.compile(
    r"^\s{1,16}(?P<fn>\S{1,512}), called at (?P<file>\S.{0,2047}?):(?P<line>\d{1,9}):\d{1,9} in "
    r"(?P<package>[^\s:]{1,256}):(?P<module>[\w.']{1,512})$"
)
_STACK_HEADERS = ("CallStack (from HasCallStack):", "HasCallStack backtrace:")
#: GHC 9.10's `Uncaught exception ghc-internal:GHC.Internal.Exception.ErrorCall:`
_UNCAUGHT = re.compile(
    r"^(?:\S{1,256}: )?Uncaught exception (?:[^\s:]{1,256}:)?(?:[\w']{1,256}\.)*(?P<type>\w{1,256}):$"
)
_GHCI = "*** Exception: "
#: a unit id's version and hash after the package's name
_VERSION = re.compile(r"-\d[\d.]*(?:-\S*)?$")
#: the app's units: GHC's for a program compiled alone, Cabal's for a package of the project being built
_MAIN = "main"
_INPLACE = re.compile(r"-inplace(?:-|$)")
#: a unit id Cabal's library made (`Distribution.Backpack.Id.computeComponentId`: the package's id and a
#: base-62 hash, `shop-0.1.0.0-KXq3bn7gy2F5hJsWdHuLxx`), as Stack builds every package, the project's own
#: and its snapshot's alike: its package name decides (`LIBRARY_MODULES`). cabal-install's store ids end in a
#: base-16 hash (`hashedInstalledPackageId`), which has no capital letter, and its local packages are
#: `-inplace`
_BASE62_HASH = re.compile(r"-\d[\d.]*-(?=[0-9a-z]*[A-Z])[0-9A-Za-z]{8,64}$")
#: GHCi's module of the n-th evaluation (`interactive:Ghci3`): the number grows with each one
_GHCI_MODULE = re.compile(r"^(?P<module>Ghci)\d+$")
#: a qualified name GHC's own errors start with (`Prelude.head: empty list`, `Data.Map.!: given key ...`):
#: the message's, never a program's name (which `.exe` may end)
_QUALIFIED = re.compile(r"^(?:[A-Z][\w']*\.)+[^.\s]+$")


def looks_like_haskell_line(line: str) -> bool:
    """A line only GHC prints: one of a call stack's."""
    return ", called at " in line and _CALLED.match(line) is not None


is_frame_line = looks_like_haskell_line


def parse(lines: list[str]) -> ParsedTrace | None:
    """The exception the first call stack belongs to; None when no call is read."""
    start = next((i for i, line in enumerate(lines) if looks_like_haskell_line(line)), None)
    if start is None:
        return None
    calls = []
    for line in lines[start:]:
        if (called := _CALLED.match(line)) is None:
            break
        calls.append(called)
    error_type, value = _header([line for line in lines[:start] if line.strip() not in _STACK_HEADERS])
    return ParsedTrace("haskell", (ParsedException(error_type, value, _frames(calls)),), (NEWLY_READ,))


def _header(lines: list[str]) -> tuple[str, str]:
    """The exception's type (GHC 9.10's line names it) and its message, without the program's name."""
    text = [line.strip() for line in lines if line.strip()]
    error_type = EXCEPTION
    if text and (uncaught := _UNCAUGHT.match(text[0])) is not None:
        error_type, text = uncaught["type"], text[1:]
    if text and text[0].startswith(_GHCI):
        text[0] = text[0][len(_GHCI) :]
    elif text and error_type == EXCEPTION and _program_named(text[0]):
        text[0] = text[0].split(": ", 1)[1]  # `prog: message`: the program's name is no part of it
    return error_type, " ".join(text)


def _program_named(line: str) -> bool:
    """Whether the line starts with the program's name (`shop: ...`), not with a qualified name GHC's own
    error names (`Prelude.head: empty list`, printed without the program's name by GHCi or a logger)."""
    if ": " not in line:
        return False
    prefix = line.split(": ", 1)[0]
    return " " not in prefix and (_QUALIFIED.match(prefix) is None or prefix.lower().endswith(".exe"))


def _frames(calls: list[re.Match[str]]) -> tuple[Frame, ...]:
    """Innermost first: each site, in the function the next line names; another package's marked a
    library's. The outermost site's function is not known: it is named by its line (`model.site_name`)."""
    callers: list[str | None] = [called["fn"] for called in calls[1:]]
    callers.append(site_name(int(calls[-1]["line"])))
    apps = _app_units(calls)
    return tuple(
        Frame(
            caller,
            module=_module(called),
            filename=called["file"],
            lineno=int(called["line"]),
            in_app=_in_app(called["package"], apps),
        )
        for caller, called in zip(callers, calls, strict=True)
    )


def _module(called: re.Match[str]) -> str:
    """`PACKAGE:MODULE` without the unit's version and hash, and GHCi's module without its number."""
    package = _VERSION.sub("", called["package"])
    module = _GHCI_MODULE.sub(r"\g<module>", called["module"])
    return f"{package}:{module}"


def _app_units(calls: list[re.Match[str]]) -> frozenset[str]:
    """The units that are the app's: the outermost call's (a program's own code calls into its libraries,
    whatever its build tool names it: Stack's `shop-0.1.0.0-<hash>`), and Cabal's local `-inplace` ones
    and GHC's `main` wherever they are."""
    return frozenset(
        called["package"]
        for index, called in enumerate(calls)
        if index == len(calls) - 1 or called["package"] == _MAIN or _INPLACE.search(called["package"])
    )


def _in_app(package: str, apps: frozenset[str]) -> bool | None:
    """False for another package's unit, versioned (`vector-0.13.1.0-9f1c2a`, `containers-0.6.7`: a
    package's name, version and cabal-install's build hash, or GHC's boot package); otherwise left to the
    in-app rules (GHC's own `base`, `ghc-internal`, and for a unit Stack built, whose id is the same for the
    project's packages and its snapshot's, the known libraries: `LIBRARY_MODULES`). A package's sources are
    printed relative to its own directory (`src/Data/Vector.hs`), the app's too: its path tells neither."""
    if package in apps or _BASE62_HASH.search(package):
        return None
    return False if _VERSION.search(package) else None
