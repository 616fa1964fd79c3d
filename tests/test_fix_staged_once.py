"""One fix request is edited once, even when a later run's fix-edit comes before this run's fix-publish.

The fix-test job runs outside the database's lock (up to an hour) and the schedule starts a run every 30
minutes, so the next run's fix-edit can find the request still pending. Fix-edit records that it staged the
request in its run; a later run's fix-edit leaves it to that run until it publishes, or for
`staging.STAGED_HOLD` at most, and says so either way."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import START
from fix_samples import (
    BUGGY_LINE,
    FIXED_LINE,
    App,
    ask_for_fix,
    diagnose,
    file_pricing_issue,
    fix_run,
    fix_settings,
    make_app,
)

from rounds_bot.fixing.blocked import needs_probe, record_ready, waiting_because
from rounds_bot.fixing.bundle import Bundle, Report, Staged, Verdict, read_bundle, write_bundle
from rounds_bot.fixing.editing import edit_requests
from rounds_bot.fixing.editor import EditRun
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.publishing import publish_bundle
from rounds_bot.fixing.requests import FixRequest, pending_requests
from rounds_bot.fixing.run import rules_from
from rounds_bot.fixing.staging import STAGED_HOLD
from rounds_bot.fixing.testing import verdict_for
from rounds_bot.settings import Settings
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop
TEST_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


class CountingEditor:
    """The model, as far as the edit stage sees it: it fixes the bug in the worktree and costs money."""

    def __init__(self) -> None:
        self.edits = 0

    def estimate_cost(self, prompt: Any) -> float:
        return 0.01

    def edit(self, path: Path, prompt: Any) -> EditRun:
        self.edits += 1
        pricing = Path(path) / "app" / "pricing.py"
        pricing.write_text(pricing.read_text().replace(BUGGY_LINE, FIXED_LINE))
        return EditRun(status="ok", cost_usd=0.25, turns=2)


@pytest.fixture
def app(tmp_path: Path) -> App:
    return make_app(tmp_path / "app")


@pytest.fixture
def fake(app: App) -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake(git_remote=app.remote)


@pytest.fixture
def issue(fake: PullsFakeGitHub, tmp_path: Path) -> int:
    """The pricing bug's issue, diagnosed, with alice's `/rounds fix` waiting."""
    signature_id, number = file_pricing_issue(fake, tmp_path)
    store = Store.open(tmp_path / "rounds.db")
    try:
        diagnose(store, signature_id)
        ask_for_fix(store, signature_id, number)
    finally:
        store.close()
    return number


def settings(tmp_path: Path, fake: PullsFakeGitHub, app: App) -> Settings:
    return fix_settings(tmp_path, fake, app, "claude", SimpleNamespace(url="http://127.0.0.1:9"))  # type: ignore[arg-type]


def fix_edit(
    tmp_path: Path, fake: PullsFakeGitHub, app: App, editor: CountingEditor, run_id: str, at: timedelta
) -> tuple[list[Staged | Report], list[str]]:
    """Run `run_id`'s fix-edit job, `at` after START: what it carried into its bundle, and its notes."""
    configured = settings(tmp_path, fake, app)
    store = Store.open(configured.signatures_db_path)
    try:
        run = fix_run(configured, store, START + at)
        run.editor = editor  # type: ignore[assignment]
        return edit_requests(run, run_id), run.notes
    finally:
        store.close()


def fix_publish(
    tmp_path: Path,
    fake: PullsFakeGitHub,
    app: App,
    run_id: str,
    results: list[Staged | Report],
    at: timedelta,
) -> list[Any]:
    """That run's fix-test and fix-publish jobs: the tests of each staged change, then publishing."""
    configured = settings(tmp_path, fake, app)
    staged = [result for result in results if isinstance(result, Staged)]
    verdicts: dict[str, Verdict] = {
        item.proposal.request: verdict_for(Git(app.checkout), item, rules_from(configured, TEST_ENV))
        for item in staged
    }
    folder = tmp_path / f"bundle-{run_id}"
    reports = [result for result in results if isinstance(result, Report)]
    digest = write_bundle(folder, Bundle(repository="octo/app", run=run_id, reports=reports), staged)
    store = Store.open(configured.signatures_db_path)
    try:
        run = fix_run(configured, store, START + at)
        return publish_bundle(run, read_bundle(folder, digest=digest), verdicts)
    finally:
        store.close()


def pending(tmp_path: Path) -> list[FixRequest]:
    store = Store.open(tmp_path / "rounds.db")
    try:
        return pending_requests(store)
    finally:
        store.close()


def ready(tmp_path: Path) -> None:
    """The request's tests passed on its unchanged base in an earlier run: the model runs on the next."""
    store = Store.open(tmp_path / "rounds.db")
    try:
        [request] = pending_requests(store)
        record_ready(store, request, "0" * 40, START - timedelta(minutes=30))
        assert not needs_probe(store, request)
    finally:
        store.close()


