"""Which branch a fix attempt works on: the remote and GitHub are the record, not the database.

    rounds/fix-<signature>-<YYYYMMDD>

- a branch of the signature with an OPEN pull request: the attempt adds a commit on top of it and the pull
  request is updated (never a second one);
- a branch of the signature with NO pull request, whose head commit carries the signature's trailer: a run
  pushed it and died before the pull request was opened; it is resumed as it is (tests, then the PR);
- otherwise a new branch from the base branch's head; a name already taken (a merged or closed attempt) gets a
  suffix (`-2`, `-3`, ...).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from rounds_bot.fixing.git import Git
from rounds_bot.github.pulls import PullsApi
from rounds_bot.models import Frozen

SIGNATURE_TRAILER = "Rounds-Signature"


class BranchPlan(Frozen):
    kind: Literal["new", "update", "resume"]
    branch: str
    start: str = Field(description="the commit the worktree starts at")
    base: str = Field(description="the branch the pull request targets")
    pull: dict[str, Any] | None = Field(default=None, description="the open pull request, when updating")


def branch_prefix(signature_id: str) -> str:
    return f"rounds/fix-{signature_id}-"


def plan_branch(
    git: Git, pulls: PullsApi, *, remote: str, base: str, signature_id: str, now: datetime
) -> BranchPlan:
    """The branch to work on, after looking at the remote's branches and their pull requests."""
    prefix = branch_prefix(signature_id)
    existing = git.remote_heads(remote, prefix)
    taken = set(existing)
    for branch in sorted(existing, reverse=True):
        pull = pulls.pull_for_branch(branch)
        if pull is not None and pull.get("state") == "open":
            start = git.fetch(remote, branch)
            return BranchPlan(kind="update", branch=branch, start=start, base=base, pull=pull)
        if pull is None and _carries(git, remote, branch, signature_id):
            return BranchPlan(kind="resume", branch=branch, start=git.fetch(remote, branch), base=base)
    head = git.fetch(remote, base)
    return BranchPlan(kind="new", branch=_free_name(prefix + f"{now:%Y%m%d}", taken), start=head, base=base)


def _carries(git: Git, remote: str, branch: str, signature_id: str) -> bool:
    head = git.fetch(remote, branch)
    return git.trailer(head, SIGNATURE_TRAILER) == signature_id


def _free_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    number = 2
    while f"{name}-{number}" in taken:
        number += 1
    return f"{name}-{number}"
