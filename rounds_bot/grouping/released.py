"""A grouping engine let go: each of its parts swapped for one that refuses any use.

A round reads its signatures' states as it lets its engine go (`GroupingEngine.released_states`), so the
states take the memory the engine frees; an engine asked to place again after that would answer from parts it
no longer has, so it fails at once, with a clear error, instead.
"""

from __future__ import annotations

from typing import NoReturn


class EngineReleased(RuntimeError):
    """An engine asked to place, or for a state, after it was let go (`GroupingEngine.released_states`)."""


class _Released:
    """What a released engine holds in place of each of its parts: any use of one raises `EngineReleased`."""

    def _refuse(self, *_: object, **__: object) -> NoReturn:
        raise EngineReleased("this grouping engine was let go (`released_states`): make another one")

    __getattr__ = __call__ = __bool__ = __len__ = __iter__ = __contains__ = __getitem__ = _refuse


_RELEASED = _Released()


def let_go(owner: object, kept: frozenset[str]) -> None:
    """Every part of `owner` but those named in `kept` (whatever placing added) swapped for one that refuses
    any use: `owner` holds none of them any more."""
    for name in list(vars(owner)):
        if name not in kept:
            setattr(owner, name, _RELEASED)
