"""The artifact step under crashes and faults: workflow runs that restore the signature database, run a
round and save it (`rounds state restore`, the round, `rounds state check --out`, the upload), interrupted
while restoring or while checking, or finding the saved database expired or missing.

Afterwards, as for a round's own crash points: no twin issue, no lost or double-counted occurrence, no
model call paid twice or left unbooked, and a database that passes its check.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for, running_actions_fake
from fake_github.fixtures import TOKEN
from fake_github.rounds import FixedSource, error_event
from recovery_tally import record
from test_security_faults import EVENTS, ROUND_AT, Crash, Model, crash_in, disarm_all, one_round

from rounds_bot.github.artifacts import check_database, restore, snapshot
from rounds_bot.marker import read_marker
from rounds_bot.store import Store

pytestmark = [pytest.mark.security, pytest.mark.github_spec]

# the same four problems again, after the first run: counted once each, whatever happened to the state
LATER = [
    error_event(index, at=ROUND_AT + timedelta(minutes=10), serial=serial)
    for index in range(4)
    for serial in range(2)
]


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


class Runs:
    """Workflow runs against one fake repository, each on a fresh runner (its own empty folder)."""

    def __init__(self, fake: ActionsFakeGitHub, tmp_path: Path) -> None:
        self.fake, self.tmp_path, self.model, self.count = fake, tmp_path, Model(), 0
        self.last: Path | None = None

    def run(
        self,
        events: list,
        at: datetime,
        *,
        crash_at: str | None = None,
        arm: Callable[[], None] = lambda: None,
    ) -> None:
        """restore -> round -> check and upload; `arm` is called just before the step named `crash_at`."""
        self.count += 1
        workdir = self.tmp_path / f"run-{self.count}"
        workdir.mkdir()
        self.last = workdir
        try:
            if crash_at == "restore":
                arm()
            restore(
                actions_api_for(self.fake, workdir),
                artifact_name="rounds-db",
                target=workdir / "rounds.db",
                token=TOKEN,
            )
            disarm_all()
            one_round(self.fake, workdir, self.model, source=FixedSource(events), at=at)
            if crash_at == "check":
                arm()
            copy, _ = snapshot(workdir / "rounds.db", workdir / "upload")
        finally:
            disarm_all()
        self.fake.state.add_artifact(self.fake.repo, "rounds-db", _zipped(copy), run_id=self.count)

    def newest_artifact(self) -> int:
        return max(self.fake.repo.artifacts)

    def judge(self, occurrences: int) -> None:
        """No twin, no loss, nothing counted twice, and each model call paid once and booked."""
        assert self.last is not None
        database = self.last / "rounds.db"
        assert check_database(database).ok
        store = Store.open(database)
        try:
            signatures = store.signatures()
            booked = store.db.execute("select count(*) from ledger").fetchone()[0]
        finally:
            store.close()
        markers = [read_marker(issue.body).signature_id for issue in self.fake.issues()]  # type: ignore[union-attr]
        counted = sum(signature.total_count for signature in signatures)
        paid_twice = max(len(self.model.prompts) - len(signatures), 0)
        record(
            twins=len(markers) - len(set(markers)),
            happened=occurrences,
            counted=counted,
            paid_twice=paid_twice,
        )
        assert len(markers) == len(set(markers)), f"twin issues: {sorted(markers)}"
        assert set(markers) == {signature.id for signature in signatures}
        assert counted == occurrences, f"{counted} occurrences counted, {occurrences} happened"
        assert len(self.model.prompts) == len(signatures) == booked, "a model call paid twice or unbooked"


def _zipped(path: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(path, "rounds.db")
    return buffer.getvalue()


ARTIFACTS = "rounds_bot.github.artifacts"
# the step (`rounds state restore` or `rounds state check --out`), where it dies, and at which call
ARTIFACT_CRASH_POINTS = {
    "artifact restore, while unpacking": ("restore", f"{ARTIFACTS}.extract", 1),
    "artifact restore, checked but not yet in place": ("restore", f"{ARTIFACTS}._move_aside", 1),
    "artifact check, before the copy": ("check", f"{ARTIFACTS}.check_database", 1),
    "artifact check, copied but not yet checked": ("check", f"{ARTIFACTS}.check_database", 2),
}


@pytest.mark.parametrize("point", list(ARTIFACT_CRASH_POINTS))
def test_a_run_interrupted_in_the_artifact_step_is_recovered_by_the_next(point, fake, tmp_path, monkeypatch):
    step, target, nth = ARTIFACT_CRASH_POINTS[point]
    arm = crash_in(monkeypatch, target, nth=nth)
    runs = Runs(fake, tmp_path)
    runs.run(EVENTS, ROUND_AT)
    saved = set(fake.repo.artifacts)
    with pytest.raises(Crash):
        runs.run(EVENTS + LATER, ROUND_AT + timedelta(minutes=30), crash_at=step, arm=arm)
    assert set(fake.repo.artifacts) == saved, "an interrupted run uploaded a database"
    if step == "check":
        assert not (runs.last / "upload" / "rounds.db").exists()  # type: ignore[operator]
    runs.run(EVENTS + LATER, ROUND_AT + timedelta(minutes=60))
    runs.judge(len(EVENTS) + len(LATER))


def expire(fake: ActionsFakeGitHub) -> None:
    fake.repo.expired_artifacts.update(fake.repo.artifacts)


def vanish(fake: ActionsFakeGitHub) -> None:
    fake.repo.artifacts.clear()


def expire_during_download(fake: ActionsFakeGitHub) -> None:
    fake.fail(
        410, "actions/download-artifact", message="Artifact has expired", times=len(fake.repo.artifacts)
    )


ARTIFACT_FAULTS: dict[str, Callable[[ActionsFakeGitHub], None]] = {
    "artifact expired": expire,
    "artifact missing": vanish,
    "artifact expired between listing and download": expire_during_download,
}


@pytest.mark.parametrize("fault", list(ARTIFACT_FAULTS))
def test_an_expired_or_missing_artifact_is_rebuilt_from_the_issues_counting_and_paying_nothing_twice(
    fault, fake, tmp_path
):
    runs = Runs(fake, tmp_path)
    runs.run(EVENTS, ROUND_AT)
    ARTIFACT_FAULTS[fault](fake)
    runs.run(EVENTS + LATER, ROUND_AT + timedelta(minutes=30))
    runs.judge(len(EVENTS) + len(LATER))


def test_an_issue_updated_after_a_rebuild_keeps_its_diagnosis(fake, tmp_path):
    runs = Runs(fake, tmp_path)
    runs.run(EVENTS, ROUND_AT)
    diagnosed = {issue.number: _diagnosis_section(issue.body) for issue in fake.issues()}
    assert all(diagnosed.values())
    vanish(fake)
    runs.run(EVENTS + LATER, ROUND_AT + timedelta(minutes=30))
    after = {issue.number: _diagnosis_section(issue.body) for issue in fake.issues()}
    assert after == diagnosed
    assert all("| Total | 5 |" in issue.body for issue in fake.issues())


def _diagnosis_section(body: str) -> str:
    start = body.find("## Diagnosis")
    return body[start : body.find("\n---\n", start)] if start >= 0 else ""
