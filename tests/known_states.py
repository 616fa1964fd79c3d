"""Known signatures held in memory, for the engine in tests: the signature database's lookups without a
database (`rounds_bot.grouping.known.KnownSignatures`, which the store implements)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.known import StoredVector, lookup_keys, stored_vector
from rounds_bot.grouping.lookup_keys import SEPARATOR, service_key
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent


class KnownStates:
    """`KnownSignatures` over states held in memory."""

    def __init__(self, states: Iterable[SignatureState]) -> None:
        self._states: dict[str, SignatureState] = {}
        self._by_key: dict[str, list[str]] = {}
        for state in states:
            self._states[state.signature_id] = state
            for key in lookup_keys(state):
                self._by_key.setdefault(key, []).append(state.signature_id)

    def holds_nothing(self) -> bool:
        return not self._states  # (never changed once made)

    def counters(self) -> tuple[int, int]:
        seqs = [s.seq for s in self._states.values()]
        templates = [t.seq for s in self._states.values() for t in s.templates]
        return max(seqs, default=-1) + 1, max(templates, default=-1) + 1

    def find(self, keys: list[str]) -> list[SignatureState]:
        ids = dict.fromkeys(i for key in keys for i in self._by_key.get(key, ()))
        return [self._states[i] for i in ids]

    def learned_keys(self, bucket: str) -> set[str]:
        prefix = f"v:{bucket}{SEPARATOR}"
        return {key[len(prefix) :] for key in self._by_key if key.startswith(prefix)}

    def vectors(self, service: str) -> list[StoredVector]:
        return [stored_vector(s) for s in self.find([service_key(service)]) if s.similarity is not None]

    def by_id(self, signature_id: str) -> SignatureState | None:
        return self._states.get(signature_id)

    def exists(self, signature_id: str) -> bool:
        return signature_id in self._states


def engine_knowing(
    signature_id: str, *, service: str, title: str, hashes: Iterable[str], how: str
) -> GroupingEngine:
    """An engine that knows one signature an earlier release made, by the hashes that release stored: given
    to it (`how == "given"`) or found by the database's look-up (`"looked up"`), as a round has it."""
    stored = SignatureState(
        signature_id=signature_id, service=service, seq=0, title=title, hashes=list(hashes)
    )
    return GroupingEngine(known=[stored]) if how == "given" else GroupingEngine(lookup=KnownStates([stored]))


def made_before(
    monkeypatch: pytest.MonkeyPatch, reader: object, name: str, as_before: object, event: ErrorEvent
) -> tuple[str, list[SignatureState]]:
    """The signature an earlier release made of `event`, which read it with `reader.name` as `as_before`
    (a release that knew no such report), and its saved state; the test's patches are undone after."""
    monkeypatch.setattr(reader, name, as_before)
    earlier = GroupingEngine()
    made = earlier.assign(event)
    monkeypatch.undo()
    return made.signature_id, [earlier.state(made.signature_id)]


def engines_knowing(saved: list[SignatureState]) -> dict[str, GroupingEngine]:
    """Engines knowing `saved`: given them, as a round gives its signatures (`given`), and finding them as
    the store finds them (`looked up`)."""
    return {"given": GroupingEngine(known=saved), "looked up": GroupingEngine(lookup=KnownStates(saved))}
