"""The stages of a fix apart, without a model: a change made by hand (as the edit stage leaves it, a bundle),
the test stage with no token, and the publishing stage in a fresh repository of its own.

The real application of `fix_samples` (its bug, its unittest suite, a bare remote) and the fake GitHub with
the bug's issue and a `/rounds fix` waiting; each test hands a stage what the one before would have, or what a
hostile job could: a verdict for another patch, a forged "passed", a bundle replaced on the way, a checkout
whose git configuration runs commands. The three jobs end to end, with the real CLI, are in
test_fix_adoption.py.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from fake_github.fixtures import TOKEN, repository_env
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import START, quick_options
from fix_samples import (
    BUGGY_LINE,
    FIXED_LINE,
    TEST_COMMAND,
    App,
    ask_for_fix,
    diagnose,
    file_pricing_issue,
    fix_run,
    fix_settings,
    git,
    make_app,
)

from rounds_bot.cli.app import main
from rounds_bot.errors import ConfigError, FixError
from rounds_bot.events import Fact
from rounds_bot.fixing import stages
from rounds_bot.fixing.bundle import (
    Bundle,
    Proposal,
    Report,
    Staged,
    Verdict,
    Verdicts,
    read_bundle,
    read_verdicts,
    sha256,
    write_bundle,
    write_verdicts,
)
from rounds_bot.fixing.freshclone import commit_patch, fresh_clone, patch_between
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.patchcheck import DIFF_OPTIONS
from rounds_bot.fixing.publishing import publish_bundle
from rounds_bot.fixing.requests import pending_requests
from rounds_bot.fixing.run import rules_from
from rounds_bot.fixing.testcommand import TestRun
from rounds_bot.fixing.testing import TAMPERED, verdict_for
from rounds_bot.fixing.tokens import refuse_tests_beside, scrub
from rounds_bot.github.pulls import pulls_api_from_settings
from rounds_bot.settings import Settings
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop
NOW = START
TEST_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.fixture
def app(tmp_path: Path) -> App:
    return make_app(tmp_path / "app")


@pytest.fixture
def fake(app: App) -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake(git_remote=app.remote)


@pytest.fixture
def filed(fake: PullsFakeGitHub, tmp_path: Path) -> tuple[str, int]:
    """The pricing bug's signature and issue, diagnosed, with alice's `/rounds fix` waiting."""
    signature_id, issue = file_pricing_issue(fake, tmp_path)
    store = Store.open(tmp_path / "rounds.db")
    try:
        diagnose(store, signature_id)
        ask_for_fix(store, signature_id, issue)
    finally:
        store.close()
    return signature_id, issue


def change(app: App, files: dict[str, str]) -> tuple[str, bytes]:
    """`files` written on main's head in a scratch clone: its start commit, and the patch the edit makes."""
    scratch = app.remote.parent / f"scratch-{len(list(app.remote.parent.glob('scratch-*')))}"
    git(app.remote.parent, "clone", "--quiet", str(app.remote), str(scratch))
    for path, text in files.items():
        (scratch / path).parent.mkdir(parents=True, exist_ok=True)
        (scratch / path).write_text(text)
    git(scratch, "add", "--all")
    start = git(scratch, "rev-parse", "HEAD")
    done = subprocess.run(
        ["git", "diff", "--cached", *DIFF_OPTIONS, start, "--"], cwd=scratch, capture_output=True, check=True
    )
    return start, done.stdout


def fixed(app: App) -> dict[str, str]:
    return {
        "app/pricing.py": (app.checkout / "app" / "pricing.py").read_text().replace(BUGGY_LINE, FIXED_LINE)
    }


def staged_for(sid: str, issue: int, start: str, patch: bytes, *, request: str = "fix:1") -> Staged:
    proposal = Proposal(
        request=request,
        signature_id=sid,
        issue_number=issue,
        kind="change",
        plan="new",
        branch=f"rounds/fix-{sid}-{NOW:%Y%m%d}",
        base="main",
        start=start,
        patch_sha256=sha256(patch),
        files=["app/pricing.py"],
        added=1,
        deleted=1,
    )
    return Staged(proposal, patch)


def passed(staged: Staged, *, tail: str = "Ran 1 test in 0.001s\n\nOK") -> Verdict:
    tests = TestRun(command=TEST_COMMAND, passed=True, exit_code=0, timed_out=False, seconds=0.5, tail=tail)
    p = staged.proposal
    return Verdict(
        request=p.request, patch_sha256=p.patch_sha256, start=p.start, outcome="passed", tests=tests
    )


