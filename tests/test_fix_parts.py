"""The parts of a fix proposal, each on its own: versions, verdicts, rounds' checks, the test command (and
telling a command that cannot run from failing tests), the edit run's result, the automatic choice, the
settings, the comments (golden files; regenerate with ROUNDS_UPDATE_GOLDEN=1). No model and no GitHub here."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fix_samples import diagnose, git, make_app

from rounds_bot.diagnosis.budget import price_for
from rounds_bot.diagnosis.claude_cli import ClaudeCli
from rounds_bot.diagnosis.prompting import Prompt
from rounds_bot.errors import ConfigError
from rounds_bot.events import Fact
from rounds_bot.fixing.auto import request_automatic_fixes
from rounds_bot.fixing.checks import Guard, check_changes, protected_by
from rounds_bot.fixing.editor import FixEditor, edit_run
from rounds_bot.fixing.git import Git, remote_auth_env
from rounds_bot.fixing.job import describe
from rounds_bot.fixing.messages import (
    compare_link,
    not_started_comment,
    offered_comment,
    prefilled_link,
    short_pull_body,
)
from rounds_bot.fixing.proposals import FixOutcome
from rounds_bot.fixing.release import Seen, watch_releases
from rounds_bot.fixing.requests import pending_requests
from rounds_bot.fixing.testcommand import TestRun, run_tests, split_command
from rounds_bot.fixing.testsetup import SETUP_HINT, setup_problem
from rounds_bot.fixing.worktree import open_worktree
from rounds_bot.lifecycle import FixRecord
from rounds_bot.models import ErrorEvent
from rounds_bot.settings import load_settings
from rounds_bot.signature import Signature
from rounds_bot.store import Store
from rounds_bot.versions import at_or_above, is_newer

pytestmark = pytest.mark.fix_loop
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
GOLDEN = Path(__file__).parent / "golden" / "fix"


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ROUNDS_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"update with ROUNDS_UPDATE_GOLDEN=1 ({path})"


# --- versions and verdicts -------------------------------------------------------------------------
def test_newer_versions_by_order_when_they_have_one_and_by_novelty_when_not():
    assert is_newer("1.10.0", ["1.9.3", "1.2.0"]) and not is_newer("1.9.0", ["1.9.3"])
    assert is_newer("v2.0.0-rc.1", ["1.9.3"]) and not is_newer("1.9.3", ["1.9.3"])
    assert is_newer("abc1234", ["def5678"]) and not is_newer("def5678", ["def5678"])
    assert is_newer("1.0.0", [])
    assert at_or_above("1.1.0", "1.1.0", ["1.0.0"]) and at_or_above("1.2.0", "1.1.0", ["1.0.0"])
    assert not at_or_above("1.0.5", "1.1.0", ["1.0.0"]) and not at_or_above("1.0.0", "1.1.0", ["1.0.0"])
    assert at_or_above("build-77", "build-76", ["build-12"]) and not at_or_above(
        "build-12", "build-76", ["build-12"]
    )


def merged_fix(**changes: object) -> FixRecord:
    fix = FixRecord(
        signature_id="sig_a",
        pr_number=7,
        status="merged",
        proposed_at="2026-03-02T09:00:00+00:00",
        updated_at="2026-03-02T09:00:00+00:00",
        merged_at="2026-03-02T10:00:00+00:00",
        versions_before=["1.0.0"],
    )
    return fix.model_copy(update=changes)


def seen(service: str = "shop", **versions: tuple[int, int]) -> Seen:
    """versions: name -> (minutes after T0 of the first occurrence, occurrences); `1_1_0` means 1.1.0."""
    return Seen(
        services=frozenset({service}),
        first_seen={v.replace("_", "."): T0 + timedelta(minutes=m) for v, (m, _) in versions.items()},
        counts={v.replace("_", "."): c for v, (_, c) in versions.items()},
    )


def test_the_first_newer_version_of_the_service_after_the_merge_is_the_release():
    other = seen(**{"1_1_0": (150, 3), "1_2_0": (170, 1), "0_9_0": (160, 2)})
    early = seen(**{"1_0_1": (30, 1)})  # before the merge: not the release
    watch = watch_releases([merged_fix()], {"sig_b": other, "sig_c": early}, {"sig_a": "shop"})
    [release] = watch.releases
    assert (release.version, release.first_seen) == ("1.1.0", T0 + timedelta(minutes=150))
    assert watch.verdicts == {}
    elsewhere = watch_releases(
        [merged_fix()], {"sig_b": seen("billing", **{"2_0_0": (150, 1)})}, {"sig_a": "shop"}
    )
    assert elsewhere.releases == []


def test_a_recurrence_is_a_regression_on_the_release_or_later_and_noted_below_it():
    fix = merged_fix(released_version="1.1.0", released_at="2026-03-02T11:30:00+00:00")
    regressed = watch_releases(
        [fix], {"sig_a": seen(**{"1_2_0": (200, 4), "1_0_0": (200, 1)})}, {"sig_a": "shop"}
    )
    verdict = regressed.verdicts["sig_a"]
    assert (verdict.kind, verdict.versions, verdict.count) == ("regressed", ["1.2.0"], 4)
    noted = watch_releases([fix], {"sig_a": seen(**{"1_0_0": (200, 2)})}, {"sig_a": "shop"}).verdicts["sig_a"]
    assert noted.kind == "noted" and "older than 1.1.0" in noted.reason
    unreleased = watch_releases([merged_fix()], {"sig_a": seen(**{"1_0_0": (200, 2)})}, {"sig_a": "shop"})
    assert unreleased.verdicts["sig_a"].kind == "noted" and unreleased.releases == []


def test_a_fix_that_is_not_merged_or_no_longer_live_is_not_judged():
    occurred = {"sig_a": seen(**{"9_0_0": (500, 1)})}
    for status in ("proposed", "regressed", "abandoned"):
        fix = merged_fix(
            status=status, merged_at=None if status == "proposed" else "2026-03-02T10:00:00+00:00"
        )
        assert watch_releases([fix], occurred, {"sig_a": "shop"}).verdicts == {}
    resolved_without_versions = merged_fix(status="resolved", versions_before=[])
    plain = Seen(services=frozenset({"shop"}), unversioned=3)
    assert watch_releases([resolved_without_versions], {"sig_a": plain}, {"sig_a": "shop"}).verdicts == {}


# --- rounds' checks, in a real worktree --------------------------------------------------------------
def test_checks_refuse_protected_paths_symlinks_and_writes_through_a_link_outside(tmp_path):
    app = make_app(tmp_path / "app")
    outside = tmp_path / "outside.txt"
    outside.write_text("before\n")
    (app.checkout / "link").symlink_to(outside)
    git(app.checkout, "add", "link")
    git(app.checkout, "commit", "--quiet", "-m", "a link out")
    checkout = Git(app.checkout)
    with open_worktree(checkout, "rounds/fix-test", checkout.head()) as tree:
        guard = Guard.before(checkout, tree)
        (tree.path / ".github" / "workflows" / "ci.yml").write_text("on: [push]\n")
        (tree.path / "docs").mkdir()
        (tree.path / "docs" / "x.lock").write_text("x\n")
        outside.write_text("changed through the link\n")
        checked = check_changes(tree, guard, checkout, protected=["*.lock"], max_diff_lines=10)
        worktree_path = tree.path
    assert not checked.ok
    assert "`.github/workflows/ci.yml` is protected (.github/)" in checked.problems
    assert "`docs/x.lock` is protected (*.lock)" in checked.problems
    assert "a file outside the worktree was changed through the symlink `link`" in checked.problems
    assert not worktree_path.exists() and "rounds/fix-test" not in git(app.checkout, "branch", "--list")


def test_checks_stage_a_small_change_and_refuse_a_large_one(tmp_path):
    app = make_app(tmp_path / "app")
    checkout = Git(app.checkout)
    with open_worktree(checkout, "rounds/fix-size", checkout.head()) as tree:
        guard = Guard.before(checkout, tree)
        (tree.path / "app" / "new.py").write_text("".join(f"line{n} = {n}\n" for n in range(12)))
        big = check_changes(tree, guard, checkout, protected=[], max_diff_lines=10)
        small = check_changes(tree, guard, checkout, protected=[], max_diff_lines=20)
    assert big.problems == ["the change is 12 lines; at most 10 are allowed"]
    assert small.ok and (small.files, small.added, small.deleted) == (["app/new.py"], 12, 0)


def test_protection_matches_folders_files_and_globs():
    patterns = [".github/", ".mcp.json", "*.lock", "deploy/"]
    assert protected_by(".github/workflows/ci.yml", patterns) == ".github/"
    assert protected_by(".mcp.json", patterns) == ".mcp.json"
    assert protected_by("poetry.lock", patterns) == "*.lock"
    assert protected_by("deploy", patterns) == "deploy/"
    assert protected_by("app/github.py", patterns) is None and protected_by("deployment.py", patterns) is None


# --- the test command -----------------------------------------------------------------------------------
def test_the_test_command_runs_without_a_shell_without_secrets_and_keeps_its_tail(tmp_path):
    script = (
        "import os; print('\\n'.join(f'line {n}' for n in range(100))); print(sorted(os.environ)); "
        "raise SystemExit(3)"
    )
    inherited = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": "ghs_secret", "ANTHROPIC_API_KEY": "sk-secret"}
    command = f'{sys.executable} -c "{script}"'
    result = run_tests(command, tmp_path, timeout_seconds=60, inherited_env=inherited)
    assert not result.passed and result.exit_code == 3 and "failed (exit status 3)" in result.summary()
    assert "line 99" in result.tail and "line 10\n" not in result.tail
    assert (
        "GITHUB_TOKEN" not in result.tail
        and "ANTHROPIC_API_KEY" not in result.tail
        and "'HOME'" in result.tail
    )


def test_the_test_command_gets_the_toolchain_the_job_set_up_and_still_no_token(tmp_path):
    """setup-python's CPython needs its LD_LIBRARY_PATH, setup-java's builds their JAVA_HOME: a team's own
    setup steps must reach the tests, its tokens never."""
    inherited = {
        "PATH": os.environ["PATH"],
        "LD_LIBRARY_PATH": "/opt/hostedtoolcache/Python/3.12.7/x64/lib",
        "pythonLocation": "/opt/hostedtoolcache/Python/3.12.7/x64",
        "JAVA_HOME_17_X64": "/usr/lib/jvm/temurin-17",
        "GITHUB_TOKEN": "ghs_secret",
        "ACTIONS_RUNTIME_TOKEN": "runtime-secret",
        "ANTHROPIC_API_KEY": "sk-secret",
        "SIGNOZ_API_KEY": "signoz-secret",
    }
    script = "import os, json; print(json.dumps(sorted(os.environ)))"
    result = run_tests(
        f'{sys.executable} -c "{script}"', tmp_path, timeout_seconds=60, inherited_env=inherited
    )
    seen = set(json.loads(result.tail.splitlines()[-1]))
    assert {"LD_LIBRARY_PATH", "pythonLocation", "JAVA_HOME_17_X64", "PATH", "HOME"} <= seen
    assert not seen & {"GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ANTHROPIC_API_KEY", "SIGNOZ_API_KEY"}


def test_the_test_command_is_stopped_at_its_time_limit(tmp_path):
    command = f'{sys.executable} -c "import time; time.sleep(30)"'
    result = run_tests(command, tmp_path, timeout_seconds=0.5, inherited_env=dict(os.environ))
    assert result.timed_out and not result.passed and "did not finish" in result.summary()


def test_an_unreadable_test_command_is_a_clear_error():
    with pytest.raises(ConfigError, match="ROUNDS_FIX_TEST_COMMAND"):
        split_command("pytest 'unclosed")


# --- a test command that cannot run is a setup problem, not failing tests ---------------------------------
def run_in(folder: Path, files: dict[str, str], command: str) -> tuple[TestRun, list[str]]:
    """Run `command` in a folder holding `files`; its result and the folder's files."""
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    inherited = {"PATH": os.environ["PATH"]}
    return run_tests(command, folder, timeout_seconds=120, inherited_env=inherited), sorted(files)


