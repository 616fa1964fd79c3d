"""Where an error happened: its crash site, and the rule tier 3 follows with it.

The crash site is the innermost frame of the application's own code (role "app", see `inapp`)
of the first exception of the chain that has one, written `module:function` after the same
normalisation a frame's fingerprint uses (no line number). Test code is not a crash site: a test
shows where a failure was noticed, not where the code under test went wrong. In a Go stack
printed by a deferred `recover`, the frames above the runtime's `panic` are the recovery's own,
so the crash site is looked for below it.

Similarity (tier 3) is for errors without reliable frames: it never merges two errors that both
have a crash site when the sites differ. Same type and message raised in two functions are two
problems, however alike the rest of their text is.
"""

from __future__ import annotations

from rounds_bot.grouping.frames import frame_key
from rounds_bot.grouping.inapp import TraceRoles
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace

_GO_PANIC_FUNCTIONS = frozenset(("panic", "gopanic", "sigpanic"))


def crash_site(trace: ParsedTrace, roles: TraceRoles) -> str | None:
    """`module:function` of the innermost app frame, or None when the trace has none."""
    for exception, exception_roles in zip(trace.exceptions, roles.frames, strict=True):
        if trace.runtime == "go" and exception.relation == "context":
            continue  # other goroutines of a dump did not crash
        start = _after_go_panic(exception.frames) if trace.runtime == "go" else 0
        for frame, role in zip(exception.frames[start:], exception_roles[start:], strict=True):
            if role.in_app:
                key = frame_key(frame)
                return f"{key.module}:{key.function}"
    return None


def may_merge_by_similarity(site: str | None, other: str | None) -> bool:
    """Tier 3 may merge two errors unless both have a crash site and the sites differ."""
    return site is None or other is None or site == other


def _after_go_panic(frames: tuple[Frame, ...]) -> int:
    """The index of the first frame below the runtime's panic frame (0 when there is none)."""
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        if frame.module in (None, "runtime") and frame.function in _GO_PANIC_FUNCTIONS:
            return index + 1
    return 0
