"""The GitHub tracker's own durable state, written the moment something happens on GitHub.

A round writes the signature database once, at its end. What the tracker does on GitHub cannot wait for that:
if a round dies between "created on GitHub" and "saved locally", the next run must know. So the tracker keeps
a small journal, committed immediately after every step, in its own tables of the same SQLite file (it travels
with the database between runs, and a lost database loses both, which `rounds db rebuild` repairs):

- `github_issues`: the bot's issues as last seen on GitHub (signature id -> number, state, labels): a mirror
  refreshed once per round by listing the bot's label with `since=<watermark>`;
- `github_intents`: writes announced before they are sent, with an idempotency key (`create:<signature>`,
  `comment:<signature>:<digest>`); a create or comment whose outcome is unknown is reconciled against GitHub,
  never blindly repeated; comments over a round's cap wait here for the next round;
- `github_meta`: the listing watermark, ETags for conditional requests, labels known to exist.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field

from rounds_bot.errors import TrackerError
from rounds_bot.models import Frozen
from rounds_bot.tracker.base import IssueRef, StateReason

# pending: announced, maybe sent; deferred: not sent yet (held back by a cap, or meant for an issue filed
# again); done: GitHub has it;
# abandoned: settled, never sent again: a create GitHub never received (a fresh listing proved it,
# superseded by a later round), or a comment for an issue confirmed gone or locked (`refusals.py`).
IntentStatus = Literal["pending", "deferred", "done", "abandoned"]
# a row as sqlite3 returns it, and the parameters of a statement
Row = tuple[Any, ...]
Params = list[Any]

_SCHEMA = """
create table if not exists github_issues (
    signature_id text primary key,
    number integer not null,
    url text,
    title text not null default '',
    state text not null,
    state_reason text,
    labels text not null default '[]',
    updated_at text not null default '',
    body_digest text not null default ''
);
create index if not exists github_issues_number on github_issues (number);
create table if not exists github_intents (
    key text primary key,
    kind text not null,
    signature_id text not null,
    number integer,
    payload text not null default '{}',
    status text not null,
    created_at text not null,
    updated_at text not null
);
create table if not exists github_meta (key text primary key, value text not null);
"""


class MirroredIssue(Frozen):
    """One of the bot's issues as last seen on GitHub."""

    signature_id: str
    number: int
    url: str | None = None
    title: str = ""
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    labels: list[str] = Field(default_factory=list)
    updated_at: str = ""
    body_digest: str = Field(default="", description="sha256 of the body, to skip edits that change nothing")


class Intent(Frozen):
    key: str
    kind: Literal["create", "comment"]
    signature_id: str
    number: int | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    status: IntentStatus
    created_at: str


def _now() -> str:
    return datetime.now(UTC).isoformat()


