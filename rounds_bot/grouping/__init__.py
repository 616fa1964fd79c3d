"""Fingerprinting and three-tier deduplication: one engine for the round and `rounds group`.

The engine (`engine.py`) reads messages through normalisation (`normalize.py`, `mask_rules.py`,
memoised per shape in `shapes.py`), stack traces through the per-runtime parsers (`stacktrace/`),
log statements through the template miner (`templates.py`), and places what it cannot match by
TF-IDF similarity (`similarity.py`).

engine = GroupingEngine(GroupingConfig(), known=saved_states)
assignment = engine.assign(event)          # signature id, tier, explanation ...
saved = engine.state(assignment.signature_id)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine, SignatureState

__all__ = ["GroupingConfig", "GroupingEngine", "SignatureState"]


def __getattr__(name: str) -> Any:
    # The engine is imported when first asked for, not with the package: the database reads
    # signature states (`grouping.state`) without loading the engine.
    if name in __all__:
        return getattr(importlib.import_module("rounds_bot.grouping.engine"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
