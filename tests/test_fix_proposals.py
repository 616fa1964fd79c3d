"""Fix proposals end to end: the real Claude Code CLI (against the fake Messages API) edits a real application
in a git worktree, the application's own tests run, the branch is pushed to a bare remote and a DRAFT pull
request is opened on the fake GitHub (validated against GitHub's REST description). Every way it can fail is
reported on the issue, and nothing else happens."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_github.fixtures import TOKEN
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import START
from fake_messages_api import FakeMessagesApi, Text, ToolUse, turn
from fix_samples import (
    BUGGY,
    BUGGY_LINE,
    FIXED_LINE,
    App,
    ask_for_fix,
    diagnose,
    file_pricing_issue,
    fix_run,
    fix_settings,
    git,
    good_fix,
    make_app,
    read_then_edit,
    worktrees,
)

from rounds_bot.cli.app import main
from rounds_bot.events import Fact
from rounds_bot.fixing.proposals import FixOutcome, propose_fixes
from rounds_bot.fixing.requests import pending_requests
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop
NOW = START + timedelta(hours=1)


@pytest.fixture
def app(tmp_path: Path) -> App:
    return make_app(tmp_path / "app")


@pytest.fixture
def fake(app: App) -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake(git_remote=app.remote)


@pytest.fixture
def filed(fake: PullsFakeGitHub, tmp_path: Path) -> tuple[str, int]:
    """The pricing bug's signature and issue, diagnosed, with a `/rounds fix` waiting."""
    signature_id, issue = file_pricing_issue(fake, tmp_path)
    store = Store.open(tmp_path / "rounds.db")
    try:
        diagnose(store, signature_id)
        ask_for_fix(store, signature_id, issue)
    finally:
        store.close()
    return signature_id, issue


def propose(
    tmp_path, fake, app, claude_bin, script, now=NOW, **settings
) -> tuple[list[FixOutcome], FakeMessagesApi]:
    with FakeMessagesApi(script) as api:
        configured = fix_settings(tmp_path, fake, app, claude_bin, api, **settings)
        store = Store.open(configured.signatures_db_path)
        try:
            outcomes = propose_fixes(fix_run(configured, store, now))
        finally:
            store.close()
    return outcomes, api


def facts(tmp_path: Path, kind: Fact) -> list[dict]:
    store = Store.open(tmp_path / "rounds.db")
    try:
        return [dict(f.payload) for f in store.facts([kind])]
    finally:
        store.close()


def test_a_tested_fix_is_pushed_and_opened_as_a_draft_pull_request(tmp_path, fake, app, filed, claude_bin):
    signature_id, issue = filed
    [outcome], api = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert outcome.status == "proposed", outcome.reason
    [pull] = fake.open_pulls()
    assert pull.draft and pull.base == "main" and outcome.pr_number == pull.number
    branch = f"rounds/fix-{signature_id}-{NOW:%Y%m%d}"
    assert pull.head == branch and branch in app.branches()
    # the pushed commit: the fix and its test, trailers naming the signature and the issue
    assert FIXED_LINE in app.file_at(branch, "app/pricing.py")
    assert "test_empty" in app.file_at(branch, "tests/test_pricing.py")
    message = git(app.remote, "log", "-1", "--format=%B", branch)
    assert f"Rounds-Signature: {signature_id}" in message and f"Rounds-Issue: #{issue}" in message
    assert git(app.remote, "rev-list", "--count", f"main..{branch}") == "1"
    # the pull request: Fixes #N, the diagnosis, the files, the tests
    assert pull.body.startswith(f"Fixes #{issue}")
    assert "divides by the number of prices" in pull.body
    assert "`app/pricing.py`" in pull.body and "`tests/test_pricing.py`" in pull.body
    assert "passed in" in pull.body and "never merges" in pull.body
    [comment] = [c for c in fake.replies(issue) if "draft pull request" in c]
    assert f"#{pull.number}" in comment
    [proposed] = facts(tmp_path, Fact.FIX_PROPOSED)
    assert proposed["pr"] == pull.number and proposed["branch"] == branch
    # the model: only the edit tools, no shell, no token; the worktree and its local branch are gone
    offered = {tool["name"] for tool in api.requests[0]["tools"]}
    assert {"Read", "Grep", "Glob", "Edit", "Write"} <= offered and not offered & {"Bash", "WebFetch"}
    assert TOKEN not in api.all_request_text()
    assert worktrees(app) == [f"worktree {app.checkout}"]
    assert branch not in git(app.checkout, "branch", "--list")
    assert (app.checkout / "app" / "pricing.py").read_text() == BUGGY
    assert pending_requests(Store.open(tmp_path / "rounds.db")) == []
    assert all(e.operation not in ("pulls/merge",) for e in fake.exchanges)


