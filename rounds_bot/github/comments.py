"""Rounds' comments as journal records: the key that makes each one idempotent, and the check that finds a
comment already posted when the answer to posting it was lost."""

from __future__ import annotations

import re

from rounds_bot.github.journal import Intent, Journal, body_digest
from rounds_bot.github.refusals import check_size
from rounds_bot.github.rest import GitHubApi

_COMMENT_KEY = re.compile(r"<!-- rounds:comment (?P<key>[^ ]+) -->")


def announce_comment(journal: Journal, signature_id: str, number: int, text: str) -> Intent:
    """Record a comment before it is sent (announcing it again keeps the first record)."""
    key = f"comment:{signature_id}:{body_digest(text)[:12]}"
    body = f"{text}\n\n<!-- rounds:comment {key} -->"
    check_size(body, f"the comment on #{number}")
    earlier = journal.intent(key)
    if earlier is not None and earlier.status in ("abandoned", "done") and earlier.number != number:
        # the same text meant for the issue filed again after the old one went: a comment still to send
        # there, not the old issue's settled record
        journal.mark(key, "deferred", number=number)
    return journal.announce(key, "comment", signature_id, number=number, body=body)


def already_posted(api: GitHubApi, intent: Intent) -> bool:
    """Whether GitHub holds the comment `intent` announced: its hidden key, in a comment rounds wrote."""
    assert intent.number is not None
    comments = api.list_comments(intent.number, since=intent.created_at[:19] + "Z")
    # only rounds' own comments count: anyone can copy the hidden key into a comment of theirs
    return any(
        (match := _COMMENT_KEY.search(c.get("body") or "")) and match["key"] == intent.key and api.wrote(c)
        for c in comments
    )