def test_two_overlapping_runs_edit_a_request_once(tmp_path, fake, app, issue, clean_env):
    ready(tmp_path)
    editor = CountingEditor()
    first, _ = fix_edit(tmp_path, fake, app, editor, "101", timedelta(minutes=1))
    [change] = first
    assert isinstance(change, Staged) and change.proposal.kind == "change" and editor.edits == 1
    # run 101's fix-test takes its hour; run 102's round and fix-edit, 30 minutes later, come first
    second, notes = fix_edit(tmp_path, fake, app, editor, "102", timedelta(minutes=31))
    assert second == [] and editor.edits == 1
    [said] = notes
    assert f"#{issue}" in said and "not edited again: run 101 staged it" in said
    assert "its fix-publish has not answered it yet" in said
    [request] = pending(tmp_path)
    store = Store.open(tmp_path / "rounds.db")
    try:  # the staging is no refusal: the request is still ready for the model, and says nothing more
        assert not needs_probe(store, request)
        assert "staged" not in (waiting_because(store, request) or "")
    finally:
        store.close()
    # run 101's fix-publish: one draft pull request; run 102's fix-publish has nothing of it to publish
    [outcome] = fix_publish(tmp_path, fake, app, "101", first, timedelta(minutes=70))
    assert outcome.status == "proposed" and len(fake.repo.pulls) == 1
    assert fix_publish(tmp_path, fake, app, "102", second, timedelta(minutes=75)) == []
    third, notes = fix_edit(tmp_path, fake, app, editor, "103", timedelta(minutes=91))
    assert (third, notes, editor.edits, pending(tmp_path)) == ([], [], 1, [])
    store = Store.open(tmp_path / "rounds.db")
    try:
        assert len(store.bookings(request.signature_id)) == 1  # the model paid once
    finally:
        store.close()


def test_a_request_whose_run_never_published_is_edited_again_after_the_hold_and_says_why(
    tmp_path, fake, app, issue, clean_env
):
    ready(tmp_path)
    editor = CountingEditor()
    staged_at = timedelta(minutes=1)
    fix_edit(tmp_path, fake, app, editor, "101", staged_at)  # then its run fails: no fix-publish
    held, _ = fix_edit(tmp_path, fake, app, editor, "102", staged_at + STAGED_HOLD - timedelta(minutes=1))
    assert held == [] and editor.edits == 1
    [again], notes = fix_edit(tmp_path, fake, app, editor, "103", staged_at + STAGED_HOLD)
    assert isinstance(again, Staged) and again.proposal.kind == "change" and editor.edits == 2
    [said] = notes
    assert f"#{issue}" in said and "edited again: run 101 staged it" in said
    assert "did not answer it within 2 hours" in said
    # and now run 103 holds it
    held, notes = fix_edit(
        tmp_path, fake, app, editor, "104", staged_at + STAGED_HOLD + timedelta(minutes=30)
    )
    assert held == [] and editor.edits == 2 and "run 103 staged it" in notes[0]


def test_the_same_run_run_again_edits_again(tmp_path, fake, app, issue, clean_env):
    """A re-run of the fix-edit job keeps its run's id: its bundle replaces the one before."""
    ready(tmp_path)
    editor = CountingEditor()
    fix_edit(tmp_path, fake, app, editor, "101", timedelta(minutes=1))
    [again], notes = fix_edit(tmp_path, fake, app, editor, "101", timedelta(minutes=20))
    assert isinstance(again, Staged) and notes == [] and editor.edits == 2


def test_a_probe_published_by_its_run_lets_the_next_run_edit_at_once(tmp_path, fake, app, issue, clean_env):
    """A probe (its tests alone on the unchanged base, no model) stays pending once published: the next
    run's fix-edit runs the model for it at once, the probe's run having published what it staged."""
    editor = CountingEditor()
    [probe], _ = fix_edit(tmp_path, fake, app, editor, "101", timedelta(minutes=1))
    assert isinstance(probe, Staged) and probe.proposal.kind == "probe" and editor.edits == 0
    [outcome] = fix_publish(tmp_path, fake, app, "101", [probe], timedelta(minutes=20))
    assert outcome.status == "waiting" and len(pending(tmp_path)) == 1
    [change], notes = fix_edit(tmp_path, fake, app, editor, "102", timedelta(minutes=31))
    assert isinstance(change, Staged) and change.proposal.kind == "change"
    assert notes == [] and editor.edits == 1


def test_without_a_run_id_nothing_is_staged_or_held(tmp_path, fake, app, issue, clean_env):
    """`rounds fix` (every stage in one process) and callers without a workflow run keep no staging."""
    ready(tmp_path)
    editor = CountingEditor()
    fix_edit(tmp_path, fake, app, editor, "", timedelta(minutes=1))
    [again], notes = fix_edit(tmp_path, fake, app, editor, "", timedelta(minutes=2))
    assert isinstance(again, Staged) and notes == [] and editor.edits == 2


def test_the_edit_stage_of_a_later_run_says_it_left_the_request_to_the_run_that_staged_it(
    tmp_path, fake, app, issue, clean_env
):
    from fake_github.rounds import quick_options

    from rounds_bot.fixing.stages import edit_stage
    from rounds_bot.github.pulls import pulls_api_from_settings

    ready(tmp_path)
    fix_edit(tmp_path, fake, app, CountingEditor(), "101", timedelta(minutes=1))
    claude = tmp_path / "claude"  # found, never run: the request is left to run 101
    claude.write_text("#!/bin/sh\nexit 1\n")
    claude.chmod(0o755)
    api = SimpleNamespace(url="http://127.0.0.1:9")
    configured = fix_settings(tmp_path, fake, app, str(claude), api)  # type: ignore[arg-type]
    store = Store.open(configured.signatures_db_path)
    try:
        pulls = pulls_api_from_settings(configured, quick_options())
        at = START + timedelta(minutes=31)
        edited = edit_stage(configured, store, pulls, at, out=tmp_path / "bundle-102", run_id="102")
    finally:
        store.close()
    assert edited.proposals == 0
    assert edited.lines[0] == "no fix to edit in this run"
    assert any("not edited again: run 101 staged it" in line for line in edited.lines[1:])
    assert read_bundle(tmp_path / "bundle-102", digest=edited.digest).staged == []
