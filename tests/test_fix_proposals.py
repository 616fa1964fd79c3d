"""Fix proposals end to end: the real Claude Code CLI (against the fake Messages API) edits a real application
in a git worktree, the application's own tests run, the branch is pushed to a bare remote and a DRAFT pull
request is opened on the fake GitHub (validated against GitHub's REST description). Every way it can fail is
reported on the issue, and nothing else happens. Before the model runs, the tests run once as they are: a test
command that cannot run, or tests that already fail, cost no model run and are reported as what they are. A
repository that lets no workflow open pull requests gets the pushed branch and one link that opens it."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from click.testing import CliRunner
from fake_github.fixtures import REPOSITORY, TOKEN, repository_env
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import START, quick_options
from fake_messages_api import FakeMessagesApi, Text, ToolUse, Turn, turn
from fix_samples import (
    BROKEN_TEST,
    BROKEN_TEST_PATH,
    BUGGY,
    BUGGY_LINE,
    FIXED_LINE,
    NO_PYTEST_COMMAND,
    TEST_COMMAND,
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
from rounds_bot.fixing.auto import request_automatic_fixes
from rounds_bot.fixing.job import run_fix_job
from rounds_bot.fixing.messages import NOT_A_DRAFT, pull_title
from rounds_bot.fixing.proposals import FixOutcome, propose_fixes
from rounds_bot.fixing.requests import Trigger, pending_requests
from rounds_bot.github.pulls import pulls_api_from_settings
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop
NOW = START + timedelta(hours=1)


@pytest.fixture
def app(tmp_path: Path) -> App:
    return make_app(tmp_path / "app")


@pytest.fixture
def fake(app: App) -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake(git_remote=app.remote)


def file_and_ask(fake: PullsFakeGitHub, tmp_path: Path, trigger: Trigger) -> tuple[str, int]:
    signature_id, issue = file_pricing_issue(fake, tmp_path)
    store = Store.open(tmp_path / "rounds.db")
    try:
        diagnose(store, signature_id)
        ask_for_fix(store, signature_id, issue, trigger=trigger)
    finally:
        store.close()
    return signature_id, issue


@pytest.fixture
def filed(fake: PullsFakeGitHub, tmp_path: Path) -> tuple[str, int]:
    """The pricing bug's signature and issue, diagnosed, with a `/rounds fix` waiting."""
    return file_and_ask(fake, tmp_path, "command")


@pytest.fixture
def chosen(fake: PullsFakeGitHub, tmp_path: Path) -> tuple[str, int]:
    """The same, but rounds chose it for an automatic fix (ROUNDS_FIX_AUTO)."""
    return file_and_ask(fake, tmp_path, "auto")


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
    # the pull request: Refs #N, the diagnosis, the files, the tests
    assert pull.body.startswith(f"Refs #{issue}")
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
        **repository_env(fake, tmp_path),
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


def opened(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "rounds.db")


def replies_saying(fake: PullsFakeGitHub, issue: int, words: str) -> list[str]:
    return [c for c in fake.replies(issue) if words in c]


# --- before the model: the tests as they are ------------------------------------------------------------
def test_tests_that_already_fail_on_the_base_branch_stop_the_attempt_before_the_model_runs(
    tmp_path, fake, app, filed, claude_bin
):
    signature_id, issue = filed
    base = app.commit_to_main(BROKEN_TEST_PATH, BROKEN_TEST, "A test that fails")
    [outcome], api = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert outcome.status == "failed" and api.requests == []  # the model never ran: nothing was spent
    assert (
        outcome.reason
        == f"the repository's tests already fail on `main` (commit `{base[:12]}`) without any change"
    )
    [report] = replies_saying(fake, issue, "could not try a fix")
    assert report.startswith("rounds could not try a fix: the repository's tests already fail on `main`")
    assert "AssertionError" in report and "No model ran and nothing was pushed" in report
    assert "Ask again with `/rounds fix` once the tests pass there." in report
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]
    [failed] = facts(tmp_path, Fact.FIX_FAILED)
    assert failed["blocked"] == "baseline" and "AssertionError" in failed["tail"]
    store = opened(tmp_path)
    try:
        assert pending_requests(store) == []  # a person's request is answered
        incident = store.incident(signature_id)
        assert incident is not None and incident.failed_fixes == 0  # a broken base is no failed fix
    finally:
        store.close()
    assert worktrees(app) == [f"worktree {app.checkout}"]


