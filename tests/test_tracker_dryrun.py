"""The dry-run tracker and the hidden marker: drafts found again by their marker, written atomically."""

from __future__ import annotations

import dataclasses
import os
import stat

import pytest

from rounds_bot.errors import TrackerError
from rounds_bot.marker import MarkerState, read_marker, read_marker_head, write_marker
from rounds_bot.tracker.base import IssueDraft, IssueRef
from rounds_bot.tracker.dryrun import DryRunTracker


def draft(signature_id: str = "sig_0123456789abcdef", body_extra: str = "") -> IssueDraft:
    marker = write_marker(MarkerState(signature_id=signature_id, service="api", total_count=3))
    return IssueDraft(
        signature_id=signature_id, title="[api] KeyError: 'user'", body=f"Body{body_extra}\n\n{marker}\n"
    )


def test_marker_round_trips_and_survives_double_dashes():
    state = MarkerState(signature_id="sig_1", service="a--b", grouping_state={"doc": "x -- y -->"})
    text = write_marker(state)
    assert text.count("-->") == 1
    assert read_marker(f"Some body\n{text}\n") == state


@pytest.mark.parametrize(
    "body",
    ["no marker at all", "<!-- rounds:marker v1 {not json} -->", "<!-- rounds:marker v99 {} -->", ""],
)
def test_a_missing_garbled_or_future_marker_reads_as_none(body):
    assert read_marker(body) is None


def test_create_then_find_then_update_in_place(tmp_path):
    tracker = DryRunTracker(tmp_path / "out")
    assert tracker.find("sig_0123456789abcdef") is None
    ref = tracker.create(draft())
    assert ref.ref == "sig_0123456789abcdef.md"
    assert tracker.find("sig_0123456789abcdef") == ref
    tracker.update(ref, draft(body_extra=" updated"), comment="Regression: 4 occurrences")
    text = (tmp_path / "out" / ref.ref).read_text()
    assert "Body updated" in text
    assert "Regression: 4 occurrences" in text
    assert list((tmp_path / "out").iterdir()) == [tmp_path / "out" / ref.ref]


