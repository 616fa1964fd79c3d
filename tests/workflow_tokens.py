"""The GITHUB_TOKEN GitHub mints for each job of a run, for the local workflow runner: its permissions.

    permissions = job_permissions(job, top, inherited, policy="restricted", trusted=True)
    fake_permissions(permissions)   # the same as the fake GitHub's `add_token(**...)` spells them

GitHub's rules (https://docs.github.com/en/actions/reference/github_token-reference):
- "At the start of each workflow job, GitHub automatically creates a unique GITHUB_TOKEN secret" (a token per
  job, expired when the job ends): a step can do with the API only what its own job's token allows;
- "How permissions are calculated for a workflow job": the repository's default for the token (restricted or
  permissive), then the workflow's top-level `permissions:`, then the job's own; in a called workflow the
  caller's permissions are the starting point, "only downgraded (not elevated) by the called workflow"
  (https://docs.github.com/en/actions/reference/workflows-and-actions/reusing-workflow-configurations) — the
  load check (`workflow_load`) refuses a called job that asks for more, so here a called job's own
  `permissions:`, else its workflow's, else the caller's, is what its token holds;
- workflow-syntax#permissions: "If you specify the access for any of these permissions, all of those that are
  not specified are set to none, with the exception of the metadata scope, which always gets read access."
"""

from __future__ import annotations

from typing import Any

from workflow_load import Permissions, parse_permissions, token_default


def job_permissions(
    job: dict[str, Any],
    top: Permissions | None,
    inherited: Permissions | None,
    *,
    policy: str,
    trusted: bool,
) -> Permissions:
    """What the GITHUB_TOKEN of `job` may do: its own `permissions:`, else its workflow's (`top`), else what
    the calling job passed on (`inherited`; None at the top of a run), else the repository's default."""
    own, _ = parse_permissions(job.get("permissions"))
    for candidate in (own, top, inherited):
        if candidate is not None:
            return candidate
    return token_default(policy, trusted=trusted)


def passed_on(
    job: dict[str, Any], top: Permissions | None, inherited: Permissions | None
) -> Permissions | None:
    """What a job that calls a workflow passes to the called workflow's jobs that name no permissions."""
    own, _ = parse_permissions(job.get("permissions"))
    return next((p for p in (own, top, inherited) if p is not None), None)


def fake_permissions(permissions: Permissions) -> dict[str, str]:
    """The fake GitHub's spelling (`pull_requests`), without the scopes at none; metadata is always read."""
    granted = {scope.replace("-", "_"): level for scope, level in permissions.items() if level != "none"}
    return {**granted, "metadata": "read"}
