"""Rounds against the fake GitHub when rounds' own issue is gone, moved, locked, or issues are disabled.

The promise: never a twin, nothing lost (occurrences keep counting), and one message saying what GitHub said
and what to do. An issue deleted or transferred out of the repository is gone for good for rounds (its
listing, its database rebuild and the `/rounds` commands see this repository only): the next edit files a
new issue here. A locked issue keeps being updated; only the comment GitHub refuses is dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fake_github import FakeGitHub
from fake_github.fixtures import running_fake
from fake_github.rounds import START, error_event, round_against, tracker_for

from rounds_bot.errors import TrackerError
from rounds_bot.github.refusals import IssueGone, IssueLocked, IssueNotConfirmed, issue_refusal
from rounds_bot.marker import read_marker
from rounds_bot.round.report import RoundReport, render_report
from rounds_bot.store import Store
from rounds_bot.tracker.base import IssueDraft

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


def events_up_to(minute: int) -> list:
    """Three problems, occurring once at START and once more every 20 minutes up to `minute`."""
    return [
        error_event(i, at=START + timedelta(minutes=at)) for at in range(0, minute + 1, 20) for i in range(3)
    ]


def run(tmp_path: Path, fake: FakeGitHub, minute: int) -> RoundReport:
    return round_against(fake, tmp_path, events_up_to(minute), minute + 1)


def issues_by_signature(fake: FakeGitHub) -> Counter:
    return Counter(read_marker(issue.body).signature_id for issue in fake.issues())


def saved(tmp_path: Path) -> dict[str, tuple[str | None, int]]:
    store = Store.open(tmp_path / "rounds.db")
    try:
        return {s.id: (s.issue_ref, s.total_count) for s in store.signatures()}
    finally:
        store.close()


def said(report: RoundReport) -> str:
    """The report's Markdown as read (a reference is kept from linking by a zero-width space after `#`)."""
    return render_report(report).replace("#\u200b", "#")


def first_issue_signature(fake: FakeGitHub) -> str:
    return read_marker(fake.repo.issues[1].body).signature_id


def test_a_deleted_issue_is_filed_again_once_and_its_counts_go_on(tmp_path, fake_github: FakeGitHub):
    run(tmp_path, fake_github, 0)
    signature = first_issue_signature(fake_github)
    del fake_github.repo.issues[1]
    fake_github.repo.deleted.add(1)

    report = run(tmp_path, fake_github, 20)

    assert issues_by_signature(fake_github) == Counter({sid: 1 for sid in saved(tmp_path)})
    ref, total = saved(tmp_path)[signature]
    assert ref == "#4" and total == 2  # the occurrences counted before the deletion are kept
    assert read_marker(fake_github.repo.issues[4].body).total_count == 2
    assert "#1 was deleted" in said(report)
    run(tmp_path, fake_github, 40)  # the next round updates the new issue, files nothing more
    assert len(fake_github.issues()) == 3 and saved(tmp_path)[signature] == ("#4", 3)


def test_a_transferred_issue_is_filed_again_in_this_repository(tmp_path, fake_github: FakeGitHub):
    run(tmp_path, fake_github, 0)
    signature = first_issue_signature(fake_github)
    del fake_github.repo.issues[1]
    fake_github.repo.transferred[1] = f"{fake_github.base_url}/repos/octo/elsewhere/issues/7"

    report = run(tmp_path, fake_github, 20)

    assert saved(tmp_path)[signature] == ("#4", 2)
    assert issues_by_signature(fake_github)[signature] == 1
    assert "#1 is no longer in octo/app" in said(report)
    run(tmp_path, fake_github, 40)
    assert len(fake_github.issues()) == 3