def settings(tmp_path: Path, fake: PullsFakeGitHub, app: App, **more: str) -> Settings:
    return fix_settings(tmp_path, fake, app, "claude", SimpleNamespace(url="http://127.0.0.1:9"), **more)  # type: ignore[arg-type]


def publish(tmp_path: Path, fake: PullsFakeGitHub, app: App, staged: Staged, verdict: Verdict | None) -> Any:
    configured = settings(tmp_path, fake, app)
    store = Store.open(configured.signatures_db_path)
    try:
        folder = tmp_path / f"bundle-{len(list(tmp_path.glob('bundle-*')))}"
        digest = write_bundle(folder, Bundle(repository="octo/app"), [staged])
        verdicts = {verdict.request: verdict} if verdict is not None else {}
        return publish_bundle(fix_run(configured, store, NOW), read_bundle(folder, digest=digest), verdicts)
    finally:
        store.close()


def stage_settings(app: App, **more: str) -> Settings:
    values = {"ROUNDS_REPO_PATH": str(app.checkout), "ROUNDS_FIX_TEST_COMMAND": TEST_COMMAND, **more}
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


# --- the test stage: no token in reach --------------------------------------------------------------------
def test_the_test_stage_and_rounds_fix_refuse_to_run_the_tests_beside_a_token_in_one_line(
    tmp_path, fake, app, filed, clean_env
):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    folder = tmp_path / "bundle"
    write_bundle(folder, Bundle(), [staged_for(sid, issue, start, patch)])
    runner = CliRunner()
    base = {"ROUNDS_REPO_PATH": str(app.checkout), "ROUNDS_FIX_TEST_COMMAND": TEST_COMMAND}
    arguments = ["fix", "test", "--bundle", str(folder), "--out", str(tmp_path / "verdict")]
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "ANTHROPIC_API_KEY", "ROUNDS_APP_PRIVATE_KEY"):
        refused = runner.invoke(main, arguments, env={**base, name: "a-secret-value"})
        assert refused.exit_code == 2, refused.output
        [line] = refused.output.strip().splitlines()
        assert (
            line.startswith("error: `rounds fix test` would run the repository's test command")
            and name in line
        )
        assert "ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS=true" in line and "a-secret-value" not in line
    assert not (tmp_path / "verdict").exists()
    opted = runner.invoke(
        main, arguments, env={**base, "GITHUB_TOKEN": "x" * 12, "ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS": "true"}
    )
    assert opted.exit_code == 0, opted.output
    [verdict] = read_verdicts(tmp_path / "verdict").values()
    assert verdict.outcome == "passed" and verdict.patch_sha256 == sha256(patch)

    # all three stages in one process: refused too, before anything runs, when a request waits
    env = {
        **base,
        "ROUNDS_TRACKER": "github",
        **repository_env(fake, tmp_path),
        "ANTHROPIC_API_KEY": "k",
        "ROUNDS_CLAUDE_BIN": sys.executable,
    }
    all_in_one = runner.invoke(main, ["fix"], env=env)
    assert all_in_one.exit_code == 2, all_in_one.output
    [line] = all_in_one.output.strip().splitlines()
    assert "`rounds fix` (its three stages in one process) would run" in line
    assert "ANTHROPIC_API_KEY, GITHUB_TOKEN are in reach" in line
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]
    assert len(pending_requests(Store.open(tmp_path / "rounds.db"))) == 1


def test_what_is_in_reach_comes_from_the_settings_and_the_environment(app, clean_env):
    plain = stage_settings(app)
    refuse_tests_beside(plain, TEST_ENV, doing="x")  # nothing in reach: no error
    with pytest.raises(ConfigError, match="ZULIP_API_KEY is in reach"):
        refuse_tests_beside(stage_settings(app, ZULIP_API_KEY="z" * 10), TEST_ENV, doing="x")
    with pytest.raises(ConfigError, match="ACTIONS_RUNTIME_TOKEN is in reach"):
        refuse_tests_beside(plain, {**TEST_ENV, "ACTIONS_RUNTIME_TOKEN": "r" * 10}, doing="x")
    refuse_tests_beside(plain, {**TEST_ENV, "GITHUB_TOKEN": ""}, doing="x")  # Actions' "" for an unset secret


