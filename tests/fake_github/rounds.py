"""Rounds against the fake GitHub: a fixed telemetry source, settings, and a GitHub tracker wired to the fake.

Used by the GitHub tests and `bench/github_calls.py`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rounds_bot.github.journal import Journal
from rounds_bot.github.ratelimit import CallBudget, Waiter
from rounds_bot.github.rest import GitHubApi, make_github
from rounds_bot.github.tracker import GitHubOptions, GitHubTracker
from rounds_bot.models import ErrorEvent
from rounds_bot.round.report import RoundReport
from rounds_bot.settings import Settings
from rounds_bot.sources.base import PollResult, Window

from .fixtures import REPOSITORY, TOKEN
from .server import FakeGitHub

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class FixedSource:
    """A telemetry source that returns the same events every time (what a file source does)."""

    name = "fixed"

    def __init__(self, events: list[ErrorEvent]) -> None:
        self.events = events

    def poll(self, window: Window, known_group_ids: frozenset[str]) -> PollResult:
        return PollResult(events=[e for e in self.events if e.timestamp < window.end])


# Distinct problems: their own error type, words and code path, so any grouping engine keeps them apart.
PROBLEMS = [
    ("KeyError", "'user_id' missing from session cookie", "checkout/session.py", "load_session"),
    ("ValueError", "invalid literal for int() with base 10: 'abc'", "payments/parse.py", "parse_amount"),
    ("TimeoutError", "inventory upstream did not answer in time", "search/client.py", "fetch_inventory"),
    ("PermissionError", "cannot write audit journal file", "accounts/audit.py", "append_entry"),
    (
        "ZeroDivisionError",
        "division by zero computing discount ratio",
        "checkout/pricing.py",
        "apply_discount",
    ),
    ("ConnectionResetError", "ledger database reset the connection", "payments/db.py", "commit_ledger"),
    ("UnicodeDecodeError", "utf-8 codec cannot decode byte 0xff", "search/indexer.py", "tokenize_document"),
    ("AttributeError", "'NoneType' object has no attribute 'email'", "accounts/profile.py", "render_profile"),
    ("IndexError", "list index out of range picking shard", "search/shards.py", "pick_shard"),
    ("FileNotFoundError", "receipt template receipt.html is gone", "checkout/receipts.py", "render_receipt"),
    ("OverflowError", "exchange rate overflow converting currency", "payments/fx.py", "convert"),
    ("RecursionError", "maximum recursion depth exceeded walking category tree", "search/tree.py", "walk"),
]


def error_event(
    index: int, *, service: str | None = None, at: datetime | None = None, serial: int = 0
) -> ErrorEvent:
    """A distinct problem per `index` (its own error type, message and stack), one occurrence per `serial`."""
    error_type, message, path, function = PROBLEMS[index % len(PROBLEMS)]
    service = service or path.split("/")[0]
    moment = (at or START) + timedelta(seconds=serial)
    return ErrorEvent(
        event_id=f"evt-{index}-{moment:%Y%m%dT%H%M%S}",
        timestamp=moment,
        service=service,
        error_type=error_type,
        message=f"{error_type}: {message}",
        stacktrace=(
            "Traceback (most recent call last):\n"
            f'  File "{path}", line {10 + index}, in {function}\n'
            f"    {function}_step()\n"
            f"{error_type}: {message}"
        ),
        service_version="1.4.2",
        environment="production",
        source_url=f"https://signoz.example.com/trace/{index:032x}",
    )


def settings_for(tmp_path: Path, fake: FakeGitHub | None = None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "ROUNDS_TRACKER": "github",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": REPOSITORY,
        "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db"),
        "ROUNDS_OUTPUT_DIR": str(tmp_path / "out"),
    }
    if fake is not None:
        values["ROUNDS_GITHUB_API_URL"] = fake.base_url
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def quick_options(**overrides: Any) -> GitHubOptions:
    """No waiting between writes or before retries: tests measure behaviour, not time."""
    values: dict[str, Any] = {"write_interval_seconds": 0.0, "backoff_seconds": 0.0, "max_wait_seconds": 5.0}
    values.update(overrides)
    return GitHubOptions(**values)


def tracker_for(
    fake: FakeGitHub,
    journal: Journal | Path | None = None,
    *,
    token: str = TOKEN,
    repository: str = REPOSITORY,
    sleeps: list[float] | None = None,
    **options: Any,
) -> GitHubTracker:
    """A GitHub tracker talking to the fake; `sleeps` collects the waits instead of sleeping."""
    opts = quick_options(**options)
    github = make_github(token, fake.base_url, write_interval_seconds=opts.write_interval_seconds)
    waiter = Waiter(
        max_wait_seconds=opts.max_wait_seconds,
        sleep=(sleeps.append if sleeps is not None else (lambda _seconds: None)),
        clock=lambda: fake.clock().timestamp(),
    )
    api = GitHubApi(
        github,
        repository,
        CallBudget(max_requests=opts.max_requests_per_round, reserve=opts.rate_limit_reserve),
        waiter,
        server_error_retries=opts.server_error_retries,
        backoff_seconds=opts.backoff_seconds,
    )
    if journal is None:
        journal = Journal.memory()
    elif isinstance(journal, Path):
        journal = Journal.open(journal)
    return GitHubTracker(api, journal, opts)


def round_against(
    fake: FakeGitHub,
    tmp_path: Path,
    events: list[ErrorEvent],
    minutes: int,
    *,
    settings: dict[str, Any] | None = None,
    tracker_options: dict[str, Any] | None = None,
    **run_options: Any,
) -> RoundReport:
    """One whole round at START + `minutes`, its database in `tmp_path`, its issues on the fake."""
    from rounds_bot.round.run import run_round
    from rounds_bot.store import Store

    configured = settings_for(tmp_path, fake, **(settings or {}))
    store = Store.open(configured.signatures_db_path)
    tracker = tracker_for(fake, Path(configured.signatures_db_path), **(tracker_options or {}))
    try:
        return run_round(
            configured,
            FixedSource(events),
            tracker,
            store,
            now=START + timedelta(minutes=minutes),
            reads_whole_history=True,
            **run_options,
        )
    finally:
        store.close()
        tracker.journal.close()


def filed_problems(fake: FakeGitHub, tmp_path: Path, count: int = 3) -> dict[int, str]:
    """`count` problems filed on the fake by one round (`round_against`): issue number -> signature id."""
    from rounds_bot.store import Store

    round_against(fake, tmp_path, [error_event(i) for i in range(count)], 5)
    store = Store.open(settings_for(tmp_path, fake).signatures_db_path)
    try:
        return {int(s.issue_ref[1:]): s.id for s in store.signatures() if s.issue_ref}
    finally:
        store.close()