def test_a_locked_issue_is_reopened_and_updated_and_the_refused_comment_dropped(
    tmp_path, fake_github: FakeGitHub
):
    run(tmp_path, fake_github, 0)
    signature = first_issue_signature(fake_github)
    issue = fake_github.repo.issues[1]
    issue.locked, issue.lock_reason = True, "too heated"
    fake_github.state.set_state(issue, "closed", "completed")

    report = run(tmp_path, fake_github, 20)

    assert issue.state == "open" and "regression" in issue.labels
    assert saved(tmp_path)[signature] == ("#1", 2)
    markdown = said(report)
    assert "#1 is locked: GitHub refused" in markdown and "lacks" not in markdown
    requests_before = len(fake_github.requests("issues/create-comment"))
    later = run(tmp_path, fake_github, 40)
    # the refused comment is not tried again round after round
    assert len(fake_github.requests("issues/create-comment")) == requests_before
    assert "locked" not in said(later)
    assert len(fake_github.issues()) == 3


def test_issues_disabled_mid_life_is_one_clear_error_and_nothing_is_filed_anew(
    tmp_path, fake_github: FakeGitHub
):
    run(tmp_path, fake_github, 0)
    fake_github.repo.has_issues = False
    with pytest.raises(TrackerError) as caught:
        run(tmp_path, fake_github, 20)
    message = str(caught.value)
    assert "Issues are disabled for this repo" in message and "enable" in message
    assert "probably" not in message
    fake_github.repo.has_issues = True
    run(tmp_path, fake_github, 40)
    assert sorted(issues_by_signature(fake_github).values()) == [1, 1, 1]
    assert sorted(total for _, total in saved(tmp_path).values()) == [3, 3, 3]


# --- only a confirmed disappearance is "gone": a transient or ambiguous refusal never files a twin ----------
def draft(body: str, signature_id: str = "sig_x") -> IssueDraft:
    return IssueDraft(signature_id=signature_id, title=f"T {signature_id}", body=body, labels=["rounds"])


def test_a_transient_404_on_an_edit_files_no_twin_and_the_next_round_updates_the_same_issue(
    tmp_path, fake_github: FakeGitHub
):
    run(tmp_path, fake_github, 0)
    fake_github.fail(404, "issues/update", message="Not Found")  # a replica that lags, a passing hiccup

    with pytest.raises(TrackerError):  # as before: the round stops, nothing is lost
        run(tmp_path, fake_github, 20)

    assert len(fake_github.issues()) == 3
    run(tmp_path, fake_github, 40)
    assert sorted(issues_by_signature(fake_github).values()) == [1, 1, 1]
    assert sorted(ref for ref, _ in saved(tmp_path).values()) == ["#1", "#2", "#3"]
    assert sorted(total for _, total in saved(tmp_path).values()) == [3, 3, 3]


def test_a_404_on_the_edit_right_after_filing_files_no_twin(tmp_path, fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, tmp_path / "journal.db")
    filed = tracker.create(draft("body"))
    fake_github.fail(404, "issues/update", message="Not Found")  # GitHub not yet answering for the new issue

    with pytest.raises(TrackerError):
        tracker.update(filed, draft("body, caused by #9"))

    assert [issue.number for issue in fake_github.issues()] == [1]
    assert tracker.update(filed, draft("body, caused by #9")).ref == "#1"


def test_a_410_without_a_message_is_not_taken_for_a_deletion(tmp_path, fake_github: FakeGitHub):
    run(tmp_path, fake_github, 0)
    fake_github.fail(410, "issues/update", message="")

    with pytest.raises(TrackerError) as caught:
        run(tmp_path, fake_github, 20)

    assert len(fake_github.issues()) == 3
    assert "nothing was lost" not in caught.value.hint
    run(tmp_path, fake_github, 40)
    assert sorted(ref for ref, _ in saved(tmp_path).values()) == ["#1", "#2", "#3"]


def test_a_404_on_a_comment_keeps_it_for_a_later_round(tmp_path, fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, tmp_path / "journal.db")
    filed = tracker.create(draft("b0"))
    fake_github.fail(404, "issues/create-comment", message="Not Found")

    with pytest.raises(TrackerError):
        tracker.update(filed, draft("b1"), comment="Diagnosis added")
    tracker.journal.close()

    later = tracker_for(fake_github, tmp_path / "journal.db")
    later._started = "9999"  # a later round
    later.finish_round()
    assert [c.body.split("\n")[0] for c in fake_github.repo.comments.values()] == ["Diagnosis added"]


