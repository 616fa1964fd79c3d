"""A tested fix goes out: push the branch, open (or update) the DRAFT pull request that says `Refs #N`.

    push      never forced: a rejection (someone pushed meanwhile, a protected branch) fails the attempt
    update    the branch already had an open pull request: its description is brought up to date
    open      a new draft pull request; when GitHub's answer is lost, the branch's pull request is looked up
              before anything else, so a retried run never opens a second one; when GitHub refuses to let
              the token open one at all (`PullCreationRefused`: Actions may not create pull requests in this
              repository), that is raised as it is: the branch stays pushed for a person to open it
              where GitHub has no draft pull requests (`DraftsNotSupported`: a private repository on
              GitHub Free or Pro), it is opened ready for review at once, its description saying why
              (`messages.as_not_a_draft`): asking again for a draft would only be refused again

rounds never merges, approves or closes a pull request.
"""

from __future__ import annotations

from typing import Any

from rounds_bot.errors import FixError, TrackerError
from rounds_bot.fixing.branches import BranchPlan
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.messages import NOT_A_DRAFT, as_not_a_draft
from rounds_bot.fixing.worktree import Worktree
from rounds_bot.github.pulls import DraftsNotSupported, PullCreationRefused, PullsApi
from rounds_bot.models import Frozen


class PushRejected(FixError):
    """The remote refused the branch."""


class PullUnknown(FixError):
    """The branch is pushed, but whether its pull request was opened is not known: the next run looks."""


class Published(Frozen):
    number: int
    url: str
    updated: bool
    draft: bool = True  # False: opened ready for review, where GitHub has no draft pull requests


def push(tree: Worktree, remote: str, branch: str) -> None:
    push_commit(tree.git, remote, branch, "HEAD")


def push_commit(git: Git, remote: str, branch: str, commit: str) -> None:
    """`commit` to `branch` of `remote`, never forced."""
    pushed = git.push(remote, branch, commit)
    if not pushed.ok:
        raise PushRejected(f"the push of {branch} to {remote} was rejected: {_last_lines(pushed.detail)}")


def ensure_pull(pulls: PullsApi, plan: BranchPlan, *, title: str, body: str) -> Published:
    """The branch's pull request with this description: updated when there is one, else opened as a draft."""
    existing = plan.pull or pulls.pull_for_branch(plan.branch)
    if existing is not None and existing.get("state") == "open":
        pulls.update_pull_body(int(existing["number"]), _kept_kind(existing, body))
        return _published(existing, updated=True)
    try:
        try:
            created = pulls.create_draft_pull(title=title, body=body, head=plan.branch, base=plan.base)
        except DraftsNotSupported:
            # the repository's plan, not a lost answer: nothing was opened, and a draft never will be
            body = as_not_a_draft(body)
            created = pulls.create_pull(title=title, body=body, head=plan.branch, base=plan.base, draft=False)
    except PullCreationRefused:
        raise  # a setting, not a lost answer: no pull request was opened, none will be on a retry
    except TrackerError as error:
        # the answer was lost (5xx, a reset) or GitHub says one exists already: look before anything else
        found = pulls.pull_for_branch(plan.branch)
        if found is None or found.get("state") != "open":
            raise PullUnknown(
                f"the pull request for {plan.branch} could not be opened: {error}",
                hint="the branch is pushed; the next `rounds fix` opens its pull request (no new attempt)",
            ) from error
        if found.get("body") != _kept_kind(found, body):
            pulls.update_pull_body(int(found["number"]), _kept_kind(found, body))
        return _published(found, updated=False)
    return _published(created, updated=False)


def _kept_kind(pull: dict[str, Any], body: str) -> str:
    """`body` for `pull`: one opened ready for review because GitHub has no drafts here keeps saying so."""
    return as_not_a_draft(body) if NOT_A_DRAFT in str(pull.get("body") or "") else body


def _published(pull: dict[str, Any], *, updated: bool) -> Published:
    return Published(
        number=int(pull["number"]),
        url=str(pull.get("html_url") or ""),
        updated=updated,
        draft=bool(pull.get("draft", True)),
    )


def _last_lines(text: str, count: int = 4) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return " / ".join(lines[-count:]) or "no reason given"