def test_tests_that_set_core_fsmonitor_fail_the_verdict_and_it_never_runs(tmp_path, app, filed, clean_env):
    sid, issue = filed
    marker = tmp_path / "fsmonitor-ran"
    hostile = f"""import subprocess
import unittest


class Configure(unittest.TestCase):
    def test_configure(self):
        subprocess.run(["git", "config", "core.fsmonitor", "touch {marker}"], check=True)
"""
    start, patch = change(app, {**fixed(app), "tests/test_configure.py": hostile})
    staged = staged_for(sid, issue, start, patch)
    settings = stage_settings(app)
    git(app.checkout, "fetch", "--quiet", "origin")
    verdict = verdict_for(Git(app.checkout), staged, rules_from(settings, TEST_ENV))
    assert verdict.outcome == "failed" and verdict.reason == TAMPERED, verdict
    assert any("config" in detail for detail in verdict.details)
    assert "fsmonitor" not in (app.checkout / ".git" / "config").read_text()  # put back
    assert not marker.exists()


def test_the_test_stage_writes_a_verdict_bound_to_the_patch_and_a_probe_runs_the_baseline_alone(
    tmp_path, app, filed, clean_env
):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    folder = tmp_path / "bundle"
    probe = Proposal(
        request="fix:auto:1",
        signature_id=sid,
        issue_number=issue,
        kind="probe",
        plan="new",
        branch="b",
        base="main",
        start=start,
    )
    digest = write_bundle(folder, Bundle(), [staged_for(sid, issue, start, patch), Staged(probe)])
    lines = stages.test_stage(
        stage_settings(app), TEST_ENV, bundle=folder, out=tmp_path / "verdict", digest=digest
    )
    assert len(lines) == 2 and "change: passed" in lines[0] and "probe: passed" in lines[1]
    written = json.loads((tmp_path / "verdict" / "verdict.json").read_text())
    assert written["bundle_digest"] == digest
    verdicts = read_verdicts(tmp_path / "verdict")
    assert verdicts["fix:1"].patch_sha256 == sha256(patch) and verdicts["fix:1"].tests is not None
    assert verdicts["fix:auto:1"].tests is None  # the baseline alone
    with pytest.raises(FixError, match="not the one the edit stage wrote"):
        stages.test_stage(stage_settings(app), TEST_ENV, bundle=folder, out=tmp_path / "v2", digest="0" * 64)


# --- the bundle on the way -------------------------------------------------------------------------------
def test_a_bundle_replaced_or_tampered_with_on_the_way_is_refused(tmp_path, app, filed):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    folder = tmp_path / "bundle"
    digest = write_bundle(folder, Bundle(), [staged_for(sid, issue, start, patch)])
    assert read_bundle(folder, digest=digest).staged[0].patch == patch
    (folder / "1.patch").write_bytes(patch.replace(b"if prices else 0", b"if prices else 1"))
    with pytest.raises(FixError, match="is not the patch it names"):
        read_bundle(folder)
    manifest = json.loads((folder / "bundle.json").read_text())
    manifest["proposals"][0]["patch"] = "../../etc/passwd"
    (folder / "bundle.json").write_text(json.dumps(manifest))
    with pytest.raises(FixError, match="names a patch it may not"):
        read_bundle(folder)
    with pytest.raises(FixError, match="not the one the edit stage wrote"):
        read_bundle(folder, digest=digest)


# --- publishing -----------------------------------------------------------------------------------------
def test_publishing_commits_exactly_the_checked_patch_in_a_fresh_repository(tmp_path, fake, app, filed):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    staged = staged_for(sid, issue, start, patch)
    [outcome] = publish(tmp_path, fake, app, staged, passed(staged))
    assert outcome.status == "proposed", outcome.reason
    [pull] = fake.open_pulls()
    assert git(app.remote, "rev-list", "--count", f"main..{pull.head}") == "1"
    pushed = subprocess.run(
        ["git", "diff", *DIFF_OPTIONS, start, pull.head, "--"],
        cwd=app.remote,
        capture_output=True,
        check=True,
    )
    assert pushed.stdout == patch  # byte for byte
    message = git(app.remote, "log", "-1", "--format=%B", pull.head)
    assert f"Rounds-Signature: {sid}" in message and f"Rounds-Issue: #{issue}" in message
    assert "Ran 1 test" in pull.body and f"Refs #{issue}" in pull.body
    store = Store.open(tmp_path / "rounds.db")
    try:
        [proposed] = [dict(f.payload) for f in store.facts([Fact.FIX_PROPOSED])]
        assert proposed["patch_sha256"] == sha256(patch) and pending_requests(store) == []
    finally:
        store.close()
    # published again (another run's publishing job with the same bundle): nothing more happens
    [again] = publish(tmp_path, fake, app, staged, passed(staged))
    assert again.status == "skipped" and len(fake.repo.pulls) == 1 and len(fake.replies(issue)) == 1


