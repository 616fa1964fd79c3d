"""What one stack frame contributes to a fingerprint, and which frames are left out.

A frame contributes its module (else the lower-cased base name of its file), its function and,
where the runtime prints it, its source line (whitespace collapsed, left out past 120
characters). Line numbers never contribute: adding a line above a bug must not re-file it.
Recursion is folded: a frame identical to the one before it is ignored, and so is every repeat
of a cycle of up to MAX_CYCLE frames, so a stack overflow at depth 1,000 and one at depth 5,000
group together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rounds_bot.grouping.components import Component, leaf, node
from rounds_bot.grouping.inapp import FrameRole, Role
from rounds_bot.grouping.stacktrace import Frame

MAX_CONTEXT_LINE = 120
MAX_CYCLE = 8
#: frames beyond this many (crash site first) do not contribute
MAX_CONTRIBUTING_FRAMES = 64
_SPACES = re.compile(r"\s+")
_MEMO_LIMIT = 100_000
_COMPONENTS: dict[tuple[Frame, str | None], Component] = {}
_NOT: dict[Role, str] = {"app": "not in-app", "test": "not test code", "library": "not a library"}


@dataclass(frozen=True)
class FrameKey:
    module: str
    function: str
    context: str | None


def frame_key(frame: Frame) -> FrameKey:
    module = frame.module or _basename(frame.filename) or "?"
    function = (frame.function or "<anonymous>").strip()
    context = None
    if frame.context_line:
        collapsed = _SPACES.sub(" ", frame.context_line).strip()
        if collapsed and len(collapsed) <= MAX_CONTEXT_LINE:
            context = collapsed
    return FrameKey(module, function, context)


def _basename(path: str | None) -> str | None:
    if not path:
        return None
    return re.split(r"[\\/]", path)[-1].lower() or None


def recursion_hints(frames: tuple[Frame, ...]) -> list[str | None]:
    """For each frame, why recursion folding leaves it out (None: it stays)."""
    identities = [(f.module, f.filename, f.function, f.lineno) for f in frames]
    hints: list[str | None] = [None] * len(frames)
    if not _repeats_within_a_cycle(identities):
        return hints  # nothing to fold (the common case, decided in one pass)
    for index in range(1, len(frames)):
        if identities[index] == identities[index - 1]:
            hints[index] = "ignored due to recursion"
    index = 0
    while index < len(frames):
        folded = False
        for period in range(2, MAX_CYCLE + 1):
            end = index + period
            if end + period > len(frames):
                break
            if (
                identities[index] != identities[end]
                or identities[index:end] != identities[end : end + period]
            ):
                continue
            repeat = end
            while (
                repeat + period <= len(frames)
                and identities[index:end] == identities[repeat : repeat + period]
            ):
                for offset in range(repeat, repeat + period):
                    hints[offset] = hints[offset] or "repeats a recursion cycle"
                repeat += period
            index = repeat
            folded = True
            break
        if not folded:
            index += 1
    return hints


def _repeats_within_a_cycle(identities: list[tuple[str | None, str | None, str | None, int | None]]) -> bool:
    """Whether some frame is printed again at most MAX_CYCLE frames later: recursion needs it."""
    last: dict[tuple[str | None, str | None, str | None, int | None], int] = {}
    for index, identity in enumerate(identities):
        before = last.get(identity)
        if before is not None and index - before <= MAX_CYCLE:
            return True
        last[identity] = index
    return False


def frame_components(
    frames: tuple[Frame, ...],
    roles: tuple[FrameRole, ...],
    only: Role | None,
    recursion: list[str | None] | None = None,
) -> list[Component]:
    """One component per frame, crash site first, with why each is or is not used: with `only`
    set, frames of another role do not contribute. `recursion` is `recursion_hints(frames)`,
    when the caller has it already."""
    if recursion is None:
        recursion = recursion_hints(frames)
    components: list[Component] = []
    contributing = 0
    for frame, role, recursion_hint in zip(frames, roles, recursion, strict=True):
        hint = None
        if recursion_hint:
            hint = recursion_hint
        elif only is not None and role.role != only:
            hint = f"{_NOT[only]}: {role.reason}"
        elif contributing >= MAX_CONTRIBUTING_FRAMES:
            hint = f"beyond the first {MAX_CONTRIBUTING_FRAMES} frames"
        components.append(frame_component(frame, hint))
        if hint is None:
            contributing += 1
    return components


def frame_component(frame: Frame, hint: str | None) -> Component:
    """A frame's component (memoised: components are immutable, and frames recur across traces)."""
    key = (frame, hint)
    found = _COMPONENTS.get(key)
    if found is None:
        if len(_COMPONENTS) >= _MEMO_LIMIT:
            _COMPONENTS.clear()
        found = _COMPONENTS[key] = _build_frame_component(frame, hint)
    return found


def _build_frame_component(frame: Frame, hint: str | None) -> Component:
    key = frame_key(frame)
    children = [leaf("module", key.module), leaf("function", key.function)]
    if key.context is not None:
        children.append(leaf("context-line", key.context))
    elif frame.context_line:
        children.append(leaf("context-line", frame.context_line, "longer than 120 characters"))
    value = f"{key.module} {key.function}"
    if frame.lineno is not None:
        value += f" (line {frame.lineno})"  # shown, never hashed: only children are
    return node("frame", *children, value=value, hint=hint)