IMPORTS_MISSING = {"tests/test_api.py": "import not_installed_anywhere\n\ndef test_a():\n    assert True\n"}
OWN_MODULE_BROKEN = {
    "shop/__init__.py": "",
    "tests/test_shop.py": "import shop.gone\n\ndef test_a():\n    assert True\n",
}


@pytest.mark.parametrize(
    ("files", "command", "expected"),
    [
        ({}, "no-such-test-runner -q", "it could not be started"),
        ({}, "sh -c 'no-such-test-runner -q'", "a command it runs was not found (exit status 127: "),
        ({}, f"{sys.executable} -S -m pytest -q", "Python says `No module named pytest`"),
        ({}, f"{sys.executable} -m pytest --no-such-plugin-option", "pytest does not know the options"),
        (IMPORTS_MISSING, f"{sys.executable} -m pytest -x -q -p no:cacheprovider", "cannot import"),
        (IMPORTS_MISSING, f"{sys.executable} -m pytest -q -p no:cacheprovider", "`not_installed_anywhere`"),
        (
            {"tests/__init__.py": "", "tests/test_api.py": "import not_installed_anywhere\n"},
            f"{sys.executable} -m unittest discover -s tests -t .",
            "the tests cannot import `not_installed_anywhere`",
        ),
    ],
)
def test_a_test_command_that_cannot_run_is_told_apart_from_failing_tests(tmp_path, files, command, expected):
    tests, listed = run_in(tmp_path, files, command)
    problem = setup_problem(tests, listed)
    assert problem is not None and expected in problem, tests.output


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"tests/test_a.py": "def test_a():\n    assert 1 == 2\n"}, f"{sys.executable} -m pytest -q"),
        (OWN_MODULE_BROKEN, f"{sys.executable} -m pytest -q -p no:cacheprovider"),  # the repository's own
        (
            {
                "tests/test_api.py": "import not_installed_anywhere\n",
                "tests/test_b.py": "def test_b():\n    assert False\n",
            },
            f"{sys.executable} -m pytest -q -p no:cacheprovider --continue-on-collection-errors",
        ),
        ({}, f"{sys.executable} -c 'raise SystemExit(1)'"),
        ({}, f"{sys.executable} -c 'import sys; print(\"No module named pytest\"); sys.exit(1)'"),
    ],
)
def test_failing_tests_and_broken_code_of_the_repository_are_not_a_setup_problem(tmp_path, files, command):
    tests, listed = run_in(tmp_path, files, command)
    assert not tests.passed and setup_problem(tests, listed) is None, tests.output


