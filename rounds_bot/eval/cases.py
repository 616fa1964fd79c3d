"""The case folder: one sub-folder per case, each with a `case.json`, and the sources beside it when they
may be kept there.

    <cases>/<case-id>/case.json     telemetry, where the repository is, the ground truth
    <cases>/<case-id>/repo/         the repository's files needed for the case (optional)
    <cases>/<case-id>/sources.json  or: its files in the shared source store (`store.py`)
    <cases>/_<name>/                a repository several cases share (`repository.local`); not a case
    <cases>/_sources/               the source store; not a case

Sources are looked for in `repo/`, the shared repository, `rounds eval --sources DIR` (`DIR/<case-id>/`),
then the store: a stored case's files are checked out under the eval's output folder before the run
(`with_stored_sources`). `repository` also says where the sources come from (a git URL and the revision, and
the paths the case needs).
A case whose sources are found nowhere is still scored on what needs no source (where the fault is,
the class, abstention) and counted as `sources missing`: its evidence is not checked and no model is
asked about it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from rounds_bot.diagnosis.model import Classification, LogLine
from rounds_bot.eval.store import STORE, check_out, complete, read_manifest
from rounds_bot.models import ErrorEvent, Frozen

CASE_FILE = "case.json"
SOURCES_FOLDER = "repo"
CASE_FORMAT = 1

CaseKind = Literal["crash", "client_misuse", "documentation_gap", "dependency", "abstain"]


class CaseOrigin(Frozen):
    """Where the case comes from, with its licence, so a copy keeps it."""

    dataset: str = Field(description="e.g. defects4j, loghub, scenario")
    reference: str = Field(description="the bug's or record's id in that data set, e.g. Lang-1")
    licence: str = ""
    url: str = ""


class Repository(Frozen):
    """The repository at the faulty revision, or how to get it."""

    url: str = ""
    revision: str = Field(default="", description="the faulty revision")
    files: list[str] = Field(
        default_factory=list,
        description="repository paths the case needs (the fault's files and the in-app frames'), so frames "
        "map to files without the sources",
    )
    in_app: list[str] = Field(default_factory=list, description="module prefixes of the app's own code")
    local: str | None = Field(
        default=None,
        pattern=r"^_[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
        description="a repository in the case folder's root shared by several cases, e.g. _repos/shop",
    )


class TrueLocation(Frozen):
    path: str
    function: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)


class TrueFix(Frozen):
    reference: str = Field(default="", description="where the real fix is (a patch or commit)")
    changed_lines: int = Field(default=0, ge=0)


class TrueTests(Frozen):
    failing_before: list[str] = Field(default_factory=list, description="test ids (pytest node ids)")
    passing_after: list[str] = Field(default_factory=list)
    command: str = Field(default="", description="how to run them at the revision, when known")
    added: str | None = Field(
        default=None,
        pattern=r"^_[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
        description="a folder in the case folder's root laid over the repository before the tests run: "
        "the bug's tests, kept out of the checkout a diagnosis reads",
    )


class Truth(Frozen):
    classification: Classification
    abstain: bool = Field(default=False, description="abstaining is the right answer")
    faults: list[TrueLocation] = Field(default_factory=list, description="every place the real fix changed")
    fix: TrueFix = Field(default_factory=TrueFix)
    tests: TrueTests = Field(default_factory=TrueTests)
    notes: str = ""


class Case(Frozen):
    format: Literal[1] = 1
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")
    kind: CaseKind
    origin: CaseOrigin
    service: str
    telemetry: list[ErrorEvent] = Field(min_length=1)
    related_logs: list[LogLine] = Field(default_factory=list)
    repository: Repository = Field(default_factory=Repository)
    truth: Truth

    @property
    def needs_sources(self) -> bool:
        """False for a case that comes with no repository at all (a log line of a system not at hand)."""
        repository = self.repository
        return bool(repository.url or repository.local or repository.files or self.truth.faults)


class LoadedCase(Frozen):
    """A case as found: the case, or why it could not be read; and its sources folder, if any."""

    folder: str
    case: Case | None = None
    problem: str | None = None
    sources: Path | None = None
    stored: bool = Field(default=False, description="its sources are in the store, not yet checked out")

    @property
    def id(self) -> str:
        return self.case.id if self.case is not None else Path(self.folder).name

    @property
    def sources_missing(self) -> bool:
        return self.sources is None and not self.stored and self.case is not None and self.case.needs_sources

    def fresh_copy(self, scratch: Path) -> Path:
        """A new copy of the case's sources at `scratch/<id>` (any earlier copy removed), to change freely."""
        assert self.case is not None and self.sources is not None
        tree = scratch / self.case.id
        if tree.exists():
            shutil.rmtree(tree)
        shutil.copytree(self.sources, tree)
        return tree


def load_cases(root: Path, sources: Path | None = None) -> list[LoadedCase]:
    """Every case under `root`, in folder order; unreadable ones carry their problem."""
    if not root.is_dir():
        return []
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    return [load_case(folder, sources) for folder in folders]


def load_case(folder: Path, sources: Path | None = None) -> LoadedCase:
    path = folder / CASE_FILE
    if not path.is_file():
        return LoadedCase(folder=str(folder), problem=f"no {CASE_FILE} in {folder.name}")
    try:
        case = Case.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as error:
        return LoadedCase(folder=str(folder), problem=f"{path.name} is not a valid case: {_first(error)}")
    found = _sources(folder, case, sources)
    return LoadedCase(
        folder=str(folder), case=case, sources=found, stored=found is None and _stored(folder, case)
    )


def with_stored_sources(cases: list[LoadedCase], into: Path) -> list[LoadedCase]:
    """The cases, each stored one's files checked out under `into/<case-id>/` (an object that does not
    match its hash leaves that case's sources missing)."""
    ready = []
    for loaded in cases:
        if loaded.stored and loaded.case is not None:
            folder = Path(loaded.folder)
            manifest = read_manifest(folder)
            target = into / loaded.case.id
            if target.exists():
                shutil.rmtree(target)
            if manifest is not None and check_out(manifest, folder.parent / STORE, target):
                loaded = loaded.model_copy(update={"sources": target, "stored": False})
            else:
                shutil.rmtree(target, ignore_errors=True)
                loaded = loaded.model_copy(update={"stored": False})
        ready.append(loaded)
    return ready


def _stored(folder: Path, case: Case) -> bool:
    manifest = read_manifest(folder)
    return manifest is not None and complete(manifest, folder.parent / STORE, _needed(case))


def _sources(folder: Path, case: Case, sources: Path | None) -> Path | None:
    shared = folder.parent / case.repository.local if case.repository.local else None
    for candidate in (folder / SOURCES_FOLDER, shared, sources / case.id if sources else None):
        if candidate is not None and candidate.is_dir() and _has_needed(candidate, case):
            return candidate
    return None


def _has_needed(folder: Path, case: Case) -> bool:
    return all((folder / path).is_file() for path in _needed(case))


def _needed(case: Case) -> list[str]:
    """The files a case's sources must hold: the fault's (or, with no fault, every file it lists)."""
    return [fault.path for fault in case.truth.faults] or case.repository.files


def _first(error: Exception) -> str:
    if isinstance(error, ValidationError):
        item = error.errors()[0]
        where = ".".join(str(part) for part in item["loc"]) or "case"
        return f"{where}: {item['msg']}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__