def test_publishing_never_runs_what_the_checkout_configures(tmp_path, fake, app, filed):
    """What test code could leave in the checkout's git folder: an fsmonitor, hooks, a filter and a diff
    driver named by info/attributes, an ssh command, a pager, an include. Publishing uses none of it."""
    sid, issue = filed
    marker = tmp_path / "configured-command-ran"
    run = f"sh -c 'echo ran >> {marker}'"
    for key, value in {
        "core.fsmonitor": run,
        "core.sshCommand": run,
        "core.pager": run,
        "core.editor": run,
        "diff.external": run,
        "filter.evil.clean": run,
        "filter.evil.smudge": run,
        "filter.evil.process": run,
        "diff.evil.textconv": run,
        "gpg.program": run,
        "commit.gpgSign": "true",
    }.items():
        git(app.checkout, "config", key, value)
    (app.checkout / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")
    hooks = app.checkout / ".git" / "hooks"
    for name in ("pre-commit", "post-commit", "pre-push", "reference-transaction", "post-checkout"):
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        (hooks / name).chmod(0o755)
    start, patch = change(app, fixed(app))
    staged = staged_for(sid, issue, start, patch)
    [outcome] = publish(tmp_path, fake, app, staged, passed(staged))
    assert outcome.status == "proposed", outcome.reason
    assert not marker.exists(), marker.read_text()
    # the checkout would have run them: a person's commit there does
    subprocess.run(
        ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "--quiet",
         "--allow-empty", "--no-gpg-sign", "-m", "x"],
        cwd=app.checkout, capture_output=True, check=False,
    )  # fmt: skip
    assert marker.exists()


def test_publishing_refuses_a_verdict_for_another_patch_and_a_change_its_checks_refuse(
    tmp_path, fake, app, filed
):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    staged = staged_for(sid, issue, start, patch)
    other = passed(staged).model_copy(update={"patch_sha256": "0" * 64})
    [outcome] = publish(tmp_path, fake, app, staged, other)
    assert (
        outcome.status == "failed"
        and outcome.reason == "the tests ran on another change than the one proposed"
    )
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]

    store = Store.open(tmp_path / "rounds.db")
    ask_for_fix(store, sid, issue, origin="2", at=NOW)
    store.close()
    workflow = {**fixed(app), ".github/workflows/ci.yml": "on: [push, pull_request]\n"}
    start, patch = change(app, workflow)
    forged = staged_for(sid, issue, start, patch, request="fix:2")
    [outcome] = publish(tmp_path, fake, app, forged, passed(forged))  # "passed", says the test job
    assert outcome.status == "failed" and outcome.reason == "the change breaks rounds' rules for fixes"
    assert "`.github/workflows/ci.yml` is protected" in fake.replies(issue)[-1]
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]


def test_a_change_whose_tests_never_reported_back_is_reported_and_rounds_own_choice_waits(
    tmp_path, fake, app, filed
):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    [outcome] = publish(tmp_path, fake, app, staged_for(sid, issue, start, patch), None)
    assert outcome.status == "failed" and "did not report back" in outcome.reason
    assert "did not report back" in fake.replies(issue)[-1] and fake.repo.pulls == {}


def test_secrets_in_the_tests_output_are_scrubbed_in_every_encoding_before_publishing(
    tmp_path, fake, app, filed
):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    staged = staged_for(sid, issue, start, patch)
    leaked = [TOKEN, base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode(), TOKEN.encode().hex()]
    verdict = passed(staged, tail="\n".join(["FOUND " + text for text in leaked] + ["OK"]))
    [outcome] = publish(tmp_path, fake, app, staged, verdict)
    assert outcome.status == "proposed", outcome.reason
    [pull] = fake.open_pulls()
    for text in [pull.body, *fake.replies(issue)]:
        for form in leaked:
            assert form not in text
        assert TOKEN not in scrub(text, [TOKEN])
    assert "[redacted: a secret of the run]" in pull.body


