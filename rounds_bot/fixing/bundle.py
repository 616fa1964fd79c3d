"""What passes from one stage of a fix to the next: the proposal bundle (edit -> test, publish) and the test
verdict (test -> publish). Folders of plain files, carried between GitHub Actions jobs as artifacts.

    bundle/                 `rounds fix edit --out`; read by `rounds fix test` and `rounds fix publish`
      bundle.json           the `Bundle`: a `Proposal` per request with something to test (a change, a branch
                            pushed earlier, or a probe of the unchanged base), a `Report` per request the edit
                            stage ended itself (a refused edit, the budget, a known failing base), notes
      1.patch, 2.patch ...  each change: `git diff --binary` (`patchcheck.DIFF_OPTIONS`) from its start commit
                            to the tree rounds staged and checked, before any code of the repository ran
    verdict/
      verdict.json          `rounds fix test --out`: a `Verdict` per proposal, naming the patch it tested

Both are read as hostile input. The bundle may have been replaced after the edit job wrote it; the verdict
comes from the job that ran the code the model wrote. So: sizes are capped before parsing, every patch is
checked against its sha256 in the manifest, the manifest against the digest the edit job passed on (a job
output: the test job cannot set it) when one is given, and each verdict is bound by sha256 to the patch it
tested. Publishing re-checks the patch itself (`patchcheck.check_patch`), re-plans the branch, and takes who
asked, and for which issue, from the database, never from these files.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from rounds_bot.errors import FixError
from rounds_bot.fixing.editor import EditRun
from rounds_bot.fixing.testcommand import TAIL_CHARS, TestRun, tail
from rounds_bot.models import Frozen

BUNDLE_FILE = "bundle.json"
VERDICT_FILE = "verdict.json"
FORMAT: Literal[1] = 1
MAX_MANIFEST_BYTES = 4 << 20
MAX_PATCH_BYTES = 16 << 20
_PATCH_NAME = re.compile(r"^[1-9][0-9]{0,3}\.patch$")
_SHA256 = r"^[0-9a-f]{64}$"
_COMMIT = r"^[0-9a-f]{40}([0-9a-f]{24})?$"

#: change: a patch on its start commit (a new branch from the base, or a commit on the open pull request's
#: branch); retest: a branch pushed earlier whose pull request was never opened (no patch, no model run);
#: probe: the tests alone on the unchanged start, for an automatic request that waits (`blocked.py`)
Kind = Literal["change", "retest", "probe"]
PlanKind = Literal["new", "update", "resume"]
#: passed / failed: the tests with the change; setup / baseline: the test command cannot run here, or the
#: tests fail without any change (`attempt.Blocked`)
Outcome = Literal["passed", "failed", "setup", "baseline"]


class Proposal(Frozen):
    """One request's change, as the edit stage left it."""

    request: str = Field(max_length=300, description="the request's key (`fix:<origin>`)")
    signature_id: str = Field(max_length=200)
    issue_number: int
    kind: Kind
    plan: PlanKind = Field(description="new branch, the open pull request's branch, or a resumed one")
    branch: str = Field(max_length=300, description="the branch at edit time (publishing plans it again)")
    base: str = Field(max_length=300, description="the branch the pull request targets")
    start: str = Field(pattern=_COMMIT, description="the commit the change applies to")
    patch: str = Field(default="", max_length=20, description="its file in the bundle ('' without a change)")
    patch_sha256: str = Field(default="", description="sha256 of that file's bytes")
    files: list[str] = Field(default_factory=list)
    added: int = 0
    deleted: int = 0
    edit: EditRun | None = Field(default=None, description="the model's run (its closing note left out)")
    previous: str | None = Field(default=None, max_length=200, description="the commit the model revised")

    def where(self) -> str:
        """Where the tests run, for a sentence: the base branch, or the open pull request's branch."""
        place = f"`{self.base}`" if self.plan == "new" else f"the pull request's branch `{self.branch}`"
        return f"{place} (commit `{self.start[:12]}`)"


class Report(Frozen):
    """A request the edit stage ended itself: publishing answers it (`failed`) or leaves it waiting."""

    request: str = Field(max_length=300)
    signature_id: str = Field(max_length=200)
    issue_number: int
    status: Literal["failed", "blocked"]
    reason: str = Field(max_length=2_000)
    details: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    edit: EditRun | None = None
    kept: str | None = None


class Bundle(Frozen):
    format: Literal[1] = FORMAT
    repository: str = ""
    run: str = Field(default="", description="the workflow run (GITHUB_RUN_ID) or `local`")
    created_at: str = ""
    proposals: list[Proposal] = Field(default_factory=list)
    reports: list[Report] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Verdict(Frozen):
    """How one proposal's tests went, for the patch they ran with."""

    request: str = Field(max_length=300)
    patch_sha256: str = Field(description="the patch the tests ran with ('' for a retest or a probe)")
    start: str = Field(pattern=_COMMIT)
    outcome: Outcome
    reason: str = Field(default="", max_length=2_000)
    details: list[str] = Field(default_factory=list, max_length=20)
    tests: TestRun | None = None


