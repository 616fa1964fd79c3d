"""The signatures earlier readings made, found as those readings found them, and kept found from then on.

`EarlierReadings` is mixed into `engine.GroupingEngine` (over `placing.Placing`): a trace's earlier
versions' hashes are looked up first with its own (`Fingerprint.lookup_keys`, answered by `_known_answer`); a
trace no version read before, or that `rounds-fp:2` read as a message, finds the template its message went
to then (`_previous_message_group`); a message is also read the ways earlier versions read it
(`_previous_template`). A signature found so is registered under this reading's hashes once the batch is
placed (`found_earlier`), so an event the earlier reading no longer finds (the next deploy's renamed
bundles) finds it this reading's way instead of starting a duplicate.
"""

from __future__ import annotations

from rounds_bot.grouping.candidates import Candidate, read_before
from rounds_bot.grouping.fingerprint import READ_OTHERWISE_BY
from rounds_bot.grouping.found_earlier import FoundEarlier
from rounds_bot.grouping.placing import RULES, Placing
from rounds_bot.grouping.routes import Answers
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.stacktrace.browser import read_by_message_before
from rounds_bot.models import Assignment, ErrorEvent


class EarlierReadings(Placing):
    """Finding the signatures earlier readings made (mixed into `GroupingEngine`, which sets these)."""

    _shapes: ShapeCache
    _answers: Answers
    _found_earlier: FoundEarlier
    #: whether signatures of an earlier fingerprint version may be known (see `GroupingEngine`)
    _previous_possible: bool

    def _register_found_earlier(self) -> None:
        """After a batch: the signatures its events found by an earlier reading, registered under the hashes
        this one gave them (`found_earlier`); the trace answers given before may now be found otherwise."""
        if self._found_earlier.register():
            self._answers.forget_traces()

    def _previous_template(
        self, tokens: tuple[str, ...], service: str, error_type: str | None, reading: str = "previous"
    ) -> tuple[str, str] | None:
        """The template an earlier version mined that the message matches as that version read
        it (`ShapeInfo.previous`, no span target; `ShapeInfo.earlier`, with its trailing clause of
        redacted values), and the signature that version gave it: a stored signature keeps
        receiving its messages. Templates of the versions that read messages otherwise do not count
        (`READ_OTHERWISE_BY`)."""
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
        if candidate.trace is None:
            return None
        if read_by_message_before(candidate.trace):  # a browser's stack: this version's templates count too
            _, shape = self._shapes.lookup(event.message)
            found = self._previous_template(shape.skeleton, event.service, event.error_type, "browser")
            return self._previous_answer(candidate, found[1]) if found is not None else None
        if not self._previous_possible or read_before(event.stacktrace or "", candidate.trace):
            return None
        _, shape = self._shapes.lookup(event.message)
        found = self._previous_template(shape.previous or shape.skeleton, event.service, event.error_type)
        return self._previous_answer(candidate, found[1]) if found is not None else None

    def _previous_answer(self, candidate: Candidate, signature_id: str) -> Assignment:
        """The assignment to a signature an earlier version made, with the rule that decided; a trace's
        hashes are registered to it after the batch (`found_earlier`)."""
        if candidate.trace is not None:
            fingerprint = candidate.fingerprint
            self._found_earlier.claim(signature_id, (fingerprint.hash, *fingerprint.other_hashes))
        assignment = self._assignment(candidate, signature_id, "fingerprint")
        return assignment.model_copy(
            update={"explanation": assignment.explanation.replace(RULES["template"], RULES["previous"])}
        )

    def _known_answer(self, candidate: Candidate, signature_id: str) -> Assignment:
        """The fingerprint tier's answer; the same for a candidate every time (a hash, once
        registered, always leads to the same signature), so it is kept (`routes.Answers`). A trace
        found by its site is not registered under its own hashes: it is found the same way, and
        said to be, every time. One found by an earlier version's hash is, after the batch
        (`found_earlier`): an event those hashes no longer find would otherwise start a duplicate."""
        self._found_earlier.trace_found(candidate, signature_id)
        answer = self._assignment(candidate, signature_id, "fingerprint", known=signature_id)
        self._answers.remember_trace(candidate, answer)
        return answer
