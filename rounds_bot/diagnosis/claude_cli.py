"""Starting the Claude Code CLI as every rounds run does: isolated, bounded, no secret but the model's.

Diagnoses (`claude_code.py`, read-only) and fix proposals (`fixing/editor.py`, edits confined to a worktree)
start the CLI through one `ClaudeCli`, so both get the same:

- throwaway HOME: HOME, TMPDIR, the XDG folders and CLAUDE_CONFIG_DIR inside a scratch folder that is
  deleted after the run, so nothing the CLI writes outlives it and no user configuration is read;
- environment from an allow-list: locale, certificates and proxies from rounds' own environment, the model
  provider's credentials passed explicitly, and nothing else (no GitHub token ever reaches the model);
- limits: `--max-turns`, `--max-budget-usd`, `--model`, `--no-session-persistence`, and a wall-clock timeout
  that ends the CLI's whole process group; stdin closed, or carrying a prompt too long for one argument.

What each caller offers the model (`--tools`, `--permission-mode`, `--json-schema`) is its own business.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from rounds_bot.diagnosis.process import Finished, run_with_deadline
from rounds_bot.errors import ConfigError, DiagnosisError

#: variables the CLI may inherit from rounds' own environment: locale, certificates, proxies
INHERITED_VARIABLES = frozenset(
    {
        "PATH",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "NO_PROXY",
        "https_proxy",
        "http_proxy",
        "no_proxy",
    }
)
#: the only credentials the CLI needs, passed explicitly by the caller
CREDENTIAL_VARIABLES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_CUSTOM_HEADERS",
    }
)
#: how to install the CLI at the version rounds is tested with, from the lockfile rounds ships (each package's
#: integrity hash, checked by npm ci), as the workflow does; a bare `npm install` takes the registry's latest
CLAUDE_INSTALL_HINT = (
    'install the pinned CLI: mkdir -p "$HOME/.rounds/claude-code" && '
    'cp "$(rounds pins claude-code)"/package*.json "$HOME/.rounds/claude-code/" && '
    'npm ci --prefix "$HOME/.rounds/claude-code", then set '
    "ROUNDS_CLAUDE_BIN=$HOME/.rounds/claude-code/node_modules/.bin/claude"
)

#: above this many bytes the prompt goes on stdin: one command-line argument is limited to 128 KiB
MAX_PROMPT_ARGUMENT_BYTES = 100_000


class ClaudeCli:
    """The `claude` binary with its model, credentials and limits. Every value is passed in; nothing is
    read from the environment here (pass `inherited_env=os.environ` to let PATH and proxies through)."""

    def __init__(
        self,
        *,
        binary: str | Path,
        model: str,
        credentials: Mapping[str, str],
        inherited_env: Mapping[str, str] | None = None,
        max_turns: int = 12,
        max_budget_usd: float = 1.0,
        timeout_seconds: float = 600.0,
        max_retries: int | None = None,
    ) -> None:
        unknown = sorted(set(credentials) - CREDENTIAL_VARIABLES)
        if unknown:
            raise ConfigError(
                f"credentials for the Claude Code CLI may only set {sorted(CREDENTIAL_VARIABLES)}, "
                f"not {unknown}",
                hint="pass other settings as constructor arguments",
            )
        if max_turns < 1 or max_budget_usd <= 0 or timeout_seconds <= 0:
            raise ConfigError(
                "max_turns, max_budget_usd and timeout_seconds must be positive "
                f"(got {max_turns}, {max_budget_usd}, {timeout_seconds})"
            )
        # A relative path is the caller's, not the checkout's (the CLI runs with cwd=checkout).
        self.binary = str(Path(binary).absolute()) if "/" in str(binary) else str(binary)
        self.model = model
        self._credentials = dict(credentials)
        self._inherited = {
            key: value for key, value in (inherited_env or {}).items() if key in INHERITED_VARIABLES
        }
        self.max_turns = max_turns
        self.max_budget_usd = max_budget_usd
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries

    def limit_arguments(self) -> list[str]:
        """The flags that bound every run: turns, money, the model, no transcript kept."""
        return [
            "--max-turns",
            str(self.max_turns),
            "--max-budget-usd",
            f"{self.max_budget_usd:.4f}",
            "--model",
            self.model,
            "--no-session-persistence",
        ]

    def environment(self, home: Path) -> dict[str, str]:
        """The CLI's whole environment: an allow-list, never a copy with secrets deleted."""
        env = {
            **self._inherited,
            **self._credentials,
            **isolated_home(home),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        env.setdefault("PATH", "/usr/bin:/bin")
        if self.max_retries is not None:
            env["CLAUDE_CODE_MAX_RETRIES"] = str(self.max_retries)
        return env

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        scratch: Path,
        stdin_text: str | None = None,
        on_stdout_line: Callable[[str], None] | None = None,
    ) -> Finished:
        """Run `argv` (its first element is `self.binary`) in `cwd` with a fresh HOME under `scratch`."""
        home = scratch / "home"
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        try:
            return run_with_deadline(
                argv,
                cwd=cwd,
                env=self.environment(home),
                timeout_seconds=self.timeout_seconds,
                stdin_text=stdin_text,
                on_stdout_line=on_stdout_line,
            )
        except OSError as error:
            raise DiagnosisError(
                f"the Claude Code CLI could not be started as {self.binary!r}: {error}",
                hint=f"{CLAUDE_INSTALL_HINT} (or set ROUNDS_CLAUDE_BIN to its path)",
            ) from error


def isolated_home(home: Path) -> dict[str, str]:
    """HOME, TMPDIR and every configuration folder inside `home`, so no user configuration is read."""
    return {
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }


def prompt_argument(
    argv: list[str], user_prompt: str, limit: int = MAX_PROMPT_ARGUMENT_BYTES
) -> tuple[list[str], str | None]:
    """The prompt as the last argument, or on stdin when it is longer than `limit` bytes (returned)."""
    if len(user_prompt.encode()) <= limit:
        return [*argv, "--", user_prompt], None
    return argv, user_prompt


def scratch_folder(prefix: str = "rounds-claude-") -> tempfile.TemporaryDirectory[str]:
    """A scratch folder for one run (its HOME and configuration files), deleted when the run is over."""
    return tempfile.TemporaryDirectory(prefix=prefix)