def test_an_unwritable_folder_is_a_tracker_error_naming_the_setting(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(TrackerError, match="ROUNDS_OUTPUT_DIR"):
        DryRunTracker(blocker / "out").create(draft())


@pytest.mark.parametrize("folder", ["out", "drafts with spaces", "brouillons-é#%"])
def test_a_written_draft_is_the_issue_its_file_is_found_as(tmp_path, folder):
    """The reference given for a draft just written (its URI worked out from the folder's) is the one
    finding its file gives (the file's own URI)."""
    tracker = DryRunTracker(tmp_path / folder)
    created = tracker.create(draft())
    assert created == tracker.find("sig_0123456789abcdef")
    assert created.url == (tmp_path / folder / "sig_0123456789abcdef.md").resolve().as_uri()
    updated = tracker.update(created, draft(body_extra=" again"), comment="more")
    assert updated == created == tracker.find("sig_0123456789abcdef")


@pytest.mark.parametrize("closed", [False, True])
def test_a_written_markers_head_reads_as_the_whole_marker_does(closed):
    """The dry-run tracker reads a body it wrote by its marker's head: the same signature and state as
    reading the whole marker, the body's last marker, and nothing from a garbled or future one."""
    state = MarkerState(
        signature_id="sig_1", service="a--b", closed=closed, grouping_state={"doc": "x -- y -->"}
    )
    look_alike = write_marker(MarkerState(signature_id="sig_other"))
    body = f"trace {look_alike}\n\n{write_marker(state)}\n"
    head, whole = read_marker_head(body), read_marker(body)
    assert head is not None and whole is not None
    assert (head.signature_id, head.closed) == (whole.signature_id, whole.closed) == ("sig_1", closed)


@pytest.mark.parametrize(
    "body",
    ["no marker at all", "<!-- rounds:marker v1 {not json} -->", "<!-- rounds:marker v99 {} -->", ""],
)
def test_a_missing_garbled_or_future_markers_head_reads_as_none(body):
    assert read_marker_head(body) is None


def test_a_draft_without_its_marker_is_not_taken_for_an_issue(tmp_path):
    tracker = DryRunTracker(tmp_path / "out")
    with pytest.raises(TrackerError, match="cannot be read back"):
        tracker.create(IssueDraft(signature_id="sig_1", title="t", body="no marker"))
    with pytest.raises(TrackerError, match="cannot be read back"):
        tracker.create(draft(signature_id="sig_2").model_copy(update={"signature_id": "sig_3"}))


def test_a_draft_is_written_readable_by_its_owner_only_past_a_left_temporary(tmp_path):
    """The draft's file is made as `tempfile.mkstemp` makes one (owner-only); a temporary file a crashed
    writer of the same process id left behind is passed over, not written into, and the draft still lands."""
    folder = tmp_path / "out"
    folder.mkdir()
    left = folder / f".draft-{os.getpid()}-sig_0123456789abcdef.md"
    left.write_text("half")
    ref = DryRunTracker(folder).create(draft())
    written = folder / ref.ref
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert left.read_text() == "half"
    assert written.read_text(encoding="utf-8").endswith(draft().body)


@pytest.mark.parametrize("gathered", [True, False], ids=["writev", "write"])
@pytest.mark.parametrize("at_most", [1, 7, 250])
def test_a_draft_written_a_few_bytes_at_a_time_is_the_draft_written_at_once(
    tmp_path, monkeypatch, gathered, at_most
):
    """A short write (the system may take fewer bytes than given, across the parts or within one) goes on
    where it stopped: the file holds every part, in order, as one write of the whole would leave it; and so
    where the system has no gathered write."""
    whole = DryRunTracker(tmp_path / "whole")
    whole.update(whole.create(draft(body_extra=" é" * 50)), draft(body_extra=" é" * 50), comment="more")
    written = os.write
    if gathered:
        monkeypatch.setattr(os, "writev", lambda handle, views: written(handle, b"".join(views)[:at_most]))
    else:
        monkeypatch.delattr(os, "writev", raising=False)
        monkeypatch.setattr(os, "write", lambda handle, data: written(handle, bytes(data[:at_most])))
    piecemeal = DryRunTracker(tmp_path / "piecemeal")
    ref = piecemeal.update(
        piecemeal.create(draft(body_extra=" é" * 50)), draft(body_extra=" é" * 50), comment="more"
    )
    assert (tmp_path / "piecemeal" / ref.ref).read_bytes() == (tmp_path / "whole" / ref.ref).read_bytes()


def test_a_draft_that_cannot_be_renamed_into_place_leaves_the_last_one_and_no_temporary(
    tmp_path, monkeypatch
):
    """Write-then-rename: when the rename fails, the draft written before stays whole and the new one's
    temporary file is removed."""
    folder = tmp_path / "out"
    tracker = DryRunTracker(folder)
    ref = tracker.create(draft())
    before = (folder / ref.ref).read_bytes()

    def refuse(source: str, target: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(TrackerError, match="cannot write the issue draft"):
        tracker.update(ref, draft(body_extra=" changed"), comment="more")
    assert (folder / ref.ref).read_bytes() == before
    assert sorted(path.name for path in folder.iterdir()) == [ref.ref]


def _bodies_with_markers() -> list[str]:
    """Bodies whose last marker is whole, cut, garbled, nested, look-alike or not there at all."""
    marker = write_marker(MarkerState(signature_id="sig_1", service="a--b", grouping_state={"x": "} -"}))
    markers = [
        marker,
        marker[:-4],
        marker.replace(" {", " ["),
        "<!-- rounds:marker v1 {} -->",
        "<!-- rounds:marker v2 {a} --> {b} -->",
        "<!-- rounds:marker v {} -->",
        "<!-- rounds:marker v١ {} -->",
        "<!-- rounds:marker v12{} -->",
        "<!-- rounds:marker v3 {\n} -->",
        "<!-- rounds:marker v3 {}-->",
        "<!-- rounds:marker v3 {",
        "<!-- rounds:marker v",
        "",
    ]
    return [f"{before}{m}{after}" for m in markers for before in ("", "text ") for after in ("", "\n", " x}")]


def test_a_marker_is_found_where_its_pattern_finds_it():
    """The last marker is read where `_MARKER` (the marker's pattern) matches at its start: the same
    version, state and end, and none where the pattern finds none."""
    from rounds_bot import marker as module

    for body in _bodies_with_markers():
        start = body.rfind("<!-- rounds:marker v")
        match = module._MARKER.match(body, start) if start >= 0 else None
        found = module._last_marker(body)
        expected = (start, int(match["version"]), match["state"], match.end()) if match else None
        assert (found and (found.start, found.version, found.state, found.end)) == expected, body


def test_the_issues_of_drafts_are_slotted_records_equal_to_those_made_from_their_fields(tmp_path):
    """A round keeps one issue per draft it files: a slotted record (no field dictionary), frozen, equal to
    the record made from the same values."""
    tracker = DryRunTracker(tmp_path / "out")
    first = tracker.create(draft("sig_0123456789abcdef"))
    second = tracker.create(draft("sig_fedcba9876543210"))
    for issue in (first, second, tracker.update(first, draft("sig_0123456789abcdef"), comment="again")):
        assert not hasattr(issue, "__dict__")
        assert issue == IssueRef(**{name: getattr(issue, name) for name in IssueRef.__dataclass_fields__})
        with pytest.raises(dataclasses.FrozenInstanceError):
            issue.ref = "other.md"  # type: ignore[misc]
    assert (first.ref, first.state, first.state_reason) == ("sig_0123456789abcdef.md", "open", None)


def test_finding_a_draft_by_its_path_as_text_answers_as_the_path_object_does(tmp_path):
    """The dry-run tracker looks a draft up by its path as text, not as a `Path` (each `Path` interns its
    name): a missing folder, a missing draft, a folder or a dangling link in a draft's place, a link to a
    draft and a draft itself are found, or not, as `Path.is_file` says."""
    from rounds_bot.tracker.dryrun import _is_file

    out = tmp_path / "out"
    cases = {"missing-folder": tmp_path / "nowhere" / "sig_a.md", "missing": out / "sig_b.md"}
    out.mkdir()
    (out / "sig_c.md").mkdir()
    cases["folder"] = out / "sig_c.md"
    (out / "sig_d.md").symlink_to(out / "gone.md")
    cases["dangling-link"] = out / "sig_d.md"
    (out / "sig_e.md").write_text("x")
    cases["draft"] = out / "sig_e.md"
    (out / "sig_f.md").symlink_to(out / "sig_e.md")
    cases["link-to-draft"] = out / "sig_f.md"
    (out / "sig_g.md").symlink_to(out / "sig_g.md")
    cases["link-loop"] = out / "sig_g.md"
    cases["under-a-file"] = out / "sig_e.md" / "sig_h.md"
    for name, path in cases.items():
        assert _is_file(os.fspath(path)) == path.is_file(), name
    assert _is_file(os.fspath(out / "sig_\0.md")) is False
    tracker = DryRunTracker(out)
    assert tracker.find("sig_b") is None and tracker.find("sig_c") is None and tracker.find("sig_d") is None
    written = tracker.create(draft("sig_0123456789abcdef"))
    assert tracker.find("sig_0123456789abcdef") == written
    assert DryRunTracker(tmp_path / "nowhere").find("sig_a") is None
