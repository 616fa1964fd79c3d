"""The upload-artifact stand-in keeps the action's rules (`workflow_artifacts`, which cites them): hidden
files are left out unless `include-hidden-files: true`, and a name or a file path with a character the
artifact service refuses fails the step. Before, the stand-in zipped whatever was there under any name, so a
workflow whose upload GitHub would refuse, or whose artifact would arrive without its hidden files, passed
here.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from fake_zulip import FakeZulip
from workflow_harness import Repository

PIN = "actions/upload-artifact@330a01c490aca151604b8cf639adc76d48f6c5d4"


def uploading(files: list[str], **with_: Any) -> dict[str, Any]:
    """A workflow whose one job writes `files` under `out/` and uploads that folder."""
    writes = " && ".join(f"mkdir -p \"$(dirname 'out/{name}')\" && echo x > 'out/{name}'" for name in files)
    upload = {"name": "kept", "path": "out", "retention-days": 1, "if-no-files-found": "error", **with_}
    return {
        "on": {"workflow_dispatch": None},
        "permissions": {},
        "jobs": {
            "save": {
                "runs-on": "ubuntu-24.04",
                "permissions": {},
                "steps": [{"run": writes}, {"id": "upload", "uses": PIN, "with": upload}],
            }
        },
    }


def run(fake, signoz, tmp_path, workflow: dict[str, Any]):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeZulip() as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=workflow)
        return repo.run("workflow_dispatch", repo.payload("workflow_dispatch"))


def archived(fake) -> list[str]:
    (artifact,) = fake.repo.artifacts.values()
    with zipfile.ZipFile(io.BytesIO(artifact.data)) as archive:
        return sorted(archive.namelist())


def test_hidden_files_are_left_out_unless_asked_for(fake, signoz, tmp_path):
    files = ["rounds.db", ".cache/state", ".sig"]
    result = run(fake, signoz, tmp_path, uploading(files))
    assert result.conclusion == "success"
    assert archived(fake) == ["rounds.db"]


def test_hidden_files_are_kept_with_include_hidden_files(fake, signoz, tmp_path):
    files = ["rounds.db", ".cache/state", ".sig"]
    result = run(fake, signoz, tmp_path, uploading(files, **{"include-hidden-files": True}))
    assert result.conclusion == "success"
    assert archived(fake) == [".cache/state", ".sig", "rounds.db"]


@pytest.mark.parametrize(
    ("name", "words"),
    [("rounds/db", "Forward slash /"), ("rounds:db", "Colon :"), ('db"1', 'Double quote "')],
)
def test_a_name_the_artifact_service_refuses_fails_the_step(fake, signoz, tmp_path, name, words):
    result = run(fake, signoz, tmp_path, uploading(["rounds.db"], name=name))
    step = result.jobs["save"].steps["upload"]
    assert step.outcome == "failure" and result.conclusion == "failure"
    refusal = f"The artifact name is not valid: {name}. Contains the following character:  {words}"
    assert refusal in step.stderr
    assert fake.repo.artifacts == {}


def test_a_file_path_the_artifact_service_refuses_fails_the_step(fake, signoz, tmp_path):
    result = run(fake, signoz, tmp_path, uploading(["12:30.md"]))
    step = result.jobs["save"].steps["upload"]
    assert step.outcome == "failure"
    assert "The path for one of the files in artifact is not valid: 12:30.md." in step.stderr
    assert fake.repo.artifacts == {}
