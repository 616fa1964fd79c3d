"""Events of crash texts and what the engine makes of them: the shapes the crash readers' grouping tests
share (one crash site is one signature, and a signature an earlier release made keeps receiving them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime

import pytest
from known_states import engines_knowing, made_before

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)

# An event of the n-th text: each module's own type and message (a module passes `crash_event` with them)
EventOf = Callable[[int, str], ErrorEvent]


def crash_event(
    n: int, text: str | None, *, error_type: str, message: str, service: str = "shop"
) -> ErrorEvent:
    """The n-th event of a service whose error printed `text`."""
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service=service,
        error_type=error_type,
        message=message,
        stacktrace=text,
    )


def signatures_of(texts: Iterable[str], event: EventOf) -> list[str]:
    """The signature one new engine gives each text's event (numbered from 0), in order."""
    return [a.signature_id for a in GroupingEngine().assign_all([event(n, t) for n, t in enumerate(texts)])]


def placed_by_engines_knowing_an_earlier_signature(
    monkeypatch: pytest.MonkeyPatch,
    reader: object,
    name: str,
    as_before: object,
    texts: Sequence[str],
    event: EventOf,
) -> tuple[str, dict[str, list[tuple[str, str]]]]:
    """The signature an earlier release (one whose `reader.name` was `as_before`) made of `texts[0]`'s event,
    and, by how an engine knows that signature (`given`, `looked up`), the signature and tier it gives each
    later text's event (numbered from 1), in order."""
    made, saved = made_before(monkeypatch, reader, name, as_before, event(0, texts[0]))
    later = [event(n, t) for n, t in enumerate(texts[1:], start=1)]
    return made, {
        how: [(a.signature_id, a.tier) for a in engine.assign_all(later)]
        for how, engine in engines_knowing(saved).items()
    }
