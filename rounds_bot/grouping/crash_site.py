"""Where an error happened: its crash site, its root cause's, and the rules grouping follows with them.

The crash site is the innermost frame of the application's own code (role "app", see `inapp`)
of the first exception of the chain that has one, written `module:function` after the same
normalisation a frame's fingerprint uses (no line number; a file is named by its module path).
Test code is not a crash site: a test shows where a failure was noticed, not where the code under
test went wrong. In a Go stack printed by a deferred `recover`, the frames above the runtime's
`panic` are the recovery's own, so the crash site is looked for below it. Library frames are
attributed to the first application frame that called them: an error raised inside a library is
the app's at the line that called the library. A minified function of a JavaScript bundle
(`bundles`) is named as its build printed it, bundle hash and all (`frame_key_before_bundles`):
as `<minified>` every bug of the bundle would share one site, and the minifier reuses a short name
in the next build for another function, whose bundle has another hash. (The frames' hash, which
leaves both out, is what finds the same bug after a deploy.)

The root cause is the last exception of the cause chain (Python's `raise ... from` and "During
handling of the above exception", the JVM's `Caused by:`, .NET's inner exceptions); its crash
site is looked for the same way. A wrapper raised at one place over two different root causes is
two problems.

Together they are the error's `site` (`Site.key`), which is both:
- positive evidence: the same exception types raised at the same site and root-cause site are one
  problem, whichever callers reached it (the fingerprint registers a `site` hash);
- a hard boundary: similarity (tier 3) never merges two errors whose sites differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from rounds_bot.grouping.bundles import MINIFIED
from rounds_bot.grouping.frames import collapse_recursion, frame_key, frame_key_before_bundles
from rounds_bot.grouping.inapp import InAppRules, TraceRoles
from rounds_bot.grouping.stack_overflow import reads_an_overflow
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace, parse_stacktrace

_GO_PANIC_FUNCTIONS = frozenset(("panic", "gopanic", "sigpanic"))
#: how the root cause's site is written after the crash site in `Site.key`
_ROOT = " <- root cause "
_CAUSES = ("cause", "context", "inner")


@dataclass(frozen=True)
class Site:
    """Where an error was raised (`crash_site`) and where its root cause was (`root_cause`, None
    when the chain has no other exception with an app frame, or it is the crash site itself)."""

    crash_site: str | None
    root_cause: str | None = None

    @classmethod
    def from_key(cls, key: str | None) -> Site:
        """The site a signature stored (`SignatureState.crash_site`), read back."""
        if not key:
            return cls(None)
        site, _, root = key.partition(_ROOT)
        return cls(site, root or None)

    @property
    def key(self) -> str | None:
        """What a signature stores and tier 3 compares: `module:function`, and the root cause's
        after ` <- root cause ` when there is one."""
        if self.crash_site is None:
            return self.root_cause
        return self.crash_site if self.root_cause is None else self.crash_site + _ROOT + self.root_cause


def site_of_text(stacktrace: str | None, rules: InAppRules | None = None) -> Site | None:
    """The site of a printed stack trace as grouping reads it (recursion collapsed, whose code
    each frame is by `rules`): for an issue's "whose code"; None when no parser reads the trace."""
    trace = parse_stacktrace(stacktrace)
    if trace is None:
        return None
    rules = rules or InAppRules()
    collapsed = collapse_recursion(trace, rules=rules)
    return reading_site(trace, collapsed, rules.roles(collapsed), rules)


def reading_site(trace: ParsedTrace, collapsed: ParsedTrace, roles: TraceRoles, rules: InAppRules) -> Site:
    """The site of `trace` read as `collapsed` (`roles`: its roles). A stack overflow read from its app's
    frames (`stack_overflow`) keeps the site the release before gave it, the innermost app frame of the print
    with a cycle folded: its frames, sorted, no longer say which one the recursion was in, and the frame that
    sorts first may be a library's the print does not tell from the app's (a cut print's Guava)."""
    if collapsed is not trace and reads_an_overflow(trace):
        before = collapse_recursion(trace, overflow=False)
        return site_of(before, rules.roles(before))
    return site_of(collapsed, roles)


def crash_site(trace: ParsedTrace, roles: TraceRoles) -> str | None:
    """`module:function` of the innermost app frame, or None when the trace has none."""
    for index, exception in enumerate(trace.exceptions):
        if trace.runtime == "go" and exception.relation == "context":
            continue  # other goroutines of a dump did not crash
        found = _innermost_app_frame(trace, roles, index)
        if found is not None:
            return found
    return None


def site_of(trace: ParsedTrace, roles: TraceRoles) -> Site:
    """The crash site and the root cause's crash site of a trace."""
    site = crash_site(trace, roles)
    root = None
    for index in range(len(trace.exceptions) - 1, 0, -1):
        if trace.exceptions[index].relation in _CAUSES and trace.runtime != "go":
            root = _innermost_app_frame(trace, roles, index)
            if root is not None:
                break
    return Site(site, None if root == site else root)


def _innermost_app_frame(trace: ParsedTrace, roles: TraceRoles, index: int) -> str | None:
    exception, exception_roles = trace.exceptions[index], roles.frames[index]
    start = _after_go_panic(exception.frames) if trace.runtime == "go" else 0
    for frame, role in zip(exception.frames[start:], exception_roles[start:], strict=True):
        if role.in_app:
            key = frame_key(frame)
            if key.function == MINIFIED:
                key = frame_key_before_bundles(frame)  # this build's place: see the module doc
            return f"{key.module}:{key.function}"
    return None


def may_merge_by_similarity(site: str | None, other: str | None) -> bool:
    """Tier 3 may merge two errors unless both have a site and the sites differ."""
    return site is None or other is None or same_site(site, other)


def same_site(site: str, other: str) -> bool:
    """Whether two `Site.key`s name one place. A site stored by `rounds-fp:2` named a file by its
    base name and had no root cause: it is the same as a newer one that agrees with it there."""
    if site == other:
        return True
    mine, theirs = site.split(_ROOT, 1), other.split(_ROOT, 1)
    if len(mine) == 2 and len(theirs) == 2 and mine[1] != theirs[1]:
        return False
    return _same_place(mine[0], theirs[0])


def _same_place(site: str, other: str) -> bool:
    if site == other:
        return True
    old, new = (site, other) if "/" not in site.split(":", 1)[0] else (other, site)
    module, _, function = new.rpartition(":")
    return "/" in module and old == f"{module.rsplit('/', 1)[-1]}:{function}"


def _after_go_panic(frames: tuple[Frame, ...]) -> int:
    """The index of the first frame below the runtime's panic frame (0 when there is none)."""
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        if frame.module in (None, "runtime") and frame.function in _GO_PANIC_FUNCTIONS:
            return index + 1
    return 0