def test_a_change_for_a_branch_that_moved_is_not_pushed(tmp_path, fake, app, filed):
    sid, issue = filed
    start, patch = change(app, fixed(app))
    staged = staged_for(sid, issue, start, patch)
    update = staged.proposal.model_copy(update={"plan": "update", "branch": f"rounds/fix-{sid}-20260101"})
    [outcome] = publish(tmp_path, fake, app, Staged(update, patch), passed(Staged(update, patch)))
    assert outcome.status == "failed" and "appeared while the change was tested" not in outcome.reason
    assert "moved while the change was tested" in outcome.reason
    assert fake.repo.pulls == {} and list(app.branches()) == ["main"]


def test_commit_patch_refuses_a_commit_whose_patch_is_not_the_checked_one(tmp_path, app):
    start, patch = change(app, fixed(app))
    with fresh_clone("origin", str(app.remote), remote_env={}, inherited=TEST_ENV) as clone:
        clone.fetch("origin", "main")
        commit = commit_patch(clone, start, patch, "m\n", ("rounds", "r@example.com"))
        assert patch_between(clone, start, commit) == patch
        with pytest.raises(FixError):
            commit_patch(clone, start, patch + b"garbage\n", "m\n", ("rounds", "r@example.com"))
        assert clone.run("config", "--list", "--show-origin").count("file:") == len(
            clone.run("config", "--list", "--local").splitlines()
        ), "no configuration file but the repository's own"


def test_publish_stage_watches_and_refuses_a_bundle_of_another_repository(tmp_path, fake, app, filed):
    configured = settings(tmp_path, fake, app)
    folder = tmp_path / "bundle"
    write_bundle(folder, Bundle(repository="someone/else"), [])
    store = Store.open(configured.signatures_db_path)
    try:
        pulls = pulls_api_from_settings(configured, quick_options())
        assert stages.publish_stage(configured, store, pulls, NOW, bundle=None, verdict=None) == []
        with pytest.raises(FixError, match="made for someone/else"):
            stages.publish_stage(configured, store, pulls, NOW, bundle=folder, verdict=None)
        write_verdicts(tmp_path / "verdict", Verdicts())
        write_bundle(folder, Bundle(repository="octo/app"), [])
        verdict = tmp_path / "verdict"
        lines = stages.publish_stage(configured, store, pulls, NOW, bundle=folder, verdict=verdict)
        assert lines == ["no fix was asked for"]
    finally:
        store.close()


def test_a_waiting_automatic_request_is_probed_without_the_model_until_its_tests_run(
    tmp_path, fake, app, clean_env
):
    from rounds_bot.fixing.attempt import Attempt
    from rounds_bot.fixing.blocked import needs_probe, record_blocked
    from rounds_bot.fixing.editing import edit_requests

    sid, issue = file_pricing_issue(fake, tmp_path)
    configured = settings(tmp_path, fake, app)
    store = Store.open(configured.signatures_db_path)
    try:
        ask_for_fix(store, sid, issue, trigger="auto")
        [request] = pending_requests(store)
        setup = Attempt(ok=False, blocked="setup", reason="the test command cannot run here")
        record_blocked(store, request, setup, "0" * 40, NOW)
        assert needs_probe(store, request)
        run = fix_run(configured, store, NOW)
        run.editor = None  # type: ignore[assignment]  # a probe never reaches the model
        [probe] = edit_requests(run)
        assert isinstance(probe, Staged) and probe.proposal.kind == "probe" and probe.patch == b""
        verdict = verdict_for(Git(app.checkout), probe, rules_from(configured, TEST_ENV))
        assert verdict.outcome == "passed" and verdict.tests is None
        folder = tmp_path / "bundle"
        digest = write_bundle(folder, Bundle(), [probe])
        [outcome] = publish_bundle(run, read_bundle(folder, digest=digest), {verdict.request: verdict})
        assert outcome.status == "waiting" and "the model runs next time" in outcome.reason
        assert not needs_probe(store, request) and pending_requests(store) == [request]
        assert fake.repo.pulls == {} and fake.replies(issue) == []  # waiting says nothing more
    finally:
        store.close()