def test_a_comment_after_refiling_goes_to_the_new_issue(tmp_path, fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, tmp_path / "journal.db")
    first = tracker.create(draft("b0"))
    fake_github.repo.issues.pop(1)
    fake_github.repo.deleted.add(1)
    refiled = tracker.update(first, draft("b1"), comment="Diagnosis added")
    tracker.journal.close()

    later = tracker_for(fake_github, tmp_path / "journal.db")
    later.update(refiled, draft("b2"), comment="Diagnosis added")

    assert refiled.ref == "#2"
    assert [c.issue_number for c in fake_github.repo.comments.values()] == [2]


def test_a_comment_of_unknown_outcome_on_a_deleted_issue_is_settled_once(tmp_path, fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, tmp_path / "journal.db")
    filed = tracker.create(draft("b0"))
    fake_github.fail(502, "issues/create-comment", applied=True)  # posted, its answer lost
    tracker.update(filed, draft("b1"), comment="hello")
    tracker.journal.close()
    fake_github.repo.issues.pop(1)
    fake_github.repo.deleted.add(1)

    notes = []
    for _ in range(2):
        later = tracker_for(fake_github, tmp_path / "journal.db")
        later._started = "9999"  # a later round
        notes.append(" ".join(later.finish_round()))
        later.journal.close()

    assert "#1 was deleted" in notes[0] and "disabled" not in notes[0]
    assert "#1" not in notes[1]


def test_the_fake_never_hands_out_a_deleted_issue_number_again(tmp_path, fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, tmp_path / "journal.db")
    tracker.create(draft("x", "sig_x"))
    tracker.create(draft("y", "sig_y"))
    fake_github.repo.issues.pop(2)
    fake_github.repo.deleted.add(2)

    assert tracker.create(draft("z", "sig_z")).ref == "#3"


def test_only_githubs_locked_conversation_message_counts_as_locked():
    locked = issue_refusal(403, "Unable to create comment because issue is locked.", 5, "octo/app", "comment")
    assert isinstance(locked, IssueLocked) and "description is still updated" in locked.hint
    edit = issue_refusal(403, "Unable to create comment because issue is locked.", 5, "octo/app", "edit")
    assert isinstance(edit, IssueLocked) and "description is still updated" not in edit.hint
    assert (
        issue_refusal(403, "Resource not accessible by integration (unlocked)", 5, "octo/app", "comment")
        is None
    )
    # a bare 404, or a 410 without a reason, is not "gone" until GitHub confirms it (`gone.confirm_gone`)
    for status, message in ((404, "Not Found"), (410, "")):
        unsure = issue_refusal(status, message, 5, "octo/app", "edit")
        assert isinstance(unsure, IssueNotConfirmed) and not isinstance(unsure, IssueGone)
    assert isinstance(issue_refusal(410, "This issue was deleted", 5, "octo/app", "edit"), IssueGone)


def test_a_comment_that_finds_the_issue_deleted_files_it_again_once(tmp_path, fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, tmp_path / "journal.db")
    first = tracker.create(draft("b0"))
    tracker.journal.close()
    fake_github.repo.issues.pop(1)
    fake_github.repo.deleted.add(1)

    refs, current = [], first
    for i in range(2):  # the body is unchanged: no edit is sent, only the comment meets the 410
        later = tracker_for(fake_github, tmp_path / "journal.db")
        current = later.update(current, draft("b0"), comment=f"Regressed again {i}")
        refs.append(current.ref)
        later.journal.close()

    assert refs == ["#2", "#2"]
    assert [issue.number for issue in fake_github.issues()] == [2]


def test_a_404_on_an_issue_whose_label_a_person_removed_files_no_twin(tmp_path, fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, tmp_path / "journal.db")
    filed = tracker.create(draft("b0"))
    tracker.journal.close()
    fake_github.repo.issues[1].labels = []  # a person took rounds' label off
    fake_github.fail(404, "issues/update", message="Not Found")  # two passing faults in a row
    fake_github.fail(404, "issues/get", message="Not Found")

    later = tracker_for(fake_github, tmp_path / "journal.db")
    with pytest.raises(TrackerError):
        later.update(filed, draft("b1"))

    assert [issue.number for issue in fake_github.issues()] == [1]
