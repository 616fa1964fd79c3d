"""The versioned fingerprint of an event: a component tree and the hash of its contributing part.

Three kinds, in order of precedence (Sentry's: custom fingerprint, stack trace, message):
- `error_code`: a standardised error code decides alone;
- `app` / `test` / `system`: the exception chain's types and frames: the app's frames when
  there are any, else its test code's, else all frames (see `inapp`); the message is shown but
  never hashed. A trace fingerprint also carries the `system` hash (all frames), which an event
  matches when its app frames are the same code reached through other library frames;
- `template`: the exception type and the mined template of the message.
The service always contributes; environment and service version never do. The version string
is part of every hash, so a new algorithm can never silently match (or re-split) old groups.

Version history: `rounds-fp:1` took every frame of an unknown package for the app's and test
code for application code. `rounds-fp:2` reads whose code a frame is per trace (`inapp`). Its
all-frames tree is the one `rounds-fp:1` hashed, so a trace also gives the `rounds-fp:1` system
hash (`legacy_hashes`): signatures created by `rounds-fp:1` keep receiving their traces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rounds_bot.grouping.components import Component, hash_tree, leaf, node
from rounds_bot.grouping.frames import frame_components, recursion_hints
from rounds_bot.grouping.inapp import Role, TraceRoles
from rounds_bot.grouping.stacktrace import ParsedTrace

FINGERPRINT_VERSION = "rounds-fp:2"
#: earlier versions whose all-frames hash a trace still gives, to find their signatures
LEGACY_VERSIONS = ("rounds-fp:1",)
MAX_TITLE = 120
Variant = Literal["error_code", "app", "test", "system", "template"]
#: whose frames a trace fingerprint hashes: the app's, its tests', or (None) all of them
Contributing = Literal["app", "test"]
_CHAIN: dict[Contributing | None, str] = {"app": "in-app frames", "test": "test frames", None: "all frames"}
_TYPE_SEPARATORS = re.compile(r"::|[./\\]")


@dataclass(frozen=True)
class EventView:
    """The parts of an event grouping looks at, already normalised."""

    service: str
    error_type: str | None
    normalized_message: str
    environment: str | None = None
    service_version: str | None = None


@dataclass(frozen=True)
class Fingerprint:
    variant: Variant
    hash: str
    tree: Component
    #: further hashes that identify the same group (the system hash of an app fingerprint)
    other_hashes: tuple[str, ...] = ()
    version: str = FINGERPRINT_VERSION
    #: hashes earlier versions gave the same event: looked up, never registered
    legacy_hashes: tuple[str, ...] = ()


def short_type(error_type: str | None) -> str | None:
    """`builtins.ValueError`, `ValueError` and `shop::errors::ValueError` name one type."""
    if not error_type or not error_type.strip():
        return None
    name = _TYPE_SEPARATORS.split(error_type.strip().rstrip(":"))[-1].lstrip("*")
    return name or error_type.strip()


def title_for(error_type: str | None, message: str) -> str:
    short = short_type(error_type)
    text = " ".join(message.split())
    if short and error_type and text.startswith((f"{short}:", f"{error_type.strip()}:")):
        short = None  # the message already names its type: "KeyError: 'user_id'"
    title = f"{short}: {text}" if short and text else (short or text or "(no message)")
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 3] + "..."


def code_fingerprint(view: EventView, code: str, where: str) -> Fingerprint:
    taken = "the error code takes precedence"
    tree = node(
        "fingerprint",
        leaf("service", view.service),
        leaf("error-code", code),
        leaf("code-source", where, "shown for reading"),
        leaf("type", short_type(view.error_type), taken) if view.error_type else None,
        leaf("message", view.normalized_message, taken) if view.normalized_message else None,
        *_never_split(view),
        value=FINGERPRINT_VERSION,
    )
    return Fingerprint("error_code", hash_tree(tree, FINGERPRINT_VERSION), tree)


def trace_fingerprint(
    view: EventView, trace: ParsedTrace, roles: TraceRoles, normalized_values: list[str]
) -> Fingerprint | None:
    """The stack-trace fingerprint, or None when the trace has no frame at all."""
    if trace.frame_count == 0:
        return None
    only = _contributing_role(trace, roles)
    recursion = [recursion_hints(e.frames) for e in trace.exceptions]
    system = _trace_tree(view, trace, roles, normalized_values, recursion, only=None)
    legacy = tuple(hash_tree(system, version) for version in LEGACY_VERSIONS)
    system_hash = hash_tree(system, FINGERPRINT_VERSION)
    if only is None:
        return Fingerprint("system", system_hash, system, legacy_hashes=legacy)
    tree = _trace_tree(view, trace, roles, normalized_values, recursion, only=only)
    return Fingerprint(
        only, hash_tree(tree, FINGERPRINT_VERSION), tree, other_hashes=(system_hash,), legacy_hashes=legacy
    )


def _contributing_role(trace: ParsedTrace, roles: TraceRoles) -> Contributing | None:
    """`app` when the chain has app frames, else `test` when it has test frames, else None (all
    frames). Other goroutines of a Go dump are not looked at."""
    found: set[Role] = set()
    for exception, exception_roles in zip(trace.exceptions, roles.frames, strict=True):
        if trace.runtime == "go" and exception.relation == "context":
            continue
        found.update(role.role for role in exception_roles)
    return "app" if "app" in found else "test" if "test" in found else None


def _trace_tree(
    view: EventView,
    trace: ParsedTrace,
    roles: TraceRoles,
    values: list[str],
    recursion: list[list[str | None]],
    *,
    only: Contributing | None,
) -> Component:
    exceptions: list[Component] = []
    for index, exception in enumerate(trace.exceptions):
        other_goroutine = trace.runtime == "go" and exception.relation == "context"
        frames = frame_components(exception.frames, roles.frames[index], only, recursion[index])
        stack = node(
            "stacktrace",
            *frames,
            leaf("line-numbers", "ignored", "line numbers never contribute") if frames else None,
            value=f"{trace.runtime}, {_count(len(exception.frames), 'frame')}",
            hint=_why_no_frame_contributes(frames),
        )
        value = values[index] if index < len(values) else exception.value
        exceptions.append(
            node(
                "exception",
                leaf("type", short_type(exception.type) or exception.type),
                leaf("value", value, "the stack trace takes precedence") if value else None,
                stack,
                value=exception.relation,
                hint="other goroutines do not contribute" if other_goroutine else None,
            )
        )
    chain = _CHAIN[only]
    if only is not None and roles.owner:
        chain += f" (the app's code: {roles.owner})"
    return node(
        "fingerprint",
        leaf("service", view.service),
        node("chain", *exceptions, value=chain),
        leaf("message", view.normalized_message, "the stack trace takes precedence")
        if view.normalized_message
        else None,
        *_never_split(view),
        value=FINGERPRINT_VERSION,
    )


def template_fingerprint(view: EventView, first_template: str, current_template: str) -> Fingerprint:
    """Type and mined template. The template the group started with contributes: a template
    widens as values are seen, but the group it names stays the same."""
    short = short_type(view.error_type)
    tree = node(
        "fingerprint",
        leaf("service", view.service),
        leaf("type", short) if short else leaf("type", "(none)", "the event has no exception type"),
        leaf("template", first_template),
        leaf("current-template", current_template, "shown for reading")
        if current_template != first_template
        else None,
        *_never_split(view),
        value=FINGERPRINT_VERSION,
    )
    return Fingerprint("template", hash_tree(tree, FINGERPRINT_VERSION), tree)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _never_split(view: EventView) -> list[Component]:
    out = []
    if view.environment:
        out.append(leaf("environment", view.environment, "environment never splits a group"))
    if view.service_version:
        out.append(leaf("service-version", view.service_version, "versions never split a group"))
    return out


def _why_no_frame_contributes(frames: list[Component]) -> str | None:
    """The reasons none of an exception's frames contributes (None when one does): an ignored
    stack is rendered on one line, so its frames' reasons are said there."""
    if not frames:
        return "no frames"
    if any(frame.effective for frame in frames):
        return None
    reasons = list(dict.fromkeys(frame.hint for frame in frames if frame.hint))
    return "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "") if reasons else None