def test_a_test_command_whose_runner_is_not_installed_is_a_setup_problem_told_in_one_line(
    tmp_path, fake, app, filed, claude_bin
):
    signature_id, issue = filed
    [outcome], api = propose(
        tmp_path, fake, app, claude_bin, good_fix(), ROUNDS_FIX_TEST_COMMAND=NO_PYTEST_COMMAND
    )
    assert outcome.status == "failed" and api.requests == []
    assert f"`{NO_PYTEST_COMMAND}` cannot run here: Python says `No module named pytest`" in outcome.reason
    assert "must install the repository's own dependencies" in outcome.reason
    [report] = replies_saying(fake, issue, "could not try a fix")
    first = report.splitlines()[0]
    assert "cannot run here: Python says `No module named pytest`" in first
    assert "the fix-test job must install the repository's own dependencies before rounds" in first.lower()
    assert "`pip install -e '.[dev]'` step before the rounds fix/test step (docs/fixes.md)" in first
    assert "tests failed" not in report and fake.repo.pulls == {} and list(app.branches()) == ["main"]
    [failed] = facts(tmp_path, Fact.FIX_FAILED)
    assert failed["blocked"] == "setup"
    store = opened(tmp_path)
    try:
        incident = store.incident(signature_id)
        assert incident is not None and incident.failed_fixes == 0
    finally:
        store.close()


def test_an_automatic_request_whose_test_command_cannot_run_waits_unspent_and_runs_once_it_can(
    tmp_path, fake, app, chosen, claude_bin, clean_env
):
    signature_id, issue = chosen
    for hour in (1, 2):  # every run tries again, none runs the model, the issue hears it once
        [outcome], api = propose(
            tmp_path,
            fake,
            app,
            claude_bin,
            good_fix(),
            now=NOW + timedelta(hours=hour),
            ROUNDS_FIX_TEST_COMMAND=NO_PYTEST_COMMAND,
        )
        assert outcome.status == "blocked" and api.requests == []
        assert "No module named pytest" in outcome.reason
    [report] = replies_saying(fake, issue, "could not try a fix")
    assert "rounds chose this problem itself and tries again on its next runs." in report
    clean_env.setenv("ROUNDS_FIX_AUTO", "true")
    store = opened(tmp_path)
    try:
        [waiting] = pending_requests(store)
        assert (waiting.signature_id, waiting.trigger) == (signature_id, "auto")
        incident = store.incident(signature_id)
        assert incident is not None and incident.failed_fixes == 0
        settings = fix_settings(tmp_path, fake, app, claude_bin, FakeMessagesApi([]), ROUNDS_FIX_AUTO="true")
        assert request_automatic_fixes(store, settings, NOW + timedelta(days=1)) == []  # no second one
    finally:
        store.close()
    # the fix job learns to install the dependencies: the same request goes ahead, and the PR is opened
    [outcome], api = propose(tmp_path, fake, app, claude_bin, good_fix(), now=NOW + timedelta(hours=3))
    assert outcome.status == "proposed" and api.requests and len(fake.open_pulls()) == 1
    assert len(replies_saying(fake, issue, "could not try a fix")) == 1


