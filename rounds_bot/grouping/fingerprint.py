"""The versioned fingerprint of an event: a component tree and the hash of its contributing part.

Three kinds, in order of precedence (Sentry's: custom fingerprint, stack trace, message):
- `error_code`: a standardised error code decides alone;
- `app` / `test` / `system`: the exception chain's types and frames: the app's frames when
  there are any, else its test code's, else all frames (see `inapp`); the message is shown but
  never hashed. A trace fingerprint also carries the `system` hash (all frames), which an event
  matches when its app frames are the same code reached through other library frames;
- `template`: the exception type and the mined template of the message.
The service always contributes; environment and service version never do. The version string
is part of every hash (`HASH_VERSION`: the version that last changed what is hashed), so a new
algorithm can never silently match (or re-split) old groups.

A trace fingerprint also carries the `site` hash (`site_hash`): errors that agree on it are one problem
whichever callers reached the site, so it is registered like the others. The exception chain of a trace
fingerprint's tree (types, values, stacks) is built by `exception_chain`.

Version history: `rounds-fp:1` took every frame of an unknown package for the app's and test
code for application code. `rounds-fp:2` reads whose code a frame is per trace (`inapp`). Its
all-frames tree is the one `rounds-fp:1` hashed, so a trace also gives the `rounds-fp:1` system
hash (`legacy_hashes`): signatures created by `rounds-fp:1` keep receiving their traces.
`rounds-fp:3` names a file by its module path instead of its base name, collapses the recursion
cycle an error was raised in, does not apply the JVM/.NET owner rule to a cut trace, and adds the
site hash. A trace also gives the hashes `rounds-fp:2` gave it (its app and system hashes, read
the `rounds-fp:2` way), so a signature created before keeps receiving its events: old groups
never re-split. Since a frame with neither file nor module became the runtime's builtin rather than
the app's, and later a frame of a browser extension's URL the extension's (`inapp.ADDED_LIBRARY_RULES`),
a trace with such a frame also gives, to look up, the app and site hashes each release before gave it
(`EarlierReading`): their signatures keep receiving their events.
`rounds-fp:4` leaves a trailing clause that only carries redacted values out of a message's template
(`skeletons.split_context`). Nothing it hashes is read otherwise, so its hashes are made with the
`rounds-fp:3` string (`HASH_VERSION`), a trace finds the signatures `rounds-fp:3` made as it did, a message is
read the `rounds-fp:3` way too, with the clause, to find the templates it mined (`earlier_readings`).
`rounds-fp:5` masks more of a message (dates with a month's name, 12-hour times, PostgreSQL's row values:
`normalize.ADDED_IN_FP5`) and reads the noun after a count in the singular
(`skeletons.singular_after_counts`); nothing it hashes is read otherwise either, and a message is also read
the `rounds-fp:4` way to find the templates `rounds-fp:3` and `rounds-fp:4` mined. `rounds-fp:6` masks the
literals a runtime prints (`mask_literals`), `rounds-fp:7` keeps the names a runtime's message gives code
(`mask_names`), `rounds-fp:8` more of them and a failure's numbers (`mask_code_names`, `mask_numbers`); a
message is also read the way of each version since `rounds-fp:4`, the newest first.
Since a bundle's content hash, minified names and a `blob:` URL's UUID are left out of a frame
(`bundles`), a trace with one also gives, to look up, the frames hashes it gave before (every other
frame reads as before, so the version string stays).
Since .NET's exception is read after the runtime's `Unhandled exception. ` prefix, such a trace also gives,
to look up first, every hash the text was looked up by before (`looked_up_first`); so does a trace behind a
framework's wrapper, the site hash it gave before (`site_hash`). Every other text reads as before.
A V8 stack ending in a frame line's first letters (`    at`, cut by a length limit) reads without them (a
cause named `at` split one error); a signature made from such a text before is not looked up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from rounds_bot.grouping.components import Component, hash_tree, leaf, node
from rounds_bot.grouping.crash_site import Site
from rounds_bot.grouping.exception_chain import (
    VALUE_HINT,
    Contributing,
    chain_tree,
    contributing_role,
    short_type,
    shown_type,
    with_value,
)
from rounds_bot.grouping.frames import needs_legacy_keys, reads_a_bundle, recursion_hints
from rounds_bot.grouping.inapp import TraceRoles
from rounds_bot.grouping.site_hash import site_tree, unwrapped
from rounds_bot.grouping.stacktrace import ParsedTrace

FINGERPRINT_VERSION = "rounds-fp:8"
#: the versions before: fewer names kept; names masked; no literals; `rounds-fp:3` but for the trailing clause
MESSAGE_VERSION_SEVENTH, MESSAGE_VERSION_SIXTH = "rounds-fp:7", "rounds-fp:6"
MESSAGE_VERSION_FIFTH, MESSAGE_VERSION_BEFORE = "rounds-fp:5", "rounds-fp:4"
#: the version string every hash is made with: the last version that changed what a hash reads
HASH_VERSION = "rounds-fp:3"
#: the version before, whose app and system hashes a trace still gives, to find its signatures
PREVIOUS_VERSION = "rounds-fp:2"
#: earlier versions whose all-frames hash (read the `rounds-fp:2` way) a trace still gives
LEGACY_VERSIONS = ("rounds-fp:1",)
MAX_TITLE = 120
CONTEXT_HINT = "a trailing clause that only carries redacted values: context, not the log statement"
Variant = Literal["error_code", "app", "test", "system", "template"]


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
    #: what each of `other_hashes` identifies (`system`, `site`), for "why grouped"
    other_names: tuple[str, ...] = ()

    def lookup_keys(self) -> list[tuple[str, str]]:
        """Every hash the event is looked up by, in order, with the rule it stands for: first
        what earlier versions gave the same frames (a signature they made keeps receiving its
        events; they are never registered, so only such signatures have them), then the
        frames, then the site (other callers of the same problem)."""
        return [
            *(("previous", digest) for digest in self.legacy_hashes),
            (self.variant, self.hash),
            *zip(self.other_names, self.other_hashes, strict=True),
        ]


def title_for(error_type: str | None, message: str) -> str:
    short = shown_type(error_type)
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
    return Fingerprint("error_code", hash_tree(tree, HASH_VERSION), tree)


@dataclass(frozen=True)
class PreviousReading:
    """How `rounds-fp:2` read a trace: before recursion cycles were collapsed and with the owner
    rule applied to cut traces (`candidates` gives the same objects when nothing differs)."""

    trace: ParsedTrace
    roles: TraceRoles


@dataclass(frozen=True)
class EarlierReading:
    """How a release of this version read a trace before a library rule it gained (builtins, browser
    extensions: `inapp.ADDED_LIBRARY_RULES`): the frames it names taken for the app's, and that site."""

    roles: TraceRoles
    site: Site


