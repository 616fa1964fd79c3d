"""After a fix is merged: the merge observed on GitHub (the issue the merge closed is reopened, with one
comment saying what rounds waits for), the release that carries it found by version, then either the quiet
period and an evaluation that closes the issue as resolved, or a recurrence judged by its version: on the
release or later a regression (`regression` label), on an older version only noted. No release, no
resolution.

The whole loop runs here: a round files the issue, the real CLI writes the fix, a person merges it on the fake
GitHub (which closes the issue, as `Fixes #N` does), rounds watches and evaluates."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import START, quick_options, round_against
from fake_messages_api import FakeMessagesApi
from fix_samples import (
    App,
    ask_for_fix,
    diagnose,
    file_pricing_issue,
    fix_run,
    fix_settings,
    good_fix,
    make_app,
)
from fix_samples import pricing_events as pricing

from rounds_bot.cli.app import main
from rounds_bot.events import Fact
from rounds_bot.fixing.job import run_fix_job
from rounds_bot.fixing.proposals import propose_fixes
from rounds_bot.github.pulls import pulls_api_from_settings
from rounds_bot.lifecycle import FixRecord
from rounds_bot.models import ErrorEvent
from rounds_bot.settings import Settings
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop
MERGED = START + timedelta(hours=2)
RELEASED = START + timedelta(hours=3)
QUIET_HOURS = 24


@pytest.fixture
def app(tmp_path: Path) -> App:
    return make_app(tmp_path / "app")


@pytest.fixture
def fake(app: App) -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake(git_remote=app.remote)


def other_problem(version: str, at: datetime) -> list[ErrorEvent]:
    """Another error of the same service: how rounds learns which version is running."""
    return [
        ErrorEvent(
            event_id=f"evt-cart-{version}-{at:%H%M}",
            timestamp=at,
            service="shop",
            error_type="KeyError",
            message="KeyError: 'currency'",
            stacktrace='Traceback (most recent call last):\n  File "app/cart.py", line 3, in total\n'
            "KeyError: 'currency'",
            service_version=version,
        )
    ]


class Shop:
    """The application, its issue and the fix's pull request, driven through time."""

    def __init__(self, tmp_path: Path, fake: PullsFakeGitHub, app: App, claude_bin: str) -> None:
        self.tmp_path, self.fake, self.app, self.claude_bin = tmp_path, fake, app, claude_bin
        self.signature_id, self.issue = file_pricing_issue(fake, tmp_path)
        with self.store() as store:
            diagnose(store, self.signature_id)
            ask_for_fix(store, self.signature_id, self.issue)
        with FakeMessagesApi(good_fix()) as api, self.store() as store:
            [outcome] = propose_fixes(fix_run(self.settings(api), store, START + timedelta(hours=1)))
        assert outcome.status == "proposed", outcome.reason
        self.pr = outcome.pr_number or 0

    def settings(self, api: FakeMessagesApi | None = None) -> Settings:
        return fix_settings(
            self.tmp_path,
            self.fake,
            self.app,
            self.claude_bin,
            api or FakeMessagesApi([]),
            ROUNDS_FIX_QUIET_HOURS=str(QUIET_HOURS),
        )

    def store(self) -> _Open:
        return _Open(self.tmp_path / "rounds.db")

    def merge(self) -> None:
        """A person merges the pull request; GitHub closes the issue it fixes."""
        self.fake.merge(self.pr, at=MERGED)
        issue = self.fake.repo.issues[self.issue]
        self.fake.state.set_state(issue, "closed", "completed")
        self.fake.state.touch(issue)

    def round(self, events: list[ErrorEvent], at: datetime) -> list[str]:
        minutes = int((at - START).total_seconds() // 60)
        report = round_against(
            self.fake, self.tmp_path, events, minutes, settings={"ROUNDS_DIAGNOSER": "off"}
        )
        return list(report.notes)

    def fix_job(self, at: datetime) -> list[str]:
        settings = self.settings()
        with self.store() as store:
            return run_fix_job(settings, store, pulls_api_from_settings(settings, quick_options()), at)

    def fix(self) -> FixRecord:
        with self.store() as store:
            return store.fix_records(self.signature_id)[-1]

    def facts(self, kind: Fact) -> list[dict]:
        with self.store() as store:
            return [dict(f.payload) for f in store.facts([kind])]


class _Open:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Store:
        self.store = Store.open(self.path)
        return self.store

    def __exit__(self, *_: object) -> None:
        self.store.close()


@pytest.fixture
def shop(tmp_path, fake, app, claude_bin) -> Shop:
    return Shop(tmp_path, fake, app, claude_bin)


def waiting(shop: Shop) -> list[str]:
    return [c for c in shop.fake.replies(shop.issue) if f"<!-- rounds:waiting {shop.pr} -->" in c]


def shipped(shop: Shop) -> None:
    """Merged, observed by the fix job, and released: version 1.1.0 appears after the merge."""
    shop.merge()
    notes = shop.fix_job(MERGED + timedelta(minutes=10))
    assert any(f"#{shop.pr} was merged" in n for n in notes)
    applied = shop.fix()
    assert (applied.status, applied.versions_before, applied.rate_before) == ("merged", ["1.0.0"], 6.0)
    assert (applied.before_from, applied.before_occurrences) == (START.isoformat(), 12)
    # the merge's `Fixes #N` closed the issue: rounds reopens it and says, once, what it waits for
    issue = shop.fake.repo.issues[shop.issue]
    assert (issue.state, issue.state_reason) == ("open", "reopened")
    [told] = waiting(shop)
    assert f"The fix in #{shop.pr} was merged at {MERGED.isoformat()}." in told
    assert "GitHub closed this issue when the pull request was merged; rounds reopened it" in told
    assert "a `service.version` of `shop` newer than `1.0.0` in the telemetry it reads" in told
    notes = shop.round(other_problem("1.1.0", RELEASED), RELEASED + timedelta(minutes=5))
    assert any("shipped in 1.1.0" in n for n in notes)
    assert shop.fix().released_version == "1.1.0"


def test_a_shipped_fix_is_evaluated_and_resolved_after_the_quiet_period(shop):
    shipped(shop)
    early = shop.fix_job(RELEASED + timedelta(hours=QUIET_HOURS - 1))
    assert any(f"quiet for {QUIET_HOURS - 1}.0 of {QUIET_HOURS} h" in n for n in early)
    assert shop.fix().status == "merged"

    shop.fix_job(RELEASED + timedelta(hours=QUIET_HOURS, minutes=1))
    shop.fix_job(RELEASED + timedelta(hours=QUIET_HOURS, minutes=40))  # a second run posts nothing more
    [evaluation] = [c for c in shop.fake.replies(shop.issue) if "### Fix evaluation" in c]
    assert f"The fix in #{shop.pr} was merged" in evaluation and "`1.1.0`" in evaluation
    # rounds counted the problem for 2 hours before the merge, not 7 days: the row says so
    assert "| 2 hours before the merge (counted since 2026-03-02 09:00 UTC) | 12 | 6.00 |" in evaluation
    assert "| since the merge | 0 | 0.00 |" in evaluation
    assert "| since release `1.1.0` | 0 | 0.00 |" in evaluation
    assert "No version information" not in evaluation
    assert len(waiting(shop)) == 1  # said once, not every run
    issue = shop.fake.repo.issues[shop.issue]
    assert (issue.state, issue.state_reason) == ("closed", "completed")
    fix = shop.fix()
    assert (fix.status, fix.rate_before, fix.rate_after_release) == ("resolved", 6.0, 0.0)
    assert fix.judged_from == "release"
    with shop.store() as store:
        assert store.status(shop.signature_id) == "resolved"
    assert shop.fake.repo.pulls[shop.pr].merged_at is not None  # merged by a person, never by rounds
    assert not [
        e for e in shop.fake.exchanges if e.operation == "pulls/update" and "state" in (e.request_json or {})
    ]


def test_a_recurrence_on_the_fixed_release_reopens_the_issue_as_a_regression(shop):
    shipped(shop)
    later = RELEASED + timedelta(hours=2)
    shop.round(pricing(5, version="1.1.0", at=later - timedelta(minutes=5)), later)
    issue = shop.fake.repo.issues[shop.issue]
    assert issue.state == "open" and "regression" in issue.labels
    comment = shop.fake.replies(shop.issue)[-1]
    assert "Regression: it recurred on 1.1.0, at or above 1.1.0" in comment
    assert f"the first release after pull request {shop.pr} was merged (5 occurrences)" in comment
    fix = shop.fix()
    assert fix.status == "regressed" and "1.1.0" in (fix.regression or "")
    # no evaluation and no closing afterwards: the fix did not hold
    shop.fix_job(later + timedelta(hours=QUIET_HOURS * 2))
    assert not [c for c in shop.fake.replies(shop.issue) if "### Fix evaluation" in c]
    assert shop.fake.repo.issues[shop.issue].state == "open"


def test_a_recurrence_on_an_older_version_is_only_noted(shop):
    shipped(shop)
    later = RELEASED + timedelta(hours=2)
    notes = shop.round(pricing(4, version="1.0.0", at=later - timedelta(minutes=5)), later)
    assert any("older than 1.1.0" in n for n in notes)
    issue = shop.fake.repo.issues[shop.issue]
    assert issue.state == "open" and "regression" not in issue.labels  # open since the merge, till evaluated
    assert not [c for c in shop.fake.replies(shop.issue) if c.startswith("Regression")]
    [noted] = shop.facts(Fact.RECURRENCE_NOTED)
    assert (noted["pr"], noted["versions"], noted["count"]) == (shop.pr, ["1.0.0"], 4)
    assert shop.fix().status == "merged"
    # old instances do not hold the resolution back: it still comes after the quiet period
    shop.fix_job(RELEASED + timedelta(hours=QUIET_HOURS, minutes=1))
    assert shop.fix().status == "resolved"
    assert shop.fake.repo.issues[shop.issue].state == "closed"


def test_a_recurrence_before_the_release_is_noted_and_the_merge_alone_resolves_nothing(shop):
    shop.merge()
    shop.fix_job(MERGED + timedelta(minutes=10))
    before_release = MERGED + timedelta(minutes=40)
    notes = shop.round(pricing(3, version="1.0.0", at=before_release - timedelta(minutes=5)), before_release)
    assert any("before any release newer than the merge" in n for n in notes)
    issue = shop.fake.repo.issues[shop.issue]
    assert issue.state == "open" and "regression" not in issue.labels
    # three times the quiet period, and still no newer version in the telemetry: nothing is resolved
    notes = shop.fix_job(MERGED + timedelta(hours=QUIET_HOURS * 3))
    waits = "merged 3 days ago; waits for a release newer than 1.0.0 in the telemetry"
    assert f"{shop.signature_id}: {waits}" in notes
    assert shop.fix().status == "merged"
    assert shop.fake.repo.issues[shop.issue].state == "open"
    assert not [c for c in shop.fake.replies(shop.issue) if "### Fix evaluation" in c]
    assert len(waiting(shop)) == 1
    with shop.store() as store:
        assert store.status(shop.signature_id) == "open"


def test_a_release_the_round_saw_before_the_merge_was_observed_still_counts(shop):
    """The round runs before the fix job: 1.1.0 deployed right after the merge is in its telemetry first. It
    is not taken for a version that ran before the merge, and it is the release that carries the fix."""
    shop.merge()
    notes = shop.round(other_problem("1.1.0", RELEASED), RELEASED + timedelta(minutes=5))
    assert not any("shipped" in n for n in notes)  # the merge is not known yet
    notes = shop.fix_job(RELEASED + timedelta(minutes=10))
    assert f"{shop.signature_id}: the fix in #{shop.pr} shipped in 1.1.0" in notes
    fix = shop.fix()
    assert (fix.versions_before, fix.released_version, fix.released_at) == (
        ["1.0.0"],
        "1.1.0",
        RELEASED.isoformat(),
    )
    [told] = waiting(shop)
    assert f"The first release after it, `1.1.0`, was first seen at {RELEASED.isoformat()}" in told
    shop.fix_job(RELEASED + timedelta(hours=QUIET_HOURS, minutes=1))
    assert shop.fix().status == "resolved"


def test_the_changelog_lists_the_fix_with_its_status_and_rates(shop, tmp_path, clean_env):
    shipped(shop)
    shop.fix_job(RELEASED + timedelta(hours=QUIET_HOURS, minutes=1))
    clean_env.setenv("SIGNATURES_DB_PATH", str(tmp_path / "rounds.db"))
    result = CliRunner().invoke(main, ["changelog"])
    assert result.exit_code == 0, result.output
    assert f"| **resolved** | `{shop.signature_id}` | #{shop.issue} | #{shop.pr} |" in result.output
    assert "| `1.1.0` | 6.00 |" in result.output


def test_a_pull_request_closed_without_merging_abandons_the_fix_and_nothing_is_evaluated(shop):
    shop.fake.close(shop.pr)
    notes = shop.fix_job(MERGED)
    assert any(f"#{shop.pr} was closed without merging" in n for n in notes)
    assert shop.fix().status == "abandoned"
    shop.fix_job(MERGED + timedelta(hours=QUIET_HOURS * 3))
    assert not [c for c in shop.fake.replies(shop.issue) if "### Fix evaluation" in c]
    assert shop.fake.repo.issues[shop.issue].state == "open"
