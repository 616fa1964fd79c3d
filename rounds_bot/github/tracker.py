"""The GitHub tracker: one issue per signature, never a twin, behind the dry-run tracker's interface.

How it never files a twin:

1. It keeps a mirror of the bot's issues in its journal (`journal.py`), refreshed once per round by LISTING
   the issues that carry the bot's label, updated since the last watermark (search is not used: it lags by
   minutes). Each issue is matched to its signature by the hidden marker in its body.
2. `find` answers from that mirror; what the signature database remembers (`known_ref`) is checked against
   GitHub when the mirror does not know it (a marker a human deleted or garbled is restored on the next edit).
3. `create` looks once more (mirror, then an unmarked bot issue with the same title), announces the create in
   the journal under the idempotency key `create:<signature>`, sends it, and records the answer at once. When
   the answer is lost (5xx, reset connection) it reconciles by listing again before anything else happens.

Requests per round: a quiet round makes none; a new signature costs one (the create) plus a share of the
round's single listing and of creating labels the first time they are used; an update costs one edit, or
nothing when the body and labels did not change.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from rounds_bot.errors import ConfigError, TrackerError
from rounds_bot.github.comments import already_posted, announce_comment
from rounds_bot.github.gone import comment_settled, gone_for_good
from rounds_bot.github.journal import (
    Intent,
    Journal,
    MirroredIssue,
    body_digest,
    issue_ref,
    label_names,
    mirrored_issue,
)
from rounds_bot.github.labels import BOT_LABEL, REGRESSION_LABEL, LabelKeeper, without_replaced
from rounds_bot.github.ratelimit import CallBudget, Waiter
from rounds_bot.github.refusals import IssueLocked, check_size
from rounds_bot.github.rest import GitHubApi, OutcomeUnknown, make_github
from rounds_bot.marker import read_marker
from rounds_bot.models import Frozen
from rounds_bot.settings import Settings
from rounds_bot.tracker.base import IssueDraft, IssueRef, TrackerStopped


class GitHubOptions(Frozen):
    """How the tracker behaves; the defaults suit a GITHUB_TOKEN (1,000 requests an hour)."""

    bot_label: str = BOT_LABEL
    write_interval_seconds: float = 1.0
    max_comments_per_round: int = 10
    max_requests_per_round: int = 500
    rate_limit_reserve: int = 20
    max_wait_seconds: float = 120.0
    server_error_retries: int = 2
    backoff_seconds: float = 2.0
    timeout_seconds: int = 30


class GitHubTracker:
    name = "github"

    def __init__(self, api: GitHubApi, journal: Journal, options: GitHubOptions | None = None) -> None:
        self.api = api
        self.journal = journal
        self.options = options or GitHubOptions()
        self.labels = LabelKeeper(api, journal)
        self.notes: list[str] = []
        self._synced = False
        self._started = datetime.now(UTC).isoformat()
        self._commented: set[int] = set()
        # issues filed this round: GitHub may not answer for them everywhere yet
        self._filed: set[int] = set()
        self._comments_posted = 0

    @property
    def requests_made(self) -> int:
        return self.api.requests_made

    # --- the Tracker interface ----------------------------------------------------------------
    def find(self, signature_id: str, known_ref: str | None = None) -> IssueRef | None:
        self.sync()
        mirrored = self.journal.issue(signature_id)
        if mirrored is not None:
            return issue_ref(mirrored)
        number = _number(known_ref)
        if number is not None:
            return self._adopt(signature_id, number)
        return None

    def create(self, draft: IssueDraft) -> IssueRef:
        self.sync()
        check_size(draft.body, f"the issue body of {draft.signature_id}")
        existing = self.journal.issue(draft.signature_id)
        if existing is not None:  # filed meanwhile (or by a crashed run): update it, never file a twin
            return self.update(issue_ref(existing), draft)
        orphan = self._orphan_titled(draft.title)
        if orphan is not None:
            self.notes.append(
                f"issue #{orphan.number} had no readable marker; matched to {draft.signature_id} by its "
                "title, and its marker restored"
            )
            self.journal.remember(orphan.model_copy(update={"signature_id": draft.signature_id}))
            self._forget_orphan(orphan.number)
            return self.update(issue_ref(self.journal.issue(draft.signature_id) or orphan), draft)
        labels = self.labels.ensure(draft.labels)
        key = f"create:{draft.signature_id}"
        self.journal.announce(key, "create", draft.signature_id, title=draft.title)
        try:
            data = self.api.create_issue(draft.title, draft.body, labels)
        except OutcomeUnknown:
            found = self._reconcile_create(draft.signature_id)
            if found is None:
                raise
            return found
        mirrored = mirrored_issue(data, draft.signature_id, draft.body)
        self.journal.remember(mirrored)
        self.journal.mark(key, "done", number=mirrored.number)
        self._filed.add(mirrored.number)
        return issue_ref(mirrored)

    def update(
        self, issue: IssueRef, draft: IssueDraft, *, comment: str | None = None, reopen: bool = False
    ) -> IssueRef:
        number = _number(issue.ref)
        if number is None:
            raise TrackerError(f"{issue.ref!r} is not a GitHub issue reference (expected #123)")
        check_size(draft.body, f"the issue body of {draft.signature_id}")
        mirrored = self.journal.issue(draft.signature_id)
        current = set(mirrored.labels) if mirrored else set()
        wanted = set(draft.labels) | ({REGRESSION_LABEL} if reopen else set())
        kept = without_replaced(current, wanted)
        labels = None
        if not wanted <= current or kept != current:
            self.labels.ensure(sorted(wanted - current))
            labels = sorted(kept | wanted)  # a replacement list: keep the labels humans added
        state = "open" if reopen and (mirrored is None or mirrored.state == "closed") else None
        intent = announce_comment(self.journal, draft.signature_id, number, comment) if comment else None
        unchanged = mirrored is not None and mirrored.body_digest == body_digest(draft.body)
        if unchanged and labels is None and state is None:
            result = mirrored
        else:
            try:
                data = self.api.edit_issue(number, body=draft.body, state=state, labels=labels)
            except TrackerError as refused:
                gone = gone_for_good(self.api, refused, number, self.options.bot_label, self._filed)
                if gone is None:  # a passing or unexplained refusal: stop as before, nothing filed twice
                    raise
                return self._file_again(draft, gone, intent)
            result = mirrored_issue(data, draft.signature_id, draft.body)
            self.journal.remember(result)
        # with no edit to send, the comment may be what finds the issue gone: filed again as the edit does
        if intent is not None and (lost := self._send_comment(intent)) is not None:
            return self._file_again(draft, lost, intent)
        assert result is not None
        return issue_ref(result)

    def _file_again(self, draft: IssueDraft, gone: TrackerError, intent: Intent | None) -> IssueRef:
        """Gone for good from here: forget it and file it again, once (its comment settled with it)."""
        self.journal.forget(draft.signature_id, abandon=intent.key if intent else None)
        filed = self.create(draft)
        self.notes.append(f"{gone}; {draft.signature_id} is filed again as {filed.ref}")
        return filed

    def finish_round(self) -> list[str]:
        """Post comments that waited (cap reached, or a crash before their answer), close old intents."""
        try:
            self._flush_outbox()
        except TrackerStopped as stop:
            self.notes.append(f"comments left for the next round: {stop}")
        except TrackerError as exc:
            self.notes.append(f"comments left for the next round after an error: {exc}")
        notes = list(self.notes)
        budget = self.api.budget
        if budget.used:
            left = ""
            if budget.github_remaining is not None:
                left = f"; GitHub says {budget.github_remaining} are left this hour"
            notes.append(f"GitHub: {budget.used} requests this round{left}")
        return notes

    # --- the mirror ---------------------------------------------------------------------------
    def sync(self, *, force: bool = False) -> None:
        """Refresh the mirror once per round: the bot's labelled issues updated since the watermark."""
        if self._synced and not force:
            return
        watermark = self.journal.meta("watermark")
        cached = json.loads(self.journal.meta("issues_etag") or "{}")
        etag = cached.get("etag") if cached.get("since") == watermark else None
        listing = self.api.list_issues(self.options.bot_label, since=watermark, etag=etag)
        self._synced = True
        if listing.not_modified:
            return
        newest = watermark or ""
        for item in listing.items:
            newest = max(newest, item.get("updated_at") or "")
            if "pull_request" in item:
                continue
            self._mirror_listed(item)
        if newest:
            self.journal.set_meta("watermark", newest)
        if listing.etag:
            self.journal.set_meta("issues_etag", json.dumps({"since": newest or None, "etag": listing.etag}))
        self._close_settled_creates()

    def _mirror_listed(self, item: dict[str, Any]) -> None:
        marker = read_marker(item.get("body") or "")
        if marker is None:
            self._remember_orphan(item)
            return
        if not self.api.wrote(item):  # a copied marker in another's issue (`GitHubApi.wrote`)
            self.notes.append(f"issue #{item['number']} carries {marker.signature_id}'s marker, not rounds'")
            return
        known = self.journal.issue(marker.signature_id)
        if known is not None and known.number < item["number"]:
            self.notes.append(
                f"issues #{known.number} and #{item['number']} carry the same signature "
                f"{marker.signature_id}; rounds keeps #{known.number}"
            )
            return
        self.journal.remember(mirrored_issue(item, marker.signature_id, item.get("body") or ""))
        self._forget_orphan(item["number"])

    def _adopt(self, signature_id: str, number: int) -> IssueRef | None:
        """The database names an issue the mirror does not know: ask GitHub about that one issue."""
        data = self.api.get_issue(number)
        if data is None or "pull_request" in data:
            self.notes.append(f"the database named #{number} for {signature_id}, but it is gone from GitHub")
            return None
        marker = read_marker(data.get("body") or "")
        if marker is not None and marker.signature_id != signature_id:
            self.notes.append(
                f"the database named #{number} for {signature_id}, but it is another signature's"
            )
            return None
        if marker is None:
            self.notes.append(f"issue #{number} had no readable marker; it is restored on this round's edit")
            self._forget_orphan(number)
        mirrored = mirrored_issue(data, signature_id, data.get("body") or "")
        if marker is None:
            mirrored = mirrored.model_copy(update={"body_digest": ""})  # force the edit that restores it
        self.journal.remember(mirrored)
        return issue_ref(mirrored)

    def _reconcile_create(self, signature_id: str) -> IssueRef | None:
        """A create whose answer was lost: list again; if GitHub has it, adopt it instead of filing again."""
        try:
            self.sync(force=True)
        except TrackerError:
            return None
        mirrored = self.journal.issue(signature_id)
        if mirrored is None:
            return None
        self.journal.mark(f"create:{signature_id}", "done", number=mirrored.number)
        self.notes.append(f"GitHub's answer to filing #{mirrored.number} was lost; found it by its marker")
        return issue_ref(mirrored)

    def _close_settled_creates(self) -> None:
        """After a fresh listing, an open create intent is settled: GitHub has the issue or never got it."""
        for intent in self.journal.open_intents("create"):
            mirrored = self.journal.issue(intent.signature_id)
            if mirrored is not None:
                self.journal.mark(intent.key, "done", number=mirrored.number)
            elif intent.created_at < self._started:
                self.journal.mark(intent.key, "abandoned")

    def _orphan_titled(self, title: str) -> MirroredIssue | None:
        for number, entry in sorted(self._orphans().items()):
            if entry.get("title") == title:
                return MirroredIssue(
                    signature_id=f"orphan:{number}",
                    number=int(number),
                    url=entry.get("url"),
                    title=title,
                    state=entry.get("state", "open"),
                    state_reason=entry.get("state_reason"),
                    labels=entry.get("labels", []),
                )
        return None

    def _orphans(self) -> dict[str, dict[str, Any]]:
        orphans: dict[str, dict[str, Any]] = json.loads(self.journal.meta("orphans") or "{}")
        return orphans

    def _remember_orphan(self, item: dict[str, Any]) -> None:
        orphans = self._orphans()
        number = str(item["number"])
        if number not in orphans:
            self.notes.append(
                f"issue #{number} carries the {self.options.bot_label!r} label but no readable rounds marker"
            )
        orphans[number] = {
            "title": item.get("title") or "",
            "url": item.get("html_url"),
            "state": item.get("state", "open"),
            "state_reason": item.get("state_reason"),
            "labels": label_names(item),
        }
        self.journal.set_meta("orphans", json.dumps(orphans, sort_keys=True))

    def _forget_orphan(self, number: int) -> None:
        orphans = self._orphans()
        if orphans.pop(str(number), None) is not None:
            self.journal.set_meta("orphans", json.dumps(orphans, sort_keys=True))

    # --- comments -----------------------------------------------------------------------------
    def _send_comment(self, intent: Intent) -> TrackerError | None:  # not None: its issue is gone
        number = intent.number
        assert number is not None
        if number in self._commented or self._comments_posted >= self.options.max_comments_per_round:
            self.journal.mark(intent.key, "deferred")
            why = "one comment per issue per round" if number in self._commented else "the comment cap"
            self.notes.append(f"a comment on #{number} waits for the next round ({why})")
            return None
        try:
            unknown = intent.status == "pending" and intent.created_at < self._started
            if unknown and already_posted(self.api, intent):
                self.journal.mark(intent.key, "done")
                return None
            self.journal.mark(intent.key, "pending")
            self.api.create_comment(number, intent.payload["body"])
        except OutcomeUnknown as exc:
            self.notes.append(f"the comment on #{number} may not have been posted ({exc}); checked later")
            return None
        except TrackerError as refused:
            settled = comment_settled(self.api, refused, number, self.options.bot_label, self._filed)
            if settled is None:
                raise
            self.journal.mark(intent.key, "abandoned")
            if isinstance(settled, IssueLocked):
                self.notes.append(f"{settled}; the comment is dropped")
                return None
            # forgotten (unless already filed again), `find` lets a later round's flush, which has no draft
            # to file, leave it to the round to file again
            self.journal.forget(intent.signature_id, number=number)
            return settled
        self.journal.mark(intent.key, "done")
        self._commented.add(number)
        self._comments_posted += 1
        return None

    def _flush_outbox(self) -> None:
        for intent in self.journal.open_intents("comment"):
            if intent.created_at >= self._started and intent.status == "deferred":
                continue  # deferred this round: handled next round
            if intent.status == "pending" and intent.created_at >= self._started:
                continue  # its answer was lost this round: checked next round
            if (gone := self._send_comment(intent)) is not None:  # the round files it again via `find`
                self.notes.append(f"{gone}; the comment is dropped")