def test_an_automatic_request_on_a_failing_base_waits_for_a_new_commit_there_without_testing_again(
    tmp_path, fake, app, chosen, claude_bin
):
    _, issue = chosen
    broken = app.commit_to_main(BROKEN_TEST_PATH, BROKEN_TEST, "A test that fails")
    [first], api = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert first.status == "blocked" and api.requests == []
    assert f"already fail on `main` (commit `{broken[:12]}`)" in first.reason
    [second], api = propose(tmp_path, fake, app, claude_bin, good_fix(), now=NOW + timedelta(hours=1))
    assert second.status == "blocked" and api.requests == []
    assert second.reason.endswith("tried again once it has a new commit")  # known failing: not run again
    [report] = replies_saying(fake, issue, "could not try a fix")
    assert "tries again once that branch has a new commit" in report
    app.commit_to_main(BROKEN_TEST_PATH, None, "Drop the wrong test")
    [third], api = propose(tmp_path, fake, app, claude_bin, good_fix(), now=NOW + timedelta(hours=2))
    assert third.status == "proposed" and api.requests
    assert len(replies_saying(fake, issue, "could not try a fix")) == 1


def test_what_the_tests_write_before_the_change_is_not_part_of_it(tmp_path, fake, app, filed, claude_bin):
    writes = f"sh -c '{TEST_COMMAND} && echo ok > test-report.txt'"
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, good_fix(), ROUNDS_FIX_TEST_COMMAND=writes)
    assert outcome.status == "proposed", outcome.reason
    [pull] = fake.open_pulls()
    changed = git(app.remote, "diff", "--name-only", f"main...{pull.head}").split()
    assert changed == ["app/pricing.py", "tests/test_pricing.py"]


# --- a repository that lets no workflow open pull requests -------------------------------------------------
def fix_job(
    tmp_path: Path, fake: PullsFakeGitHub, app: App, claude_bin: str, script: list[Turn], now: datetime
) -> tuple[list[str], FakeMessagesApi]:
    with FakeMessagesApi(script) as api:
        configured = fix_settings(tmp_path, fake, app, claude_bin, api)
        store = Store.open(configured.signatures_db_path)
        try:
            lines = run_fix_job(configured, store, pulls_api_from_settings(configured, quick_options()), now)
        finally:
            store.close()
    return lines, api


def test_a_repository_that_lets_no_workflow_open_pull_requests_gets_the_branch_and_one_link_to_open_it(
    tmp_path, fake, app, filed, claude_bin
):
    signature_id, issue = filed
    fake.repo.can_approve_pull_request_reviews = False  # what a new repository says
    lines, _ = fix_job(tmp_path, fake, app, claude_bin, good_fix(), NOW)
    branch = f"rounds/fix-{signature_id}-{NOW:%Y%m%d}"
    assert branch in app.branches() and FIXED_LINE in app.file_at(branch, "app/pricing.py")
    assert fake.repo.pulls == {} and [e.status for e in fake.requests("pulls/create")] == [403]
    [line] = [entry for entry in lines if entry.startswith(f"#{issue} ")]
    assert f"branch {branch} pushed, pull request left to a person" in line and "waits" not in line
    [comment] = fake.replies(issue)[-1:]
    assert f"rounds pushed a proposed fix to the branch `{branch}`" in comment
    match = re.search(r"\[Open the pull request\]\((?P<url>[^)\s]+)\)", comment)
    assert match is not None
    link = urlsplit(match["url"])
    assert (
        f"{link.scheme}://{link.netloc}{link.path}"
        == f"https://github.com/{REPOSITORY}/compare/main...{branch}"
    )
    query = parse_qs(link.query)
    assert query["expand"] == ["1"] and query["title"] == [pull_title(issue, signature_id)]
    assert (
        query["body"][0].startswith(f"Refs #{issue}")
        and "divides by the number of prices" in query["body"][0]
    )
    assert (
        '"Allow GitHub Actions to create and approve pull requests"' in comment
        and "`github-token` input" in comment
    )
    assert "pull-requests: write" not in comment and "pull_requests" not in comment
    [offered] = facts(tmp_path, Fact.FIX_OFFERED)
    assert offered["branch"] == branch and offered["link"].endswith(f"/compare/main...{branch}?expand=1")
    assert facts(tmp_path, Fact.FIX_PROPOSED) == [] and facts(tmp_path, Fact.FIX_FAILED) == []

    # the next run: nothing to retry, nothing more to say, no model run
    said = len(fake.replies(issue))
    again, api = fix_job(tmp_path, fake, app, claude_bin, [], NOW + timedelta(hours=1))
    assert api.requests == [] and len(fake.replies(issue)) == said
    assert again == ["no fix was asked for"] and len(fake.requests("pulls/create")) == 1

    # a person opens it with the link: rounds takes it on, and follows its merge like its own
    fake.add_token("alice-token", login="alice", kind="user", contents="write", pull_requests="write")
    answer = requests.post(
        f"{fake.base_url}/repos/{REPOSITORY}/pulls",
        json={"title": query["title"][0], "body": query["body"][0], "head": branch, "base": "main"},
        headers={"Authorization": "token alice-token"},
        timeout=5,
    )
    assert answer.status_code == 201
    number = answer.json()["number"]
    later, _ = fix_job(tmp_path, fake, app, claude_bin, [], NOW + timedelta(hours=2))
    assert f"#{number} was opened from the branch {branch} rounds pushed: rounds follows it" in later
    fake.merge(number)
    merged, _ = fix_job(tmp_path, fake, app, claude_bin, [], NOW + timedelta(hours=3))
    assert any(f"#{number} was merged" in entry for entry in merged)
    store = opened(tmp_path)
    try:
        [fix] = store.fix_records(signature_id)
        assert (fix.pr_number, fix.branch, fix.status) == (number, branch, "merged")
    finally:
        store.close()
    # the link's comment, then one saying the issue stays open until the release is seen (fixing/watch.py)
    replies = fake.replies(issue)
    assert len(replies) == said + 1 and f"<!-- rounds:waiting {number} -->" in replies[-1]


