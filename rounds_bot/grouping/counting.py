"""The engine's counting pass: which words of a round's log lines vary across a statement, learned from all of
them before the first is placed (`GroupingEngine.assign_each`, `place_each`), so the partition does not
depend on the order the events arrive in.

`CountingPass` is mixed into `engine.GroupingEngine`, which sets the attributes it reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rounds_bot.grouping.candidates import CandidateReader
from rounds_bot.grouping.error_codes import ErrorCodeReader
from rounds_bot.grouping.operations import operation_target
from rounds_bot.grouping.placement import MessageFacts
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.models import ErrorEvent


class CountingPass:
    """Counts a batch's message-path lines per service, error type and skeleton for the miner (`expect`)."""

    _candidates: CandidateReader
    _codes: ErrorCodeReader
    _message_may_hold_code: Callable[[str], bool]
    _miner: TemplateMiner
    _shapes: ShapeCache

    def _expect(self, batch: Iterable[ErrorEvent | MessageFacts]) -> None:
        """Learn from a batch's message-path lines which words vary (the miner's `expect`),
        counted per service, error type and skeleton. Only those counts are kept, never an
        event's shape: the second pass looks each one up again (through the bounded shape memo), so
        what the batch holds grows with its distinct skeletons, not its lines. (Nested dicts, not a
        key tuple per event: the batch allocates nothing per line.)"""
        lines: dict[str, dict[str | None, dict[tuple[str, ...], int]]] = {}
        for event in batch:
            stacktrace = event.stacktrace
            if stacktrace and not stacktrace.isspace():
                continue  # a trace is never read as a line (`_message_line`): most of a round's events
            line = self._message_line(event)
            if line is None:
                continue
            where, error_type, tokens = line
            per_type = lines.get(where)
            if per_type is None:
                per_type = lines[where] = {}
            per_skeleton = per_type.get(error_type)
            if per_skeleton is None:
                per_skeleton = per_type[error_type] = {}
            per_skeleton[tokens] = per_skeleton.get(tokens, 0) + 1
        bucket = self._candidates.bucket
        self._miner.expect(
            [
                ((bucket(where or "unknown", error_type), tokens), count)
                for where, per_type in lines.items()
                for error_type, per_skeleton in per_type.items()
                for tokens, count in per_skeleton.items()
            ]
        )

    def _noted_by_template(self, event: ErrorEvent | MessageFacts) -> bool:
        """Whether a line with attributes is placed by its logging library's template, not its body, which is
        then noted for it (`logged_templates.LoggedTemplates`, mixed in over this class); here, none is."""
        return False

    def _message_line(
        self, event: ErrorEvent | MessageFacts
    ) -> tuple[str, str | None, tuple[str, ...]] | None:
        """Where (service, and a failed span's target) an event that takes the message path is
        matched, with its error type and skeleton; None for an event that does not."""
        if event.stacktrace is None and not event.error_code and not event.attributes:
            # the common case first, as `assign` takes it: a plain log line
            message = event.message
            shape = self._shapes.shape_of(message)
            if (
                shape.may_hold_code
                and self._message_may_hold_code(message)
                and self._codes.read(event) is not None
            ):
                return None
            return event.service, event.error_type, shape.skeleton
        if (event.stacktrace and not event.stacktrace.isspace()) or self._codes.read(event) is not None:
            return None
        if self._noted_by_template(event):
            return None  # placed by its logging library's template, not by its body (`logged_templates`)
        target = operation_target(event.attributes) if event.kind == "span_error" else None
        where = event.service if target is None else f"{event.service}\x1e{target}"
        return where, event.error_type, self._shapes.lookup(event.message)[1].skeleton
