"""The exception chain of a trace fingerprint's tree (`fingerprint.py`): each exception's type, the value
it shows, and its stack, one component per frame with why each is or is not used.

    chain_tree(trace, roles, values, recursion, only=...)   the chain, frames of `only` contributing
    contributing_role(trace, roles)                          whose frames contribute: app, test or all
    with_value(exception, value)                             an exception's component showing another value

The stacks are memoised (`_STACKS`): components are immutable and a problem's frames recur in every
occurrence, so a stack's part of the hash input is worked out once.
"""

from __future__ import annotations

import re
from typing import Literal

from rounds_bot.grouping.components import Component, leaf, node
from rounds_bot.grouping.frames import frame_components
from rounds_bot.grouping.inapp import FrameRole, Role, TraceRoles
from rounds_bot.grouping.memo import MB, Ledger, SharingMemo, shared_sharing_memo
from rounds_bot.grouping.shared_costs import frames_cost, stack_cost
from rounds_bot.grouping.stack_overflow import OVERFLOW_LEFT_OUT, is_overflow_reading
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace

#: whose frames a trace fingerprint hashes: the app's, its tests', or (None) all of them
Contributing = Literal["app", "test"]

_CHAIN: dict[Contributing | None, str] = {"app": "in-app frames", "test": "test frames", None: "all frames"}

#: why a trace fingerprint's message and values are shown but not hashed
VALUE_HINT = "the stack trace takes precedence"

_TYPE_SEPARATORS = re.compile(r"::|[./\\]")

#: stack components kept before the memo is cleared (never evicted piecemeal)
_STACK_MEMO_LIMIT = 4096
#: what a stack's entry holds of its own beyond its component: the key's tuples (frames, roles, recursion
#: hints) and the key
_STACK_KEY_BYTES = 1024
#: what it holds of its own per frame: the slots of the key's tuples and the frame's role (its object and
#: reason)
_STACK_KEY_FRAME_BYTES = 96


def _stack_entry_size(key: _StackKey, stack: Component, ledger: Ledger) -> int:
    """A stack's entry: its key's own objects, and its frames and components not paid for yet."""
    frames = key[1]
    return (
        _STACK_KEY_BYTES
        + _STACK_KEY_FRAME_BYTES * len(frames)
        + frames_cost(frames, ledger)
        + stack_cost(stack, ledger)
    )


_StackKey = tuple[
    str, tuple[Frame, ...], tuple[FrameRole, ...], Contributing | None, tuple[str | None, ...], bool, bool
]
_STACKS: SharingMemo[_StackKey, Component] = shared_sharing_memo(_STACK_MEMO_LIMIT, 4 * MB, _stack_entry_size)


#: Go's error types that say nothing of the error: `errors.New`'s, `fmt.Errorf`'s wrapping one error or more
#: (`%w`), `errors.Join`'s. OpenTelemetry's Go SDK records an error's `reflect.TypeOf(err).String()` as its
#: `exception.type`, so most Go errors carry one of these.
GENERIC_GO_ERRORS = frozenset(
    ("*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError")
)


def shown_type(error_type: str | None) -> str | None:
    """The type a title or a headline names (`short_type`): none for Go's generic error types, whose
    message is all they say (`wrapError: load cart 42: sql: no rows` reads better without it)."""
    if error_type is not None and error_type.strip() in GENERIC_GO_ERRORS:
        return None
    return short_type(error_type)


def short_type(error_type: str | None) -> str | None:
    """`builtins.ValueError`, `ValueError` and `shop::errors::ValueError` name one type."""
    if not error_type or not error_type.strip():
        return None
    name = _TYPE_SEPARATORS.split(error_type.strip().rstrip(":"))[-1].lstrip("*")
    return name or error_type.strip()