def test_a_package_only_under_src_that_is_not_installed_is_a_setup_problem(tmp_path):
    files = {"src/shop/__init__.py": "", "tests/test_shop.py": "import shop\n\ndef test_a():\n    pass\n"}
    tests, listed = run_in(tmp_path, files, f"{sys.executable} -m pytest -q -p no:cacheprovider")
    assert "the tests cannot import `shop`" in (setup_problem(tests, listed) or "")


# --- the comments -------------------------------------------------------------------------------------------
def sample_tests(passed: bool, tail: str) -> TestRun:
    code = 0 if passed else 1
    return TestRun(
        command="python -m pytest -x -q",
        passed=passed,
        exit_code=code,
        timed_out=False,
        seconds=1.25,
        tail=tail,
    )


def test_the_comment_with_the_link_that_opens_the_pull_request_matches_its_golden_file():
    link = compare_link("https://github.com/", "octo/app", "main", "rounds/fix-sig_a-20260302")
    assert link == "https://github.com/octo/app/compare/main...rounds/fix-sig_a-20260302?expand=1"
    body = "Fixes #12\n\nrounds proposes this change (a & b = 100%).\n"
    prefilled = prefilled_link(
        link, title="rounds: proposed fix for #12 (sig_a)", body=body, short_body="short"
    )
    assert prefilled.startswith(link + "&title=rounds%3A+proposed+fix+for+%2312+%28sig_a%29&body=Fixes+%2312")
    files = ["app/pricing.py", "tests/test_pricing.py"]
    tests = sample_tests(True, "2 passed in 0.31s")
    assert_golden("offered.md", offered_comment(prefilled, "rounds/fix-sig_a-20260302", files, tests) + "\n")