class Verdicts(Frozen):
    format: Literal[1] = FORMAT
    bundle_digest: str = Field(default="", description="the digest of the bundle the tests were given")
    verdicts: list[Verdict] = Field(default_factory=list)


@dataclass(frozen=True)
class Staged:
    """A proposal and its patch's bytes, in memory."""

    proposal: Proposal
    patch: bytes = b""


@dataclass(frozen=True)
class Loaded:
    """A bundle as read: its manifest, each proposal with its patch, and the manifest's digest."""

    bundle: Bundle
    staged: list[Staged]
    digest: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the bundle ---------------------------------------------------------------------------------------------
def write_bundle(folder: Path, bundle: Bundle, staged: list[Staged]) -> str:
    """Write the bundle (its proposals' patches named `1.patch`, ...) into `folder`; the manifest's digest."""
    folder.mkdir(parents=True, exist_ok=True)
    proposals = []
    for index, item in enumerate(staged, start=1):
        proposal = item.proposal
        if item.patch:
            name = f"{index}.patch"
            (folder / name).write_bytes(item.patch)
            proposal = proposal.model_copy(update={"patch": name, "patch_sha256": sha256(item.patch)})
        proposals.append(proposal)
    manifest = bundle.model_copy(update={"proposals": proposals}).model_dump_json(
        indent=1,
        exclude={"proposals": {"__all__": {"edit": {"note"}}}, "reports": {"__all__": {"edit": {"note"}}}},
    )
    data = manifest.encode()
    (folder / BUNDLE_FILE).write_bytes(data)
    return sha256(data)


def read_bundle(folder: Path, *, digest: str | None = None) -> Loaded:
    """The bundle in `folder`, every patch checked against its sha256 (and the manifest against `digest`)."""
    data = _read(folder / BUNDLE_FILE, MAX_MANIFEST_BYTES, "the fix bundle")
    found = sha256(data)
    if digest and found != digest:
        raise FixError(
            f"the fix bundle in {folder} is not the one the edit stage wrote (sha256 {found[:12]}, expected "
            f"{digest[:12]})",
            hint="the artifact was replaced between the jobs; nothing is published",
        )
    try:
        bundle = Bundle.model_validate_json(data)
    except ValidationError as error:
        raise FixError(f"the fix bundle in {folder} cannot be read: {_first(error)}") from None
    staged = []
    for proposal in bundle.proposals:
        patch = b""
        if proposal.patch:
            if (
                _PATCH_NAME.fullmatch(proposal.patch) is None
                or re.fullmatch(_SHA256, proposal.patch_sha256) is None
            ):
                raise FixError(f"the fix bundle in {folder} names a patch it may not: {proposal.patch!r}")
            patch = _read(folder / proposal.patch, MAX_PATCH_BYTES, "a patch of the fix bundle")
            if sha256(patch) != proposal.patch_sha256:
                raise FixError(f"{proposal.patch} of the fix bundle in {folder} is not the patch it names")
        elif proposal.kind == "change":
            raise FixError(f"the fix bundle in {folder} has a change without a patch ({proposal.request})")
        staged.append(Staged(proposal, patch))
    return Loaded(bundle, staged, found)


# --- the verdict ------------------------------------------------------------------------------------------
def write_verdicts(folder: Path, verdicts: Verdicts) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / VERDICT_FILE).write_text(verdicts.model_dump_json(indent=1), encoding="utf-8")


def read_verdicts(folder: Path | None) -> dict[str, Verdict]:
    """The verdicts in `folder` by request key; none when there is no folder or file (the tests never
    reported). Every test output's tail is cut to size again: the file came from the job that ran them."""
    if folder is None or not (folder / VERDICT_FILE).is_file():
        return {}
    data = _read(folder / VERDICT_FILE, MAX_MANIFEST_BYTES, "the test verdict")
    try:
        verdicts = Verdicts.model_validate_json(data)
    except ValidationError as error:
        raise FixError(f"the test verdict in {folder} cannot be read: {_first(error)}") from None
    return {verdict.request: _trimmed(verdict) for verdict in verdicts.verdicts}


def _trimmed(verdict: Verdict) -> Verdict:
    tests = verdict.tests
    if tests is not None:
        tests = tests.model_copy(
            update={"tail": tail(tests.tail)[:TAIL_CHARS], "command": tests.command[:500]}
        )
    return verdict.model_copy(update={"tests": tests, "details": [d[:500] for d in verdict.details]})


def _read(path: Path, limit: int, what: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > limit:
            raise FixError(f"{what} ({path}) is {size:,} bytes; at most {limit:,} are read")
        return path.read_bytes()
    except OSError as error:
        raise FixError(f"{what} cannot be read: {error}") from None


def _first(error: ValidationError) -> str:
    problem = error.errors()[0]
    where = ".".join(str(part) for part in problem.get("loc", ()))
    return f"{where}: {problem.get('msg', 'invalid')}"