def test_a_fix_whose_tests_fail_opens_nothing_and_says_why_on_the_issue(
    tmp_path, fake, app, filed, claude_bin
):
    _, issue = filed
    wrong = [*read_then_edit("app/pricing.py", BUGGY_LINE, "    return 0"), turn(Text("Always 0 now."))]
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, wrong)
    assert outcome.status == "failed" and "tests failed" in outcome.reason
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]
    [report] = [c for c in fake.replies(issue) if "could not propose a fix" in c]
    assert "tests failed" in report and "AssertionError" in report and "Nothing was pushed" in report
    [failed] = facts(tmp_path, Fact.FIX_FAILED)
    assert "AssertionError" in failed["tail"]
    assert worktrees(app) == [f"worktree {app.checkout}"]


def test_a_write_outside_the_worktree_is_refused_and_reported(tmp_path, fake, app, filed, claude_bin):
    _, issue = filed
    outside = app.checkout / "app" / "backdoor.py"
    script = [
        turn(ToolUse("Write", {"file_path": str(outside), "content": "print('pwned')\n"})),
        *read_then_edit("app/pricing.py", BUGGY_LINE, FIXED_LINE),
        turn(Text("done")),
    ]
    [outcome], api = propose(tmp_path, fake, app, claude_bin, script)
    assert outcome.status == "failed" and "outside the worktree" in outcome.reason
    assert not outside.exists() and (app.checkout / "app" / "pricing.py").read_text() == BUGGY
    assert any("confines the file tools to the working directory" in r for r in api.tool_results())
    [report] = [c for c in fake.replies(issue) if "could not propose a fix" in c]
    assert "outside the worktree" in report and "backdoor.py" in report
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]


def test_a_change_under_github_is_refused_and_reported(tmp_path, fake, app, filed, claude_bin):
    _, issue = filed
    script = [
        *read_then_edit("app/pricing.py", BUGGY_LINE, FIXED_LINE),
        turn(
            ToolUse(
                "Write", {"file_path": ".github/workflows/ci.yml", "content": "on: [push, pull_request]\n"}
            )
        ),
        turn(Text("Fixed, and CI runs on pull requests too.")),
    ]
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, script)
    assert outcome.status == "failed" and "rules for fixes" in outcome.reason
    [report] = [c for c in fake.replies(issue) if "could not propose a fix" in c]
    assert "`.github/workflows/ci.yml` is protected" in report
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]


def test_protected_paths_and_the_size_cap_come_from_the_settings(tmp_path, fake, app, filed, claude_bin):
    _, issue = filed
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, good_fix(), ROUNDS_FIX_PROTECTED_PATHS="tests/")
    assert outcome.status == "failed"
    assert "`tests/test_pricing.py` is protected (tests/)" in fake.replies(issue)[-1]


def test_a_rejected_push_is_reported_and_opens_nothing(tmp_path, fake, app, filed, claude_bin):
    _, issue = filed
    app.reject_pushes()
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert outcome.status == "failed" and outcome.reason == "the push was rejected"
    [report] = [c for c in fake.replies(issue) if "could not propose a fix" in c]
    assert "pushes to this remote are refused" in report
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]


def test_a_second_request_adds_a_commit_to_the_open_pull_request(tmp_path, fake, app, filed, claude_bin):
    signature_id, issue = filed
    propose(tmp_path, fake, app, claude_bin, good_fix())
    store = Store.open(tmp_path / "rounds.db")
    ask_for_fix(store, signature_id, issue, origin="2", at=NOW)
    store.close()
    better = [
        *read_then_edit(
            "app/pricing.py", FIXED_LINE, "    return sum(prices) / len(prices) if prices else 0.0"
        ),
        turn(Text("Return a float for an empty list, like for any other.")),
    ]
    [outcome], api = propose(tmp_path, fake, app, claude_bin, better, now=NOW + timedelta(days=1))
    assert outcome.status == "updated", outcome.reason
    [pull] = fake.open_pulls()
    assert len(fake.repo.pulls) == 1 and outcome.pr_number == pull.number
    assert git(app.remote, "rev-list", "--count", f"main..{pull.head}") == "2"
    assert "else 0.0" in app.file_at(pull.head, "app/pricing.py")
    assert "An earlier change" in api.all_request_text()
    assert any("pushed a new commit" in c for c in fake.replies(issue))


