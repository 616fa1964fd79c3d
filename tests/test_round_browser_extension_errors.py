"""An error whose every frame is a browser extension's ran no code of the app: it is counted, but neither
filed nor diagnosed, and the report says how many were held back (Sentry's inbound filter "browser
extensions" is the reference). ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS=false files them; an issue filed before
is updated as before, and a trace with any frame of the app's is filed as it always was."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_commands_round import Recorder
from test_grouping_browser_extensions import SCHEMES
from test_grouping_browser_extensions import TRACE as APP_THROUGH_AN_EXTENSION
from test_round import NOW, ListSource

from rounds_bot.grouping.extension_errors import raised_in_browser_extension
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.models import ErrorEvent
from rounds_bot.round.planning import held_note
from rounds_bot.round.report import render_report
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker

EXTENSION = "chrome-extension://gighmmpiobklfepjocnamgkkbiglidom"
#: a content script the user installed fails on every page it is injected into: no frame is the app's
EXTENSION_ONLY = f"""TypeError: Cannot read properties of undefined (reading 'sendMessage')
    at notify ({EXTENSION}/content.js:1:2231)
    at HTMLDocument.onReady ({EXTENSION}/content.js:3:90)"""
APP_ONLY = """TypeError: Cannot read properties of undefined (reading 'total')
    at renderCart (https://shop.example.com/assets/cart.js:12:5)
    at onMount (https://shop.example.com/assets/cart.js:40:3)"""


def occurrences(stacktrace: str, count: int, minutes_ago: int = 10) -> list[ErrorEvent]:
    """`count` occurrences within a minute: enough for a new signature's diagnosis."""
    first_line = stacktrace.splitlines()[0]
    error_type, _, message = first_line.partition(": ")
    return [
        ErrorEvent(
            event_id=f"{hash(stacktrace) & 0xFFFF:x}-{minutes_ago}-{n}",
            timestamp=NOW - timedelta(minutes=minutes_ago, seconds=n),
            service="shop-web",
            error_type=error_type,
            message=message,
            stacktrace=stacktrace,
        )
        for n in range(count)
    ]


@pytest.fixture
def env(clean_env):
    clean_env.setenv("ROUNDS_CODE_REVISION", "abc123")
    return clean_env


def a_round(store: Store, tmp_path, events: list[ErrorEvent], *, minutes_later: int = 0, diagnoser=None):
    return run_round(
        load_settings(),
        ListSource(events),
        DryRunTracker(tmp_path),
        store,
        now=NOW + timedelta(minutes=minutes_later),
        diagnoser=diagnoser,
        diagnosis_mode="recorder" if diagnoser else "diagnosis off",
    )


def by_stacktrace(store: Store, stacktrace: str):
    (signature,) = [s for s in store.signatures() if s.representative.stacktrace == stacktrace]
    return signature


def test_an_error_raised_in_a_browser_extension_is_counted_but_neither_filed_nor_diagnosed(
    env, fresh_db, tmp_path
):
    recorder = Recorder()
    report = a_round(
        fresh_db, tmp_path, occurrences(EXTENSION_ONLY, 12) + occurrences(APP_ONLY, 11), diagnoser=recorder
    )
    assert [line.title for line in report.new] == [
        "TypeError: Cannot read properties of undefined (reading 'total')"
    ]
    assert len(list(tmp_path.glob("*.md"))) == 1
    assert held_note(1) in report.notes
    app, held = by_stacktrace(fresh_db, APP_ONLY), by_stacktrace(fresh_db, EXTENSION_ONLY)
    assert [request.signature_id for request in recorder.asked] == [app.id]
    assert (held.total_count, held.issue_ref) == (12, None)
    assert app.issue_ref is not None

    later = a_round(fresh_db, tmp_path, occurrences(EXTENSION_ONLY, 5, minutes_ago=-5), minutes_later=15)
    assert held.id not in {line.signature_id for line in later.new + later.updated}
    assert held_note(1) in later.notes
    assert by_stacktrace(fresh_db, EXTENSION_ONLY).total_count == 17
    assert len(list(tmp_path.glob("*.md"))) == 1


def test_the_report_says_in_one_line_how_many_were_held_back_and_why(env, fresh_db, tmp_path):
    second = """SecurityError: Blocked a frame with origin "null" from accessing a cross-origin frame
    at scanForms (chrome-extension://nngceckbapebfimnlniiiahkandclblb/autofill/fill.js:88:14)
    at MutationObserver.observe (chrome-extension://nngceckbapebfimnlniiiahkandclblb/autofill/fill.js:20:7)"""
    report = a_round(fresh_db, tmp_path, occurrences(EXTENSION_ONLY, 2) + occurrences(second, 3))
    held = [note for note in report.notes if "browser extension" in note]
    assert held == [held_note(2)]
    assert not report.quiet  # no issue, but counts changed: the first line says how many
    assert "**0 new, 0 updated, 0 regressed** — 5 new occurrences" in render_report(report)
    assert held_note(2).startswith(
        "2 signatures held back, not filed or diagnosed: raised in a browser extension"
    )
    assert held_note(1).startswith("1 signature held back")


def test_turned_off_the_extensions_errors_are_filed_and_diagnosed_like_any_other(env, fresh_db, tmp_path):
    env.setenv("ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS", "false")
    recorder = Recorder()
    report = a_round(
        fresh_db, tmp_path, occurrences(EXTENSION_ONLY, 12) + occurrences(APP_ONLY, 11), diagnoser=recorder
    )
    assert len(report.new) == 2
    assert len(list(tmp_path.glob("*.md"))) == 2
    assert not [note for note in report.notes if "held back" in note]
    assert len(recorder.asked) == 2


def test_turned_off_later_the_next_round_files_those_held_before(env, fresh_db, tmp_path):
    a_round(fresh_db, tmp_path, occurrences(EXTENSION_ONLY, 3))
    env.setenv("ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS", "false")
    report = a_round(fresh_db, tmp_path, [], minutes_later=15)
    assert [line.note for line in report.new] == ["filed late"]
    assert by_stacktrace(fresh_db, EXTENSION_ONLY).issue_ref is not None


def test_an_issue_filed_before_is_updated_as_before(env, fresh_db, tmp_path):
    env.setenv("ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS", "false")
    a_round(fresh_db, tmp_path, occurrences(EXTENSION_ONLY, 3))
    env.delenv("ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS")
    report = a_round(fresh_db, tmp_path, occurrences(EXTENSION_ONLY, 2, minutes_ago=-5), minutes_later=15)
    assert [(line.round_count, line.total_count) for line in report.updated] == [(2, 5)]
    assert not [note for note in report.notes if "held back" in note]


def test_an_app_error_an_extension_wraps_is_filed_as_before(env, fresh_db, tmp_path):
    report = a_round(fresh_db, tmp_path, occurrences(APP_THROUGH_AN_EXTENSION, 2))
    assert len(report.new) == 1
    assert not [note for note in report.notes if "held back" in note]


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_a_trace_of_an_extensions_frames_alone_is_raised_in_one_whatever_the_browser(scheme):
    trace = SCHEMES[scheme]
    only_extension = "\n".join(
        line for line in trace.splitlines() if "cart.js" not in line and "react-dom" not in line
    )
    assert raised_in_browser_extension(only_extension, InAppRules())
    assert not raised_in_browser_extension(trace, InAppRules())  # the app's frames too


def test_no_frame_or_a_frame_the_in_app_rules_make_the_apps_is_not_raised_in_an_extension():
    rules = InAppRules()
    assert not raised_in_browser_extension(None, rules)
    assert not raised_in_browser_extension("TypeError: chrome-extension:// named in a message", rules)
    assert not raised_in_browser_extension(EXTENSION_ONLY, InAppRules(include=(EXTENSION,)))
    assert raised_in_browser_extension(EXTENSION_ONLY, rules)
