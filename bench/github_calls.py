"""How many GitHub requests the tracker makes per round, measured against the fake GitHub.

    python bench/github_calls.py

Budgets (a GITHUB_TOKEN has 1,000 requests an hour per repository): a quiet round makes at most 2 requests;
ten new signatures cost at most 3 requests each; a lost database is rebuilt from 1,000 bot issues well within
the hourly limit. The last line is machine-readable:

    quiet_round_requests=<n> requests_per_new_signature=<x> rebuild_requests_1000=<n>
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_github import FakeGitHub, description_path  # noqa: E402
from fake_github.fixtures import BOT_PERMISSIONS, REPOSITORY, TOKEN  # noqa: E402
from fake_github.rounds import (  # noqa: E402
    START,
    FixedSource,
    error_event,
    settings_for,
    tracker_for,
)

from rounds_bot.github.rebuild import rebuild_database  # noqa: E402
from rounds_bot.marker import MarkerState, write_marker  # noqa: E402
from rounds_bot.round.run import run_round  # noqa: E402
from rounds_bot.store import Store  # noqa: E402

HOURLY_LIMIT = 1_000


def round_requests(fake: FakeGitHub, folder: Path, events: list, minutes: int) -> tuple[int, object]:
    settings = settings_for(folder, fake)
    store = Store.open(settings.signatures_db_path)
    tracker = tracker_for(fake, Path(settings.signatures_db_path))
    before = len(fake.exchanges)
    try:
        report = run_round(
            settings, FixedSource(events), tracker, store, now=START + timedelta(minutes=minutes)
        )
    finally:
        store.close()
        tracker.journal.close()
    return len(fake.exchanges) - before, report


def main() -> None:
    validate = description_path() is not None
    if not validate:
        print("note: GitHub's REST description is not in .ci/cache/; exchanges are not validated this time")
    folder = Path(tempfile.mkdtemp(prefix="rounds-bench-"))
    with FakeGitHub(repository=REPOSITORY, validate=validate) as fake:
        fake.add_token(TOKEN, **BOT_PERMISSIONS)
        first = [error_event(i) for i in range(10)]
        new_requests, report = round_requests(fake, folder, first, minutes=5)
        assert len(report.new) == 10, report
        per_new = new_requests / 10
        quiet_requests, report = round_requests(fake, folder, first, minutes=20)
        assert report.quiet, report
        later = START + timedelta(minutes=30)
        update_requests, report = round_requests(
            fake, folder, [*first, *(error_event(i, at=later) for i in range(10))], 40
        )
        assert len(report.updated) == 10, report
        violations = list(fake.violations)

    with FakeGitHub(repository=REPOSITORY, validate=validate) as fake:
        fake.add_token(TOKEN, **BOT_PERMISSIONS)
        for i in range(1_000):
            marker = write_marker(
                MarkerState(signature_id=f"sig_{i:04d}", service=f"svc{i % 7}", total_count=i + 1)
            )
            fake.state.create_issue(
                fake.repo, f"[svc{i % 7}] Problem{i}Error", f"Body\n\n{marker}", ["rounds"], "bot"
            )
        started = time.perf_counter()
        store = Store.open(folder / "rebuilt.db")
        result = rebuild_database(tracker_for(fake).api, store)
        store.close()
        rebuild_seconds = time.perf_counter() - started
        rebuild_requests = len(fake.exchanges)
        assert result.signatures == 1_000, result
        violations += fake.violations

    print(f"ten new signatures: {new_requests} requests ({per_new:.1f} per signature; budget 3)")
    print(f"quiet round: {quiet_requests} requests (budget 2)")
    print(f"ten updated signatures: {update_requests} requests ({update_requests / 10:.1f} per signature)")
    print(
        f"rebuild from 1,000 issues: {rebuild_requests} requests "
        f"({rebuild_requests / HOURLY_LIMIT:.1%} of a GITHUB_TOKEN's hourly limit), {rebuild_seconds:.1f} s"
    )
    print(f"exchanges violating GitHub's REST description: {len(violations)}")
    print(
        f"quiet_round_requests={quiet_requests} requests_per_new_signature={per_new:.1f} "
        f"rebuild_requests_1000={rebuild_requests}"
    )


if __name__ == "__main__":
    main()
