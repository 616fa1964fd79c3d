"""An event's identity before the engine places it: its fingerprint, title and registration key.

One of three kinds, by the strongest evidence the event carries:
- an error code: a code fingerprint, registered under `service + code` (`code_key`);
- a stack trace with frames: a trace fingerprint, registered under its hashes (`trace`), with the
  role of each frame (`roles`) and the crash site;
- otherwise its message: the mined template's fingerprint, registered under the template
  (`template_id`).

`CandidateReader` works them out. Parsing a trace and fingerprinting are pure, so both are
memoised (bounded: a full memo is cleared, never evicted piecemeal). It also gives a candidate's
similarity terms, which depend on the same in-app rules as its fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rounds_bot.grouping.candidate_sizes import ReadingKey, candidate_size, reading_size, trace_candidate_size
from rounds_bot.grouping.crash_site import Site, reading_site, site_of
from rounds_bot.grouping.cut_digests import MISSING, CutDigests, CutPlace
from rounds_bot.grouping.error_codes import ErrorCode
from rounds_bot.grouping.exception_chain import short_type
from rounds_bot.grouping.fingerprint import (
    EarlierReading,
    EventView,
    Fingerprint,
    PreviousReading,
    code_fingerprint,
    looked_up_first,
    template_fingerprint,
    title_for,
    trace_fingerprint,
    with_view,
)
from rounds_bot.grouping.frames import collapse_recursion, recursion_before
from rounds_bot.grouping.inapp import EVERY_ADDED_RULE, FrameRole, InAppRules, TraceRoles, readings_before
from rounds_bot.grouping.memo import MB, BoundedMemo, SharingMemo
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.skeletons import render as render_template
from rounds_bot.grouping.skeletons import split_context
from rounds_bot.grouping.stack_overflow import reading_roles
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace, as_read_before
from rounds_bot.grouping.stacktrace.browser import typed_by_event
from rounds_bot.grouping.stacktrace.python_groups import title_parts
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.grouping.terms import document_terms
from rounds_bot.grouping.trace_cut import Cut, cut
from rounds_bot.grouping.trace_memo import TraceMemo
from rounds_bot.models import ErrorEvent

#: entries each memo holds before it is cleared
MEMO_LIMIT = 4096

#: what a trace candidate depends on: digest, service, error type, message, environment, version
_TraceKey = tuple[str, str, str | None, str, str | None, str | None]
#: what it is kept per: runtime, notes, each exception's type, relation and frames, service, and
#: whether earlier versions' hashes are worked out
_ReadingKey = ReadingKey
#: what a code candidate depends on: code and where it was read, service, error type, message,
#: environment, version
_CodeKey = tuple[str, str, str, str | None, str, str | None, str | None]
#: what a template fingerprint depends on: template id and tokens, error type, environment,
#: version, operation target, the trailing clause left out
_TemplateKey = tuple[str, tuple[str, ...], str | None, str | None, str | None, str | None, str]


@dataclass(frozen=True)
class _Reading:
    """What is worked out from a trace's frames (see `_trace_candidate`)."""

    roles: TraceRoles
    site: Site
    #: the fingerprint of the first view it was worked out for (None: no frame)
    fingerprint: Fingerprint | None
    #: each exception's frames with its recursion cycle collapsed (None: no exception starts with one)
    collapsed: tuple[tuple[Frame, ...], ...] | None

    def collapsed_trace(self, trace: ParsedTrace) -> ParsedTrace:
        """What `collapse_recursion` gives `trace`, a trace with these frames."""
        if self.collapsed is None:
            return trace
        exceptions = zip(trace.exceptions, self.collapsed, strict=True)
        return replace(trace, exceptions=tuple(replace(e, frames=frames) for e, frames in exceptions))


@dataclass(frozen=True)
class Candidate:
    """An event's identity before it is placed: its fingerprint and how to register it."""

    fingerprint: Fingerprint
    view: EventView
    title: str
    trace: ParsedTrace | None = None
    roles: TraceRoles | None = None
    #: `module:function` of the innermost app frame (see `crash_site`): where the error was
    #: raised, in the app's own code ("whose code" in an issue)
    crash_site: str | None = None
    #: the crash site with the root cause's (see `crash_site.Site`): what a signature stores
    site: Site | None = None
    template_id: str | None = None
    code_key: str | None = None

    @property
    def site_key(self) -> str | None:
        """The site a signature stores and tier 3 compares (`crash_site.Site.key`)."""
        return self.site.key if self.site is not None else None


