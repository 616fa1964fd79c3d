"""The redaction boundary: what a source read, made safe once, before anything else sees it.

A `Boundary` (`boundary.py`) takes each event as the source builds it (a file source), or `redact_poll` takes
the events a source returned (SigNoz, any `Source`), before grouping, storage, prompts, issues, logs and
reports; nothing after it redacts again, and no raw event is kept past it. For every event it covers every
field: the resource (service name, version, environment), the exception type, message and stack trace, the
error code and severity, the ids, the link, the bodies of the log records before an error log, and every
attribute, key and value, whatever the value's type (an integer card number is a card number). An attribute
whose name says secret (`db.password`, `http.request.header.x-api-key`) or personal (`user.email`,
`client.address`) loses its value whatever the value looks like.

Every text is cut to its cap before any rule runs (`cut`: the cut is stated at the end of the text, so the
issue says it); an id that held a secret, or is too long, is replaced by a hash of itself, so it still
identifies the occurrence and an occurrence is still counted once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain, islice
from operator import attrgetter

from rounds_bot.models import CONTEXT_BODY_CHARS, AttributeValue, ContextRecord, ErrorEvent
from rounds_bot.redact.id_proof import IdProof
from rounds_bot.redact.ids import ID_CHARS, hashed_id, id_shaped, ids_shaped
from rounds_bot.redact.keys import maybe_credential_name, personal_category, secret_category
from rounds_bot.redact.pair_values import maybe_credential
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.rule import REDACTED
from rounds_bot.redact.text import cut, redact_text, sanitize
from rounds_bot.redact.text_proof import TextProof

MESSAGE_CHARS = 16_384
STACKTRACE_CHARS = 65_536
ATTRIBUTE_CHARS = 4_096
NAME_CHARS = 256
NOTE_CHARS = 1_000
MAX_ATTRIBUTES = 200
#: Characters of redacted texts remembered at most; past it the memory starts afresh (a text seen again later
#: is redacted again, with the same result, and counted again as the distinct text it then is)
MEMO_CHARS = 8_000_000
#: attributes whose redaction is remembered at most (`Redactor.attribute`), past it the memory starts afresh
MEMO_ATTRIBUTES = 20_000
#: the fields of an event `Redactor.name` makes (`Redactor._kept_names`)
_NAMES_FIELDS = frozenset(
    {"service", "error_type", "error_code", "severity", "service_version", "environment"}
)
_NAMES = attrgetter(*sorted(_NAMES_FIELDS))
#: the ids of an event `Redactor.identifier` makes (`Redactor.foresee`)
_IDS = attrgetter("event_id", "trace_id", "span_id", "parent_span_id", "source_group_id")
_ATTRIBUTES = attrgetter("attributes")


class Redactor:
    """Redacts what one poll returned; remembers each text it redacted, since messages and stack traces
    recur thousands of times."""

    def __init__(self, ips: IpPolicy = "all") -> None:
        self.ips: IpPolicy = ips
        self.counts: Counter[str] = Counter()
        self._done: dict[tuple[str, int], str] = {}
        self._remembered = 0
        # What `name` and `attribute` made of what `_done` remembers the texts of, forgotten with it (`text`):
        # a text `_done` remembers is redacted again with nothing counted, so neither memory can tell a
        # result, or a count, the long way would not. `_forgotten` says how often `_done` was emptied.
        self._names: dict[tuple[str, int], str] = {}
        self._attributes: dict[tuple[str, str], tuple[str, AttributeValue]] = {}
        # what those memories hold that redaction keeps as it is: the text attributes `_attributes` gives
        # back unchanged, and the names of an event (`_NAMES`) that `_names` gives back unchanged, all of
        # them, so an event of a bug seen before is checked with a lookup a field, not a redaction
        self._kept_pairs: set[tuple[str, str]] = set()
        self._kept_names: set[tuple[str | None, ...]] = set()
        self._forgotten = 0
        self._pairs_cleared = 0  # how often `_kept_pairs` was emptied (`events`)
        # what redacting one text counts, added to `counts` (`_redacted`): one counter for every text
        self._found: Counter[str] = Counter()
        # proves most ids kept as they are with one scan each (`IdProof`: `unchanged_shaped`'s verdict)
        self._ids = IdProof(ips)
        # scans a batch's messages and traces at once and proves most kept as they are (`TextProof.prove`)
        self._texts = TextProof(ips)
        self._proven_texts = self._texts.proven  # the texts its last `prove` found kept (one set, refilled)

    def text(self, text: str, limit: int) -> str:
        key = (text, limit)
        done = self._done.get(key)
        if done is None:
            # a text the batch's proof found kept, and within its cap, is its own redaction and counts nothing
            # (what `_redacted` gives it through `cut` and `TextProof.redact_into`): told with one look-up,
            # as most of a round's messages and traces are
            done = text if len(text) <= limit and text in self._proven_texts else self._redacted(text, limit)
            if self._remembered > MEMO_CHARS:  # a round's memory does not grow with its records
                self._forget()
            self._done[key] = done
            self._remembered += len(text)
        return done

    def _forget(self) -> None:
        self._done.clear()
        self._names.clear()
        self._attributes.clear()
        self._kept_pairs.clear()
        self._kept_names.clear()
        self._remembered = 0
        self._forgotten += 1
        self._pairs_cleared += 1

    def _redacted(self, text: str, limit: int) -> str:
        found = self._found
        found.clear()
        done = self._texts.redact_into(cut(text, limit), found)
        if found:
            self.counts.update(found)
        return done

    def optional(self, text: str | None, limit: int = NAME_CHARS) -> str | None:
        return None if text is None else self.name(text, limit)

    def name(self, text: str, limit: int = NAME_CHARS) -> str:
        """A name (service, environment, version, type, code): redacted, and on one line."""
        key = (text, limit)
        named = self._names.get(key)
        if named is None:
            # `text` remembers (text, limit) in `_done` before this is remembered: forgotten together
            named = self._names[key] = " ".join(self.text(text, limit).split())
        return named

    def identifier(self, value: str) -> str:
        """An id as it was, or a hash of it when it held anything but an id's characters or was too long."""
        if self._ids.proven(value):  # `foresee` proved it kept (an id's shape, and `kept`)
            return value
        if id_shaped(value) and (self._ids.kept(value) or self.text(value, ID_CHARS) == value):
            # kept as the scan alone proves it (most ids and hashes: an id's characters have nothing to
            # sanitise and no escape, `text.unchanged_shaped`), not remembered as a text (ids seldom recur,
            # the memory is kept for messages and traces); or redacted and remembered as any text is
            return value
        self.counts["identifier"] += 1
        return hashed_id(value)

    def events(self, events: Sequence[ErrorEvent]) -> list[ErrorEvent]:
        """`event` of each of `events`, in order, after `foresee` of them all: an event whose attributes it
        found all kept before is not looked up again while `_kept_pairs` (which else only grows) stays."""
        kept, clears = self.foresee(events), self._pairs_cleared
        return [
            self._event(event, known and clears == self._pairs_cleared)
            for event, known in zip(events, kept, strict=True)
        ]

    def foresee(self, events: Sequence[ErrorEvent]) -> list[bool]:
        """Prove at once the ids of events about to be redacted that `identifier` asks the proof of
        (`IdProof.prove`: the same answers, with a scan for many ids), and scan their messages and traces
        together (`TextProof.prove`: what `_redacted` then gives is what it gives alone). Says of each event
        whether `_changed` would now find its attributes all kept before (`_kept_pairs`)."""
        values: dict[str | None, None] = dict.fromkeys(chain.from_iterable(map(_IDS, events)))
        self._ids.prove(ids_shaped([value for value in values if value is not None]))
        kept = self._kept_pairs
        known = [len(each) <= MAX_ATTRIBUTES and each.items() <= kept for each in map(_ATTRIBUTES, events)]
        # as `_redacted` will be given them: cut to their limits (a scan of a text's uncut tail would be
        # wasted, and the cut text, another string, would be scanned again)
        self._texts.prove(chain(_cut_texts(events), self._new_attribute_texts(events, known)))
        return known

    def _new_attribute_texts(self, events: Sequence[ErrorEvent], known: list[bool]) -> Iterator[str]:
        """The text values, cut as `attribute` will redact them, of the attributes no memory holds: a log
        record's body, a request's id, differ in every record and would each be scanned alone. Those of an
        event whose attributes are all kept before (`known`) are not (`_changed` looks them up; past
        `MAX_ATTRIBUTES`, the pairs it reads are all remembered too: `_kept_pairs` is in `_attributes`)."""
        remembered = self._attributes
        for event, done in zip(events, known, strict=True):
            if done:
                continue
            attributes = event.attributes
            for pair in islice(attributes.items(), MAX_ATTRIBUTES):
                value = pair[1]
                if type(value) is str and value and pair not in remembered:
                    yield cut(value, ATTRIBUTE_CHARS)

    def identity(self, value: str) -> str:
        """What `identifier` makes of an id, without counting it: the form an occurrence's id is stored in,
        so a raw record can be checked against what earlier rounds counted before it is redacted."""
        if id_shaped(value) and self._unchanged(value):
            return value
        return hashed_id(value)

    def _unchanged(self, value: str) -> bool:
        done = self._done.get((value, ID_CHARS))
        if done is not None:
            return done == value
        if self._ids.kept(value):
            return True
        return redact_text(cut(value, ID_CHARS), ips=self.ips).text == value

    def attribute(self, key: str, value: AttributeValue) -> tuple[str, AttributeValue]:
        memo = (key, value) if type(value) is str else None
        if memo is not None:
            done = self._attributes.get(memo)
            if done is not None:
                return done
        forgotten = self._forgotten
        safe_key = self.text(key, NAME_CHARS)
        if isinstance(value, bool):
            return safe_key, value
        category = secret_category(key) or personal_category(key)
        if category == "ip_address" and self.ips == "off":
            category = None
        if category is not None and value != "":
            self.counts[category] += 1
            return safe_key, REDACTED.format(category=category)
        text = value if isinstance(value, str) else str(value)
        if (  # `x-sso-ticket`, `app.stripe_key`, `DROPBOX`; the name's cached look-up first: most are none
            category is None and maybe_credential_name(key) is not None and maybe_credential(key, text)
        ):
            self.counts["key_value_secret"] += 1
            return safe_key, REDACTED.format(category="key_value_secret")
        redacted = self.text(text, ATTRIBUTE_CHARS)
        made = safe_key, value if redacted == text else redacted
        if memo is not None and forgotten == self._forgotten:
            self._remember_attribute(memo, made)
        return made

    def _remember_attribute(self, memo: tuple[str, str], made: tuple[str, AttributeValue]) -> None:
        """Remember a text attribute that counted nothing itself (no secret's or personal name, no
        credential): what it gives again is its key's and value's redaction, which `_done` remembers (it was
        not emptied during the call) and which count nothing again until it is emptied, and then this memory
        with it. The resource's attributes recur in every event of a service."""
        if len(self._attributes) >= MEMO_ATTRIBUTES:
            self._attributes.clear()
            self._kept_pairs.clear()
            self._pairs_cleared += 1
        self._attributes[memo] = made
        if made == memo:
            self._kept_pairs.add(memo)

    def attributes(self, attributes: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
        safe: dict[str, AttributeValue] = {}
        kept, attribute = self._kept_pairs, self.attribute
        for pair in islice(attributes.items(), MAX_ATTRIBUTES):
            # a text attribute kept before is what `attribute` gives again (`_kept_pairs`), without the call
            safe_key, safe_value = pair if pair in kept else attribute(*pair)
            while safe_key in safe:  # two keys that redact alike are both kept
                safe_key += "'"
            safe[safe_key] = safe_value
        if len(attributes) > MAX_ATTRIBUTES:
            safe["rounds.attributes_cut"] = len(attributes) - MAX_ATTRIBUTES
        return safe

    def event(self, event: ErrorEvent) -> ErrorEvent:
        """The event with every field redacted: itself when nothing changed (a frozen model; most events
        hold nothing to redact), else a copy with the fields that changed."""
        return self._event(event, False)

    def _event(self, event: ErrorEvent, attributes_kept: bool) -> ErrorEvent:
        proven = self._ids.answers().get
        if (  # most events of a batch: every field but the texts and attributes is one `_changed` passes over
            event.source_group_id is None
            and event.source_url is None
            and not event.context
            and proven(event.event_id)
            and ((value := event.trace_id) is None or proven(value))
            and ((value := event.span_id) is None or proven(value))
            and ((value := event.parent_span_id) is None or proven(value))
            and _NAMES(event) in self._kept_names
        ):
            changed = self._texts_changed(event, attributes_kept)
        else:
            changed = self._changed(event, attributes_kept)
        return event.model_copy(update=changed) if changed else event

    def _changed(self, event: ErrorEvent, attributes_kept: bool) -> dict[str, object]:
        """The fields whose redaction differs from them, redacted in the model's order (the counts follow it);
        a field that is None or empty stays so and is not redacted. One test a field, in line: an event
        has a dozen fields and a round a hundred thousand events.

        What the memories already say is kept as it is is not asked again: the ids `foresee` proved kept
        (`identifier` returns them at once), the names of an event whose names were all kept (`_kept_names`)
        and attributes that are all text attributes `_attributes` gives back unchanged (`_kept_pairs`). The
        long way would find each of them in its memory, unchanged, and count nothing (a memory counts a
        text once, when it is redacted): the same result, without the calls."""
        changed: dict[str, object] = {}
        name, text, identifier = self.name, self.text, self.identifier
        proven = self._ids.answers().get
        forgotten = self._forgotten
        names = _NAMES(event)
        named = names in self._kept_names  # no name is redacted again
        value: str | None
        if not proven(value := event.event_id) and (safe := identifier(value)) != value:
            changed["event_id"] = safe
        if not named and (safe := name(value := event.service) or "unknown") != value:
            changed["service"] = safe
        if not named and (value := event.error_type) is not None and (safe := name(value, 512)) != value:
            changed["error_type"] = safe
        if (safe := text(value := event.message, MESSAGE_CHARS)) != value:
            changed["message"] = safe
        if (value := event.stacktrace) is not None and (safe := text(value, STACKTRACE_CHARS)) != value:
            changed["stacktrace"] = safe
        if not named and (value := event.error_code) is not None and (safe := name(value)) != value:
            changed["error_code"] = safe
        if not named and (value := event.severity) is not None and (safe := name(value, 32)) != value:
            changed["severity"] = safe
        if (
            (value := event.trace_id) is not None
            and not proven(value)
            and (safe := identifier(value)) != value
        ):
            changed["trace_id"] = safe
        if (
            (value := event.span_id) is not None
            and not proven(value)
            and (safe := identifier(value)) != value
        ):
            changed["span_id"] = safe
        if (
            (value := event.parent_span_id) is not None
            and not proven(value)
            and (safe := identifier(value)) != value
        ):
            changed["parent_span_id"] = safe
        if not named and (value := event.service_version) is not None and (safe := name(value)) != value:
            changed["service_version"] = safe
        if not named and (value := event.environment) is not None and (safe := name(value)) != value:
            changed["environment"] = safe
        if (
            (attributes := event.attributes)
            and not attributes_kept  # `events`: all found kept before, by `foresee`
            and not (len(attributes) <= MAX_ATTRIBUTES and attributes.items() <= self._kept_pairs)
            and (safe_attributes := self.attributes(attributes)) != attributes
        ):
            changed["attributes"] = safe_attributes
        if (value := event.source_group_id) is not None and (safe := identifier(value)) != value:
            changed["source_group_id"] = safe
        if (value := event.source_url) is not None and (safe := name(value, 2_048)) != value:
            changed["source_url"] = safe
        if (context := event.context) and (safe_context := list(map(self.context, context))) != context:
            changed["context"] = safe_context
        if not named and forgotten == self._forgotten and _NAMES_FIELDS.isdisjoint(changed):
            # each name was redacted, or found in `_names`, unchanged, and `_names` was not emptied since
            self._remember_names(names)
        return changed

    def _texts_changed(self, event: ErrorEvent, attributes_kept: bool) -> dict[str, object]:
        """`_changed` of an event whose ids `foresee` proved kept, whose names are all kept (`_kept_names`)
        and which holds no group id, link or context: the fields `_changed` then redacts, the message, the
        stack trace and the attributes, redacted as it redacts them, in its order (the others it passes over
        without a call, and they count nothing)."""
        changed: dict[str, object] = {}
        text = self.text
        if (safe := text(message := event.message, MESSAGE_CHARS)) != message:
            changed["message"] = safe
        if (trace := event.stacktrace) is not None and (safe := text(trace, STACKTRACE_CHARS)) != trace:
            changed["stacktrace"] = safe
        if (
            (attributes := event.attributes)
            and not attributes_kept
            and not (len(attributes) <= MAX_ATTRIBUTES and attributes.items() <= self._kept_pairs)
            and (safe_attributes := self.attributes(attributes)) != attributes
        ):
            changed["attributes"] = safe_attributes
        return changed

    def _remember_names(self, names: tuple[str | None, ...]) -> None:
        if len(self._kept_names) >= MEMO_ATTRIBUTES:
            self._kept_names.clear()
        self._kept_names.add(names)

    def context(self, record: ContextRecord) -> ContextRecord:
        """A neighbouring log record: its body by the message's rules, cut to its own cap."""
        severity, body = self.name(record.severity, 32), self.text(record.body, CONTEXT_BODY_CHARS)
        if severity == record.severity and body == record.body:
            return record
        return record.model_copy(update={"severity": severity, "body": body})


def _cut_texts(events: Sequence[ErrorEvent]) -> Iterator[str]:
    """Each event's message and stack trace that is not empty, in order, cut to its limit as `_changed`
    redacts it (`cut` is called only for the rare text past its limit: any other is its own cut)."""
    for event in events:
        message, trace = event.message, event.stacktrace
        if message:
            yield message if len(message) <= MESSAGE_CHARS else cut(message, MESSAGE_CHARS)
        if trace:
            yield trace if len(trace) <= STACKTRACE_CHARS else cut(trace, STACKTRACE_CHARS)


def redact_event(event: ErrorEvent, ips: IpPolicy = "all") -> ErrorEvent:
    """One event through the boundary (for callers that read events one at a time)."""
    return Redactor(ips).event(event)


__all__ = ["Redactor", "redact_event", "sanitize"]
