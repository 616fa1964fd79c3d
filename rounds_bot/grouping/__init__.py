"""Fingerprinting and three-tier deduplication: one engine for the round and `rounds group`.

engine = GroupingEngine(GroupingConfig(), known=saved_states)
assignment = engine.assign(event)          # signature id, tier, explanation ...
saved = engine.state(assignment.signature_id)
"""

from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine, SignatureState

__all__ = ["GroupingConfig", "GroupingEngine", "SignatureState"]
