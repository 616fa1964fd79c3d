"""The versioned fingerprint of an event: a component tree and the hash of its contributing part.

Three kinds, in order of precedence (Sentry's: custom fingerprint, stack trace, message):
- `error_code`: a standardised error code decides alone;
- `app` / `system`: the exception chain's types and frames (in-app frames only when there are
  any, else all frames); the message is shown but never hashed;
- `template`: the exception type and the mined template of the message.
The service always contributes; environment and service version never do. The version string
is part of every hash, so a new algorithm can never silently match (or re-split) old groups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rounds_bot.grouping.components import Component, hash_tree, leaf, node
from rounds_bot.grouping.frames import frame_components, has_in_app_frame
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import ParsedTrace

FINGERPRINT_VERSION = "rounds-fp:1"
MAX_TITLE = 120
Variant = Literal["error_code", "app", "system", "template"]
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
    view: EventView, trace: ParsedTrace, rules: InAppRules, normalized_values: list[str]
) -> Fingerprint | None:
    """The stack-trace fingerprint, or None when the trace has no frame at all."""
    if trace.frame_count == 0:
        return None
    primary = [e for e in trace.exceptions if e.relation != "context" or trace.runtime != "go"]
    app = any(has_in_app_frame(e.frames, trace.runtime, rules) for e in primary)
    tree = _trace_tree(view, trace, rules, normalized_values, app_only=app)
    digest = hash_tree(tree, FINGERPRINT_VERSION)
    if not app:
        return Fingerprint("system", digest, tree)
    system = _trace_tree(view, trace, rules, normalized_values, app_only=False)
    return Fingerprint("app", digest, tree, other_hashes=(hash_tree(system, FINGERPRINT_VERSION),))


def _trace_tree(
    view: EventView, trace: ParsedTrace, rules: InAppRules, values: list[str], *, app_only: bool
) -> Component:
    exceptions: list[Component] = []
    for index, exception in enumerate(trace.exceptions):
        other_goroutine = trace.runtime == "go" and exception.relation == "context"
        frames = frame_components(exception.frames, trace.runtime, rules, app_only=app_only)
        stack = node(
            "stacktrace",
            *frames,
            leaf("line-numbers", "ignored", "line numbers never contribute") if frames else None,
            value=f"{trace.runtime}, {_count(len(exception.frames), 'frame')}",
            hint=None if frames else "no frames",
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
    tree = node(
        "fingerprint",
        leaf("service", view.service),
        node("chain", *exceptions, value=f"{'in-app' if app_only else 'all'} frames"),
        leaf("message", view.normalized_message, "the stack trace takes precedence")
        if view.normalized_message
        else None,
        *_never_split(view),
        value=FINGERPRINT_VERSION,
    )
    return tree


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