def test_a_private_repository_without_draft_pull_requests_gets_one_ready_for_review_that_says_so(
    tmp_path, fake, app, filed, claude_bin
):
    """GitHub has draft pull requests in private repositories only on GitHub Team and Enterprise Cloud (REST
    docs, "Create a pull request"); on Free or Pro it answers 422. That is no lost answer to look for on the
    next run: the pull request is opened at once, ready for review, and its description and the issue's
    comment say why it is not a draft. A later commit keeps saying so."""
    signature_id, issue = filed
    fake.repo.private, fake.repo.plan = True, "free"
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert outcome.status == "proposed", outcome.reason
    assert [e.status for e in fake.requests("pulls/create")] == [422, 201]
    [pull] = fake.open_pulls()
    assert not pull.draft and outcome.pr_number == pull.number
    assert NOT_A_DRAFT in pull.body and "This is a draft." not in pull.body
    [comment] = [c for c in fake.replies(issue) if f"#{pull.number}" in c]
    assert "opened a pull request (not a draft: GitHub offers no draft pull requests" in comment
    [proposed] = facts(tmp_path, Fact.FIX_PROPOSED)
    assert proposed["pr"] == pull.number and proposed["draft"] is False
    assert pending_requests(Store.open(tmp_path / "rounds.db")) == []

    store = Store.open(tmp_path / "rounds.db")
    ask_for_fix(store, signature_id, issue, origin="2", at=NOW)
    store.close()
    better = [
        *read_then_edit(
            "app/pricing.py", FIXED_LINE, "    return sum(prices) / len(prices) if prices else 0.0"
        ),
        turn(Text("Return a float for an empty list, like for any other.")),
    ]
    [again], _ = propose(tmp_path, fake, app, claude_bin, better, now=NOW + timedelta(days=1))
    assert again.status == "updated", again.reason
    [pull] = fake.open_pulls()
    assert NOT_A_DRAFT in pull.body and "This is a draft." not in pull.body
    assert len(fake.requests("pulls/create")) == 2


def test_a_private_repository_on_github_team_gets_a_draft(tmp_path, fake, app, filed, claude_bin):
    fake.repo.private, fake.repo.plan = True, "team"
    [outcome], _ = propose(tmp_path, fake, app, claude_bin, good_fix())
    assert outcome.status == "proposed", outcome.reason
    [pull] = fake.open_pulls()
    assert pull.draft and NOT_A_DRAFT not in pull.body and "This is a draft." in pull.body
    assert [e.status for e in fake.requests("pulls/create")] == [201]