def trace_fingerprint(
    view: EventView,
    trace: ParsedTrace,
    roles: TraceRoles,
    normalized_values: list[str],
    site: Site | None = None,
    previous: PreviousReading | None = None,
    *,
    with_previous_hashes: bool = True,
    earlier: tuple[EarlierReading, ...] = (),
) -> Fingerprint | None:
    """The stack-trace fingerprint, or None when the trace has no frame at all. The hashes of
    earlier versions are left out when no signature of theirs can be known
    (`with_previous_hashes=False`): they are only ever looked up."""
    if trace.frame_count == 0:
        return None
    only = contributing_role(trace, roles)
    recursion = [recursion_hints(e.frames) for e in trace.exceptions]
    collapsed = _collapsed_counts(trace, previous)
    system = _fingerprint_node(
        view, chain_tree(trace, roles, normalized_values, recursion, only=None, collapsed=collapsed)
    )
    system_hash = hash_tree(system, HASH_VERSION)
    tree = (
        system
        if only is None
        else _fingerprint_node(
            view, chain_tree(trace, roles, normalized_values, recursion, only=only, collapsed=collapsed)
        )
    )
    others: tuple[str, ...] = () if only is None else (system_hash,)
    names: tuple[str, ...] = () if only is None else ("system",)
    at_site = site_tree(view.service, trace, site, roles)
    if at_site is not None:
        others, names = (*others, hash_tree(at_site, HASH_VERSION)), (*names, "site")
    legacy = (
        _previous_hashes(view, trace, roles, normalized_values, previous, (tree, system, only))
        if with_previous_hashes
        else ()
    )
    own = {hash_tree(tree, HASH_VERSION), *others}
    if unwrapped(trace, roles):  # the site hash releases before gave it, with the framework's wrapper
        wrapped = site_tree(view.service, trace, site)
        if wrapped is not None and (digest := hash_tree(wrapped, HASH_VERSION)) not in own:
            legacy = (*legacy, digest)
    before = _earlier_hashes(view, trace, normalized_values, recursion, collapsed, earlier)
    legacy = (*(digest for digest in before if digest not in own), *legacy)
    if any(reads_a_bundle(f) for e in trace.exceptions for f in e.frames):
        readings = (roles, *(reading.roles for reading in earlier))
        unbundled = _hashes_before_bundles(view, trace, readings, normalized_values, recursion, collapsed)
        legacy = (*(digest for digest in unbundled if digest not in own), *legacy)
    return Fingerprint(
        only or "system",
        hash_tree(tree, HASH_VERSION),
        tree,
        other_hashes=others,
        legacy_hashes=legacy,
        other_names=names,
    )


