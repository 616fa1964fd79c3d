"""The one settings object of rounds, and the one home of every setting and its default (this package).

Every field is read from the environment (and an optional `.env` file named on the command line) and
documented in the settings table of `docs/settings.md`; `tests/test_config.py` checks that the table and this
class agree. Names that users of the original design know keep their names; every new one is prefixed
`ROUNDS_`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import SettingsConfigDict

from rounds_bot.settings.diagnosis import DiagnosisSettings
from rounds_bot.settings.fields import CommaList, env
from rounds_bot.settings.fixing import FixSettings
from rounds_bot.settings.grouping import MERGE_THRESHOLD, RELATED_THRESHOLD, GroupingConfig
from rounds_bot.settings.source_spec import spec_problem


class Settings(FixSettings, DiagnosisSettings):
    """All settings. Construct with `load_settings()` so errors come out as one ConfigError.

    The diagnosis settings are declared by concept in `settings/diagnosis.py`, the fix proposals'
    (ROUNDS_FIX_*) in `settings/fixing.py`; the grouping defaults live in `settings/grouping.py`."""

    # env_ignore_empty: GitHub Actions expands a secret that is not set to "", which must mean "not set"
    model_config = SettingsConfigDict(
        extra="ignore", populate_by_name=False, case_sensitive=True, frozen=True, env_ignore_empty=True
    )

    # --- where errors come from -------------------------------------------------------------
    source: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_SOURCE"),
        description="Telemetry source: `signoz` or `otlp-file:PATH`. Default: `signoz` when "
        "SIGNOZ_API_URL is set; otherwise it must be given (or use `rounds run --demo`).",
    )
    signoz_api_url: str | None = Field(
        default=None,
        validation_alias=env("SIGNOZ_API_URL"),
        description="Base URL of the SigNoz instance, with its port (8080 since v0.76, 3301 before).",
    )
    signoz_api_key: str | None = Field(
        default=None,
        validation_alias=env("SIGNOZ_API_KEY"),
        description="SigNoz API key, sent as the `SIGNOZ-API-KEY` header.",
    )
    signoz_ui_url: str | None = Field(
        default=None,
        validation_alias=env("SIGNOZ_UI_URL"),
        description="Where SigNoz's UI is, for the links in issues (the trace with its span, the log "
        "line), when it is not at SIGNOZ_API_URL.",
    )
    signoz_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3_600,
        validation_alias=env("SIGNOZ_TIMEOUT_SECONDS"),
        description="How long one SigNoz request may take before it is retried (with backoff).",
    )
    signoz_deadline_seconds: float = Field(
        default=300.0,
        gt=0,
        le=21_600,
        validation_alias=env("SIGNOZ_DEADLINE_SECONDS"),
        description="How long all of a round's SigNoz requests may take; a stream still unread then is "
        "reported and read next round.",
    )
    signoz_overlap_seconds: int = Field(
        default=900,
        ge=0,
        le=86_400,
        validation_alias=env("SIGNOZ_OVERLAP_SECONDS"),
        description="How far before each SigNoz stream's cursor a round re-reads, whole minutes, to count "
        "rows that arrived late: SigNoz stores a span at its start, so this must exceed your longest "
        "error span plus the pipeline's delay. Rows already counted are not counted again. "
        "ROUNDS_CURSOR_OVERLAP_SECONDS applies too when larger.",
    )
    signoz_max_window_hours: float = Field(
        default=24.0,
        gt=0,
        le=720,
        validation_alias=env("SIGNOZ_MAX_WINDOW_HOURS"),
        description="The most a round reads of each SigNoz stream; after a long gap the next rounds read "
        "the rest.",
    )
    signoz_chunk_minutes: int = Field(
        default=360,
        ge=1,
        le=1_440,
        validation_alias=env("SIGNOZ_CHUNK_MINUTES"),
        description="SigNoz queries cover at most this much time each, so a long window is read in "
        "bounded pieces.",
    )
    poll_interval_seconds: int = Field(
        default=900,
        ge=60,
        le=86_400,
        validation_alias=env("POLL_INTERVAL_SECONDS"),
        description="How often rounds are scheduled; used to size the spike baseline window.",
    )
    error_lookback_minutes: int = Field(
        default=60,
        ge=1,
        le=10_080,
        validation_alias=env("ERROR_LOOKBACK_MINUTES"),
        description="How far back the first round reads (later rounds read from the cursor).",
    )
    cursor_overlap_seconds: int = Field(
        default=120,
        ge=0,
        le=3_600,
        validation_alias=env("ROUNDS_CURSOR_OVERLAP_SECONDS"),
        description="Each round re-reads this much before the cursor to catch late-arriving data; "
        "occurrences already counted are not counted twice.",
    )

    # --- the signature database and the output ----------------------------------------------
    signatures_db_path: Path = Field(
        default=Path("rounds.db"),
        validation_alias=env("SIGNATURES_DB_PATH"),
        description="SQLite signature database.",
    )
    output_dir: Path = Field(
        default=Path("rounds-out"),
        validation_alias=env("ROUNDS_OUTPUT_DIR"),
        description="Folder for the dry-run tracker's Markdown issue drafts.",
    )
    tracker: Literal["dry-run", "github"] = Field(
        default="dry-run",
        validation_alias=env("ROUNDS_TRACKER"),
        description="Where issues go: `dry-run` (Markdown drafts in ROUNDS_OUTPUT_DIR) or `github`.",
    )
    max_new_issues_per_round: int | None = Field(
        default=None,
        ge=0,
        le=1_000,
        validation_alias=env("ROUNDS_MAX_NEW_ISSUES_PER_ROUND"),
        description="Cap on issues filed in one round; the rest are listed in the report and filed next "
        "round. "
        "Default: 10 with the GitHub tracker, no cap for dry-run drafts.",
    )
    hold_browser_extension_errors: bool = Field(
        default=True,
        validation_alias=env("ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS"),
        description="An error whose every stack frame is a browser extension's is counted but neither filed "
        "nor diagnosed (the report says how many); `false`: filed and diagnosed like any other.",
    )

    # --- GitHub -------------------------------------------------------------------------------
    github_token: SecretStr | None = Field(
        default=None,
        validation_alias=env("GITHUB_TOKEN"),
        description="Token for the GitHub tracker (needs `issues: write`; `actions: read` for state).",
    )
    github_repository: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$",
        validation_alias=env("GITHUB_REPOSITORY"),
        description="`owner/name` of the repository issues are filed in (set by GitHub Actions).",
    )
    github_api_url: str = Field(
        default="https://api.github.com",
        validation_alias=env("ROUNDS_GITHUB_API_URL"),
        description="GitHub REST API base URL; change it for GitHub Enterprise Server "
        "(`https://HOST/api/v3`).",
    )

    # --- redaction ------------------------------------------------------------------------
    redact_ips: Literal["all", "public", "off"] = Field(
        default="all",
        validation_alias=env("ROUNDS_REDACT_IPS"),
        description="IP addresses in telemetry: `all` redacts every one but loopback, `public` keeps private "
        "ranges (10/8, 172.16/12, 192.168/16, 100.64/10, link-local, fc00::/7), `off` keeps them all.",
    )

    # --- grouping ---------------------------------------------------------------------------
    in_app_include: CommaList = Field(
        default_factory=list,
        validation_alias=env("ROUNDS_IN_APP_INCLUDE"),
        description="Comma-separated path or module prefixes that are always your code (in-app).",
    )
    in_app_exclude: CommaList = Field(
        default_factory=list,
        validation_alias=env("ROUNDS_IN_APP_EXCLUDE"),
        description="Comma-separated path or module prefixes that are never your code.",
    )
    error_code_attributes: CommaList | None = Field(
        default=None,
        validation_alias=env("ROUNDS_ERROR_CODE_ATTRIBUTES"),
        description="Comma-separated attribute keys holding a standardised error code, in priority "
        "order. Default: the grouping engine's list (`error.code` and the like).",
    )
    error_code_pattern: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_ERROR_CODE_PATTERN"),
        description="Regular expression with one group that extracts an error code from a message. "
        "Default: the grouping engine's pattern.",
    )
    merge_threshold: float = Field(
        default=MERGE_THRESHOLD,
        gt=0,
        le=1,
        validation_alias=env("ROUNDS_MERGE_THRESHOLD"),
        description="TF-IDF cosine similarity at or above which an error joins a known signature.",
    )
    related_threshold: float = Field(
        default=RELATED_THRESHOLD,
        gt=0,
        le=1,
        validation_alias=env("ROUNDS_RELATED_THRESHOLD"),
        description="Similarity at or above which a new signature is linked as possibly related.",
    )

    # --- GitHub Actions: saved state, the workflow, notifications ----------------------------
    artifact_name: str = Field(
        default="rounds-db",
        pattern=r"^[A-Za-z0-9._-]{1,100}$",
        validation_alias=env("ROUNDS_ARTIFACT_NAME"),
        description="Name of the workflow artifact that carries the signature database from one run to "
        "the next.",
    )
    artifact_retention_days: int = Field(
        default=30,
        ge=1,
        le=400,
        validation_alias=env("ROUNDS_ARTIFACT_RETENTION_DAYS"),
        description="Days a saved database is kept; `rounds doctor` warns when the repository keeps "
        "artifacts for less.",
    )
    state_key: SecretStr | None = Field(
        default=None,
        validation_alias=env("ROUNDS_STATE_KEY"),
        description="A secret that signs the saved database (HMAC-SHA256): when set, only a database saved "
        "with it is restored, so one the fix-test job saved is refused. Give it only to the steps that save "
        "and restore the database, never to the fix-test job.",
    )
    workflow_file: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_WORKFLOW_FILE"),
        description="The workflow file that runs rounds, for `rounds doctor`'s schedule check. Default: the "
        "running workflow in Actions, else `rounds.yml`.",
    )
    zulip_site: str | None = Field(
        default=None,
        validation_alias=env("ZULIP_SITE"),
        description="Zulip server, e.g. `https://example.zulipchat.com`. Notifications are off unless "
        "ZULIP_SITE, ZULIP_EMAIL, ZULIP_API_KEY and ROUNDS_ZULIP_STREAM are all set.",
    )
    zulip_email: str | None = Field(
        default=None,
        validation_alias=env("ZULIP_EMAIL"),
        description="Email address of the Zulip bot that posts.",
    )
    zulip_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=env("ZULIP_API_KEY"),
        description="API key of that Zulip bot.",
    )
    zulip_stream: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_ZULIP_STREAM"),
        description="Zulip stream (channel) that gets round summaries and new-issue notices.",
    )
    zulip_topic: str = Field(
        default="rounds",
        min_length=1,
        max_length=60,
        validation_alias=env("ROUNDS_ZULIP_TOPIC"),
        description="Topic of those messages (Zulip allows 60 characters).",
    )

    repo_path: Path = Field(
        default=Path("."),
        validation_alias=env("ROUNDS_REPO_PATH"),
        description="Checkout of the code being diagnosed; the model reads it and nothing else.",
    )
    code_mappings: CommaList = Field(
        default_factory=list,
        validation_alias=env("ROUNDS_CODE_MAPPINGS"),
        description="Comma-separated RUNTIME_PREFIX=REPO_PREFIX rules from paths in stack traces to files in "
        "the repository, tried before the mapping inferred from the checkout.",
    )
    github_server_url: str = Field(
        default="https://github.com",
        validation_alias=env("GITHUB_SERVER_URL"),
        description="Where links into the code and to commits point (set by GitHub Actions).",
    )
    charts: bool = Field(
        default=True,
        validation_alias=env("ROUNDS_CHARTS"),
        description="Mermaid charts of occurrences (issues) and of signatures (job summary); off: tables.",
    )
    code_revision: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_CODE_REVISION"),
        description="Revision of that checkout (diagnoses are cached per revision). Default: "
        "`git rev-parse HEAD` there, else GITHUB_SHA.",
    )

    @field_validator(
        "in_app_include", "in_app_exclude", "error_code_attributes", "code_mappings", mode="before"
    )
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("error_code_pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        import re

        if value is None:
            return value
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        if compiled.groups < 1:
            raise ValueError("the pattern needs one capturing group around the code")
        return value

    @field_validator("related_threshold")
    @classmethod
    def _related_below_merge(cls, value: float, info: ValidationInfo) -> float:
        # checked with every other setting, before a round polls anything (the engine checks it again)
        merge = info.data.get("merge_threshold")
        if merge is not None and value > merge:
            raise ValueError(
                f"above ROUNDS_MERGE_THRESHOLD={merge}: the related band must lie below the merge threshold; "
                "lower ROUNDS_RELATED_THRESHOLD or raise ROUNDS_MERGE_THRESHOLD"
            )
        return value

    @field_validator("source")
    @classmethod
    def _known_source(cls, value: str | None) -> str | None:
        problem = spec_problem(value) if value else None
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("signoz_api_url", "signoz_ui_url", "zulip_site")
    @classmethod
    def _url_has_scheme(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://, e.g. http://localhost:8080")
        return value.rstrip("/") if value else value

    def new_issue_cap(self) -> int:
        if self.max_new_issues_per_round is not None:
            return self.max_new_issues_per_round
        return 10 if self.tracker == "github" else 1_000_000

    def grouping_config(self) -> GroupingConfig:
        """The grouping engine's configuration: its defaults, with whatever the user set."""
        overrides = {
            "in_app_include": self.in_app_include,
            "in_app_exclude": self.in_app_exclude,
            "error_code_attributes": self.error_code_attributes,
            "error_code_pattern": self.error_code_pattern,
            "merge_threshold": self.merge_threshold,
            "related_threshold": self.related_threshold,
        }
        return GroupingConfig(**{k: v for k, v in overrides.items() if v not in (None, [])})

    def effective_source(self) -> str | None:
        """The source spec a round will read, or None when nothing is configured."""
        if self.source:
            return self.source
        return "signoz" if self.signoz_api_url else None
