"""The signatures earlier readings made, found as those readings found them, and kept found from then on.

`EarlierReadings` is mixed into `engine.GroupingEngine` (over `placing.Placing`): a trace's earlier
versions' hashes are looked up first with its own (`Fingerprint.lookup_keys`, answered by `_known_answer`); a
trace no version read before, or that `rounds-fp:2` read as a message, finds the template its message went
to then (`_previous_message_group`); a message is also read the ways earlier versions read it
(`_previous_template`). A signature found so is registered under this reading's hashes once the batch is
placed (`found_earlier`), so an event the earlier reading no longer finds (the next deploy's renamed
bundles) finds it this reading's way instead of starting a duplicate. A batch whose claims found a hash taken
by a signature it started itself is placed again, those claims registered ahead (`place_again`), so a
deploy within the very batch that first finds such a signature joins it too, whatever the order of its
events.
"""

from __future__ import annotations

from rounds_bot.grouping.candidates import Candidate
from rounds_bot.grouping.fingerprint import (
    FINGERPRINT_VERSION,
    HASH_VERSION,
    MESSAGE_VERSION_BEFORE,
    MESSAGE_VERSION_FIFTH,
    MESSAGE_VERSION_SEVENTH,
    MESSAGE_VERSION_SIXTH,
)
from rounds_bot.grouping.found_earlier import FoundEarlier
from rounds_bot.grouping.logged_traces import message_read_before
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.placing import RULES, Placing
from rounds_bot.grouping.routes import Answers
from rounds_bot.grouping.shapes import ReadBefore, ShapeCache, ShapeInfo
from rounds_bot.grouping.stacktrace import ParsedTrace, detect_runtime, go, parse_stacktrace
from rounds_bot.grouping.stacktrace.browser import read_by_message_before, typed_by_event
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.models import Assignment, ErrorEvent

#: per earlier way of reading a message, the versions that no longer read it so: a template found
#: by the message read that way is an earlier version's only when its signature's version is none
#: of them. `previous`: as `normalize_previous` reads it, with no span target (until `rounds-fp:3`);
#: `earlier`: with the trailing clause of redacted values (`skeletons.skeleton_with_context`, until
#: `rounds-fp:4`); `before`: with `normalize.BEFORE_RULES` and the plural after a count as printed
#: (`normalize_before`, `skeletons.skeleton_with_plurals`, until `rounds-fp:5`); `fifth`: without the
#: literals `rounds-fp:6` masks (`normalize_fifth`, until `rounds-fp:6`; `shapes.ReadBefore`); `sixth`: with
#: the names of code `rounds-fp:7` keeps masked (`normalize_sixth`, until `rounds-fp:7`; `shapes.ReadBefore`);
#: `seventh`: with the names and numbers `rounds-fp:8` keeps masked (`normalize_seventh`, until `rounds-fp:8`;
#: `shapes.ReadBefore`); `browser`: a Firefox or Safari stack, which every version read by its message until
#: their frames were read (`browser.read_by_message_before`)
_SINCE_SEVENTH = frozenset({MESSAGE_VERSION_SEVENTH, FINGERPRINT_VERSION})
_SINCE_SIXTH = frozenset({MESSAGE_VERSION_SIXTH, *_SINCE_SEVENTH})
READ_OTHERWISE_BY = {
    "previous": frozenset({HASH_VERSION, MESSAGE_VERSION_BEFORE, MESSAGE_VERSION_FIFTH, *_SINCE_SIXTH}),
    "earlier": frozenset({MESSAGE_VERSION_BEFORE, MESSAGE_VERSION_FIFTH, *_SINCE_SIXTH}),
    "before": frozenset({MESSAGE_VERSION_FIFTH, *_SINCE_SIXTH}),
    "fifth": _SINCE_SIXTH,
    "sixth": _SINCE_SEVENTH,
    "seventh": frozenset({FINGERPRINT_VERSION}),
    "browser": frozenset(),
}