def test_a_crash_between_push_and_pull_request_opens_exactly_one_on_the_next_run(
    tmp_path, fake, app, filed, claude_bin
):
    signature_id, _ = filed
    fake.fail(502, "pulls/create")  # the pull request is not opened and the answer is an error
    [first], _ = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert first.status == "waiting" and fake.repo.pulls == {}
    branch = f"rounds/fix-{signature_id}-{NOW:%Y%m%d}"
    assert branch in app.branches() and len(pending_requests(Store.open(tmp_path / "rounds.db"))) == 1
    [second], api = propose(tmp_path, fake, app, claude_bin, [])
    assert second.status == "proposed" and api.requests == []  # no second model run
    [pull] = fake.open_pulls()
    assert pull.head == branch and len(fake.repo.pulls) == 1
    assert facts(tmp_path, Fact.FIX_PROPOSED)[0]["resumed"] is True


def test_a_pull_request_opened_whose_answer_was_lost_is_found_not_opened_twice(
    tmp_path, fake, app, filed, claude_bin
):
    fake.fail(502, "pulls/create", applied=True)  # GitHub opened it, the answer never came
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert outcome.status == "proposed"
    assert len(fake.repo.pulls) == 1 and outcome.pr_number == fake.open_pulls()[0].number


def test_a_fix_the_budget_does_not_allow_runs_no_model_and_is_reported(
    tmp_path, fake, app, filed, claude_bin
):
    _, issue = filed
    [outcome], api = propose(tmp_path, fake, app, claude_bin, good_fix(), ROUNDS_MONTHLY_BUDGET_USD="0")
    assert outcome.status == "failed" and "budget" in outcome.reason and api.requests == []
    assert "monthly cap" in fake.replies(issue)[-1] and fake.repo.pulls == {}


def test_a_failed_attempt_is_kept_in_a_local_branch_only_when_asked(tmp_path, fake, app, filed, claude_bin):
    signature_id, issue = filed
    wrong = [*read_then_edit("app/pricing.py", BUGGY_LINE, "    return 0"), turn(Text("Always 0 now."))]
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, wrong, ROUNDS_FIX_KEEP_FAILED_BRANCHES="true")
    assert outcome.status == "failed"
    [kept] = [b.strip() for b in git(app.checkout, "branch", "--list", "rounds/failed-fix-*").splitlines()]
    assert kept.startswith(f"rounds/failed-fix-{signature_id}-")
    assert "    return 0" in git(app.checkout, "show", f"{kept}:app/pricing.py")
    assert list(app.branches()) == ["main"]  # never pushed
    assert f"`{kept}`" in fake.replies(issue)[-1]
    assert worktrees(app) == [f"worktree {app.checkout}"]


def test_rounds_fix_with_fixes_off_says_why_and_keeps_the_request(tmp_path, fake, app, filed, clean_env):
    runner = CliRunner()
    env = {
        "ROUNDS_TRACKER": "github",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "octo/app",
        "ROUNDS_GITHUB_API_URL": fake.base_url,
        "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db"),
        "ROUNDS_REPO_PATH": str(app.checkout),
    }
    result = runner.invoke(main, ["fix"], env=env)
    assert result.exit_code == 0, result.output
    assert (
        "fix pull requests are off: ROUNDS_FIX_TEST_COMMAND" in result.output
        and "1 requests wait" in result.output
    )
    assert len(pending_requests(Store.open(tmp_path / "rounds.db"))) == 1
    unknown = runner.invoke(
        main,
        ["fix", "--issue", "99"],
        env={
            **env,
            "ROUNDS_FIX_TEST_COMMAND": "true",
            "ANTHROPIC_API_KEY": "k",
            "ROUNDS_CLAUDE_BIN": sys.executable,
        },
    )
    assert unknown.exit_code == 2 and "no signature of the database has issue #99" in unknown.output
