"""`rounds fix edit | test | publish`: the stages of a fix apart, as GitHub Actions runs them (one job each).

    edit      fix-edit job: the model key, a read-only token. Asks (`--issue`, ROUNDS_FIX_AUTO), edits every
              pending request (`editing.py`), writes the bundle (`bundle.py`); its database is saved (the
              model's cost and the requests are in it). Runs no code of the repository.
    test      fix-test job: no secret, `contents: read`, after the team's own setup steps. The tests of every
              proposal of the bundle (`testing.py`), written as the verdict. Needs neither the database nor
              GitHub, and refuses to run while a token is in reach (`tokens.refuse_tests_beside`).
    publish   fix-publish job: the write token; runs no code of the repository. Follows the fixes proposed
              before (`job.follow`), then publishes every proposal with its verdict and answers every report
              (`publishing.py`); its database is saved.

A round may run between the edit and publish jobs (they queue in the concurrency group `rounds-state`): the
publishing stage restores the newest database and takes every request from it; a request another run
answered meanwhile is skipped, and every answer is keyed by its request, so nothing is answered twice. Nor
is anything edited twice: edit records each request it staged in its run, and a later run's edit leaves one
another run staged and has not published alone for a while (`staging.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from rounds_bot.errors import ConfigError, FixError
from rounds_bot.fixing.auto import request_automatic_fixes
from rounds_bot.fixing.bundle import (
    Bundle,
    Report,
    Staged,
    Verdict,
    Verdicts,
    read_bundle,
    read_verdicts,
    write_bundle,
    write_verdicts,
)
from rounds_bot.fixing.editing import edit_requests
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.job import ask, describe, follow, off_line
from rounds_bot.fixing.publishing import publish_bundle
from rounds_bot.fixing.requests import pending_requests
from rounds_bot.fixing.run import rules_from
from rounds_bot.fixing.setup import fix_run
from rounds_bot.fixing.testing import verdicts_for
from rounds_bot.fixing.tokens import refuse_tests_beside
from rounds_bot.github.pulls import PullsApi
from rounds_bot.settings import Settings
from rounds_bot.store import Store


@dataclass
class Edited:
    """What the edit stage did: lines for people, the bundle's digest and how many proposals it holds."""

    lines: list[str] = field(default_factory=list)
    digest: str = ""
    proposals: int = 0


def edit_stage(
    settings: Settings,
    store: Store,
    pulls: PullsApi,
    now: datetime,
    *,
    out: Path,
    run_id: str,
    issue: int | None = None,
) -> Edited:
    bundle = Bundle(repository=settings.github_repository or "", run=run_id, created_at=now.isoformat())
    off = off_line(settings, store)
    if off is not None:
        return Edited([off], write_bundle(out, bundle.model_copy(update={"notes": [off]}), []))
    if issue is not None:
        ask(store, issue, now)
    lines = [f"{sid}: chosen for an automatic fix" for sid in request_automatic_fixes(store, settings, now)]
    run = fix_run(settings, store, now, pulls)
    results = edit_requests(run, run_id)
    staged = [result for result in results if isinstance(result, Staged)]
    reports = [result for result in results if isinstance(result, Report)]
    bundle = bundle.model_copy(update={"reports": reports, "notes": run.notes})
    digest = write_bundle(out, bundle, staged)
    lines += [_staged_line(item) for item in staged] + [_report_line(report) for report in reports]
    if not results:  # a request still pending was left to the run that staged it (said in the notes)
        lines.append("no fix to edit in this run" if pending_requests(store) else "no fix was asked for")
    return Edited([*lines, *run.notes], digest, len(staged))


def test_stage(
    settings: Settings, environ: Mapping[str, str], *, bundle: Path, out: Path, digest: str | None = None
) -> list[str]:
    """The tests of every proposal in `bundle`; the verdict written to `out`."""
    refuse_tests_beside(settings, environ, doing="`rounds fix test`")
    if not settings.fix_test_command:
        raise ConfigError("ROUNDS_FIX_TEST_COMMAND is not set: there is nothing to test the changes with")
    loaded = read_bundle(bundle, digest=digest)
    checkout = Git(settings.repo_path)  # no credentials: this stage never talks to the remote
    verdicts = verdicts_for(checkout, loaded.staged, rules_from(settings, environ))
    write_verdicts(out, Verdicts(bundle_digest=loaded.digest, verdicts=verdicts))
    if not verdicts:
        return ["nothing to test"]
    return [_verdict_line(item, verdict) for item, verdict in zip(loaded.staged, verdicts, strict=True)]


def publish_stage(
    settings: Settings,
    store: Store,
    pulls: PullsApi,
    now: datetime,
    *,
    bundle: Path | None,
    verdict: Path | None,
    digest: str | None = None,
) -> list[str]:
    """Follow the fixes proposed before; then publish the bundle's proposals with their verdicts."""
    lines = follow(settings, store, pulls, now)
    if bundle is None:
        return lines
    loaded = read_bundle(bundle, digest=digest)
    made_for = loaded.bundle.repository
    if made_for and settings.github_repository and made_for != settings.github_repository:
        raise FixError(f"the fix bundle was made for {made_for}, not {settings.github_repository}")
    run = fix_run(settings, store, now, pulls)
    outcomes = publish_bundle(run, loaded, read_verdicts(verdict))
    if not outcomes:
        lines.append("no fix was asked for")
    return [*lines, *(describe(outcome) for outcome in outcomes), *run.notes]


def _staged_line(staged: Staged) -> str:
    p = staged.proposal
    where = f"#{p.issue_number} ({p.signature_id})"
    if p.kind == "retest":
        return f"{where}: the branch {p.branch} pushed earlier goes to the tests again (no model run)"
    if p.kind == "probe":
        return f"{where}: waits; its tests alone on {p.where()} first (no model run)"
    return (
        f"{where}: a change to {len(p.files)} files (+{p.added} -{p.deleted} lines, patch "
        f"{p.patch_sha256[:12]}) goes to the tests"
    )


def _report_line(report: Report) -> str:
    where = f"#{report.issue_number} ({report.signature_id})"
    if report.status == "blocked":
        return f"{where}: not tried yet, the request waits (no model ran): {report.reason}"
    return f"{where}: no change: {report.reason} (the publishing stage says so on the issue)"


def _verdict_line(staged: Staged, verdict: Verdict) -> str:
    p = staged.proposal
    said = f": {verdict.tests.summary()}" if verdict.tests is not None else ""
    reason = f" ({verdict.reason})" if verdict.reason and verdict.outcome != "passed" else ""
    return f"#{p.issue_number} ({p.signature_id}) {p.kind}: {verdict.outcome}{said}{reason}"
