"""What a fix pull request is as a whole, for its description: not the last commit, the whole pull request.

    whole_pull(git, base, head)     every file the pull request changes against its base, as GitHub's "Files
                                    changed" shows it (`base...head`: the changes on head since it left
                                    base), the lines added and removed, and how many commits it has
    revisions(store, branch, ...)   each commit rounds pushed to the branch, oldest first: who asked for it,
                                    with which instructions, and how the tests went; from the event log (the
                                    `FixProposed` and `FixOffered` facts of the branch, and the requests
                                    they answered), and the commit being published now last

Read from git objects only (two commits, no worktree, no external diff or text conversion), so nothing of the
repository's runs while the description is written.
"""

from __future__ import annotations

from pydantic import Field

from rounds_bot.events import Fact
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.requests import FixRequest, request_by_key
from rounds_bot.fixing.testcommand import TestRun
from rounds_bot.models import Frozen
from rounds_bot.store import Store

SHORT_SHA = 12


class PullFacts(Frozen):
    """The pull request against its base, as a whole."""

    base: str = Field(description="the base branch, as the description names it")
    files: list[str] = Field(default_factory=list)
    added: int = 0
    deleted: int = 0
    commits: int = 1


class Revision(Frozen):
    """One commit rounds pushed to the pull request's branch."""

    commit: str
    tests: str = Field(description="how the repository's tests went on it (`TestRun.summary`)")
    asked: str = Field(default="", description="who asked for it, for a sentence (`FixRequest.asked_by`)")
    instructions: str | None = Field(default=None, description="the person's instructions, if they gave any")

    @property
    def short(self) -> str:
        return self.commit[:SHORT_SHA]


def whole_pull(git: Git, base: str, head: str, *, base_name: str | None = None) -> PullFacts:
    """`head` against `base` (commits or refs `git` knows) as the pull request shows it: `base...head`."""
    listed = git.run(
        "diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", f"{base}...{head}", "--"
    )
    files: list[str] = []
    added = deleted = 0
    for entry in listed.split("\0"):
        parts = entry.split("\t", 2)
        if len(parts) != 3:
            continue
        plus, minus, path = parts
        files.append(path)
        added += int(plus) if plus.isdigit() else 0  # a binary file: `-`, no lines
        deleted += int(minus) if minus.isdigit() else 0
    commits = int(git.run("rev-list", "--count", f"{base}..{head}", "--").strip() or 0)
    return PullFacts(
        base=base_name or base, files=sorted(files), added=added, deleted=deleted, commits=commits
    )


def revision(request: FixRequest, commit: str, tests: TestRun) -> Revision:
    """The commit being published now, for the request it answers."""
    return Revision(
        commit=commit,
        tests=tests.summary(),
        asked=request.asked_by(),
        instructions=request.instructions if request.trigger != "auto" else None,
    )


def revisions(store: Store, branch: str, current: Revision) -> list[Revision]:
    """Every commit rounds pushed to `branch` before `current` (the log says which), then `current`."""
    earlier: dict[str, Revision] = {}
    for fact in store.facts([Fact.FIX_PROPOSED, Fact.FIX_OFFERED]):
        payload = fact.payload
        commit = str(payload.get("commit") or "")
        if payload.get("branch") != branch or not commit or payload.get("adopted"):
            continue
        if commit == current.commit or commit in earlier:
            continue  # a resumed push is the same commit, answered once more
        request = request_by_key(store, str(payload.get("request") or ""))
        earlier[commit] = Revision(
            commit=commit,
            tests=str(payload.get("tests") or "not recorded"),
            asked=request.asked_by() if request is not None else "",
            instructions=request.instructions if request is not None and request.trigger != "auto" else None,
        )
    return [*earlier.values(), current]
