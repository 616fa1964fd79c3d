"""The signature database between workflow runs, carried as a workflow artifact.

    restore(...)           the newest usable artifact -> SIGNATURES_DB_PATH; else rebuilt from the issues
    snapshot(...)          a checked, single-file copy of the database for `actions/upload-artifact`
    first_restorable(...)  the artifact a restore puts in place, checked in a scratch file (`rounds doctor`)

The rebuild from the issues, when no artifact is usable, is `db_rebuild.rebuild_from_issues`.

Which artifact is usable: the newest one named ROUNDS_ARTIFACT_NAME that has not expired, saved by a run of
this repository (not a fork's) on the default branch (not a pull request's or another branch's run), whose
database passes SQLite's integrity check and has a schema this rounds can read. With `this_run` (the
fix-publish job), an artifact of the current run is usable only when it is the one named by `vouched`, the id
the fix-edit job handed on: the fix-test job of the same run runs code the model wrote, which can reach the
run's artifact storage and replace the run's `rounds-db` (SECURITY.md; docs/fixes.md, "The boundary").

The download, and the one member of the zip that is read, are `artifact_download`; a database that fails its
check is never restored and never uploaded.

With ROUNDS_STATE_KEY (`state_key`), the snapshot is signed (`state_signature`) and an artifact is usable only
when its signature is the key's for its database and the run GitHub says saved it: an artifact the fix-test
job saved, which cannot hold the key, is refused with a note, and older ones are tried.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import httpx
from pydantic import Field

from rounds_bot.errors import StoreError, TrackerError
from rounds_bot.github.actions import ActionsApi, Artifact
from rounds_bot.github.artifact_download import ArtifactGone, download, extract, read_small_member
from rounds_bot.github.db_rebuild import rebuild_from_issues
from rounds_bot.github.rebuild import RebuildResult
from rounds_bot.github.state_signature import (
    MAX_SIGNATURE_BYTES,
    SIGNATURE_SUFFIX,
    sign,
    signature_path,
    verify,
)
from rounds_bot.models import Frozen
from rounds_bot.store import SCHEMA_VERSION

# how many artifacts a restore downloads: the newest and one older if it is broken; with the state key, more,
# since code without the key can upload several unsigned ones to push the signed one out of reach
TRIED_ARTIFACTS = 2
TRIED_ARTIFACTS_SIGNED = 10


class DatabaseCheck(Frozen):
    ok: bool
    problems: list[str] = Field(default_factory=list)
    schema_version: int | None = None
    signatures: int | None = None


class RestoreResult(Frozen):
    source: Literal["artifact", "rebuilt"]
    artifact: Artifact | None = None
    rebuilt: RebuildResult | None = None
    notes: list[str] = Field(
        default_factory=list, description="why an artifact was not used, and what that means"
    )

    def summary(self, repository: str, now: datetime | None = None) -> str:
        """Markdown for the job summary."""
        lines = ["### Saved state", ""]
        if self.source == "artifact" and self.artifact is not None:
            age = describe_age(self.artifact.created_at, now)
            lines.append(
                f"Restored the signature database from artifact `{self.artifact.name}` "
                f"(id {self.artifact.id}, run {self.artifact.run_id}, saved {age})."
            )
        elif self.rebuilt is not None:
            lines.append(
                f"Rebuilt the signature database from {self.rebuilt.issues_read} issues of {repository} "
                f"({self.rebuilt.signatures} signatures): occurrence history and spike baselines restart, "
                "and the first round reads its lookback window again."
            )
        lines.extend(f"- {note}" for note in self.notes)
        return "\n".join(lines) + "\n"


def describe_age(moment: datetime | None, now: datetime | None = None) -> str:
    if moment is None:
        return "at an unknown time"
    seconds = ((now or datetime.now(UTC)) - moment).total_seconds()
    if seconds < 3600:
        return f"{max(int(seconds // 60), 0)} minutes ago"
    if seconds < 2 * 86_400:
        return f"{seconds / 3600:.1f} hours ago"
    return f"{seconds / 86_400:.1f} days ago"


# --- finding -------------------------------------------------------------------------------------
def usable_artifacts(
    api: ActionsApi, name: str, *, this_run: int | None = None, vouched: int | None = None
) -> tuple[list[Artifact], list[str]]:
    """The candidates newest first, and why the others were passed over."""
    repository = api.repository_info()
    default_branch = str(repository.get("default_branch") or "main")
    repository_id = repository.get("id")
    chosen: list[Artifact] = []
    passed: dict[str, int] = {}
    for artifact in api.artifacts(name):
        reason = unusable_reason(artifact, default_branch, repository_id) or _unvouched(
            artifact, this_run, vouched
        )
        if reason is None:
            chosen.append(artifact)
        else:
            passed[reason] = passed.get(reason, 0) + 1
    notes = [
        f"{count} artifact{'s' if count > 1 else ''} {reason}, not used" for reason, count in passed.items()
    ]
    return chosen, notes


def unusable_reason(artifact: Artifact, default_branch: str, repository_id: object) -> str | None:
    """Why `artifact` must not be restored (expired, a fork's, another branch's), or None when it may be."""
    if artifact.expired:
        return "expired"
    if artifact.head_repository_id is not None and artifact.head_repository_id != repository_id:
        return "came from a fork's run"
    if artifact.head_branch != default_branch:
        return f"came from runs on branches other than {default_branch}"
    return None


def _unvouched(artifact: Artifact, this_run: int | None, vouched: int | None) -> str | None:
    """Why an artifact of `this_run` other than `vouched` must not be restored, or None."""
    if this_run is None or artifact.run_id != this_run or artifact.id == vouched:
        return None
    return "came from this run but not from the job that handed its database on"


# --- checking ------------------------------------------------------------------------------------
def check_database(path: Path) -> DatabaseCheck:
    """SQLite's integrity check, and a schema version this rounds can read."""
    if not path.is_file():
        return DatabaseCheck(ok=False, problems=[f"{path} does not exist"])
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return DatabaseCheck(ok=False, problems=[f"{path} cannot be opened: {exc}"])
    try:
        problems: list[str] = []
        rows = [row[0] for row in connection.execute("PRAGMA integrity_check").fetchall()]
        if rows != ["ok"]:
            problems.append(f"integrity check failed: {'; '.join(rows[:5])}")
        tables = {row[0] for row in connection.execute("select name from sqlite_master where type = 'table'")}
        version = None
        signatures = None
        if "meta" in tables:
            found = connection.execute("select value from meta where key = 'schema_version'").fetchone()
            version = int(found[0]) if found else None
        if version is None:
            problems.append("no schema version: not a rounds signature database")
        elif version > SCHEMA_VERSION:
            problems.append(f"schema version {version} is newer than this rounds reads ({SCHEMA_VERSION})")
        if "signatures" in tables:
            signatures = int(connection.execute("select count(*) from signatures").fetchone()[0])
        return DatabaseCheck(
            ok=not problems, problems=problems, schema_version=version, signatures=signatures
        )
    except sqlite3.DatabaseError as exc:
        return DatabaseCheck(ok=False, problems=[f"{path} is not a readable SQLite database: {exc}"])
    finally:
        connection.close()