def looked_up_first(fingerprint: Fingerprint, before: Fingerprint | None) -> Fingerprint:
    """`fingerprint` also looked up, first, by every hash `before`, the fingerprint the same text had when
    releases of this version read it otherwise (`stacktrace.as_read_before`), is looked up by: a
    signature made from that reading keeps receiving the text's events (none of those hashes is
    registered; a signature found by one is registered under this reading's, `found_earlier`)."""
    if before is None:
        return fingerprint
    own = {fingerprint.hash, *fingerprint.other_hashes}
    earlier = (digest for _, digest in before.lookup_keys() if digest not in own)
    return replace(fingerprint, legacy_hashes=tuple(dict.fromkeys((*earlier, *fingerprint.legacy_hashes))))


def with_view(
    fingerprint: Fingerprint, view: EventView, trace: ParsedTrace, normalized_values: list[str]
) -> Fingerprint:
    """`trace_fingerprint` of the same trace, roles and service seen with another message, values,
    environment or version: the same hashes with its own tree. The hashes cannot differ: what
    differs enters only leaves built with a hint (`message`, `value`, `_never_split`), which never
    contribute, so they are left out of every hash input (`components.hash_tree`); the service is
    part of what the caller keys a fingerprint on. So the tree is `fingerprint`'s with those leaves
    built for this view and values as `chain_tree` builds them, around the same stacks. A test
    compares both on the labelled traces."""
    tree = fingerprint.tree
    chain = next(child for child in tree.children if child.name == "chain")
    exceptions = tuple(
        with_value(
            component,
            normalized_values[index] if index < len(normalized_values) else trace.exceptions[index].value,
        )
        for index, component in enumerate(chain.children)
    )
    if any(new is not old for new, old in zip(exceptions, chain.children, strict=True)):
        chain = Component(chain.name, chain.value, chain.contributes, chain.hint, exceptions)
    return replace(fingerprint, tree=_fingerprint_node(view, chain))


def _earlier_hashes(
    view: EventView,
    trace: ParsedTrace,
    values: list[str],
    recursion: list[list[str | None]],
    collapsed: list[int],
    earlier: tuple[EarlierReading, ...],
) -> dict[str, None]:
    """The frames and site hashes each earlier release of this version gave a trace, newest first (the
    all-frames hash does not depend on whose code a frame is)."""
    hashes: dict[str, None] = {}
    for reading in earlier:
        only = contributing_role(trace, reading.roles)
        if only is not None:
            chain = chain_tree(trace, reading.roles, values, recursion, only=only, collapsed=collapsed)
            hashes[hash_tree(_fingerprint_node(view, chain), HASH_VERSION)] = None
        at_site = site_tree(view.service, trace, reading.site)
        if at_site is not None:
            hashes[hash_tree(at_site, HASH_VERSION)] = None
    return hashes