def github_tracker_from_settings(settings: Settings, options: GitHubOptions | None = None) -> GitHubTracker:
    """The tracker a real run uses: GITHUB_TOKEN, GITHUB_REPOSITORY, ROUNDS_GITHUB_API_URL."""
    options = options or GitHubOptions()
    api = github_api_from_settings(settings, options)
    return GitHubTracker(api, Journal.open(settings.signatures_db_path), options)


def github_api_from_settings(settings: Settings, options: GitHubOptions | None = None) -> GitHubApi:
    required = {"GITHUB_TOKEN": settings.github_token, "GITHUB_REPOSITORY": settings.github_repository}
    missing = [name for name, value in required.items() if not value]
    if missing:
        raise ConfigError(
            f"the GitHub tracker needs {' and '.join(missing)}",
            hint="in GitHub Actions pass `GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}`; "
            "GITHUB_REPOSITORY is set for you",
        )
    assert settings.github_token is not None and settings.github_repository is not None
    options = options or GitHubOptions()
    github = make_github(
        settings.github_token.get_secret_value(),
        settings.github_api_url,
        write_interval_seconds=options.write_interval_seconds,
        timeout_seconds=options.timeout_seconds,
    )
    return GitHubApi(
        github,
        settings.github_repository,
        CallBudget(max_requests=options.max_requests_per_round, reserve=options.rate_limit_reserve),
        Waiter(max_wait_seconds=options.max_wait_seconds),
        server_error_retries=options.server_error_retries,
        backoff_seconds=options.backoff_seconds,
    )


# --- helpers ----------------------------------------------------------------------------------------
def _number(ref: str | None) -> int | None:
    if ref and ref.startswith("#") and ref[1:].isdigit():
        return int(ref[1:])
    return None