class CandidateReader:
    """Candidates of events, over the engine's in-app rules, message shapes and template miner."""

    def __init__(
        self, rules: InAppRules, shapes: ShapeCache, miner: TemplateMiner, previous_versions: bool = True
    ) -> None:
        self._rules = rules
        #: whether signatures of earlier fingerprint versions may be known (their hashes are
        #: only worked out then)
        self.previous_versions = previous_versions
        self._shapes = shapes
        self._miner = miner
        self._traces = TraceMemo()
        #: per trace, service, type, message, environment and version: 4,000 Defects4J traces give 515, 4.6 MB
        #: estimated at 11.9 (at 10 MB the memo is cleared 16 times in them, and they are read 3 times slower)
        self._trace_candidates: SharingMemo[_TraceKey, Candidate | None] = SharingMemo(
            MEMO_LIMIT, 12 * MB, trace_candidate_size
        )
        #: per frames and service: what `_reading` works out (see `_trace_candidate`); far fewer than
        #: candidates (one per distinct stack, whatever the messages)
        self._readings: SharingMemo[_ReadingKey, _Reading] = SharingMemo(MEMO_LIMIT, 4 * MB, reading_size)
        #: per cut text and service: the hashes its reading gives (see `trace_digests`)
        self.cut_digests = CutDigests()
        #: the event whose trace candidate `trace_digests` worked out last, and that candidate: an event it
        #: finds no signature for is assigned next, and its candidate asked for again (`candidate`)
        self._last_worked_out: tuple[ErrorEvent, Candidate | None] | None = None
        self._buckets: BoundedMemo[tuple[str, str | None], str] = BoundedMemo(MEMO_LIMIT, 1 * MB)
        self._template_fingerprints: BoundedMemo[_TemplateKey, Fingerprint] = BoundedMemo(
            MEMO_LIMIT, 4 * MB, candidate_size
        )
        self._code_candidates: BoundedMemo[_CodeKey, Candidate] = BoundedMemo(
            MEMO_LIMIT, 4 * MB, candidate_size
        )

    def candidate(self, event: ErrorEvent, code: ErrorCode | None) -> Candidate:
        service = event.service or "unknown"
        normalized, shape = self._shapes.lookup(event.message)
        if code is not None:
            return self._code_candidate(event, normalized, code)
        last = self._last_worked_out
        if last is not None and last[0] is event:  # (the event is held there: no other can take its id)
            candidate = last[1]
        else:
            candidate = self._trace_candidate_of(event, normalized) if event.stacktrace else None
        if candidate is not None:
            return candidate
        match = self._miner.match(self.bucket(service, event.error_type), shape.skeleton)
        return self.template_candidate(event, normalized, match.template_id)

    def trace_digests(self, event: ErrorEvent) -> tuple[str, ...] | None:
        """The hashes the trace candidate of an event with a stack trace and no error code is looked up by
        (`Fingerprint.lookup_keys`), when its trace reads with its message cut out (`trace_cut`): kept per
        cut text and service (`cut_digests`), so a repeat of a trace is neither parsed nor are its frames
        read. They are the reading's: `with_view` gives the candidate the same hashes whatever its message,
        values, environment and version. None otherwise (the candidate then tells)."""
        place = self.trace_place(event)
        return place.digests if place is not None else None

    def trace_place(self, event: ErrorEvent) -> CutPlace | None:
        """`trace_digests` with how many of them are earlier versions' (`CutPlace.earlier`): the kept entry
        itself, None when the event's trace does not read with its message cut out."""
        message = event.message
        found = cut(event.stacktrace or "", message) if message else None
        if found is None:
            return None
        service = event.service or "unknown"
        place = self.cut_digests.get(found, service, self.previous_versions)
        if place is not MISSING:
            return place if place is not None and found.agrees(place.runtime, place.votes) else None
        reading = self._traces.cut_reading(found)
        if reading is None:
            self.cut_digests.put(found, service, self.previous_versions, None)
            return None
        runtime, votes = reading
        if not found.agrees(runtime, votes):
            return (
                None  # this occurrence's trace is read whole: its candidate tells nothing of the cut text's
            )
        # The occurrence reads as the cut text does, so its candidate's hashes are the cut text's (the one
        # its assignment builds next, kept by the memos below).
        candidate = self._trace_candidate_of(event, self._shapes.lookup(message)[0], found)
        self._last_worked_out = (event, candidate)
        if candidate is None:
            place = CutPlace(runtime, votes, None)
        else:
            fingerprint = candidate.fingerprint
            digests = tuple(d for _, d in fingerprint.lookup_keys())
            place = CutPlace(runtime, votes, digests, len(fingerprint.legacy_hashes))
        self.cut_digests.put(found, service, self.previous_versions, place)
        return place

    def _trace_candidate_of(
        self, event: ErrorEvent, normalized: str, found: Cut | None = None
    ) -> Candidate | None:
        """The candidate of an event's stack trace, or None when the trace gives none (it is then placed by
        its message); `found` is the event's trace with its message cut out, when the caller has it."""
        parsed = self._traces.parsed(event.stacktrace or "", event.message, normalized, found)
        if parsed is None:
            return None
        key = (
            parsed.key,
            event.service or "unknown",
            event.error_type,
            normalized,
            event.environment,
            event.service_version,
        )
        candidate = self._trace_candidates.get(key)
        if candidate is None:
            candidate = self._trace_candidates.put(
                key,
                self._trace_candidate(
                    event, normalized, typed_by_event(parsed.trace, event.error_type), parsed.values
                ),
            )
        return candidate

    def _code_candidate(self, event: ErrorEvent, normalized: str, code: ErrorCode) -> Candidate:
        """The candidate of an error code: the same object for every event that gives the same view and
        code (so its explanation is rendered once)."""
        key = (
            code.code,
            code.where,
            event.service,
            event.error_type,
            normalized,
            event.environment,
            event.service_version,
        )
        candidate = self._code_candidates.get(key)
        if candidate is None:
            view = self._view(event, normalized)
            candidate = Candidate(
                code_fingerprint(view, code.code, code.where),
                view,
                title_for(event.error_type, normalized),
                code_key=f"{view.service}\x1f{code.code}",
            )
            self._code_candidates.put(key, candidate)
        return candidate

    def template_candidate(
        self,
        event: ErrorEvent,
        normalized: str,
        template_id: str,
        target: str | None = None,
        *,
        earlier_reading: bool = False,
    ) -> Candidate:
        """The candidate of a message's template; a failed span's operation `target` (see
        `operations`) is part of its fingerprint and title. Its tree shows the trailing clause of
        redacted values the template left out, unless the template is one an earlier version mined
        reading the message with it (`earlier_reading`)."""
        view = self._view(event, normalized)
        tokens = self._miner.template(template_id)
        context = "" if earlier_reading else split_context(normalized)[1]
        key = (
            template_id,
            tokens,
            event.error_type,
            event.environment,
            event.service_version,
            target,
            context,
        )
        fingerprint = self._template_fingerprints.get(key)
        if fingerprint is None:
            first = render_template(self._miner.first_template(template_id))
            fingerprint = template_fingerprint(view, first, render_template(tokens), target, context)
            self._template_fingerprints.put(key, fingerprint)
        title = title_for(event.error_type, normalized if target is None else f"{normalized} ({target})")
        return Candidate(fingerprint, view, title, template_id=template_id)

    def bucket(self, service: str, error_type: str | None) -> str:
        """The miner's bucket of a service and error type."""
        key = (service, error_type)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets.put(key, f"{service}\x1f{short_type(error_type) or ''}")
        return bucket

    def terms(self, candidate: Candidate) -> list[str]:
        """The candidate's document for the similarity tier: per exception, its app frames, else
        its test frames, else all of them."""
        trace, roles = candidate.trace, candidate.roles
        chosen = None
        if trace is not None and roles is not None:
            chosen = [_preferred(exception_roles) for exception_roles in roles.frames]
        error_type = short_type(candidate.view.error_type)
        return document_terms(error_type, candidate.view.normalized_message, trace, chosen)

    def _trace_candidate(
        self, event: ErrorEvent, normalized: str, trace: ParsedTrace, values: list[str]
    ) -> Candidate | None:
        error_type = event.error_type or trace.exceptions[0].type
        service = event.service or "unknown"
        view = EventView(
            service, error_type, normalized or values[0], event.environment, event.service_version
        )
        # What is worked out from the frames alone is kept per frames and service (the only part of
        # the view a hash reads, see `fingerprint.with_view`); the values never reach it.
        key = self._reading_key(trace, service)
        reading = self._readings.get(key)
        if reading is None:
            collapsed = collapse_recursion(trace, rules=self._rules)
            reading = self._readings.put(key, self._reading(view, trace, collapsed, values))
            fingerprint = reading.fingerprint  # worked out for this very view
        else:
            collapsed = reading.collapsed_trace(trace)
            first = reading.fingerprint
            fingerprint = with_view(first, view, collapsed, values) if first is not None else None
        if fingerprint is None:
            return None
        return Candidate(
            fingerprint,
            view,
            title_for(*title_parts(trace, error_type, view.normalized_message, values)),
            trace=collapsed,
            roles=reading.roles,
            crash_site=reading.site.crash_site,
            site=reading.site,
        )

    def _reading_key(self, trace: ParsedTrace, service: str) -> _ReadingKey:
        return (
            trace.runtime,
            trace.notes,
            tuple((e.type, e.relation, e.frames) for e in trace.exceptions),
            service,
            self.previous_versions,
        )

    def _reading(
        self, view: EventView, trace: ParsedTrace, collapsed: ParsedTrace, values: list[str]
    ) -> _Reading:
        """The roles, the site, the fingerprint and the collapsed frames of a trace."""
        roles = reading_roles(trace, collapsed, self._rules)
        before = readings_before(roles)
        same = collapsed is trace and not roles.cut and not before
        previous = PreviousReading(
            trace,
            roles if same else self._rules.roles(trace, cut_traces=False, without_rules=EVERY_ADDED_RULE),
        )
        site = reading_site(trace, collapsed, roles, self._rules)
        earlier = []
        for lacked in before:  # found by the hashes this version gave before its added library rules
            earlier_roles = reading_roles(trace, collapsed, self._rules, lacked)
            earlier.append(EarlierReading(earlier_roles, site_of(collapsed, earlier_roles)))
        fingerprint = trace_fingerprint(
            view,
            collapsed,
            roles,
            values,
            site,
            previous,
            with_previous_hashes=self.previous_versions,
            earlier=tuple(earlier),
        )
        if collapsed is not trace and fingerprint is not None:
            as_collapsed_before = recursion_before(trace, collapsed)
            if as_collapsed_before != collapsed:
                # read otherwise by releases before (`frames.recursion_before`): their signatures keep it
                found_before = self._reading(view, trace, as_collapsed_before, values).fingerprint
                fingerprint = looked_up_first(fingerprint, found_before)
        trace_before = as_read_before(trace)
        if trace_before is not None and fingerprint is not None:
            # the same text as releases before read it (.NET's unhandled-exception prefix, frames in a
            # syntax they did not read): the signature they made from it keeps receiving it
            collapsed_before = collapse_recursion(trace_before, rotated=False)
            found_before = self._reading(view, trace_before, collapsed_before, values[1:] or [""]).fingerprint
            fingerprint = looked_up_first(fingerprint, found_before)
        frames = None if collapsed is trace else tuple(e.frames for e in collapsed.exceptions)
        return _Reading(roles, site, fingerprint, frames)

    def _view(self, event: ErrorEvent, normalized: str) -> EventView:
        return EventView(
            service=event.service or "unknown",
            error_type=event.error_type,
            normalized_message=normalized,
            environment=event.environment,
            service_version=event.service_version,
        )


def _preferred(roles: tuple[FrameRole, ...]) -> list[bool]:
    for wanted in ("app", "test"):
        flags = [role.role == wanted for role in roles]
        if any(flags):
            return flags
    return [True] * len(roles)