def test_a_description_too_long_for_a_link_is_replaced_by_a_short_one_that_still_fixes_the_issue():
    link = compare_link("https://github.com", "octo/app", "main", "rounds/fix-sig_a-20260302")
    short = short_pull_body(12, "sig_a")
    prefilled = prefilled_link(link, title="t", body="x" * 20_000, short_body=short)
    assert len(prefilled) <= 8_000 and "body=Refs+%2312" in prefilled and "x" * 100 not in prefilled
    assert "<!-- rounds:fix sig_a -->" in short
    assert prefilled_link(link, title="t", body="x" * 9_000, short_body="y" * 9_000) == f"{link}&title=t"


def test_the_comments_of_an_attempt_that_never_started_match_their_golden_files():
    setup = sample_tests(False, "/usr/bin/python3: No module named pytest")
    reason = "the test command `python -m pytest -x -q` cannot run here: Python says `No module named pytest`"
    again = "Ask again with `/rounds fix` once the fix-test job installs them."
    assert_golden("setup.md", not_started_comment(reason, setup, hint=SETUP_HINT, again=again) + "\n")
    failing = sample_tests(
        False, "FAILED tests/test_totals.py::test_pair - assert 3.0 == 4\n1 failed in 0.12s"
    )
    reason = "the repository's tests already fail on `main` (commit `0123456789ab`) without any change"
    again = "rounds chose this problem itself and tries again once that branch has a new commit."
    assert_golden("baseline.md", not_started_comment(reason, failing, hint=None, again=again) + "\n")