class Journal:
    """Open with `Journal.open(path)` (the signature database file) or `Journal.memory()` in tests."""

    def __init__(self, connection: sqlite3.Connection, where: str) -> None:
        self._db = connection
        self.where = where
        self._execute_script(_SCHEMA)

    @classmethod
    def open(cls, path: Path) -> Journal:
        try:
            # autocommit: every write is durable the moment it returns
            connection = sqlite3.connect(path, isolation_level=None, timeout=10, check_same_thread=False)
            connection.execute("PRAGMA busy_timeout = 10000")
        except sqlite3.Error as exc:
            raise TrackerError(
                f"cannot open the tracker journal in {path}: {exc}",
                hint="check that SIGNATURES_DB_PATH is a writable file",
            ) from exc
        return cls(connection, str(path))

    @classmethod
    def memory(cls) -> Journal:
        return cls(sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False), ":memory:")

    def close(self) -> None:
        self._db.close()

    # --- the mirror of the bot's issues -------------------------------------------------------
    def issue(self, signature_id: str) -> MirroredIssue | None:
        row = self._one("select * from github_issues where signature_id = ?", [signature_id])
        return self._issue(row) if row else None

    def issues(self) -> list[MirroredIssue]:
        return [self._issue(row) for row in self._all("select * from github_issues order by number")]

    def remember(self, issue: MirroredIssue) -> None:
        """Record what GitHub said about an issue (the newest word wins)."""
        self._write(
            "insert into github_issues (signature_id, number, url, title, state, state_reason, labels, "
            "updated_at, body_digest) values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict(signature_id) do update "
            "set number = excluded.number, url = excluded.url, title = excluded.title, "
            "state = excluded.state, state_reason = excluded.state_reason, labels = excluded.labels, "
            "updated_at = excluded.updated_at, body_digest = excluded.body_digest",
            [
                issue.signature_id,
                issue.number,
                issue.url,
                issue.title,
                issue.state,
                issue.state_reason,
                json.dumps(sorted(issue.labels)),
                issue.updated_at,
                issue.body_digest,
            ],
        )

    def forget(self, signature_id: str, *, number: int | None = None, abandon: str | None = None) -> None:
        """Drop a signature's issue from the mirror: it is gone from the repository (`refusals.IssueGone`);
        `number`: only if it is still that issue (not one filed again since); `abandon`: the key of a write
        meant for it, abandoned with it."""
        if number is None:
            self._write("delete from github_issues where signature_id = ?", [signature_id])
        else:
            self._write(
                "delete from github_issues where signature_id = ? and number = ?", [signature_id, number]
            )
        if abandon is not None:
            self.mark(abandon, "abandoned")

    # --- intents ------------------------------------------------------------------------------
    def announce(
        self, key: str, kind: str, signature_id: str, *, number: int | None = None, **payload: str
    ) -> Intent:
        """Record a write before it is sent; announcing the same key again keeps the first record."""
        now = _now()
        self._write(
            "insert or ignore into github_intents (key, kind, signature_id, number, payload, status, "
            "created_at, updated_at) values (?, ?, ?, ?, ?, 'pending', ?, ?)",
            [key, kind, signature_id, number, json.dumps(payload, sort_keys=True), now, now],
        )
        intent = self.intent(key)
        assert intent is not None
        return intent

    def mark(self, key: str, status: IntentStatus, *, number: int | None = None) -> None:
        self._write(
            "update github_intents set status = ?, number = coalesce(?, number), updated_at = ? "
            "where key = ?",
            [status, number, _now(), key],
        )

    def intent(self, key: str) -> Intent | None:
        row = self._one("select * from github_intents where key = ?", [key])
        return self._intent(row) if row else None

    def open_intents(self, kind: str | None = None) -> list[Intent]:
        """Intents not known to be done, oldest first (an abandoned one is settled: never sent again)."""
        sql = "select * from github_intents where status not in ('done', 'abandoned')"
        args: Params = []
        if kind:
            sql += " and kind = ?"
            args.append(kind)
        return [self._intent(row) for row in self._all(sql + " order by created_at, key", args)]

    # --- watermark, ETags, known labels -------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self._one("select value from github_meta where key = ?", [key])
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._write(
            "insert into github_meta (key, value) values (?, ?) "
            "on conflict(key) do update set value = excluded.value",
            [key, value],
        )

    def known_labels(self) -> set[str]:
        return set(json.loads(self.meta("labels") or "[]"))

    def add_known_labels(self, names: set[str]) -> None:
        self.set_meta("labels", json.dumps(sorted(self.known_labels() | names)))

    # --- plumbing -----------------------------------------------------------------------------
    def _issue(self, row: Row) -> MirroredIssue:
        sid, number, url, title, state, reason, labels, updated, digest = row
        return MirroredIssue(
            signature_id=sid,
            number=number,
            url=url,
            title=title,
            state=state,
            state_reason=reason,
            labels=json.loads(labels),
            updated_at=updated,
            body_digest=digest,
        )

    def _intent(self, row: Row) -> Intent:
        key, kind, sid, number, payload, status, created, _updated = row
        return Intent(
            key=key,
            kind=kind,
            signature_id=sid,
            number=number,
            payload=json.loads(payload),
            status=status,
            created_at=created,
        )

    def _one(self, sql: str, args: Params) -> Row | None:
        try:
            row: Row | None = self._db.execute(sql, args).fetchone()
            return row
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _all(self, sql: str, args: Params | None = None) -> list[Row]:
        try:
            return self._db.execute(sql, args or []).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _write(self, sql: str, args: Params) -> None:
        try:
            self._db.execute(sql, args)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _execute_script(self, script: str) -> None:
        try:
            self._db.executescript(script)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _error(self, exc: sqlite3.Error) -> TrackerError:
        return TrackerError(
            f"the tracker journal in {self.where} could not be read or written: {exc}",
            hint="check that SIGNATURES_DB_PATH is a writable file; GitHub itself is unaffected",
        )


def body_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def label_names(item: dict[str, Any]) -> list[str]:
    return sorted(
        label["name"] if isinstance(label, dict) else str(label) for label in item.get("labels") or []
    )


def mirrored_issue(item: dict[str, Any], signature_id: str, body: str) -> MirroredIssue:
    """What the mirror keeps of an issue as GitHub rendered it (REST JSON)."""
    reason = item.get("state_reason")
    if reason == "duplicate":
        reason = "not_planned"  # closed as a duplicate by a human: rounds keeps it closed, like not planned
    return MirroredIssue(
        signature_id=signature_id,
        number=item["number"],
        url=item.get("html_url"),
        title=item.get("title") or "",
        state=item.get("state", "open"),
        state_reason=reason,
        labels=label_names(item),
        updated_at=item.get("updated_at") or "",
        body_digest=body_digest(body),
    )


_STATE_REASONS: dict[str | None, StateReason] = {reason: reason for reason in get_args(StateReason)}


def issue_ref(issue: MirroredIssue) -> IssueRef:
    """The tracker interface's reference to a mirrored issue."""
    reason = _STATE_REASONS.get(issue.state_reason)  # (another, such as "duplicate", is not told apart)
    return IssueRef(
        signature_id=issue.signature_id,
        ref=f"#{issue.number}",
        url=issue.url,
        state=issue.state,
        state_reason=reason,
    )