def test_in_github_actions_a_persons_request_is_probed_before_the_model_is_paid(
    tmp_path, fake, app, filed, clean_env
):
    """The edit job runs before the test job: a request's first run only probes it (its tests alone on the
    unchanged base, no model), so a test command that cannot run there costs no model run, and its baseline
    runs before any file the model wrote exists. Once they passed, the next run's edit job runs the model."""
    from rounds_bot.fixing.blocked import needs_probe
    from rounds_bot.fixing.editing import edit_requests, plan_request

    sid, issue = filed
    configured = settings(tmp_path, fake, app)
    store = Store.open(configured.signatures_db_path)
    try:
        [request] = pending_requests(store)
        assert request.trigger != "auto" and needs_probe(store, request)
        run = fix_run(configured, store, NOW)
        run.editor = None  # type: ignore[assignment]  # a probe never reaches the model
        [probe] = edit_requests(run)
        assert isinstance(probe, Staged) and probe.proposal.kind == "probe" and probe.patch == b""
        cannot = TestRun(
            command=TEST_COMMAND,
            passed=False,
            exit_code=1,
            timed_out=False,
            seconds=0.1,
            tail="",
            started=True,
        )
        blocked = probe.proposal
        setup = Verdict(
            request=blocked.request,
            patch_sha256="",
            start=blocked.start,
            outcome="setup",
            reason="the test command cannot run here",
            tests=cannot,
        )
        folder = tmp_path / "bundle"
        digest = write_bundle(folder, Bundle(), [probe])
        # the verdict says the setup is broken: the person is answered, and no model ran
        [outcome] = publish_bundle(run, read_bundle(folder, digest=digest), {setup.request: setup})
        assert outcome.status == "failed" and pending_requests(store) == []
        [said] = fake.replies(issue)
        assert "No model ran and nothing was pushed." in said

        ask_for_fix(store, sid, issue, origin="again")
        [again] = pending_requests(store)
        [probe] = edit_requests(run)
        assert probe.proposal.kind == "probe" and probe.proposal.request == again.key
        passed_probe = verdict_for(Git(app.checkout), probe, rules_from(configured, TEST_ENV))
        assert passed_probe.outcome == "passed"
        digest = write_bundle(folder, Bundle(), [probe])
        [outcome] = publish_bundle(run, read_bundle(folder, digest=digest), {again.key: passed_probe})
        assert outcome.status == "waiting" and "the model runs next time" in outcome.reason
        planned = plan_request(run, again, probe=True)
        assert not isinstance(planned, Report) and not planned.probe  # the next run's edit job: the model
    finally:
        store.close()


def test_the_test_stage_runs_every_baseline_on_a_clean_base_before_any_code_the_model_wrote(
    tmp_path, app, filed, clean_env, monkeypatch
):
    """Code the tests of one change run can outlive them (a process left behind, a file written into the
    job's toolchain): every baseline on a base no model wrote runs before the first change's tests, and
    before a branch pushed earlier (the model's commits) is tested again."""
    from rounds_bot.fixing import testing

    sid, issue = filed
    start, patch = change(app, fixed(app))
    order: list[tuple[str, str]] = []
    real_baseline, real_run = testing.baseline, testing._run

    def baseline(tree, rules, where):  # type: ignore[no-untyped-def]
        order.append(("baseline", tree.branch))
        return real_baseline(tree, rules, where)

    def run(tree, rules):  # type: ignore[no-untyped-def]
        order.append(("tests", tree.branch))
        return real_run(tree, rules)

    monkeypatch.setattr(testing, "baseline", baseline)
    monkeypatch.setattr(testing, "_run", run)
    common = {"signature_id": sid, "issue_number": issue, "branch": "b", "base": "main", "start": start}
    retest = Proposal(request="fix:2", kind="retest", plan="resume", **common)
    probe = Proposal(request="fix:3", kind="probe", plan="new", **common)
    staged = [staged_for(sid, issue, start, patch), Staged(retest), Staged(probe)]
    verdicts = testing.verdicts_for(Git(app.checkout), staged, rules_from(stage_settings(app), TEST_ENV))
    assert [v.outcome for v in verdicts] == ["passed", "passed", "passed"]
    assert order == [
        ("baseline", "rounds/baseline-1"),  # the change's base
        ("baseline", "rounds/baseline-3"),  # the probe's
        ("tests", "rounds/tests-1"),  # the change: code the model wrote runs from here on
        ("tests", "rounds/tests-2"),  # the branch pushed earlier
    ]
