"""UndefinedBehaviorSanitizer's report without a stack, its default (`print_stacktrace=0`, clang's
UndefinedBehaviorSanitizer documentation):

    /app/src/cart.cc:12:5: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented ...
    SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /app/src/cart.cc:12:5

The diagnostic's location is the source's (compiler-rt's ubsan_diag.cpp, `renderLocation`:
`file:line:column`): it is the site, read as the crash's one frame, which names no function: it is named by
its line (`<line 12>`, `model.site_name`), so two diagnostics in one file are two problems. A report with a
stack is `native`'s, and read as before. A diagnostic that names no source (`<unknown>`, a module and offset
without debug information) is left to its message: an offset moves with every build; so is a line of that
shape naming a source no C compiler builds (Go's `main.go:42: runtime error: ...`) with no UBSan summary
under it. The minimal runtime's
`ubsan: add-overflow by 0x...` names an address alone, which moves with every launch of a position-independent
program: left to its message too.

No release before this one read these texts: their events went to their message's template, and the
signature made so keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace, site_name

#: the type native's reading gives a UBSan report with its stack (`native._header`)
RUNTIME_ERROR = "UndefinedBehaviorSanitizer: runtime error"
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s:(<][^:]{0,1023}?|[A-Za-z]:[\\/][^:]{0,1023}?):(?P<line>\d{1,9})(?::\d{1,9})?: "
    r"runtime error: (?P<value>.{1,2048})$"
)
#: the sources of the languages UBSan instruments (clang's driver's C, C++, Objective-C and CUDA file types,
#: `.C` and `.H` being C++'s on case-sensitive systems): Go's `main.go:42: runtime error:` (a logger's
#: `Lshortfile` over a recovered panic) and other runtimes' lines of that shape are no UBSan report
_C_FAMILY = re.compile(
    r"\.(?:c|cc|cp|cpp|cxx|c\+\+|h|hh|hpp|hxx|h\+\+|inc|inl|ipp|tcc|m|mm|cu|cuh)$", re.IGNORECASE
)
#: the line UBSan ends a report with (`ubsan_diag.cpp`, `ReportErrorSummary`): any source then is UBSan's
_SUMMARY = "SUMMARY: UndefinedBehaviorSanitizer:"


def is_diagnostic_line(line: str) -> bool:
    """Whether the line is a diagnostic naming a source (its site: a frame line for the trace memo)."""
    return ": runtime error: " in line and _DIAGNOSTIC.match(line.strip()) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    """The first diagnostic that names a C-family source (any source under UBSan's summary line), as a frame
    at that line; None when none does."""
    summary = any(line.startswith(_SUMMARY) for line in lines)
    for line in lines:
        found = _DIAGNOSTIC.match(line.strip()) if ": runtime error: " in line else None
        if found is not None and (summary or _C_FAMILY.search(found["file"])):
            frame = Frame(site_name(int(found["line"])), filename=found["file"], lineno=int(found["line"]))
            return ParsedTrace(
                "native", (ParsedException(RUNTIME_ERROR, found["value"], (frame,)),), (NEWLY_READ,)
            )
    return None
