"""Filing streams a round's issues: each one's evidence is found as it is filed, so a round filing thousands
of issues never holds all of their evidence at once, and a tracker that stops early leaves the rest unread."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from signature_samples import a_signature

from rounds_bot.render import markdown as md
from rounds_bot.render.issue import RelatedLink
from rounds_bot.round.evidence import IssueEvidence
from rounds_bot.round.filing import IssueStyle, _with_refs, file_issues
from rounds_bot.round.planning import IssuePlan
from rounds_bot.tracker.base import IssueDraft, IssueRef, TrackerStopped
from rounds_bot.tracker.dryrun import DryRunTracker


class RecordingEvidence:
    """Evidence that says when it was asked for, in the order of everything the round did."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def of(self, plan: IssuePlan) -> IssueEvidence:
        self.log.append(f"evidence {plan.signature_id}")
        return IssueEvidence()


class RecordingTracker(DryRunTracker):
    def __init__(self, folder: Path, log: list[str], stop_after: int | None = None) -> None:
        super().__init__(folder)
        self.log = log
        self.stop_after = stop_after

    def create(self, draft: IssueDraft) -> IssueRef:
        if self.stop_after is not None and self.log.count("create") >= self.stop_after:
            raise TrackerStopped("request budget spent")
        self.log.append("create")
        return super().create(draft)


def plans(*ids: str) -> list[IssuePlan]:
    return [IssuePlan(sid, "new", None, a_signature(sid)) for sid in ids]


def test_each_issues_evidence_is_found_as_it_is_filed(tmp_path):
    log: list[str] = []
    filed = file_issues(
        RecordingTracker(tmp_path, log), plans("sig_a", "sig_b"), {}, {}, RecordingEvidence(log), IssueStyle()
    )
    assert log == ["evidence sig_a", "create", "evidence sig_b", "create"]
    assert set(filed.issues) == {"sig_a", "sig_b"}


def test_a_tracker_that_stops_leaves_the_rest_of_the_evidence_unread(tmp_path):
    log: list[str] = []
    tracker = RecordingTracker(tmp_path, log, stop_after=1)
    filed = file_issues(
        tracker, plans("sig_a", "sig_b", "sig_c"), {}, {}, RecordingEvidence(log), IssueStyle()
    )
    assert log == ["evidence sig_a", "create", "evidence sig_b"]
    assert filed.not_reached == {"sig_b", "sig_c"}


def test_evidence_that_names_no_other_signature_is_linked_as_it_is() -> None:
    """Evidence without related or cascading signatures has nothing to link to this round's issues: it is
    filed as gathered, equal to what linking it would give."""
    issues = {"sig_other": IssueRef(signature_id="sig_other", ref="#3", url="u", state="open")}
    gathered = IssueEvidence(refs={"sig_x": "#1"})
    assert _with_refs(gathered, issues) is gathered
    linked = replace(gathered, related=[], refs={**gathered.refs})  # what the general path builds
    assert _with_refs(gathered, issues) == linked
    related = IssueEvidence(related=[RelatedLink(signature_id="sig_other")])
    assert _with_refs(related, issues).related == [RelatedLink(signature_id="sig_other", issue_ref="#3")]


def test_what_rendering_remembered_is_let_go_once_the_issues_are_filed(tmp_path):
    """The escaped and coded texts remembered while the bodies were rendered have no reader once they are
    written: filing lets them go, and the drafts are those a filing with nothing remembered writes."""
    log: list[str] = []
    file_issues(
        RecordingTracker(tmp_path / "a", log),
        plans("sig_a", "sig_b"),
        {},
        {},
        RecordingEvidence(log),
        IssueStyle(),
    )
    assert md._escape.cache_info().currsize == 0 and md._code.cache_info().currsize == 0
    md.escape("warm: a text remembered before the next filing")
    file_issues(
        RecordingTracker(tmp_path / "b", log),
        plans("sig_a", "sig_b"),
        {},
        {},
        RecordingEvidence(log),
        IssueStyle(),
    )
    for name in ("sig_a.md", "sig_b.md"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
