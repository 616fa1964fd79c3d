"""The repository publishing works in: a new one of rounds' own, where no git configuration runs a command.

    with fresh_clone(run) as git:                       # an empty repository in a temporary folder, whose
        plan = plan_branch(git, ...)                    # remote is the checkout's, as read before any code
        commit = commit_patch(git, start, patch, ...)   # of the repository ran; fetched on demand
        git.push(remote, branch, commit)

Nothing of the checkout the tests ran in is read by the commands that commit and push: its configuration
(`core.fsmonitor`, hooks, `core.sshCommand`, `core.pager`, `diff.external`, the filter and diff drivers that
`.gitattributes` names, `include.path`, `remote.*.url`) may have been written by code the model wrote. Here:

- the only configuration file git reads is the new repository's own, written by `git init` and rounds:
  GIT_CONFIG_NOSYSTEM=1 (no /etc/gitconfig), GIT_CONFIG_GLOBAL=/dev/null, a HOME and XDG_CONFIG_HOME of its
  own (no ~/.gitconfig, no ~/.config/git/config), `--template=` (no hook copied from a template folder);
- the environment is built from nothing but PATH, the locale, proxies and certificates: no GIT_* variable of
  the caller (GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, GIT_CONFIG_PARAMETERS, GIT_DIR, GIT_EXEC_PATH, ...);
- every command gets `git.SAFE_CONFIG` on its command line besides (hooks, fsmonitor, `ext::`, signing, gc and
  maintenance off), and the diffs `--no-ext-diff --no-textconv` (`patchcheck.DIFF_OPTIONS`);
- there is no worktree: the patch is applied to the index alone (`git apply --cached`), so no filter runs, no
  file is checked out, and the commit is made with `git commit-tree` (no hook, no editor). The commit's own
  patch is hashed again and must be the one that was checked and tested.

The token reaches only the commands that talk to the remote (`Git.remote_env`), as everywhere in rounds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from rounds_bot.diagnosis.claude_cli import INHERITED_VARIABLES
from rounds_bot.errors import FixError
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.patchcheck import DIFF_OPTIONS


def clean_environment(inherited: Mapping[str, str], home: Path) -> dict[str, str]:
    """PATH, the locale, proxies and certificates of `inherited`; a HOME of its own; no configuration file
    but the repository's."""
    env = {name: value for name, value in inherited.items() if name in INHERITED_VARIABLES}
    env.setdefault("PATH", os.defpath)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
    )
    return env


@contextmanager
def fresh_clone(
    remote: str, url: str, *, remote_env: Mapping[str, str], inherited: Mapping[str, str]
) -> Iterator[Git]:
    """An empty repository whose remote `remote` is `url`, removed on the way out whatever happens."""
    if not url:
        raise FixError("the URL of the remote to publish to is not known", hint="set ROUNDS_FIX_REMOTE")
    parent = Path(tempfile.mkdtemp(prefix="rounds-publish-"))
    try:
        home = parent / "home"
        home.mkdir()
        env = clean_environment(inherited, home)
        Git(parent, env=env).run("init", "--quiet", "--template=", str(parent / "repository"))
        git = Git(parent / "repository", remote_env=remote_env, env=env)
        git.run("remote", "add", remote, url)
        yield git
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def remote_url(checkout: Git, remote: str) -> str:
    """The URL of `remote` in the checkout: read when the run starts, before any code of the repository ran
    (a path or URL in ROUNDS_FIX_REMOTE is taken as it is)."""
    if "/" in remote or ":" in remote:
        return remote
    try:
        return checkout.run("remote", "get-url", remote).strip()
    except FixError:
        return ""


def commit_patch(git: Git, start: str, patch: bytes, message: str, author: tuple[str, str]) -> str:
    """`patch` applied to `start` in the index alone, committed as `author`; the commit. Its own patch must
    hash as `patch` does, else FixError (nothing is made of it)."""
    git.run_bytes("read-tree", "--reset", start)
    git.run_bytes("apply", "--cached", "--binary", "--whitespace=nowarn", "-", stdin=patch)
    tree = git.run("write-tree").strip()
    name, email = author
    text = git.run("stripspace", stdin=message)
    commit = git.run(
        *("-c", f"user.name={name}", "-c", f"user.email={email}"),
        *("commit-tree", tree, "-p", start, "--no-gpg-sign", "-F", "-"),
        stdin=text,
    ).strip()
    committed = hashlib.sha256(patch_between(git, start, commit)).hexdigest()
    wanted = hashlib.sha256(patch).hexdigest()
    if committed != wanted:
        raise FixError(
            f"the commit's patch (sha256 {committed[:12]}) is not the patch that was checked and tested "
            f"(sha256 {wanted[:12]})"
        )
    return commit


def patch_between(git: Git, base: str, change: str) -> bytes:
    """The patch from `base` to `change` as `patchcheck.check_patch` reads it (as `checks.patch` makes it)."""
    return git.run_bytes("diff", *DIFF_OPTIONS, base, change, "--")
