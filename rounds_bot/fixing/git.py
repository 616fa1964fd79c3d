"""The real `git`, run in one folder, with its failures translated into `FixError`.

Every command runs without a terminal prompt, with a time limit, and with SAFE_CONFIG on its command line,
which wins over every configuration file: the repository's own hooks off (`core.hooksPath` points at
nothing: a commit or push by rounds runs no code from the repository), no fsmonitor command, no `ext::`
transport, no signing program, no automatic gc or maintenance, `cat` as the pager. Commands that reach the
remote get the credentials in `remote_env` (an `http.<server>.extraheader`, as actions/checkout sets it),
never in a URL or the repository's configuration, and nothing else ever sees them. A `Git` made with `env`
runs with that environment instead of this process's (`freshclone.py`: nothing of the caller's GIT_*).
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rounds_bot.errors import FixError

TIMEOUT_SECONDS = 300.0
NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")
#: on every command: what a configuration file could make git run, off (`git help config`: core.fsmonitor,
#: the hooks, `ext::` URLs, gpg.program through commit.gpgSign, `git gc --auto`, `git maintenance`, the
#: pager)
SAFE_CONFIG = (
    *NO_HOOKS,
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.untrackedCache=false"),
    *("-c", "protocol.ext.allow=never"),
    *("-c", "commit.gpgSign=false"),
    *("-c", "tag.gpgSign=false"),
    *("-c", "gc.auto=0"),
    *("-c", "maintenance.auto=false"),
    *("-c", "core.pager=cat"),
)


@dataclass(frozen=True)
class Pushed:
    """What a push did: `ok`, or rejected with git's explanation."""

    ok: bool
    detail: str


class Git:
    """`git` in `cwd`. `remote_env` is added to commands that talk to the remote (fetch, ls-remote, push)."""

    def __init__(
        self, cwd: Path, *, remote_env: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.cwd = Path(cwd)
        self.remote_env = dict(remote_env or {})
        self.env = dict(env) if env is not None else None  # None: this process's environment

    def at(self, cwd: Path) -> Git:
        """The same git, in another folder (a worktree)."""
        return Git(cwd, remote_env=self.remote_env, env=self.env)

    def with_env(self, **more: str) -> Git:
        """The same git, with these variables besides (e.g. GIT_INDEX_FILE)."""
        return Git(self.cwd, remote_env=self.remote_env, env={**(self.env or os.environ), **more})

    def run(self, *args: str, remote: bool = False, stdin: str | None = None) -> str:
        """Run `git args`; its stdout. A failure raises FixError with git's own message."""
        done = self._run(args, remote=remote, stdin=stdin)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise FixError(
                f"`git {' '.join(args[:3])}` failed in {self.cwd}: {said[-1] if said else done.returncode}",
                hint="check that ROUNDS_REPO_PATH is a git checkout and the remote is reachable",
            )
        return str(done.stdout)

    def run_bytes(self, *args: str, stdin: bytes | None = None) -> bytes:
        """`run`, with bytes in and out (patches)."""
        done = self._run(args, remote=False, stdin=stdin if stdin is not None else b"")
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise FixError(
                f"`git {' '.join(args[:3])}` failed in {self.cwd}: {said[-1] if said else done.returncode}"
            )
        return bytes(done.stdout)

    def _run(
        self, args: Sequence[str], *, remote: bool, stdin: str | bytes | None
    ) -> subprocess.CompletedProcess[Any]:
        """Text in and out, or bytes when `stdin` is bytes (`run_bytes` passes b"" for none)."""
        base = self.env if self.env is not None else os.environ
        env = {**base, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "LC_ALL": "C"}
        if remote:
            env.update(self.remote_env)
        try:
            return subprocess.run(
                ["git", *SAFE_CONFIG, *args],
                cwd=self.cwd,
                env=env,
                input=stdin,
                capture_output=True,
                text=not isinstance(stdin, bytes),
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise FixError(f"`git {' '.join(args[:3])}` could not run in {self.cwd}: {error}") from error

    # --- the remote ---------------------------------------------------------------------------
    def fetch(self, remote: str, branch: str) -> str:
        """Fetch `branch` from `remote`; the commit it points at."""
        self.run(
            "fetch", "--no-tags", "--quiet", remote, f"+refs/heads/{branch}:refs/rounds/{branch}", remote=True
        )
        return self.run("rev-parse", f"refs/rounds/{branch}").strip()

    def remote_heads(self, remote: str, prefix: str) -> dict[str, str]:
        """Branches of `remote` whose names start with `prefix`: name -> commit."""
        listed = self.run("ls-remote", "--heads", remote, f"refs/heads/{prefix}*", remote=True)
        heads = {}
        for line in listed.splitlines():
            sha, _, ref = line.partition("\t")
            heads[ref.removeprefix("refs/heads/")] = sha
        return heads

    def push(self, remote: str, branch: str, source: str = "HEAD") -> Pushed:
        """Push `source` (HEAD, or a commit) to `branch` without forcing; a rejection is an answer, not an
        error."""
        done = self._run(
            ["push", "--porcelain", remote, f"{source}:refs/heads/{branch}"], remote=True, stdin=None
        )
        detail = "\n".join(part.strip() for part in (done.stdout, done.stderr) if part.strip())
        return Pushed(ok=done.returncode == 0, detail=detail)

    # --- the worktree -------------------------------------------------------------------------
    def changed_paths(self) -> list[str]:
        """Every path that differs from HEAD in the working tree, untracked files included."""
        listed = self.run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
        return sorted(entry[3:] for entry in listed.split("\0") if len(entry) > 3)

    def stage(self, paths: Sequence[str]) -> None:
        if paths:
            self.run("add", "-A", "--", *paths)

    def staged_line_counts(self) -> dict[str, tuple[int, int]]:
        """Lines added and deleted per staged file (a binary file counts as one of each)."""
        counts = {}
        for line in self.run("diff", "--cached", "--numstat", "--no-renames").splitlines():
            added, deleted, path = line.split("\t", 2)
            counts[path] = (int(added) if added.isdigit() else 1, int(deleted) if deleted.isdigit() else 1)
        return counts

    def commit(self, message: str, author: tuple[str, str]) -> str:
        """Commit what is staged as `author` (name, email); the new commit."""
        name, email = author
        identity = ("-c", f"user.name={name}", "-c", f"user.email={email}")
        self.run(*identity, "commit", "--quiet", "--no-verify", "-F", "-", stdin=message)
        return self.run("rev-parse", "HEAD").strip()

    def head(self) -> str:
        return self.run("rev-parse", "HEAD").strip()

    def has_commit(self, commit: str) -> bool:
        return self._run(["cat-file", "-e", f"{commit}^{{commit}}"], remote=False, stdin=None).returncode == 0

    def is_ancestor(self, older: str, newer: str) -> bool:
        done = self._run(["merge-base", "--is-ancestor", older, newer], remote=False, stdin=None)
        return done.returncode == 0

    def trailer(self, commit: str, key: str) -> str:
        """The value of trailer `key` in `commit`'s message ("" when it has none)."""
        return self.run("log", "-1", f"--format=%(trailers:key={key},valueonly)", commit).strip()


def remote_auth_env(server_url: str, token: str | None) -> dict[str, str]:
    """Credentials for git's HTTPS requests to `server_url` only, as environment configuration."""
    if not token:
        return {}
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.{server_url.rstrip('/')}/.extraheader",
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
    }