def _hashes_before_bundles(
    view: EventView,
    trace: ParsedTrace,
    readings: tuple[TraceRoles, ...],
    values: list[str],
    recursion: list[list[str | None]],
    collapsed: list[int],
) -> dict[str, None]:
    """The frames hashes (the contributing role's, all frames') this version gave a trace, read
    with each of `readings`, before bundles' hashes, minified names and blobs were left out."""
    hashes: dict[str, None] = {}
    for roles in readings:
        only = contributing_role(trace, roles)
        for role in (only, None) if only is not None else (None,):
            chain = chain_tree(
                trace, roles, values, recursion, only=role, collapsed=collapsed, before_bundles=True
            )
            hashes[hash_tree(_fingerprint_node(view, chain), HASH_VERSION)] = None
    return hashes


def _collapsed_counts(trace: ParsedTrace, previous: PreviousReading | None) -> list[int]:
    """Per exception, how many innermost frames collapsing a recursion cycle left out."""
    if previous is None or previous.trace is trace:
        return [0] * len(trace.exceptions)
    return [
        len(before.frames) - len(after.frames)
        for before, after in zip(previous.trace.exceptions, trace.exceptions, strict=True)
    ]


def _previous_hashes(
    view: EventView,
    trace: ParsedTrace,
    roles: TraceRoles,
    values: list[str],
    previous: PreviousReading | None,
    current: tuple[Component, Component, Contributing | None],
) -> tuple[str, ...]:
    """The hashes `rounds-fp:2` gave the trace (app, system) and `rounds-fp:1`'s system hash.
    The trees are only built again when `rounds-fp:2` read the trace otherwise; when it did not,
    the current trees hash the same with the older version string."""
    old_trace, old_roles = (previous.trace, previous.roles) if previous is not None else (trace, roles)
    same = (
        old_trace is trace
        and old_roles == roles
        and not any(needs_legacy_keys(f) for e in trace.exceptions for f in e.frames)
    )
    if same:
        tree, system, only = current
    else:
        only = contributing_role(old_trace, old_roles)
        recursion = [recursion_hints(e.frames) for e in old_trace.exceptions]
        system = _fingerprint_node(
            view, chain_tree(old_trace, old_roles, values, recursion, only=None, legacy=True)
        )
        tree = (
            system
            if only is None
            else _fingerprint_node(
                view, chain_tree(old_trace, old_roles, values, recursion, only=only, legacy=True)
            )
        )
    hashes = [hash_tree(tree, PREVIOUS_VERSION)]
    if only is not None:
        hashes.append(hash_tree(system, PREVIOUS_VERSION))
    hashes.extend(hash_tree(system, version) for version in LEGACY_VERSIONS)
    return tuple(hashes)


def _fingerprint_node(view: EventView, chain: Component) -> Component:
    """A trace fingerprint's tree over its chain: what it shows of the view beside."""
    return node(
        "fingerprint",
        leaf("service", view.service),
        chain,
        leaf("message", view.normalized_message, VALUE_HINT) if view.normalized_message else None,
        *_never_split(view),
        value=FINGERPRINT_VERSION,
    )


def template_fingerprint(
    view: EventView,
    first_template: str,
    current_template: str,
    target: str | None = None,
    context: str = "",
) -> Fingerprint:
    """Type and mined template (and a failed span's operation target). The template the group
    started with contributes: a template widens as values are seen, but the group it names stays
    the same. `context` is the trailing clause of redacted values the template left out
    (`skeletons.split_context`), shown with why."""
    short = short_type(view.error_type)
    tree = node(
        "fingerprint",
        leaf("service", view.service),
        leaf("operation", target) if target else None,
        leaf("type", short) if short else leaf("type", "(none)", "the event has no exception type"),
        leaf("template", first_template),
        leaf("current-template", current_template, "shown for reading")
        if current_template != first_template
        else None,
        leaf("context", context, CONTEXT_HINT) if context else None,
        *_never_split(view),
        value=FINGERPRINT_VERSION,
    )
    return Fingerprint("template", hash_tree(tree, HASH_VERSION), tree)


def _never_split(view: EventView) -> list[Component]:
    out = []
    if view.environment:
        out.append(leaf("environment", view.environment, "environment never splits a group"))
    if view.service_version:
        out.append(leaf("service-version", view.service_version, "versions never split a group"))
    return out
