"""ROUNDS_STATE_KEY through the reusable workflow, run by the local runner as the README's caller calls it
(the key passed beside the other secrets): the round saves its database
with a signature, the next run restores it, and a newer `rounds-db` without one, as the fix-test job could
upload, is refused with a line in the job summary while the signed one is restored.
"""

from __future__ import annotations

import io
import zipfile

import pytest
from fake_zulip import FakeZulip
from test_state import database_with
from workflow_files import parse
from workflow_harness import Repository, Sources, failures, readme_workflows

from rounds_bot.github.artifacts import snapshot

pytestmark = pytest.mark.github_spec
KEY = "state-key-of-the-repository-0123456789"


def keyed_caller(sources: Sources) -> dict:
    text = (
        readme_workflows()[0].replace("OWNER/rounds", sources.repository).replace("COMMIT_SHA", sources.sha)
    )
    caller = parse(text)
    assert caller["jobs"]["rounds"]["secrets"]["ROUNDS_STATE_KEY"] == "${{ secrets.ROUNDS_STATE_KEY }}"
    return caller


def members(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sorted(archive.namelist())


def test_the_workflow_signs_what_it_saves_and_restores_only_what_it_signed(fake, signoz, sources, tmp_path):
    workspace = tmp_path / "work" / "app"
    workspace.mkdir(parents=True)
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=keyed_caller(sources), sources=sources)
        first = repo.run("schedule", repo.payload("schedule"), secrets={"ROUNDS_STATE_KEY": KEY})
        assert first.jobs["rounds/round"].status == "success", failures(first)
        [signed] = [a for a in fake.repo.artifacts.values() if a.name == "rounds-db"]
        assert members(signed.data) == ["rounds.db", "rounds.db.sig"]
        assert KEY.encode() not in signed.data

        # a newer rounds-db without a signature, saved as code in a fix-test job could
        planted = tmp_path / "planted"
        planted.mkdir()
        copy, _ = snapshot(database_with(planted / "rounds.db", "planted"), planted / "out")
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.write(copy, "rounds.db")
        forged = fake.state.add_artifact(fake.repo, "rounds-db", buffer.getvalue(), run_id=900)

        second = repo.run("schedule", repo.payload("schedule"), secrets={"ROUNDS_STATE_KEY": KEY})
    job = second.jobs["rounds/round"]
    assert job.status == "success", failures(second)
    restored = job.steps["restore"].stdout
    assert f"(id {signed.id}, run {signed.run_id}" in restored
    assert f"artifact {forged.id} (run {forged.run_id}) carries no signature, not used" in restored
    assert KEY not in restored and all(KEY not in step.stdout + step.stderr for step in job.steps.values())