def snapshot(
    database: Path, folder: Path, *, state_key: str | None = None, run_id: int | None = None
) -> tuple[Path, DatabaseCheck]:
    """A consistent single-file copy in `folder`, checked; raises StoreError (nothing left behind) if bad.
    With `state_key`, its signature for run `run_id` beside it (a stale one is removed otherwise)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / database.name
    scratch = folder / (database.name + ".partial")
    _remove(scratch)
    signature_path(target).unlink(missing_ok=True)
    before = check_database(database)
    if not before.ok:
        raise StoreError(
            f"the signature database {database} failed its check: {'; '.join(before.problems)}",
            hint="it is not uploaded; the next run restores the previous artifact or rebuilds from issues",
        )
    try:
        source = sqlite3.connect(database)
        copy = sqlite3.connect(scratch)
        try:
            source.backup(copy)  # a consistent copy, including what is still in the -wal file
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            copy.close()
            source.close()
    except sqlite3.Error as exc:
        _remove(scratch)
        raise StoreError(f"could not copy the signature database {database}: {exc}") from exc
    after = check_database(scratch)
    if not after.ok:
        _remove(scratch)
        raise StoreError(f"the copy of {database} failed its check: {'; '.join(after.problems)}")
    os.replace(scratch, target)
    if state_key is not None:
        sign(target, state_key, run_id)
    return target, after


# --- restoring -----------------------------------------------------------------------------------
class Refused(Frozen):
    """An artifact a restore downloaded and did not use, and why (the note in the job summary)."""

    artifact: Artifact
    note: str
    signature: str | None = Field(
        default=None, description="why its signature does not vouch for it, when that is why it was refused"
    )
    unsigned: bool = Field(default=False, description="refused only for carrying no signature at all")


def restore(
    api: ActionsApi,
    *,
    artifact_name: str,
    target: Path,
    token: str,
    transport: httpx.BaseTransport | None = None,
    rebuild: Callable[[Path], RebuildResult] | None = None,
    this_run: int | None = None,
    vouched: int | None = None,
    state_key: str | None = None,
) -> RestoreResult:
    """Put the newest usable saved database at `target`; rebuild it from the issues when there is none.
    With `this_run`, of that run's artifacts only `vouched` may be restored (`_unvouched`); with
    `state_key`, only one signed with it (`state_signature`)."""
    candidates, notes = usable_artifacts(api, artifact_name, this_run=this_run, vouched=vouched)
    if not candidates:
        notes.append(f"no saved database named {artifact_name!r} from the default branch")
    scratch = target.with_name(target.name + ".restoring")
    chosen, refused = first_restorable(
        api, candidates, scratch, target.name, token, transport=transport, state_key=state_key
    )
    notes += [one.note for one in refused]
    if chosen is not None:
        _move_aside(target)
        os.replace(scratch, target)
        return RestoreResult(source="artifact", artifact=chosen, notes=notes)
    result = (rebuild or (lambda path: rebuild_from_issues(api, path)))(target)
    return RestoreResult(source="rebuilt", rebuilt=result, notes=notes)


def first_restorable(
    api: ActionsApi,
    candidates: list[Artifact],
    scratch: Path,
    member: str,
    token: str,
    *,
    transport: httpx.BaseTransport | None = None,
    state_key: str | None = None,
) -> tuple[Artifact | None, list[Refused]]:
    """Of `candidates` (usable ones, newest first), the one a restore puts in place, its database (the zip's
    `member`) checked and at `scratch`, or None; and those tried before it, each refused with why. A restore
    tries as many as `TRIED_ARTIFACTS` (with `state_key`, `TRIED_ARTIFACTS_SIGNED`)."""
    tried = TRIED_ARTIFACTS if state_key is None else TRIED_ARTIFACTS_SIGNED
    refused: list[Refused] = []
    for artifact in candidates[:tried]:
        problem = _fetched(api, artifact, scratch, member, token, transport, state_key)
        if problem is None:
            return artifact, refused
        refused.append(problem)
    return None, refused


def _fetched(
    api: ActionsApi,
    artifact: Artifact,
    scratch: Path,
    member: str,
    token: str,
    transport: httpx.BaseTransport | None,
    state_key: str | None,
) -> Refused | None:
    """None when `artifact`'s database is at `scratch`, checked (and its signature verified with
    `state_key`); otherwise why not (nothing left at `scratch`)."""
    _remove(scratch)
    try:
        archive = download(artifact, token, transport=transport, spend=api.budget.spend)
        extract(archive, member, scratch)
    except ArtifactGone as exc:
        return Refused(artifact=artifact, note=f"{exc}; it expired or was deleted meanwhile")
    except (TrackerError, StoreError) as exc:
        _remove(scratch)
        return Refused(artifact=artifact, note=f"artifact {artifact.id} could not be used: {exc}")
    if state_key is not None:
        signature = read_small_member(archive, member + SIGNATURE_SUFFIX, MAX_SIGNATURE_BYTES)
        refused = verify(scratch, signature, state_key, artifact.run_id)
        if refused is not None:
            _remove(scratch)
            note = (
                f"artifact {artifact.id} (run {artifact.run_id}) {refused}, not used: ROUNDS_STATE_KEY is "
                "set, so only a database saved by a job that holds it is restored (one the fix-test job "
                "saved, or one saved before the key was set, is not)"
            )
            return Refused(artifact=artifact, note=note, signature=refused, unsigned=signature is None)
    check = check_database(scratch)
    if not check.ok:
        _remove(scratch)
        note = f"artifact {artifact.id} failed its check ({'; '.join(check.problems)}), not used"
        return Refused(artifact=artifact, note=note)
    return None


def _move_aside(target: Path) -> None:
    """A database already at the target is kept as `.bak`; a stray -wal would be replayed into the new one."""
    backup = target.with_name(target.name + ".bak")
    for suffix in ("", "-wal", "-shm"):
        side = target.with_name(target.name + suffix)
        if side.exists():
            os.replace(side, backup.with_name(backup.name + suffix))


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.unlink()