# --- the edit run's result, credentials, settings -------------------------------------------------------
def test_the_edit_run_result_becomes_a_status_with_its_refusals():
    ok = edit_run(
        {
            "subtype": "success",
            "result": "changed x",
            "total_cost_usd": 0.02,
            "num_turns": 3,
            "permission_denials": [{"tool_name": "Write", "tool_input": {"file_path": "/etc/passwd"}}],
        }
    )
    assert (ok.status, ok.cost_usd, ok.turns, ok.refused) == ("ok", 0.02, 3, ["Write /etc/passwd"])
    assert edit_run({"subtype": "error_max_turns", "total_cost_usd": 0.1}).status == "turn_limit"
    assert edit_run({"subtype": "error_max_budget_usd"}).status == "budget_exhausted"
    failed = edit_run({"subtype": "success", "is_error": True, "result": "API Error: 500"})
    assert failed.status == "api_error" and "500" in failed.detail


def test_git_gets_the_token_for_the_server_only_as_configuration():
    env = remote_auth_env("https://github.com/", "ghs_abc")
    assert env["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraheader"
    assert (
        env["GIT_CONFIG_VALUE_0"].startswith("AUTHORIZATION: basic ")
        and "ghs_abc" not in env["GIT_CONFIG_VALUE_0"]
    )
    assert remote_auth_env("https://github.com", None) == {}


def test_fix_settings_are_read_checked_and_reported_together(clean_env):
    clean_env.setenv("ROUNDS_FIX_PROTECTED_PATHS", "deploy/, *.lock ,")
    clean_env.setenv("ROUNDS_FIX_GIT_AUTHOR", "Fix Bot <fix@example.com>")
    settings = load_settings()
    assert settings.fix_protected_paths == ["deploy/", "*.lock"] and settings.fix_author() == (
        "Fix Bot",
        "fix@example.com",
    )
    clean_env.setenv("ROUNDS_FIX_GIT_AUTHOR", "nobody")
    clean_env.setenv("ROUNDS_FIX_MAX_DIFF_LINES", "0")
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert "ROUNDS_FIX_GIT_AUTHOR='nobody'" in str(error.value) and "ROUNDS_FIX_MAX_DIFF_LINES" in str(
        error.value
    )


# --- the automatic choice -----------------------------------------------------------------------------
def signature(sid: str, count: int, issue: int) -> Signature:
    event = ErrorEvent(event_id=f"e-{sid}", timestamp=T0, service="shop", message="boom")
    return Signature(
        id=sid,
        service="shop",
        title="boom",
        representative=event,
        first_seen=T0,
        last_seen=T0,
        total_count=count,
        issue_ref=f"#{issue}",
    )


def test_automatic_fixes_pick_confident_server_bugs_most_frequent_first_within_the_daily_cap(
    fresh_db, clean_env
):
    with fresh_db.transaction():
        for sid, count, issue in [("sig_rare", 5, 1), ("sig_busy", 500, 2), ("sig_undiagnosed", 900, 3)]:
            fresh_db.save(signature(sid, count, issue))
            fresh_db.append_event(
                Fact.INCIDENT_DETECTED, f"detected:{sid}", signature_id=sid, run_id="r", at=T0
            )
    diagnose(fresh_db, "sig_rare")
    diagnose(fresh_db, "sig_busy")
    clean_env.setenv("ROUNDS_FIX_AUTO", "true")
    clean_env.setenv("ROUNDS_FIX_AUTO_PER_DAY", "1")
    settings = load_settings()
    assert request_automatic_fixes(fresh_db, settings, T0) == ["sig_busy"]
    assert request_automatic_fixes(fresh_db, settings, T0 + timedelta(hours=3)) == []  # the day's one is used
    assert request_automatic_fixes(fresh_db, settings, T0 + timedelta(days=1)) == ["sig_rare"]
    assert [(r.signature_id, r.trigger, r.by) for r in pending_requests(fresh_db)] == [
        ("sig_busy", "auto", "rounds"),
        ("sig_rare", "auto", "rounds"),
    ]
    clean_env.setenv("ROUNDS_FIX_AUTO", "false")
    assert request_automatic_fixes(Store.memory(), load_settings(), T0) == []


def test_an_automatic_request_that_could_not_start_holds_back_the_next_choice_and_spends_no_attempt(
    fresh_db, clean_env
):
    with fresh_db.transaction():
        for sid, count, issue in [("sig_busy", 500, 2), ("sig_rare", 5, 1)]:
            fresh_db.save(signature(sid, count, issue))
            fresh_db.append_event(
                Fact.INCIDENT_DETECTED, f"detected:{sid}", signature_id=sid, run_id="r", at=T0
            )
    diagnose(fresh_db, "sig_busy")
    diagnose(fresh_db, "sig_rare")
    clean_env.setenv("ROUNDS_FIX_AUTO", "true")
    settings = load_settings()
    assert request_automatic_fixes(fresh_db, settings, T0) == ["sig_busy"]
    [waiting] = pending_requests(fresh_db)
    blocked = {"request": waiting.key, "blocked": "setup", "reason": "the test command cannot run here"}
    with fresh_db.transaction():
        fresh_db.append_event(
            Fact.FIX_BLOCKED, "fixblocked:x", signature_id="sig_busy", run_id="fix", at=T0, payload=blocked
        )
    assert request_automatic_fixes(fresh_db, settings, T0 + timedelta(days=1)) == []  # it waits: no other
    assert [r.signature_id for r in pending_requests(fresh_db)] == ["sig_busy"]
    # a person's request answered with "cannot run" / "already failing" is no failed fix either
    with fresh_db.transaction():
        fresh_db.append_event(
            Fact.FIX_FAILED,
            "fixdone:x",
            signature_id="sig_rare",
            run_id="fix",
            at=T0,
            payload={"blocked": "baseline"},
        )
    incident = fresh_db.incident("sig_rare")
    assert incident is not None and incident.failed_fixes == 0


def test_a_worktree_is_removed_even_when_the_attempt_raises(tmp_path):
    app = make_app(tmp_path / "app")
    checkout = Git(app.checkout)
    with pytest.raises(RuntimeError), open_worktree(checkout, "rounds/fix-boom", checkout.head()) as tree:
        created = Path(tree.path)
        raise RuntimeError("boom")
    assert not created.exists()
    assert git(app.checkout, "worktree", "list").count("\n") == 0


def test_the_edit_run_offers_the_edit_tools_only_with_a_diagnosis_limits_and_isolation(tmp_path):
    record = tmp_path / "record.json"
    binary = tmp_path / "claude"
    result = json.dumps({"type": "result", "subtype": "success", "result": "done", "total_cost_usd": 0.01})
    binary.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "seen = {'argv': sys.argv[1:], 'env': dict(os.environ), 'cwd': os.getcwd()}\n"
        f"json.dump(seen, open({str(record)!r}, 'w'))\n"
        f"print({result!r})\n"
    )
    binary.chmod(0o755)
    inherited = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": "ghs_never", "LANG": "C.UTF-8"}
    cli = ClaudeCli(
        binary=binary,
        model="sonnet",
        credentials={"ANTHROPIC_API_KEY": "sk-test"},
        inherited_env=inherited,
        max_turns=9,
        max_budget_usd=0.4,
        timeout_seconds=30,
    )
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    run = FixEditor(cli, price_for("sonnet")).edit(worktree, Prompt(system="rules", user="fix it"))
    seen = json.loads(record.read_text())
    argv = seen["argv"]

    def value(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert run.status == "ok" and run.cost_usd == 0.01
    assert value("--tools") == "Read,Grep,Glob,Edit,Write" and value("--permission-mode") == "acceptEdits"
    assert "--restricted" in argv and "--strict-mcp-config" in argv and "--no-session-persistence" in argv
    assert (value("--max-turns"), float(value("--max-budget-usd")), value("--model")) == ("9", 0.4, "sonnet")
    assert "--allowedTools" not in argv and "--dangerously-skip-permissions" not in argv
    assert argv[-2:] == ["--", "fix it"] and Path(seen["cwd"]).resolve() == worktree.resolve()
    env = seen["env"]
    assert "GITHUB_TOKEN" not in env and env["ANTHROPIC_API_KEY"] == "sk-test" and env["LANG"] == "C.UTF-8"
    assert Path(env["HOME"]).name == "home" and not Path(env["HOME"]).exists()


def test_the_fix_job_says_what_became_of_a_request_that_waits_or_was_left_to_a_person():
    offered = FixOutcome(
        signature_id="sig_a",
        issue_number=12,
        status="offered",
        url="https://github.com/octo/app/compare/main...rounds/fix-sig_a-20260302?expand=1",
        branch="rounds/fix-sig_a-20260302",
        reason="GitHub Actions may not open pull requests in this repository",
    )
    assert describe(offered) == (
        "#12 (sig_a): branch rounds/fix-sig_a-20260302 pushed, pull request left to a person (GitHub Actions "
        "may not open pull requests in this repository); the issue has a link that opens it: "
        "https://github.com/octo/app/compare/main...rounds/fix-sig_a-20260302?expand=1"
    )
    blocked = FixOutcome(
        signature_id="sig_a", issue_number=12, status="blocked", reason="the test command `x` cannot run here"
    )
    assert describe(blocked) == (
        "#12 (sig_a): not tried yet, the request waits (no model ran): the test command `x` cannot run here"
    )