def contributing_role(trace: ParsedTrace, roles: TraceRoles) -> Contributing | None:
    """`app` when the chain has app frames, else `test` when it has test frames, else None (all
    frames). Other goroutines of a Go dump are not looked at."""
    found: set[Role] = set()
    for exception, exception_roles in zip(trace.exceptions, roles.frames, strict=True):
        if trace.runtime == "go" and exception.relation == "context":
            continue
        found.update(role.role for role in exception_roles)
    return "app" if "app" in found else "test" if "test" in found else None


def chain_tree(
    trace: ParsedTrace,
    roles: TraceRoles,
    values: list[str],
    recursion: list[list[str | None]],
    *,
    only: Contributing | None,
    legacy: bool = False,
    collapsed: list[int] | None = None,
    before_bundles: bool = False,
) -> Component:
    """The exception chain of a trace fingerprint's tree: each exception's type, value and stack, with
    the frames of `only` (None: all) contributing."""
    exceptions: list[Component] = []
    for index, exception in enumerate(trace.exceptions):
        other_goroutine = trace.runtime == "go" and exception.relation == "context"
        stack = _stack_component(
            trace.runtime,
            exception.frames,
            roles.frames[index],
            only,
            tuple(recursion[index]),
            legacy,
            before_bundles,
        )
        value = values[index] if index < len(values) else exception.value
        exceptions.append(
            node(
                "exception",
                leaf("type", short_type(exception.type) or exception.type),
                leaf("value", value, VALUE_HINT) if value else None,
                leaf(
                    "recursion",
                    _count(collapsed[index], "frame"),
                    OVERFLOW_LEFT_OUT
                    if is_overflow_reading(trace.runtime, exception, roles.frames[index])
                    else "ignored due to recursion: it repeats a recursion cycle the error was raised in "
                    "(its outermost pass is kept)",
                )
                if collapsed and collapsed[index]
                else None,
                stack,
                value=exception.relation,
                hint="other goroutines do not contribute" if other_goroutine else None,
            )
        )
    chain = _CHAIN[only]
    if only is not None and roles.owner:
        chain += f" (the app's code: {roles.owner})"
    return node("chain", *exceptions, value=chain)


def _stack_component(
    runtime: str,
    frames: tuple[Frame, ...],
    roles: tuple[FrameRole, ...],
    only: Contributing | None,
    recursion: tuple[str | None, ...],
    legacy: bool,
    before_bundles: bool = False,
) -> Component:
    """An exception's stack: one component per frame, with why each is or is not used. The same
    object for the same frames read the same way (memoised: components are immutable, and a
    problem's frames recur in every occurrence, whatever its message), so its part of the hash
    input is worked out once."""
    key = (runtime, frames, roles, only, recursion, legacy, before_bundles)
    found = _STACKS.get(key)
    if found is None:
        components = frame_components(
            frames, roles, only, list(recursion), legacy=legacy, before_bundles=before_bundles
        )
        found = node(
            "stacktrace",
            *components,
            leaf("line-numbers", "ignored", "line numbers never contribute") if components else None,
            value=f"{runtime}, {_count(len(frames), 'frame')}",
            hint=_why_no_frame_contributes(components),
        )
        _STACKS.put(key, found)
    return found


def with_value(exception: Component, value: str) -> Component:
    """An exception's component showing `value`: its `value` leaf is the one after its type."""
    children = exception.children
    shown = children[1].value if len(children) > 1 and children[1].name == "value" else ""
    if shown == value:
        return exception
    kept = [children[0], leaf("value", value, VALUE_HINT)] if value else [children[0]]
    kept += [child for child in children[1:] if child.name != "value"]
    return Component(exception.name, exception.value, exception.contributes, exception.hint, tuple(kept))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _why_no_frame_contributes(frames: list[Component]) -> str | None:
    """The reasons none of an exception's frames contributes (None when one does): an ignored
    stack is rendered on one line, so its frames' reasons are said there."""
    if not frames:
        return "no frames"
    if any(frame.effective for frame in frames):
        return None
    reasons = list(dict.fromkeys(frame.hint for frame in frames if frame.hint))
    return "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "") if reasons else None
