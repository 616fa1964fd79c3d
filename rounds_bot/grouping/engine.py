"""The grouping engine: one event in, the signature it belongs to out.

Tiers, first that answers wins:
1. `error_code`  - same service and standardised error code;
2. `fingerprint` - a known fingerprint hash of a stack trace (an earlier version's, its frames',
   then its crash site's: `Fingerprint.lookup_keys`) or a known mined template (message);
3. `similarity`  - TF-IDF cosine to a known signature of the same service at or above
   `merge_threshold`, for stack traces only and never across crash sites (`crash_site`);
   between `related_threshold` and it, only a "possibly related" link;
4. `new`         - a new signature, whose id is derived from its first event's fingerprint.

`assign` reads the tiers in that order; a message without a stack trace takes the message path
(`_assign_message`), the same tiers for a template. Each assignment says which rule decided
(`RULES`). Answers already given are kept by a separate caching layer (`routes.Answers`, whose
docstring lists every memo of the engine and why none can go stale).

Everything the engine knows is held per signature (`SignatureState`), so an engine re-loaded from
saved states groups later events exactly as the one that saved them, whether it is given them
all up front (`known`) or looks up the ones each event needs (`lookup`, see `known.py`: what a
round does, so a quiet round costs the same with a thousand signatures known or a million).
Nothing depends on wall time, randomness or dictionary order. The keys of tiers 1 and 2 nest (a
trace's frames decide its crash site), so what they group does not depend on arrival order; a
test shuffles the labelled corpus and compares the partitions.

This module reads the tiers in order; tier 3, new signatures and the assignments that say which
rule decided are `placing`'s (mixed in), finding the signatures earlier versions made
`earlier_readings`' (mixed in over it: such a signature is registered under this version's hashes
after each batch, `found_earlier`), the counting pass over a batch's log lines `counting`'s
(mixed in), placing an error log by the template its logging library exported `logged_templates`' (mixed in
over both), the known signatures and the keys that lead to them are `registry`'s, an event's
identity (its fingerprint and how it registers) comes from `candidates`, the explanation of each
assignment from `explanation`. A round, which keeps one assignment per signature, places its events
with `place_each`: an event of a signature it keeps already, known by its error code, its trace's
hashes or its message's route, gets no assignment of its own (`placement`); and places them again
when `place_again` says so (a deploy within the batch that first found an earlier reading's signature).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Sequence

from rounds_bot.grouping.candidates import CandidateReader
from rounds_bot.grouping.error_codes import ErrorCodeReader
from rounds_bot.grouping.explanation import Explainer
from rounds_bot.grouping.fingerprint import FINGERPRINT_VERSION
from rounds_bot.grouping.found_earlier import FoundEarlier
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.known import KnownSignatures
from rounds_bot.grouping.logged_templates import LoggedTemplates
from rounds_bot.grouping.logged_traces import message_read_before
from rounds_bot.grouping.memo import forget_shared, shared_while_alive
from rounds_bot.grouping.operations import operation_target
from rounds_bot.grouping.placement import KeptPlacements, MessageFacts, Placement, event_of_message
from rounds_bot.grouping.registry import Registry
from rounds_bot.grouping.released import EngineReleased, let_go
from rounds_bot.grouping.routes import Answers, answer_key
from rounds_bot.grouping.shapes import ShapeCache, ShapeInfo, read_otherwise_before
from rounds_bot.grouping.similarity import SimilarityIndex
from rounds_bot.grouping.state import SignatureState
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.settings.grouping import GroupingConfig

__all__ = ["EngineReleased", "GroupingConfig", "GroupingEngine", "SignatureState"]

#: what `assign` settles: nothing, so every answer is an assignment
_NONE_SETTLED: frozenset[str] = frozenset()


class GroupingEngine(LoggedTemplates):
    """Assigns events to signatures, tier by tier; `state` gives what a signature saves."""

    def __init__(
        self,
        config: GroupingConfig | None = None,
        known: Iterable[SignatureState] = (),
        lookup: KnownSignatures | None = None,
    ) -> None:
        self.config = config or GroupingConfig()
        # the memos engines share are cleared once no engine is alive (a round lets its engine go early)
        shared_while_alive(self)
        self._rules = InAppRules(tuple(self.config.in_app_include), tuple(self.config.in_app_exclude))
        self._codes = ErrorCodeReader(self.config.error_code_attributes, self.config.error_code_pattern)
        self._message_may_hold_code = self._codes.message_may_hold_code
        self._lookup = lookup
        #: the states given up front, for `place_again`
        self._given = sorted(known, key=lambda s: s.seq)
        self._start()

    def _start(self) -> None:
        """What the engine knows and has answered: nothing but the signatures given or looked up."""
        self._miner = TemplateMiner()
        self._index = SimilarityIndex()
        lookup, states = self._lookup, self._given
        self._known_signatures = Registry(self._miner, self._index, lookup)
        self._signatures = self._known_signatures.signatures
        self._by_template = self._known_signatures.by_template
        self._shapes = ShapeCache(code_test=self._codes.shape_test())
        self._candidates = CandidateReader(self._rules, self._shapes, self._miner, previous_versions=False)
        self._explainer = Explainer(self.config)
        #: the caching layer: answers already given (see `routes`)
        self._answers = Answers()
        #: the placements without an assignment given so far
        self._placed = KeptPlacements()
        #: signatures found by an earlier reading, registered under this one's hashes after each batch
        self._found_earlier = FoundEarlier(self._known_signatures)
        #: whether signatures of an earlier fingerprint version may be known (given, or in a database
        #: that may hold any): only then is a message also read the way that version read it, and a
        #: trace's hashes of that version worked out
        self._previous_possible = (lookup is not None and not lookup.holds_nothing()) or any(
            s.fingerprint_version != FINGERPRINT_VERSION for s in states
        )
        self._candidates.previous_versions = self._previous_possible
        self._known_signatures.load_all(states)

    # --- public interface ---------------------------------------------------------------------

    def assign(self, event: ErrorEvent) -> Assignment:
        """The event's signature: the tiers in order (see the module docstring). A message with
        no stack trace and no error code takes the message path, the same tiers for a template."""
        answer = self._assign(event, _NONE_SETTLED)
        assert not isinstance(answer, str)  # (with no signature settled, every answer is an assignment)
        self._register_found_earlier()  # (a batch of one)
        return answer

    def _assign(self, event: ErrorEvent, settled: Container[str]) -> Assignment | str:
        """`assign`, for a caller that keeps one assignment per signature (`place_each`): a message whose
        route is learned now (`_assign_message`) to a signature in `settled` gets that signature alone."""
        # The common case first: a message with no stack trace and no error code anywhere.
        if event.stacktrace is None and not event.error_code and not event.attributes:
            normalized, shape = self._shapes.lookup(event.message)
            if not shape.may_hold_code or not self._message_may_hold_code(event.message):
                return self._assign_message(
                    event,
                    event.message,
                    event.service,
                    event.error_type,
                    event.environment,
                    event.service_version,
                    normalized,
                    shape,
                    settled=settled,
                )
        stacktrace = event.stacktrace
        code = self._codes.read(event)
        if code is None and not (stacktrace and not stacktrace.isspace()):
            if (logged := self._by_logged_template(event)) is not None:
                return logged  # its logging library's template, not its body (`logged_templates`)
            found_before = self._found_by_body_before(event)
            if found_before is not None:
                return found_before
            return self._assign_message(
                event,
                event.message,
                event.service,
                event.error_type,
                event.environment,
                event.service_version,
                *self._shapes.lookup(event.message),
                target=operation_target(event.attributes) if event.kind == "span_error" else None,
                settled=settled,
            )
        candidate = self._candidates.candidate(event, code)
        # tier 1: an error code
        if candidate.code_key is not None:
            known = self._known_signatures.owner_of_code(candidate.code_key)
            if known is not None:
                return self._assignment(candidate, known, "error_code")
            return self._create(candidate, neighbours=[])
        answered = self._answers.trace_answer(candidate)
        if answered is not None:
            return answered
        # tier 2: a fingerprint hash (an earlier version's, the frames', the crash site's)
        known = self._known(candidate)
        if known is not None:
            return self._known_answer(event, candidate, known)
        previous = self._previous_message_group(event, candidate) or self._recorded_stack_group(event)
        if previous is not None:
            return previous
        # tier 3: similarity, else a new signature
        return self._place_by_similarity(candidate)

    def assign_all(self, events: Iterable[ErrorEvent]) -> list[Assignment]:
        """`assign` for a round's events taken as one batch: which words of the log lines vary
        across a statement is learned from all of them first (`variability`), so the partition
        does not depend on the order the events arrive in. A plain log line (no stack trace,
        error code or attributes) is shaped once, for both."""
        batch = events if isinstance(events, Sequence) else list(events)
        assigned = list(self.assign_each(batch))
        while self.place_again():
            assigned = list(self.assign_each(batch))
        return assigned

    def assign_each(self, events: Iterable[ErrorEvent]) -> Iterator[Assignment]:
        """`assign_all`, one assignment at a time: a sequence (a round's events, which may be on disk) is
        read twice, never held whole; the assignments are not held either."""
        batch = events if isinstance(events, Sequence) else list(events)
        self._expect(batch)
        self._found_earlier.batch_starts()
        for event in batch:
            answer = self._assign(event, _NONE_SETTLED)
            assert not isinstance(answer, str)  # (with no signature settled, every answer is an assignment)
            yield answer
        self._register_found_earlier(batch=True)

    def place_each(
        self,
        events: Iterable[ErrorEvent],
        settled: Container[str],
        facts: Iterable[MessageFacts] | None = None,
    ) -> Iterator[Placement]:
        """`assign_each` for a caller that keeps one assignment per signature (a round's tally): an event
        whose signature is in `settled` when it is placed (asked then, so the caller may add to it between
        events) gets its signature and tier alone, when its error code, its trace's hashes or its message's
        route lead to a known signature; the tiers would give it that signature and tier (a key or template,
        once registered, always leads to the same signature), and placing it so changes nothing the engine
        keeps, but for noting a signature found by an earlier version's hash, as `assign` notes it, to be
        registered under this version's after the batch (`found_earlier`). So does a message whose route is
        learned as it is placed (`_assign_message`). Every other event gets its full assignment, as `assign`
        gives it. `facts`, when given, are the events' fields the counting pass reads (`MessageFacts`, in
        order, one per event; those of an event with a stack trace to read may be left out, as the pass skips
        it), so it need not make the events."""
        batch = events if isinstance(events, Sequence) else list(events)
        self._expect(batch if facts is None else facts)
        self._found_earlier.batch_starts()
        for event in batch:
            found = self._known_place(event)
            if found is not None and found.signature_id in settled:
                yield found
            else:
                answer = self._assign(event, settled)
                if isinstance(answer, str):  # a message whose route was learned just now
                    yield self._placed(answer, "fingerprint")
                else:
                    yield Placement(answer.signature_id, answer.tier, answer)
        self._register_found_earlier(batch=True)

    def _known_place(self, event: ErrorEvent) -> Placement | None:
        """The signature and tier of an event with an error code, a stack trace whose key is known or a
        message whose template's route is (tier 1 or 2, as `assign` reads them), without building its
        candidate, as a placement without an assignment; None for any other."""
        stacktrace = event.stacktrace
        if stacktrace is None and not event.error_code and not event.attributes:
            # a plain log line, as `assign` takes it; its shape alone (`shape_of`): the normalised text is
            # not needed to place it
            shape = self._shapes.shape_of(event.message)
            if not shape.may_hold_code or not self._message_may_hold_code(event.message):
                return self._routed(shape, event.service, event.error_type, None)
        code = self._codes.read(event)
        if code is not None:
            owner = self._known_signatures.owner_of_code(f"{event.service or 'unknown'}\x1f{code.code}")
            return self._placed(owner, "error_code") if owner is not None else None
        if not stacktrace or stacktrace.isspace():
            if message_read_before(event) is not None or self._statement(event) is not None:
                return None  # its body's earlier reading, or its logged template, comes first (`_assign`)
            target = operation_target(event.attributes) if event.kind == "span_error" else None
            shape = self._shapes.shape_of(event.message)
            return self._routed(shape, event.service, event.error_type, target)
        place = self._candidates.trace_place(event)
        if place is None or place.digests is None:
            return None
        owner = self._known_signatures.owner_of_hashes(place.digests)
        if owner is None:
            return None
        if place.earlier:  # (none in a first round but for bundles and builtins)
            self._found_earlier.placed(place.digests, place.earlier, owner)
        if self._found_earlier.started_in_batch(owner):  # (its message may be read as before)
            self._read_by_message_before(event, owner, place.digests, None)
        return self._placed(owner, "fingerprint")

    def _routed(
        self, shape: ShapeInfo, service: str, error_type: str | None, target: str | None
    ) -> Placement | None:
        """A message's placement when its route is known: the signature its template leads to, tier 2, as
        `_assign_message` answers it; None when an earlier version's reading may come first, or no route
        is known."""
        if self._previous_possible and (target is not None or read_otherwise_before(shape)):
            return None
        where = service if target is None else f"{service}\x1e{target}"
        route = self._answers.route(shape, where, error_type)
        return self._placed(route.signature_id, "fingerprint") if route is not None else None

    def place_again(self) -> bool:
        """After a batch: whether it is to be placed again, by an engine started over with the claims that
        found their hashes taken by a signature the batch started registered ahead of it (`found_earlier`:
        a deploy within the batch that first found an earlier reading's signature). True at most as often
        as the claims to register grow (they only ever grow, and are finite), so a caller placing again
        while this says so ends; False for nearly every batch, which pays nothing more."""
        lost = self._found_earlier.lost
        if lost <= self._found_earlier.claimed_ahead:  # (none, or registered ahead already: no change)
            return False
        ahead = self._found_earlier.claimed_ahead | lost
        self._start()
        self._found_earlier.register_ahead(ahead)
        if self._found_earlier.ahead:
            self._answers.forget_traces()
        return True

    def state(self, signature_id: str) -> SignatureState:
        return self._known_signatures.state(signature_id)

    def assign_message(
        self,
        message: str,
        service: str = "unknown",
        error_type: str | None = None,
        environment: str | None = None,
        service_version: str | None = None,
    ) -> Assignment:
        """`assign` for an event that is a message alone (no stack trace, error code or
        attributes), given as its fields: the same answer, without building the event when the
        message's template is known (what `rounds group` does for plain log lines)."""
        normalized, shape = self._shapes.lookup(message)
        if shape.may_hold_code and self._message_may_hold_code(message):
            return self.assign(event_of_message(message, service, error_type, environment, service_version))
        answer = self._assign_message(
            None, message, service, error_type, environment, service_version, normalized, shape
        )
        assert not isinstance(answer, str)  # (no signature settled)
        return answer

    def signature_ids(self) -> list[str]:
        return list(self._signatures)

    # --- letting go ---------------------------------------------------------------------------

    def released_states(self, signature_ids: Iterable[str]) -> Iterator[tuple[str, SignatureState]]:
        """The state of each of `signature_ids` the engine knows, as `state` gives it (one it never loaded is
        left out), read as the engine is let go: a round's last use of it. Its memos, and those all engines
        share (`memo.forget_shared`), are dropped at once, then each signature's templates, vector and keys as
        its state is built (`Registry.released_states`), so the states take the memory just freed, in the
        same sizes, rather than adding theirs to it. The engine is unusable from this call on: asked to place
        or for a state, it raises `EngineReleased`."""
        registry = self._known_signatures
        let_go(self, kept=frozenset({"config"}))
        forget_shared()
        return registry.released_states(signature_ids)

    # --- the message path, tuned for the common case: a known template -----------------------

    def _assign_message(
        self,
        event: ErrorEvent | None,
        message: str,
        service: str,
        error_type: str | None,
        environment: str | None,
        version: str | None,
        normalized: str,
        shape: ShapeInfo,
        target: str | None = None,
        settled: Container[str] = (),
    ) -> Assignment | str:
        """The message path: `event` is None when only the fields were given, and is built from
        them only when the engine needs one (a template or an answer not known yet). A failed
        span's `target` (see `operations`) keeps its templates apart from other targets'. A route
        learned to a signature in `settled` gives that signature alone: its assignment would be
        dropped (`place_each`), and nothing the engine keeps depends on building it."""
        where = service if target is None else f"{service}\x1e{target}"
        if self._previous_possible and (target is not None or read_otherwise_before(shape)):
            found = self._template_read_before(shape, service, where, error_type)
            if found is not None:
                event = event or event_of_message(message, service, error_type, environment, version)
                candidate = self._candidates.template_candidate(
                    event, normalized, found[0], target, earlier_reading=True
                )
                return self._previous_answer(candidate, found[1])
        route = self._answers.route(shape, where, error_type)
        if route is None:
            # tier 2 for a message: its template, and the signature the template leads to
            match = self._miner.match(self._candidates.bucket(where or "unknown", error_type), shape.skeleton)
            signature_id = self._by_template.get(match.template_id)
            if signature_id is None:  # a template seen for the first time: tier 3, or new
                event = event or event_of_message(message, service, error_type, environment, version)
                candidate = self._candidates.template_candidate(event, normalized, match.template_id, target)
                return self._place_by_similarity(candidate)
            template = self._miner.handle(match.template_id)
            route = self._answers.learn_route(shape, where, error_type, template, signature_id)
            if signature_id in settled:
                return signature_id
        key = answer_key(normalized, error_type, environment, version)
        answer = self._answers.answer(route, key)
        if answer is None:
            event = event or event_of_message(message, service, error_type, environment, version)
            candidate = self._candidates.template_candidate(
                event, normalized, route.template.template_id, target
            )
            answer = self._assignment(candidate, route.signature_id, "fingerprint")
            self._answers.remember(route, key, answer)
        return answer
