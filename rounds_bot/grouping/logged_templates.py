"""Placing an error log by the template its logging library exported (`log_template`), not by its body.

`LoggedTemplates` is mixed into `engine.GroupingEngine` (over `earlier_readings.EarlierReadings` and
`counting.CountingPass`). A logged template is mined as an exact template of the line's service and
exception type: known, it leads to its signature (tier 2); new, it starts one (its lines never merge with
another's by similarity, as no log line without a stack trace does).

A signature made before the template was read (by an earlier release, or from a line of the statement that
came without its template) was made from the lines' bodies. A template first read finds it as those bodies
would have: the signature of a template one of the statement's bodies goes to, read every way a message
was read before (`_body_owner`, as `engine._assign_message` reads it), and is registered under the template
from then on, so later lines find it by the template whatever their bodies say. Which bodies: every one of
the statement in the batch (noted by the counting pass, `_noted_by_template`), not only the line placed first,
and of the signatures they find, the oldest, known before the batch: so the signature a statement joins does
not depend on the order of its lines, nor on a signature a line without the template started in the batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from rounds_bot.grouping.counting import CountingPass
from rounds_bot.grouping.earlier_readings import EarlierReadings
from rounds_bot.grouping.log_template import logged_template, template_tokens
from rounds_bot.grouping.placement import MessageFacts
from rounds_bot.grouping.shapes import ShapeInfo, read_otherwise_before
from rounds_bot.models import Assignment, ErrorEvent

#: the rule that decided, for a line placed by its template; and for one whose template was first read
LOGGED_RULE = "rule: the same log statement (the template its logging library exported beside the line)"
LOGGED_BEFORE_RULE = (
    "rule: the log statement's template, read for the first time, goes where its lines' bodies went before"
    " (that group is kept)"
)
#: a body's readings: its skeleton, and those earlier versions read (`ShapeInfo`)
_Readings = tuple[tuple[str, ...], tuple[str, ...] | None, tuple[str, ...] | None, tuple[str, ...] | None]
#: the bodies of one statement a batch notes at most: past it, those whose readings sort last are dropped,
#: so what is kept does not depend on the order of the lines either
MAX_BODIES = 64


class LoggedTemplates(EarlierReadings, CountingPass):
    """Error logs placed by their logging library's template (mixed into `GroupingEngine`)."""

    #: per statement (bucket and template tokens), the readings of its bodies in the batch being placed
    _batch_bodies: Mapping[tuple[str, tuple[str, ...]], dict[_Readings, ShapeInfo]] = MappingProxyType({})
    #: the seq of the first signature the batch being placed started (None: outside a batch)
    _batch_first_seq: int | None = None

    def _expect(self, batch: Iterable[ErrorEvent | MessageFacts]) -> None:
        """The counting pass (`CountingPass._expect`), which also notes each statement's bodies."""
        self._batch_bodies = {}
        self._batch_first_seq = self._known_signatures.next_seq
        super()._expect(batch)

    def _noted_by_template(self, event: ErrorEvent | MessageFacts) -> bool:
        """A line (of no error code or stack trace) placed by its template is no line of the miner's counts,
        as its body is not mined: the body is noted for its statement instead (True); False for any other."""
        statement = self._statement(event)
        if statement is None:
            return False
        bodies = self._batch_bodies.get(statement)
        if bodies is None:
            assert isinstance(self._batch_bodies, dict)
            bodies = self._batch_bodies[statement] = {}
        shape = self._shapes.lookup(event.message)[1]
        bodies.setdefault(_readings(shape), shape)
        if len(bodies) > MAX_BODIES:
            del bodies[max(bodies, key=_sort_key)]
        return True

    def _statement(self, event: ErrorEvent | MessageFacts) -> tuple[str, tuple[str, ...]] | None:
        """The bucket and exact tokens of the line's logged template; None when it has none to place it by."""
        template = logged_template(event.kind, event.stacktrace, event.attributes, event.message)
        if template is None:
            return None
        tokens = template_tokens(self._shapes.lookup(template)[1].skeleton)
        if tokens is None:
            return None
        return self._candidates.bucket(event.service or "unknown", event.error_type), tokens

    def _by_logged_template(self, event: ErrorEvent) -> Assignment | None:
        """The assignment of an error log by its logged template (see the module docstring); None for a line
        that has none to be placed by (it is placed by its body)."""
        statement = self._statement(event)
        if statement is None:
            return None
        bucket, tokens = statement
        normalized, shape = self._shapes.lookup(event.message)
        found = self._miner.find(bucket, tokens)
        owner = self._by_template.get(found) if found is not None else None
        if owner is not None:
            assert found is not None
            candidate = self._candidates.template_candidate(event, normalized, found)
            return self._assignment(candidate, owner, "fingerprint", rule=LOGGED_RULE)
        template_id = self._miner.match(bucket, tokens).template_id
        candidate = self._candidates.template_candidate(event, normalized, template_id)
        bodies = {_readings(shape): shape, **self._batch_bodies.get(statement, {})}
        before = self._oldest_owner(bodies.values(), event.service, event.error_type)
        if before is None:
            return self._place_by_similarity(candidate)
        self._known_signatures.register(self._known_signatures.require(before), candidate)
        return self._assignment(candidate, before, "fingerprint", rule=LOGGED_BEFORE_RULE)

    def _oldest_owner(self, shapes: Iterable[ShapeInfo], service: str, error_type: str | None) -> str | None:
        """Of the signatures the bodies go to (`_body_owner`), the oldest one known before the batch."""
        first = self._batch_first_seq
        found = {owner for shape in shapes if (owner := self._body_owner(shape, service, error_type))}
        known = [self._known_signatures.require(owner) for owner in found]
        earlier = [signature for signature in known if first is None or signature.seq < first]
        return min(earlier, key=lambda signature: signature.seq).signature_id if earlier else None

    def _body_owner(self, shape: ShapeInfo, service: str, error_type: str | None) -> str | None:
        """The signature a body's template leads to, the body read as `engine._assign_message` reads it (the
        ways earlier versions read it first), without mining it; None when no template has one."""
        if read_otherwise_before(shape):
            found = self._template_read_before(shape, service, service, error_type)
            if found is not None:
                return found[1]
        found = self._previous_template(shape.skeleton, service, error_type, "browser")
        return found[1] if found is not None else None


def _readings(shape: ShapeInfo) -> _Readings:
    return (shape.skeleton, shape.previous, shape.earlier, shape.before)


def _sort_key(readings: _Readings) -> tuple[tuple[str, ...], ...]:
    return tuple(reading or () for reading in readings)