class EarlierReadings(Placing):
    """Finding the signatures earlier readings made (mixed into `GroupingEngine`, which sets these)."""

    _shapes: ShapeCache
    _answers: Answers
    _found_earlier: FoundEarlier
    #: whether signatures of an earlier fingerprint version may be known (see `GroupingEngine`)
    _previous_possible: bool

    def _register_found_earlier(self, *, batch: bool = False) -> None:
        """After a batch (`batch`; an event `assign` places is a batch of one): the signatures its events
        found by an earlier reading, registered under the hashes this one gave them (`found_earlier`); the
        trace answers given before may now be found otherwise."""
        if self._found_earlier.register(batch=batch):
            self._answers.forget_traces()

    def _template_read_before(
        self, shape: ShapeInfo, service: str, where: str, error_type: str | None
    ) -> tuple[str, str] | None:
        """The template (and its signature) a message's earlier readings find, the newest reading first
        (`_previous_template`); `where` is the service, or the service and a span's target."""
        found = self._previous_template(shape.previous or shape.skeleton, service, error_type)
        if found is None and shape.earlier is not None:
            found = self._previous_template(shape.earlier, where, error_type, "earlier")
        if found is None and shape.before is not None:
            found = self._previous_template(shape.before, where, error_type, "before")
        return found

    def _previous_template(
        self, tokens: tuple[str, ...], service: str, error_type: str | None, reading: str = "previous"
    ) -> tuple[str, str] | None:
        """The template an earlier version mined that the message matches as that version read
        it (`ShapeInfo.previous`, no span target; `ShapeInfo.earlier`, with its trailing clause of
        redacted values), and the signature that version gave it: a stored signature keeps
        receiving its messages. Templates of the versions that read messages otherwise do not count
        (`READ_OTHERWISE_BY`). A skeleton `rounds-fp:7`, `rounds-fp:6` or `rounds-fp:5` read otherwise than
        the version after it (`shapes.ReadBefore`, given as the `before` reading) is found that version's
        way, then as the versions before it read it, down to `rounds-fp:4`."""
        if isinstance(tokens, ReadBefore):
            then = self._previous_template(tuple(tokens), service, error_type, tokens.reading)
            if then is None and tokens.older is not None:
                then = self._previous_template(tokens.older, service, error_type, "before")
            return then
        found = self._miner.find(self._candidates.bucket(service or "unknown", error_type), tokens)
        if found is None:
            return None
        owner = self._by_template.get(found)
        if owner is None or self._known_signatures.require(owner).version in READ_OTHERWISE_BY[reading]:
            return None
        return found, owner

    def _previous_message_group(self, event: ErrorEvent, candidate: Candidate) -> Assignment | None:
        """A trace `rounds-fp:2` could not read (its first frame came after line 60), or a Firefox or
        Safari stack no version read before, went to its message's template then: the signature of
        that template, when one is known."""
        owner = self._previous_message_owner(event, candidate)
        return self._previous_answer(candidate, owner) if owner is not None else None

    def _recorded_stack_group(self, event: ErrorEvent) -> Assignment | None:
        """A Go stack the OpenTelemetry SDK recorded where the error was reported (`go.RECORDED`), which
        this reading groups by its message: the signature its frames found before, when one is known, so a
        signature made so keeps receiving its errors."""
        trace = parse_stacktrace(event.stacktrace) if event.stacktrace else None
        if trace is None or go.RECORDED not in trace.notes:
            return None
        normalized, _ = self._shapes.lookup(event.message)
        values = [normalize_uncached(exception.value) for exception in trace.exceptions]
        before = self._candidates._trace_candidate(
            event, normalized, typed_by_event(trace, event.error_type), values
        )
        if before is None:
            return None
        owner = self._known_signatures.owner_of_hashes(
            tuple(digest for _, digest in before.fingerprint.lookup_keys())
        )
        return None if owner is None else self._previous_answer(before, owner)

    def _previous_message_owner(self, event: ErrorEvent, candidate: Candidate) -> str | None:
        """The signature `_previous_message_group` assigns the event to, or None."""
        if candidate.trace is None:
            return None
        before = message_read_before(event)
        if before is not None:  # a trace a log record carried went as its body, of no type: this version's
            return self._message_owner_then(before, event.service, None)  # templates count too
        if read_by_message_before(candidate.trace):  # a browser's stack: this version's templates count too
            return self._message_owner_then(event.message, event.service, event.error_type)
        if not self._previous_possible or read_before(event.stacktrace or "", candidate.trace):
            return None
        _, shape = self._shapes.lookup(event.message)
        found = self._previous_template(shape.previous or shape.skeleton, event.service, event.error_type)
        return found[1] if found is not None else None

    def _found_by_body_before(self, event: ErrorEvent) -> Assignment | None:
        """A message read from a field of its log record's JSON body (`logged_traces.MESSAGE_FROM`), which
        earlier releases grouped by the whole body: the signature of the template the body goes to, when
        one is known, as a signature an earlier reading made; else None."""
        before = message_read_before(event)
        found = None if before is None else self._template_then(before, event.service, None)
        if found is None:
            return None
        normalized, _ = self._shapes.lookup(event.message)
        candidate = self._candidates.template_candidate(
            event, normalized, found[0], None, earlier_reading=True
        )
        return self._previous_answer(candidate, found[1])

    def _message_owner_then(self, message: str, service: str, error_type: str | None) -> str | None:
        """The signature of the template `message` goes to (`_template_then`), or None."""
        found = self._template_then(message, service, error_type)
        return found[1] if found is not None else None

    def _template_then(self, message: str, service: str, error_type: str | None) -> tuple[str, str] | None:
        """The template `message` goes to, of any version (a text no version read otherwise before this one:
        `READ_OTHERWISE_BY["browser"]`), and its signature; None when no signature has one."""
        _, shape = self._shapes.lookup(message)
        return self._previous_template(shape.skeleton, service, error_type, "browser")

    def _previous_answer(self, candidate: Candidate, signature_id: str) -> Assignment:
        """The assignment to a signature an earlier version made, with the rule that decided; a trace's
        hashes are registered to it after the batch (`found_earlier`)."""
        if candidate.trace is not None:
            fingerprint = candidate.fingerprint
            self._found_earlier.claim(signature_id, (fingerprint.hash, *fingerprint.other_hashes))
            # (said even when a key its batch's claims registered ahead of it leads there too)
            return self._assignment(candidate, signature_id, "fingerprint", rule=RULES["previous"])
        assignment = self._assignment(candidate, signature_id, "fingerprint")
        return assignment.model_copy(
            update={"explanation": assignment.explanation.replace(RULES["template"], RULES["previous"])}
        )

    def _known_answer(self, event: ErrorEvent, candidate: Candidate, signature_id: str) -> Assignment:
        """The fingerprint tier's answer; the same for a candidate every time (a hash, once
        registered, always leads to the same signature), so it is kept (`routes.Answers`). A trace
        found by its site is not registered under its own hashes: it is found the same way, and
        said to be, every time. One found by an earlier version's hash is, after the batch
        (`found_earlier`): an event those hashes no longer find would otherwise start a duplicate.
        One its message's earlier reading finds, by hashes registered ahead of its batch (a batch placed
        again, `place_again`), is said to be found by that reading, as it was the first time."""
        if (
            self._found_earlier.ahead
            and self._found_ahead(candidate, signature_id)
            and self._previous_message_owner(event, candidate) == signature_id
        ):
            return self._previous_answer(candidate, signature_id)
        self._found_earlier.trace_found(candidate, signature_id)
        if self._found_earlier.started_in_batch(signature_id):
            digests = tuple(digest for _, digest in candidate.fingerprint.lookup_keys())
            self._read_by_message_before(event, signature_id, digests, candidate)
        answer = self._assignment(candidate, signature_id, "fingerprint", known=signature_id)
        self._answers.remember_trace(candidate, answer)
        return answer

    def _found_ahead(self, candidate: Candidate, signature_id: str) -> bool:
        """Whether the key that leads the candidate to `signature_id` was registered ahead of the batch."""
        by_hash = self._known_signatures.by_hash
        digest = next(d for _, d in candidate.fingerprint.lookup_keys() if by_hash.get(d) == signature_id)
        return digest in self._found_earlier.ahead

    def _read_by_message_before(
        self, event: ErrorEvent, signature_id: str, digests: tuple[str, ...], candidate: Candidate | None
    ) -> None:
        """A trace placed by this reading's hashes (`digests`) in a signature its batch started, none of which
        leads to a signature known before the batch: when an earlier version read it by its message
        (`_previous_message_owner`) and that reading finds a signature known before the batch, that
        signature claims the hashes, as it does when the event comes before the signature is started. The
        claim finds them taken, so the batch is placed again with it registered ahead
        (`GroupingEngine.place_again`): whichever came first, a Firefox stack that went to its message's
        signature and the next deploy's Chrome stack of the same frames go there. Asked once per trace,
        service, type and message statement in a batch (`FoundEarlier.asked`)."""
        skeleton = self._shapes.lookup(event.message)[1].skeleton
        key = (digests, event.service, event.error_type, skeleton)
        asked = self._found_earlier.asked
        if key in asked:
            return
        asked.add(key)
        # a key known before the batch leads it where it would have gone then: no earlier reading is asked
        registry, found_earlier = self._known_signatures, self._found_earlier
        registry.fetch([f"h:{digest}" for digest in digests])
        for digest in digests:
            owner = registry.by_hash.get(digest)
            if owner is not None and not found_earlier.started_in_batch(owner):
                return
        candidate = candidate or self._candidates.candidate(event, None)
        owner = self._previous_message_owner(event, candidate)
        if owner is not None and owner != signature_id and not self._found_earlier.started_in_batch(owner):
            fingerprint = candidate.fingerprint
            self._found_earlier.claim(owner, (fingerprint.hash, *fingerprint.other_hashes))


#: how many lines `rounds-fp:2` looked at to recognise a trace's runtime
PREVIOUS_SNIFF_LINES = 60


def read_before(text: str, trace: ParsedTrace) -> bool:
    """Whether `rounds-fp:2` recognised the trace: it looked for frames in its first lines only
    (a trace of fewer lines was read whole, as now)."""
    end = -1
    for _ in range(PREVIOUS_SNIFF_LINES):
        end = text.find("\n", end + 1)
        if end < 0:
            return True
    return detect_runtime(trace_lines(text[:end])) == trace.runtime
