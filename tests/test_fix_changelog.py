"""`rounds changelog`: every fix from the event log, newest first, pinned by golden files (Markdown and JSON).

Regenerate after a deliberate change with ROUNDS_UPDATE_GOLDEN=1."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from rounds_bot.cli.app import main
from rounds_bot.events import Fact
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop
GOLDEN = Path(__file__).parent / "golden" / "changelog"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def proposed(pr: int, issue: int, sid: str, *files: str) -> tuple[Fact, str, dict[str, object]]:
    branch = f"rounds/fix-{sid}-20260302"
    return Fact.FIX_PROPOSED, sid, {"pr": pr, "issue": f"#{issue}", "branch": branch, "files": list(files)}


def applied(
    pr: int,
    sid: str,
    merged_at: str,
    versions: list[str],
    rate: float,
    before: tuple[str, int] | None = None,
) -> tuple[Fact, str, dict[str, object]]:
    """`before`: where the rate before the merge starts, and the occurrences it counted."""
    payload = {"pr": pr, "merged_at": merged_at, "versions_before": versions, "rate_before": rate}
    if before is not None:
        payload |= {"before_from": before[0], "before_occurrences": before[1]}
    return Fact.FIX_APPLIED, sid, payload


def released(pr: int, sid: str, version: str, first_seen: str) -> tuple[Fact, str, dict[str, object]]:
    return Fact.FIX_RELEASED, sid, {"pr": pr, "version": version, "first_seen": first_seen}


def offered(issue: int, sid: str, *files: str) -> tuple[Fact, str, dict[str, object]]:
    """A branch pushed whose pull request GitHub did not let rounds open."""
    branch = f"rounds/fix-{sid}-20260302"
    link = f"https://github.com/octo/app/compare/main...{branch}?expand=1"
    payload = {"branch": branch, "base": "main", "link": link, "issue": f"#{issue}", "files": list(files)}
    return Fact.FIX_OFFERED, sid, payload


def adopted(pr: int, issue: int, sid: str, *files: str) -> tuple[Fact, str, dict[str, object]]:
    """The pull request a person opened from an offered branch, taken on by rounds."""
    kind, sid, payload = proposed(pr, issue, sid, *files)
    return kind, sid, {**payload, "adopted": True}


def fill(store: Store) -> None:
    """Seven fixes, each status at least once (one opened by a person from a branch rounds pushed, one
    resolved without any version information), a failed attempt that opened nothing, and a branch whose pull
    request is still left to a person. The regressed fix's release was first seen in the round that found the
    regression, and is logged after it, as the round does."""
    regression = "it recurred on 2.4.0, at or above 2.4.0, the first release after pull request 9 was merged"
    before_week = ("2026-02-23T11:00:00+00:00", 1008)  # 7 days at 6 an hour
    before_young = ("2026-03-02T09:00:00+00:00", 3)  # counted for 2.5 hours only
    rows = [
        (0, proposed(7, 3, "sig_resolved", "app/pricing.py", "tests/test_pricing.py")),
        (120, applied(7, "sig_resolved", "2026-03-02T11:00:00+00:00", ["1.0.0"], 6.0, before_week)),
        (200, released(7, "sig_resolved", "1.1.0", "2026-03-02T12:10:00+00:00")),
        (
            1700,
            (
                Fact.INCIDENT_RESOLVED,
                "sig_resolved",
                {"pr": 7, "rate_after": 0.0417, "rate_after_release": 0.0},
            ),
        ),
        (60, proposed(9, 4, "sig_regressed", "app/cart.py")),
        (90, proposed(9, 4, "sig_regressed", "app/cart.py", "tests/test_cart.py")),
        (150, applied(9, "sig_regressed", "2026-03-02T11:30:00+00:00", ["2.3.0"], 1.2, before_young)),
        (300, (Fact.REGRESSED, "sig_regressed", {"count": 2, "reason": regression})),
        (300, released(9, "sig_regressed", "2.4.0", "2026-03-02T13:50:00+00:00")),
        (400, proposed(11, 5, "sig_merged", "app/tax.py")),
        (500, applied(11, "sig_merged", "2026-03-02T17:15:00+00:00", [], 0.5)),
        (600, proposed(12, 6, "sig_abandoned", "app/ship.py")),
        (700, (Fact.FIX_ABANDONED, "sig_abandoned", {"pr": 12})),
        (710, (Fact.FIX_FAILED, "sig_failed", {"reason": "the repository's tests failed with the change"})),
        (800, proposed(14, 8, "sig_open", "app/<script>@team.py")),
        (820, offered(10, "sig_adopted", "app/fees.py")),
        (850, adopted(15, 10, "sig_adopted", "app/fees.py")),
        (900, offered(11, "sig_offered", "app/refunds.py", "tests/test_refunds.py")),
        (950, proposed(16, 12, "sig_quiet", "app/mail.py")),
        (960, applied(16, "sig_quiet", "2026-03-02T17:00:00+00:00", [], 0.5)),
        (
            2500,
            (
                Fact.INCIDENT_RESOLVED,
                "sig_quiet",
                {"pr": 16, "rate_after": 0.0, "judged_from": "merge"},
            ),
        ),
    ]
    with store.transaction():
        for number, (minutes, (kind, sid, payload)) in enumerate(rows):
            at = T0 + timedelta(minutes=minutes)
            store.append_event(kind, f"{kind}:{number}", signature_id=sid, run_id="r", at=at, payload=payload)


@pytest.fixture
def database(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "rounds.db"
    store = Store.open(path)
    fill(store)
    store.close()
    clean_env.setenv("SIGNATURES_DB_PATH", str(path))
    clean_env.setenv("GITHUB_REPOSITORY", "octo/app")
    return path


@pytest.mark.parametrize(("name", "arguments"), [("changelog.md", []), ("changelog.json", ["--json"])])
def test_changelog_matches_its_golden_file(database, name, arguments):
    result = CliRunner().invoke(main, ["changelog", *arguments])
    assert result.exit_code == 0, result.output
    golden = GOLDEN / name
    if os.environ.get("ROUNDS_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(result.output, encoding="utf-8")
    assert result.output == golden.read_text(encoding="utf-8")


def test_changelog_is_newest_first_with_every_status(database):
    document = json.loads(CliRunner().invoke(main, ["changelog", "--json"]).output)
    assert [fix["pr_number"] for fix in document["fixes"]] == [16, 15, 14, 12, 11, 9, 7]
    assert document["counts"] == {"proposed": 2, "merged": 1, "resolved": 2, "regressed": 1, "abandoned": 1}


def test_a_release_first_seen_in_the_round_of_the_regression_is_kept(database):
    document = json.loads(CliRunner().invoke(main, ["changelog", "--json"]).output)
    [regressed] = [fix for fix in document["fixes"] if fix["pr_number"] == 9]
    assert (regressed["status"], regressed["released_version"], regressed["released_at"]) == (
        "regressed",
        "2.4.0",
        "2026-03-02T13:50:00+00:00",
    )


def test_the_details_say_how_long_the_rate_before_the_merge_covers_and_what_a_fix_was_judged_from(database):
    text = CliRunner().invoke(main, ["changelog"]).output
    assert "1008 occurrences in the 7 days before the merge;" in text
    assert "3 occurrences in the 2.5 hours before the merge (counted since 2026-03-02 09:00 UTC);" in text
    assert "; resolved 2026-03-04 02:40 (no version information: judged from the merge time)\n" in text
    branch = "`rounds/fix-sig_merged-20260302`"
    waiting = f"#11 (merged), branch {branch}: `app/tax.py`; 1 push; merged 2026-03-02 17:15"
    assert f"{waiting}; no version information: its quiet period counts from the merge\n" in text


def test_changelog_lists_a_branch_left_to_a_person_until_its_pull_request_is_adopted(database):
    document = json.loads(CliRunner().invoke(main, ["changelog", "--json"]).output)
    [waiting] = document["offered"]  # sig_adopted's branch got its pull request (#15): no longer waiting
    assert (waiting["signature_id"], waiting["issue"]) == ("sig_offered", "#11")
    assert waiting["link"].endswith("/compare/main...rounds/fix-sig_offered-20260302?expand=1")
    text = CliRunner().invoke(main, ["changelog"]).output
    assert "## Branches pushed, pull request left to a person" in text
    assert "[open the pull request](https://github.com/octo/app/compare/main...rounds/fix-sig_offered" in text


def test_changelog_of_a_database_without_fixes_says_so(tmp_path, clean_env):
    clean_env.setenv("SIGNATURES_DB_PATH", str(tmp_path / "empty.db"))
    Store.open(tmp_path / "empty.db").close()
    result = CliRunner().invoke(main, ["changelog"])
    assert result.exit_code == 0 and "has not proposed a fix yet" in result.output


def test_changelog_without_a_database_is_a_clear_error(tmp_path, clean_env):
    clean_env.setenv("SIGNATURES_DB_PATH", str(tmp_path / "missing.db"))
    result = CliRunner().invoke(main, ["changelog"])
    assert result.exit_code == 2 and "no signature database at" in result.output
    assert not (tmp_path / "missing.db").exists()
