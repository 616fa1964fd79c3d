"""What a signature's cascade was: the signatures of other services whose errors came first in the same traces
(caused by) or after (causes), each with the number of traces that showed it, kept between rounds.

A round sees a cascade only while its window holds a shared trace; the issue of the signature keeps naming
its cause ("Caused by #12") in later updates until the problem is gone (`round/cascade.py` decides that).
Kept as JSON in the signature's own row (`signatures.cascade`, migration 9): it is part of what rounds knows
of the signature, not a table of its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlite_utils import Database


def add_cascade_column(db: Database) -> None:
    """Migration: the signature's cascade links (JSON, NULL when it has none)."""
    db.table("signatures").add_column("cascade", str)


@dataclass(frozen=True)
class CascadeLinks:
    """The signatures a signature was caused by and causes, each with its number of traces."""

    caused_by: Mapping[str, int] = field(default_factory=dict)
    causes: Mapping[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.caused_by or self.causes)


class CascadeLinksStore:
    """The Store's reads and writes of the signatures' cascade links (mixed into `Store`)."""

    db: Database

    def cascade_links(self) -> dict[str, CascadeLinks]:
        """Every signature that has cascade links, with them."""
        rows = self.db.execute("select id, cascade from signatures where cascade is not null")
        return {str(signature_id): _links(text) for signature_id, text in rows}

    def set_cascade_links(self, links: Mapping[str, CascadeLinks]) -> None:
        """Each signature's links as they are now; empty links are forgotten (the column is NULL)."""
        self.db.conn.executemany(
            "update signatures set cascade = ? where id = ?",
            [(_text(kept) if kept else None, signature_id) for signature_id, kept in links.items()],
        )


def _text(links: CascadeLinks) -> str:
    return json.dumps(
        {"caused_by": dict(sorted(links.caused_by.items())), "causes": dict(sorted(links.causes.items()))}
    )


def _links(text: str) -> CascadeLinks:
    data = json.loads(text)
    return CascadeLinks(caused_by=_counts(data.get("caused_by", {})), causes=_counts(data.get("causes", {})))


def _counts(pairs: object) -> dict[str, int]:
    if not isinstance(pairs, Mapping):
        return {}
    return {str(key): int(value) for key, value in pairs.items() if isinstance(value, int)}
