"""A JVM stack overflow read alike wherever the stack ran out and wherever its print was cut.

When a thread's stack runs out, HotSpot throws `java.lang.StackOverflowError` in whichever call needed the
next frame (its API docs: "thrown when a stack overflow occurs because an application recurses too deeply"):
the recursing method's own, or a call the recursion made into the JDK or a library (`HashMap.hash` under a
`hashCode`, `StringBuilder.append` under a `toString`, `String.lastIndexOf` under reflection). HotSpot prints
a thread's innermost `-XX:MaxJavaStackTraceDepth` frames (1,024 by default), so a deep recursion's bottom is
never printed, and loggers cut further (logback's `maxDepthPerThrowable`, log4j's `%throwable{10}`). So two
occurrences of one recursion print different frames above its cycle, start the cycle at different frames, and
show one pass of it or hundreds.

Such an error is read from its app's frames alone, each once, in the order their keys sort
(`overflow_frames`): a print holding at least one pass of the cycle shows each of the cycle's app frames, so
two such prints of one recursion read alike when what they show above and below the cycle agrees: not when one
ran out inside a library frame the print does not tell from the app's (a cut print's Guava), nor when one ran
out in an app helper the recursion calls (it is kept: below), nor in a nested recursion whose inner cycle a
print shows only in part. A pass seen twice is not needed (a logger's depth limit of 10 inside an 8-frame
`toString` cycle shows one). The frames the runtime and the libraries add are left out: those above the
recursion are where the stack ran out, and a cut keeps a different number of those inside it. The app's frames
above the recursion stay: they can tell two bugs of one recursion apart (Defects4J's Gson-14 and Gson-16 both
overflow in `$Gson$Types.resolve`, and differ only by the app's call the recursion made when the stack ran
out: `indexOf`, `declaringClassOf`). The crash site stays the one the release before gave
(`crash_site.reading_site`: the innermost app frame of the print with a cycle folded), so it is the
recursing method where it was.

Whose code a frame is comes from the engine's in-app rules read on the whole print, as grouping reads any
trace (`InAppRules.roles`): the owner rule applies where the print shows its entry (`io.acme.App.main` at
the bottom makes Jackson another owner's code), and not to a print cut before its entry, which does not
show who called into the app. The frames kept keep those roles (`reading_roles`): judged again once sorted,
the frame that sorts last would be taken for the program's entry. Any other error, another runtime's, and a
stack overflow with no frame of the app's or its tests' read as before.
"""

from __future__ import annotations

from rounds_bot.grouping.inapp import FrameRole, InAppRules, TraceRoles
from rounds_bot.grouping.stacktrace import Frame, ParsedException, ParsedTrace

#: the error HotSpot throws when a thread's stack runs out; Kotlin, Scala and Groovy on the JVM throw the same
STACK_OVERFLOW = "java.lang.StackOverflowError"


def reads_an_overflow(trace: ParsedTrace) -> bool:
    """Whether some exception of `trace` is a JVM stack overflow (`overflow_frames` reads it)."""
    return trace.runtime == "java" and any(e.type == STACK_OVERFLOW for e in trace.exceptions)


def overflow_frames(exception: ParsedException, roles: tuple[FrameRole, ...]) -> tuple[Frame, ...]:
    """A JVM stack overflow's frames as grouping reads them: its frames of the app's or its tests' code by
    `roles` (the exception's roles in the whole printed trace, `InAppRules.roles`: the owner rule applied as
    grouping applies it to any trace), each once (the innermost printed of each: its line is shown, never
    hashed), in the order their keys sort; the same object for any other error, and for one with no such
    frame (a recursion inside the JDK's regular expressions, say: nothing of the app's to read it by)."""
    if exception.type != STACK_OVERFLOW:
        return exception.frames
    own: dict[tuple[str, str], Frame] = {}
    for frame, role in zip(exception.frames, roles, strict=True):
        if role.role != "library":
            own.setdefault(_key(frame), frame)
    if not own:
        return exception.frames
    return tuple(own[key] for key in sorted(own))


def is_overflow_reading(runtime: str, exception: ParsedException, roles: tuple[FrameRole, ...]) -> bool:
    """Whether an exception's collapsed frames (`roles`: theirs) are a stack overflow read from its app's
    frames (`overflow_frames`), not a recursion cycle folded: what its explanation says was left out."""
    return runtime == "java" and exception.type == STACK_OVERFLOW and any(r.role != "library" for r in roles)


def reading_roles(
    trace: ParsedTrace, collapsed: ParsedTrace, rules: InAppRules, without_rules: frozenset[str] = frozenset()
) -> TraceRoles:
    """The roles of `trace`'s frames read as `collapsed` (`InAppRules.roles`, `without_rules` as there). Those
    of a stack overflow read from its app's frames (`overflow_frames`) are the ones judged on the whole print,
    with its owner and whether it was cut: judged again on the frames sorted, the frame that sorts last would
    be taken for the program's entry (RxJava 1's `OnSubscribeMap.call`, Vert.x's `ContextImpl.run`) and the
    app's frames for another owner's code it calls."""
    if collapsed is trace or not reads_an_overflow(trace):
        return rules.roles(collapsed, without_rules=without_rules)
    # which frames were kept was decided by the roles with every rule (`frames.collapse_recursion`)
    pairs = zip(trace.exceptions, collapsed.exceptions, rules.roles(trace).frames, strict=True)
    if not any(
        new.frames == overflow_frames(old, roles) for old, new, roles in pairs if new.frames is not old.frames
    ):
        return rules.roles(collapsed, without_rules=without_rules)  # read as the release before read it
    whole = rules.roles(trace, without_rules=without_rules)
    # a frame's role follows from the frame and the print's owner alone, so each kept frame takes its own
    exceptions = zip(trace.exceptions, collapsed.exceptions, whole.frames, strict=True)
    frames = tuple(_kept_roles(old.frames, roles, new.frames) for old, new, roles in exceptions)
    return TraceRoles(frames, whole.owner, whole.cut)


def _kept_roles(
    frames: tuple[Frame, ...], roles: tuple[FrameRole, ...], kept: tuple[Frame, ...]
) -> tuple[FrameRole, ...]:
    """The roles (`roles`: those of `frames`) of the frames `kept` of them."""
    role_of = dict(zip(frames, roles, strict=True))
    return tuple(role_of[frame] for frame in kept)


#: what an overflow reading leaves out, as its explanation says it
OVERFLOW_LEFT_OUT = (
    "left out of a stack overflow: the runtime's and libraries' frames (where the stack ran out, or inside "
    "the recursion) and repeats of the app's; the app's frames read as a set"
)


def _key(frame: Frame) -> tuple[str, str]:
    """What tells a JVM frame from another in a fingerprint (`frames.frame_key`: its class and method; a JVM
    frame has no source line and its file is its class's)."""
    return frame.module or "", (frame.function or "<anonymous>").strip()
